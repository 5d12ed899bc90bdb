"""guidellm report import: first/last token times become timing seeds (current and 0.2-0.3 shapes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_files import DATA, each_sample, placed, refusal, sniffs, write_json

from playback.core.importers.guidellm import IMPORTER

CURRENT = DATA / "guidellm-benchmarks.json"
OLDER = DATA / "guidellm-benchmarks-v0.2.json"
OWN = {CURRENT.name, OLDER.name}


def _write(tmp_path: Path, doc) -> Path:
    return write_json(tmp_path, doc, "benchmarks.json")


def test_current_report_timings_become_seeds():
    result = IMPORTER.load(CURRENT)
    assert not result.replayable
    first, single = result.seeds
    assert first.id == "guidellm:r-1"
    assert first.ttft_ms == 250.0
    assert first.e2e_ms == 1000.0
    assert first.output_tokens == 16
    assert first.itl_mean_ms == 50.0  # 750 ms over 15 gaps
    assert first.tokens_per_s == 20.0
    assert first.model == "Qwen/Qwen3.6-27B"
    assert single.output_tokens == 1 and single.tokens_per_s is None and single.itl_mean_ms is None


def test_older_report_shape_is_read_too():
    (seed,) = IMPORTER.load(OLDER).seeds
    assert seed.id == "guidellm:old-1"
    assert (seed.ttft_ms, seed.e2e_ms, seed.output_tokens) == (500.0, 1500.0, 11)
    assert seed.tokens_per_s == 10.0
    assert seed.model == "meta-llama/Llama-3.1-8B-Instruct"


def test_notes_say_summary_only_and_count_skipped_requests():
    notes = IMPORTER.load(CURRENT).notes
    assert any(n.startswith("summary only: can seed a synthetic timing model, not be replayed") for n in notes)
    assert "skipped 1 errored requests" in notes
    assert "skipped 1 incomplete requests" in IMPORTER.load(OLDER).notes


def _timing(i: int, key: str, value):
    def change(doc):
        doc["benchmarks"][0]["requests"]["successful"][i]["info"]["timings"][key] = value

    return change


@pytest.mark.parametrize(
    ("change", "where", "field"),
    [
        (_timing(0, "last_token_iteration", 1000.1), "benchmark 0 request 0", "info.timings.last_token_iteration"),
        (_timing(1, "first_token_iteration", 999.0), "benchmark 0 request 1", "info.timings.first_token_iteration"),
        (_timing(1, "request_start", None), "benchmark 0 request 1", "info.timings.request_start"),
        (_timing(0, "request_end", "late"), "benchmark 0 request 0", "info.timings.request_end"),
        (
            lambda d: d["benchmarks"][0]["requests"]["successful"][0].update(output_tokens=2.5),
            "benchmark 0 request 0",
            "output_tokens",
        ),
        (lambda d: d["benchmarks"][0].pop("requests"), "benchmark 0", "requests"),
        (lambda d: d.pop("benchmarks"), "", "benchmarks"),
    ],
)
def test_broken_report_names_file_benchmark_request_and_field(tmp_path, change, where, field):
    doc = json.loads(CURRENT.read_text(encoding="utf-8"))
    change(doc)
    p = _write(tmp_path, doc)
    e = refusal(IMPORTER, p)
    assert placed(e) == (str(p), where, field)


@each_sample
def test_sniff_recognises_only_guidellm_reports(path):
    assert sniffs(IMPORTER, path) == (path.name in OWN)
