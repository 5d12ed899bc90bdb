"""SGLang `bench_serving --output-details` import: JSON Lines runs, per-request arrays, broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_files import DATA, each_sample, placed, refusal, sniffs, write_jsonl

from playback.core.importers.rederive import tokenizer_for
from playback.core.importers.sglang import IMPORTER
from playback.core.metrics import compute

FILE = DATA / "sglang-output-details.jsonl"
OWN = {"sglang-output-details.jsonl"}


def _runs() -> list[dict]:
    return [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, runs: list[dict]) -> Path:
    return write_jsonl(tmp_path, runs, "sglang.jsonl", ensure_ascii=False)


def test_detailed_run_becomes_streams_with_recorded_times():
    result = IMPORTER.load(FILE)
    first = result.streams[0]
    m = compute(first)
    assert first.id == "sglang:1:0"
    assert m.ttft_ms == 125.0
    assert [p.t_ms for p in first.pieces] == [125.0, 156.25, 187.5, 250.0]
    assert m.e2e_ms == 250.0
    assert m.output_tokens == 6
    assert first.text == "Streaming feels faster."


def test_zero_gaps_are_kept_as_recorded():
    s = IMPORTER.load(FILE).streams[1]
    assert [p.t_ms for p in s.pieces] == [375.0, 625.0, 625.0, 1125.0, 1250.0]
    assert s.text == "慢慢来，比较快。"
    assert sum(p.tokens for p in s.pieces) == s.output_tokens == 9
    assert s.meta.language == "zh"


def test_model_comes_from_server_info_and_picks_the_tokenizer():
    s = IMPORTER.load(FILE).streams[0]
    assert s.meta.model == "deepseek-ai/DeepSeek-V4-Flash"
    assert s.meta.tokenizer == tokenizer_for("deepseek-ai/DeepSeek-V4-Flash")[0].name
    assert any("re-derived" in n and "over 4 recorded chunks" in n for n in s.meta.notes)


def test_summary_run_becomes_a_seed_and_failed_request_a_note():
    result = IMPORTER.load(FILE)
    (seed,) = result.seeds
    assert seed.id == "sglang:0:run"
    assert seed.ttft_ms == 200.0
    assert seed.e2e_ms == 700.0
    assert seed.tokens_per_s == 25.0
    assert any(n.startswith("run 0: summary only") for n in result.notes)
    assert any(n.startswith("run 1: skipped 1 requests with a recorded error") for n in result.notes)
    assert len(result.streams) == 2


def test_arrays_nested_under_details_are_read(tmp_path):
    run = _runs()[1]
    arrays = {k: run.pop(k) for k in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors")}
    run["details"] = arrays
    result = IMPORTER.load(_write(tmp_path, [run]))
    assert [s.id for s in result.streams] == ["sglang:0", "sglang:1"]
    assert compute(result.streams[0]).ttft_ms == 125.0


@pytest.mark.parametrize(
    ("key", "value", "where", "field"),
    [
        ("itls", [[0.03125], [0.25, 0.0, 0.5, 0.125], []], "run 1 request 0", None),
        ("ttfts", [0.125, None, 0.0], "run 1 request 1", "ttfts"),
        ("itls", [[0.03125, 0.03125, 0.0625], [0.25, -0.01, 0.5, 0.125], []], "run 1 request 1", "itls[1]"),
        ("generated_texts", ["a", "b"], "run 1", "generated_texts"),
    ],
)
def test_broken_run_names_run_request_and_field(tmp_path, key, value, where, field):
    runs = _runs()
    runs[1][key] = value
    p = _write(tmp_path, runs)
    if field is None:  # fewer itls than output_lens is legal: the chunk count is what was recorded
        assert len(IMPORTER.load(p).streams[0].pieces) == 2
        return
    e = refusal(IMPORTER, p)
    assert placed(e) == (str(p), where, field)


def test_invalid_json_line_is_named(tmp_path):
    p = tmp_path / "sglang.jsonl"
    p.write_text(FILE.read_text(encoding="utf-8").splitlines()[0] + '\n{"ttfts": [1,]}\n', encoding="utf-8")
    e = refusal(IMPORTER, p)
    assert e.where == "line 2 column 14"


@each_sample
def test_sniff_recognises_only_sglang_results(path):
    assert sniffs(IMPORTER, path) == (path.name in OWN)
