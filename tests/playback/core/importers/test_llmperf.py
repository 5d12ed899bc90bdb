"""LLMPerf individual-responses import: per-request averages become timing seeds, never streams."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trace_files import DATA, each_sample, placed, refusal, sniffs, write_json

from playback.core.importers.base import TraceFormatError
from playback.core.importers.llmperf import IMPORTER

FILE = DATA / "llmperf-Qwen-Qwen3-6-27B_550_150_individual_responses.json"
OWN = {FILE.name}


def _requests() -> list[dict]:
    return json.loads(FILE.read_text(encoding="utf-8"))


def _write(tmp_path: Path, requests) -> Path:
    return write_json(tmp_path, requests, "m_10_10_individual_responses.json")


def test_each_successful_request_becomes_a_seed_in_ms():
    result = IMPORTER.load(FILE)
    assert not result.replayable
    first, second = result.seeds
    assert first.id == "llmperf:0"
    assert first.ttft_ms == 500.0
    assert first.e2e_ms == 4500.0
    assert first.itl_mean_ms == 25.0
    assert first.output_tokens == 161
    assert first.tokens_per_s == 40.0  # (161 - 1) tokens over the 4 s after the first token
    assert second.ttft_ms == 250.0 and second.tokens_per_s == 32.0


def test_notes_say_summary_only_and_name_failed_requests():
    notes = IMPORTER.load(FILE).notes
    assert any(n.startswith("summary only: can seed a synthetic timing model, not be replayed") for n in notes)
    assert any("recorded error" in n and n.endswith(": 2") for n in notes)


def test_model_comes_from_the_summary_beside_it(tmp_path):
    assert IMPORTER.load(FILE).seeds[0].model == "Qwen/Qwen3.6-27B"
    lone = tmp_path / FILE.name
    shutil.copy(FILE, lone)
    assert IMPORTER.load(lone).seeds[0].model == ""


@pytest.mark.parametrize(
    ("change", "where", "field"),
    [
        (lambda r: r[1].pop("ttft_s"), "request 1", "ttft_s"),
        (lambda r: r[0].update(ttft_s="slow"), "request 0", "ttft_s"),
        (lambda r: r[1].update(end_to_end_latency_s=0.1), "request 1", "end_to_end_latency_s"),
        (lambda r: r[0].update(number_output_tokens=-3), "request 0", "number_output_tokens"),
        (lambda r: r[1].update(inter_token_latency_s=float("nan")), "request 1", "inter_token_latency_s"),
        (lambda r: r.append("oops"), "request 3", ""),
    ],
)
def test_broken_request_names_file_request_and_field(tmp_path, change, where, field):
    requests = _requests()
    change(requests)
    p = _write(tmp_path, requests)
    e = refusal(IMPORTER, p)
    assert placed(e) == (str(p), where, field)


def test_not_a_list_is_an_error(tmp_path):
    p = _write(tmp_path, {"ttft_s": 1})
    with pytest.raises(TraceFormatError, match="expected a JSON list"):
        IMPORTER.load(p)


@each_sample
def test_sniff_recognises_only_llmperf_individual_responses(path):
    assert sniffs(IMPORTER, path) == (path.name in OWN)
