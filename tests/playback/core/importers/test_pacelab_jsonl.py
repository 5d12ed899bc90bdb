"""PaceLab's JSONL trace format: exact round trip through dump_jsonl, and precise errors on broken lines."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playback.core.importers import TraceFormatError, load
from playback.core.importers.pacelab_jsonl import IMPORTER, dump_jsonl
from playback.core.metrics import compute
from playback.core.stream import Piece, Stream, StreamMeta

DATA = Path(__file__).parents[3] / "data"
SAMPLE = DATA / "pacelab_jsonl-two-streams.jsonl"


def test_sample_streams_and_metrics():
    result = load(SAMPLE)
    assert result.format == "pacelab_jsonl"
    first, second = result.streams
    assert first.id == "s1" and first.meta.tokenizer == "qwen3.6" and first.meta.notes == ("made by hand",)
    m = compute(first)
    assert m.ttfr_ms == 100.0 and m.ttft_ms == 250.25 and m.e2e_ms == 700.75
    assert m.output_tokens == 1 + 1 + 2  # content-channel tokens: the empty opening piece carries none
    assert second.output_tokens == 4 and second.text == "只要文字。"  # a line with only "pacelab_stream"


def test_round_trip_is_exact(tmp_path):
    streams = load(SAMPLE).streams
    out = dump_jsonl(streams, tmp_path / "out.jsonl")
    again = load(out).streams
    assert again == streams
    assert out.read_text(encoding="utf-8") == "".join(
        json.dumps({"pacelab_trace": 1, **s.to_obj()}, ensure_ascii=False, separators=(",", ":")) + "\n"
        for s in streams
    )


text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=5)  # NUL: refused


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1e6, allow_nan=False), text, st.sampled_from(["content", "reasoning"]), st.integers(0, 3)
        ),
        max_size=8,
    ),
    text,
    st.one_of(st.none(), st.integers(0, 10_000)),
)
def test_round_trip_any_stream(tmp_path_factory, raw, prompt, output_tokens):
    pieces = tuple(Piece(s, t, c, k) for t, s, c, k in sorted(raw))
    stream = Stream(pieces, StreamMeta(prompt=prompt, notes=("n",)), id="x\u2028y", output_tokens=output_tokens)
    path = dump_jsonl([stream, stream], tmp_path_factory.mktemp("rt") / "t.jsonl")
    assert load(path, "pacelab_jsonl").streams == [stream, stream]


GOOD = '{"pacelab_trace":1,"id":"a","pieces":[[1,"x"],[2,"y"]]}'


@pytest.mark.parametrize(
    ("line", "field", "problem"),
    [
        ('{"pacelab_trace":2,"pieces":[]}', "pacelab_trace", "unknown version"),
        ('{"pacelab_stream":7,"pieces":[]}', "pacelab_stream", "unknown version"),
        ('{"id":"a","pieces":[]}', "pacelab_trace", "missing"),
        ('{"pacelab_trace":1,"id":"a"}', "pieces", "missing"),
        ('{"pacelab_trace":1,"pieces":[[5,"a"],[4,"b"]]}', "pieces[1].t_ms", "earlier"),
        ('{"pacelab_trace":1,"pieces":[[5,"a"],["6","b"]]}', "pieces[1][0]", "finite number"),
        ('{"pacelab_trace":1,"pieces":[[5,"a","thinking",1]]}', "pieces[0][2]", "channel"),
        ('{"pacelab_trace":1,"pieces":[[5,"a","content",-1]]}', "pieces[0][3]", "tokens"),
        ('{"pacelab_trace":1,"pieces":[[5]]}', "pieces[0]", "expected"),
        ('{"pacelab_trace":1,"pieces":[],"output_tokens":"9"}', "output_tokens", "count"),
        ('{"pacelab_trace":1,"pieces":[],"meta":{"model":3}}', "meta.model", "string"),
        ('{"pacelab_trace":1,"pieces":[[NaN,"a"]]}', "", "NaN"),
    ],
)
def test_broken_line_names_file_line_and_field(tmp_path, line, field, problem):
    path = tmp_path / "t.jsonl"
    path.write_text(f"{GOOD}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(TraceFormatError) as err:
        IMPORTER.load(path)
    assert err.value.path == str(path)
    assert err.value.where == "line 3"
    assert err.value.field == field
    assert problem in err.value.problem


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD + "\n" + '{"pacelab_trace":1,"pieces":[[1,"a"]\n')
    with pytest.raises(TraceFormatError, match=r"t\.jsonl: line 2, column \d+: invalid JSON"):
        IMPORTER.load(path)


def test_empty_file_is_an_error(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n")
    with pytest.raises(TraceFormatError, match="no streams"):
        IMPORTER.load(path)


def test_dump_replaces_the_file_atomically_and_leaves_no_temp_files(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("old\n")
    stream = Stream((Piece("a", 1.5),), id="z")
    with pytest.raises(AttributeError):
        dump_jsonl([stream, object()], path)  # type: ignore[list-item]
    assert path.read_text() == "old\n"
    dump_jsonl([stream], path)
    assert load(path).streams == [stream]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]
