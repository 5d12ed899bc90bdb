"""vLLM `bench serve` result import: detailed per-request arrays, summary-only files, broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_files import DATA, each_sample, refusal, sniffs, write_json

from playback.core import tokenizers
from playback.core.columns import StreamColumns
from playback.core.importers.rederive import chunk_times_ms, guess_language, rederive
from playback.core.importers.vllm import IMPORTER
from playback.core.metrics import compute
from playback.core.stream import Stream, StreamMeta

SMALL = DATA / "vllm-small-detailed.json"
OWN = {
    "vllm-small-detailed.json",
    "vllm-summary-only.json",
    "vllm-bench-detailed.json",
    "vllm-broken-itls.json",
}


def _write(tmp_path: Path, obj, name="result.json") -> Path:
    return write_json(tmp_path, obj, name, ensure_ascii=False)


def _small() -> dict:
    return json.loads(SMALL.read_text(encoding="utf-8"))


def test_ttft_and_chunk_times_come_from_ttfts_and_itls():
    result = IMPORTER.load(SMALL)
    first = result.streams[0]
    m = compute(first)
    assert m.ttft_ms == 250.0
    assert [p.t_ms for p in first.pieces] == [250.0, 312.5, 437.5, 687.5]
    assert m.e2e_ms == 687.5
    assert m.output_tokens == 8
    assert m.content_pieces == 4


def test_pieces_rejoin_the_generated_text_and_carry_output_lens():
    result = IMPORTER.load(SMALL)
    doc = _small()
    assert [s.text for s in result.streams] == doc["generated_texts"][:2]
    for s, n in zip(result.streams, doc["output_lens"], strict=False):
        assert s.output_tokens == n
        assert sum(p.tokens for p in s.pieces) == n


def test_stream_metadata_names_source_model_tokenizer_and_rederivation():
    s = IMPORTER.load(SMALL).streams[1]
    assert s.id == "vllm:1"
    assert s.meta.source == "vllm:vllm-small-detailed.json"
    assert s.meta.model == "Qwen/Qwen3.6-27B"
    assert s.meta.tokenizer == "qwen3.6"
    assert s.meta.language == "zh"
    assert "pieces re-derived from generated_text with tokenizer qwen3.6 over 2 recorded chunks" in s.meta.notes


def test_failed_requests_are_skipped_with_a_note_not_an_error():
    result = IMPORTER.load(SMALL)
    assert [s.id for s in result.streams] == ["vllm:0", "vllm:1"]
    assert any("recorded error" in n and n.endswith(": 2") for n in result.notes)
    assert any("no text or TTFT 0" in n and n.endswith(": 3") for n in result.notes)
    assert result.replayable


def test_shared_sample_imports_every_successful_request():
    doc = json.loads((DATA / "vllm-bench-detailed.json").read_text(encoding="utf-8"))
    result = IMPORTER.load(DATA / "vllm-bench-detailed.json")
    ok = [i for i, e in enumerate(doc["errors"]) if not e]
    assert [s.id for s in result.streams] == [f"vllm:{i}" for i in ok]
    for s, i in zip(result.streams, ok, strict=True):
        assert compute(s).ttft_ms == pytest.approx(doc["ttfts"][i] * 1000)
        assert len(s.pieces) == len(doc["itls"][i]) + 1
        assert s.output_tokens == doc["output_lens"][i]
        assert s.text == doc["generated_texts"][i]


def test_summary_only_file_gives_a_seed_and_says_it_cannot_be_replayed():
    result = IMPORTER.load(DATA / "vllm-summary-only.json")
    assert not result.replayable
    (seed,) = result.seeds
    assert seed.ttft_ms == 120.0
    assert seed.tokens_per_s == 50.0  # 1000 / mean_tpot_ms
    assert seed.itl_mean_ms == 19.0
    assert seed.e2e_ms == 2100.0
    assert seed.output_tokens == 100  # total_output_tokens / completed
    assert seed.model == "Qwen/Qwen3.6-27B"
    assert any("summary only" in n and "--save-detailed" in n for n in result.notes)


def test_appended_runs_are_all_imported_with_run_numbers(tmp_path):
    text = SMALL.read_text(encoding="utf-8")
    p = tmp_path / "appended.json"
    p.write_text(json.dumps(json.loads(text)) + "\n" + json.dumps(json.loads(text)) + "\n", encoding="utf-8")
    result = IMPORTER.load(p)
    assert [s.id for s in result.streams] == ["vllm:0:0", "vllm:0:1", "vllm:1:0", "vllm:1:1"]


def test_array_of_wrong_length_names_the_field():
    e = refusal(IMPORTER, DATA / "vllm-broken-itls.json")
    assert e.field == "itls"
    assert "vllm-broken-itls.json" in str(e)
    assert "3 entries" in str(e)


def _set(key, i, value):
    def change(doc):
        doc[key][i] = value

    return change


@pytest.mark.parametrize(
    ("change", "where", "field"),
    [
        (_set("ttfts", 1, -0.5), "request 1", "ttfts"),
        (_set("ttfts", 0, "fast"), "request 0", "ttfts"),
        (_set("itls", 0, [0.0625, "x", 0.25]), "request 0", "itls[1]"),
        (_set("itls", 1, [-0.125]), "request 1", "itls[0]"),
        (_set("itls", 0, 0.5), "request 0", "itls"),
        (_set("output_lens", 0, 7.5), "request 0", "output_lens"),
        (_set("generated_texts", 1, 42), "request 1", "generated_texts"),
        (lambda d: d.pop("output_lens"), "", "output_lens"),
        (lambda d: d["errors"].pop(), "", "errors"),
    ],
)
def test_broken_request_names_file_request_and_field(tmp_path, change, where, field):
    doc = _small()
    change(doc)
    p = _write(tmp_path, doc, "broken.json")
    e = refusal(IMPORTER, p)
    assert e.path == str(p)
    assert e.where == where
    assert e.field == field
    assert str(e).startswith(str(p))


def test_invalid_json_names_line_and_column(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{\n "model_id": "m",\n "ttfts": [0.1,,]\n}', encoding="utf-8")
    e = refusal(IMPORTER, p)
    assert e.where == "line 3 column 16"
    assert "invalid JSON" in str(e)


def test_summary_without_any_timing_is_an_error(tmp_path):
    p = _write(tmp_path, {"model_id": "m", "completed": 3})
    e = refusal(IMPORTER, p)
    assert e.field == "mean_ttft_ms"


@each_sample
def test_sniff_recognises_only_vllm_results(path):
    assert sniffs(IMPORTER, path) == (path.name in OWN)


def test_gaps_whose_sum_overflows_are_refused_naming_the_request_and_field(tmp_path):
    obj = _small()
    obj["itls"][1] = [1e308] * len(obj["itls"][1])
    e = refusal(IMPORTER, _write(tmp_path, obj))
    assert (e.where, e.field) == ("request 1", "itls") and "overflow" in str(e)


def _per_piece_streams(path: Path) -> list[Stream]:
    """The import as it was made before streams were held in columns: a Piece per piece, one request at a time."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    tok = tokenizers.get(tokenizers.for_model(doc["tokenizer_id"]))
    out = []
    for i, text in enumerate(doc["generated_texts"]):
        if doc["errors"][i] or not text or doc["ttfts"][i] == 0:
            continue
        pieces, extra = rederive(text, chunk_times_ms(doc["ttfts"][i], doc["itls"][i]), doc["output_lens"][i], tok)
        notes = (f"pieces re-derived from generated_text with tokenizer {tok.name} over {len(pieces)} recorded "
                 f"chunks", *extra)
        meta = StreamMeta(source=f"vllm:{path.name}", model=doc["model_id"], tokenizer=tok.name,
                          language=guess_language(text), notes=notes)
        out.append(Stream(pieces=tuple(pieces), meta=meta, id=f"vllm:{i}", output_tokens=doc["output_lens"][i]))
    return out


def test_streams_held_in_columns_are_the_streams_built_piece_by_piece():
    for path in (SMALL, DATA / "vllm-bench-detailed.json"):
        result = IMPORTER.load(path)
        assert all(isinstance(item, StreamColumns) for item in result.streams.raw())
        built = list(result.streams)
        assert built == _per_piece_streams(path)
        assert [s.content_hash() for s in built] == [s.content_hash() for s in _per_piece_streams(path)]


def test_a_file_the_streaming_parser_does_not_take_is_read_by_the_standard_one(tmp_path):
    # a BOM, and NaN (which Python's json writes for a missing mean): not plain JSON, read as before
    doc = _small()
    doc["std_ttft_ms"] = float("nan")
    p = tmp_path / "nan.json"
    p.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8-sig")
    got, expected = IMPORTER.load(p).streams, IMPORTER.load(SMALL).streams
    assert [(s.id, s.pieces, s.meta.notes) for s in got] == [(s.id, s.pieces, s.meta.notes) for s in expected]


def test_a_broken_second_run_is_named_by_line_and_column_and_nothing_is_imported(tmp_path):
    text = json.dumps(_small())
    p = tmp_path / "appended.json"
    p.write_text(text + "\n" + '{"model_id": "m",\n "ttfts": [0.1,,]}\n', encoding="utf-8")
    e = refusal(IMPORTER, p)
    assert e.where == "line 3 column 16" and "invalid JSON" in str(e)


def test_a_file_of_only_whitespace_is_refused_as_empty(tmp_path):
    p = tmp_path / "blank.json"
    p.write_text("  \n\n", encoding="utf-8")
    e = refusal(IMPORTER, p)
    assert e.problem == "file is empty"
