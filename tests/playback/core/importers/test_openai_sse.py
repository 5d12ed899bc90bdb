"""OpenAI Chat Completions SSE captures: pieces, channels, usage, failures, timestamps and broken files."""

from pathlib import Path

import pytest
from trace_files import DATA, refusal, write_lines

from playback.core.importers import TraceFormatError, load
from playback.core.importers.openai_sse import IMPORTER
from playback.core.importers.sse import parse
from playback.core.metrics import compute

TIMED = DATA / "openai_sse-timed-reasoning.sse"
SAMPLE = DATA / "openai-chat-stream.sse"
HEADER = '# pacelab-sse v1 {"api": "openai", "model": "m", "prompt": "p", "status": 200}'


def write(tmp_path: Path, *lines: str) -> Path:
    return write_lines(tmp_path, "capture.sse", lines)


def test_reasoning_stream_metrics_exclude_role_chunk_and_use_usage():
    stream = load(TIMED, "openai_sse").streams[0]
    m = compute(stream)
    assert stream.id == "chatcmpl-r0"
    assert stream.meta.model == "deepseek-r1" and stream.meta.prompt == "Why is the sky blue?"
    assert stream.pieces[0].text == "" and stream.pieces[0].tokens == 0 and stream.pieces[0].t_ms == 40.0
    assert m.ttft_ms == 400.0  # not the role-only chunk at 40 ms
    assert m.ttfr_ms == 120.5
    assert m.e2e_ms == 800.0
    assert stream.reasoning_text == "Light scatters."
    assert stream.text == "Rayleigh scattering."
    # usage: 25 completion tokens of which 20 reasoning -> 5 content tokens; (5 - 1) / 0.4 s
    assert m.output_tokens == 5
    assert m.tokens_per_s == pytest.approx(10.0)
    assert m.stall_count == 1 and m.stall_total_ms == 350.0


def test_delta_reasoning_field_and_only_choice_zero():
    stream = load(TIMED).streams[1]
    assert stream.id == "req-b"  # the header's id wins over the response id
    assert [(p.t_ms, p.text, p.channel) for p in stream.pieces] == [
        (10.0, "", "content"),
        (20.0, "Hmm", "reasoning"),
        (35.0, "Hello", "content"),
        (60.0, " there", "content"),
    ]
    assert "other" not in stream.text
    assert any("choice index 0" in n for n in stream.meta.notes)
    assert stream.output_tokens is None and compute(stream).output_tokens == 2


def test_error_chunk_and_http_error_are_failed_requests_named_in_notes():
    result = load(TIMED)
    assert len(result.streams) == 2
    assert any("request 2" in n and "overloaded" in n for n in result.notes)
    assert any("request 3" in n and "429" in n for n in result.notes)


def test_untimestamped_capture_is_refused_with_a_pointer_to_the_recorder():
    with pytest.raises(TraceFormatError) as err:
        load(SAMPLE)
    msg = str(err.value)
    assert str(SAMPLE) in msg and "record_sse.py" in msg and "assume_interval_ms" in msg


def test_untimestamped_capture_imports_with_assumed_interval_and_a_note():
    stream = load(SAMPLE, assume_interval_ms=25).streams[0]
    assert [p.t_ms for p in stream.pieces[:3]] == [0.0, 25.0, 50.0]
    assert stream.text == "只要文字持续出现，即使总耗时较长。"
    assert stream.output_tokens == 11
    assert compute(stream).ttft_ms == 25.0
    assert any("times assumed" in n for n in stream.meta.notes)


def test_missing_done_is_noted(tmp_path):
    path = write(tmp_path, HEADER, '5\tdata: {"choices":[{"index":0,"delta":{"content":"a"}}]}', "5\t")
    stream = load(path, "openai_sse").streams[0]
    assert stream.text == "a" and any("[DONE]" in n for n in stream.meta.notes)


def test_legacy_completions_text_is_content(tmp_path):
    path = write(
        tmp_path,
        HEADER,
        '7\tdata: {"object":"text_completion","choices":[{"index":0,"text":"Hi"}]}',
        "7\t",
        "9\tdata: [DONE]",
    )
    assert load(path, "openai_sse").streams[0].pieces[0].text == "Hi"


def test_sse_parser_handles_crlf_multiline_data_and_comments():
    text = ': comment\r\nevent: x\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:no-space\n\n'
    events = list(parse(text))
    assert [(e.event, e.data) for e in events] == [("x", '{"a":\n1}'), ("message", "no-space")]


def test_timestamped_crlf_capture_with_multiline_data_event(tmp_path):
    path = tmp_path / "crlf.sse"
    path.write_bytes(
        (
            HEADER + '\r\n3.5\tdata: {"choices":[{"index":0,\r\n4.0\tdata: "delta":{"content":"ok"}}]}\r\n4.5\t\r\n'
        ).encode()
    )
    stream = load(path, "openai_sse").streams[0]
    assert [(p.t_ms, p.text) for p in stream.pieces] == [(4.5, "ok")]  # time of the line that completed it


@pytest.mark.parametrize(
    ("lines", "where", "field"),
    [
        ((HEADER, "abc\tdata: {}"), "line 2", "time"),
        ((HEADER, "5\tdata: {}", "4\t"), "line 3", "time"),
        ((HEADER, "data: {}"), "line 2", ""),
        ((HEADER, "1\tdata: {not json", "1\t"), "line 2", "data"),
        (
            (HEADER, '1\tdata: {"choices":[{"index":0,"delta":{"content":5}}]}', "1\t"),
            "line 2",
            "delta.content",
        ),
        (("# pacelab-sse v2 {}", "1\tdata: {}"), "line 1", "version"),
        (("# pacelab-sse v1 {bad", "1\tdata: {}"), "line 1", "header"),
        (("5\tdata: {}",), "line 1", "header"),
    ],
)
def test_broken_capture_names_file_line_and_field(tmp_path, lines, where, field):
    path = write(tmp_path, *lines)
    err = refusal(IMPORTER, path)
    assert err.path == str(path)
    assert where in err.where
    assert field in err.field
    assert str(path) in str(err)
