"""AIPerf profile_export.jsonl import: units, outputs.json texts, seeds for records without text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from trace_files import DATA, each_sample, placed, refusal, sniffs, write_jsonl

from playback.core.importers.aiperf import IMPORTER
from playback.core.metrics import compute

FILE = DATA / "aiperf-profile_export.jsonl"
OUTPUTS = DATA / "aiperf-profile_export_outputs.json"
OWN = {"aiperf-profile_export.jsonl"}


def _records() -> list[dict]:
    return [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, records: list[dict], with_outputs: bool = True) -> Path:
    p = write_jsonl(tmp_path, records, "profile_export.jsonl")
    if with_outputs:
        shutil.copy(OUTPUTS, tmp_path / "outputs.json")
    return p


def test_record_with_text_becomes_a_stream_at_recorded_chunk_times():
    result = IMPORTER.load(FILE)
    (s,) = result.streams
    m = compute(s)
    assert s.id == "aiperf:req-a"
    assert m.ttft_ms == 250.0
    assert [p.t_ms for p in s.pieces] == [250.0, 300.0, 325.0, 400.0]
    assert m.e2e_ms == 400.0
    assert m.output_tokens == 5
    assert s.text == "Fast is a feeling."
    assert any("re-derived from response_text" in n and "over 4 recorded chunks" in n for n in s.meta.notes)


def test_record_without_text_becomes_a_seed_with_units_converted():
    result = IMPORTER.load(FILE)
    (seed,) = result.seeds
    assert seed.id == "aiperf:req-c"
    assert seed.ttft_ms == 125.0  # 125000000 ns
    assert seed.e2e_ms == 625.0
    assert seed.output_tokens == 11
    assert seed.itl_mean_ms == 50.0
    assert seed.tokens_per_s == 20.0  # (11 - 1) / 0.5 s
    assert any("no response text" in n and "lines 3" in n for n in result.notes)


def test_errored_and_warmup_records_are_skipped_with_notes():
    notes = IMPORTER.load(FILE).notes
    assert any("recorded error" in n and "lines 2" in n for n in notes)
    assert any("warmup" in n and "lines 4" in n for n in notes)


def test_without_outputs_json_everything_is_a_seed(tmp_path):
    result = IMPORTER.load(_write(tmp_path, _records(), with_outputs=False))
    assert not result.replayable
    assert [s.id for s in result.seeds] == ["aiperf:req-a", "aiperf:req-c"]
    assert any("no outputs.json beside the records" in n for n in result.notes)


def test_model_and_tokenizer_come_from_the_run_summary(tmp_path):
    p = _write(tmp_path, _records())
    summary = {"input_config": {"endpoint": {"model_names": ["Qwen/Qwen3.6-27B"]}, "tokenizer": {"name": None}}}
    (tmp_path / "profile_export_aiperf.json").write_text(json.dumps(summary), encoding="utf-8")
    (s,) = IMPORTER.load(p).streams
    assert s.meta.model == "Qwen/Qwen3.6-27B"
    assert s.meta.tokenizer == "qwen3.6"


def _metric(line: int, key: str, value):
    def change(records):
        records[line]["metrics"][key] = value

    return change


@pytest.mark.parametrize(
    ("change", "where", "field"),
    [
        (
            _metric(0, "time_to_first_token", {"value": 250.0, "unit": "fortnights"}),
            "line 1",
            "metrics.time_to_first_token.unit",
        ),
        (
            _metric(0, "inter_chunk_latency", {"value": [50.0, -1.0], "unit": "ms"}),
            "line 1",
            "metrics.inter_chunk_latency[1]",
        ),
        (
            _metric(2, "inter_chunk_latency", {"value": 3, "unit": "ns"}),
            "line 3",
            "metrics.inter_chunk_latency",
        ),
        (
            _metric(0, "output_sequence_length", {"value": 5.5, "unit": "tokens"}),
            "line 1",
            "metrics.output_sequence_length",
        ),
        (_metric(2, "time_to_first_token", None), "line 3", "metrics.time_to_first_token"),
        (_metric(2, "time_to_first_token", 125), "line 3", "metrics.time_to_first_token"),
        (lambda r: r[0].pop("metrics"), "line 1", "metrics"),
        (  # each gap finite, their sum not
            _metric(0, "inter_chunk_latency", {"value": [1e308, 1e308], "unit": "ms"}),
            "line 1",
            "metrics.inter_chunk_latency",
        ),
        (
            _metric(2, "inter_chunk_latency", {"value": [1e308, 1e308], "unit": "ms"}),
            "line 3",
            "metrics.inter_chunk_latency",
        ),
    ],
)
def test_broken_record_names_file_line_and_field(tmp_path, change, where, field):
    records = _records()
    change(records)
    p = _write(tmp_path, records)
    e = refusal(IMPORTER, p)
    assert placed(e) == (str(p), where, field)


def test_invalid_json_line_is_named(tmp_path):
    p = tmp_path / "profile_export.jsonl"
    lines = FILE.read_text(encoding="utf-8").splitlines()
    p.write_text("\n".join([lines[0], "", lines[1][:40], lines[2]]) + "\n", encoding="utf-8")
    e = refusal(IMPORTER, p)
    assert e.where.startswith("line 3 column")


def test_broken_outputs_json_is_named(tmp_path):
    p = _write(tmp_path, _records())
    (tmp_path / "outputs.json").write_text(json.dumps({"data": [{"x_request_id": "req-a", "response_text": 7}]}))
    e = refusal(IMPORTER, p)
    assert e.path == str(tmp_path / "outputs.json")
    assert (e.where, e.field) == ("data[0]", "response_text")


@pytest.mark.parametrize("field", ["x_request_id", "session_num", "turn_index"])
def test_a_request_key_that_is_not_a_string_or_number_is_named_in_either_file(tmp_path, field):
    records = _records()
    records[0].setdefault("metadata", {})[field] = {"id": 1}
    p = _write(tmp_path, records)
    e = refusal(IMPORTER, p)
    assert placed(e) == (str(p), "line 1", field)
    (tmp_path / "outputs.json").write_text(json.dumps({"data": [{field: [1], "response_text": "hi"}]}))
    e = refusal(IMPORTER, _write(tmp_path, _records(), with_outputs=False))
    assert placed(e) == (str(tmp_path / "outputs.json"), "data[0]", field)


@each_sample
def test_sniff_recognises_only_aiperf_records(path):
    assert sniffs(IMPORTER, path) == (path.name in OWN)
