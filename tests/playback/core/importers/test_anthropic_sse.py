"""Anthropic Messages SSE captures: thinking and text blocks, usage, error events, broken files."""

import json
from pathlib import Path

import pytest
from trace_files import DATA, refusal, write_lines

from playback.core.importers import TraceFormatError, load
from playback.core.importers.anthropic_sse import IMPORTER
from playback.core.metrics import compute

TIMED = DATA / "anthropic_sse-timed-thinking.sse"
SAMPLE = DATA / "anthropic-messages-stream.sse"
HEADER = '# pacelab-sse v1 {"api": "anthropic", "model": "m", "prompt": "p", "status": 200}'
START = {"type": "message_start", "message": {"id": "msg_x", "model": "m", "usage": {"output_tokens": 1}}}


def event(t: float, obj: dict, name: str | None = None) -> list[str]:
    return [f"{t}\tevent: {name or obj['type']}", f"{t}\tdata: {json.dumps(obj)}", f"{t}\t"]


def write(tmp_path: Path, *lines: str) -> Path:
    return write_lines(tmp_path, "capture.sse", lines)


def test_thinking_is_reasoning_text_is_content_and_signature_is_ignored():
    stream = load(TIMED, "anthropic_sse").streams[0]
    m = compute(stream)
    assert stream.id == "msg_t1" and stream.meta.model == "claude-x"
    assert stream.pieces[0] == stream.pieces[0].__class__("", 300.0, "content", 0)  # message_start: first byte
    assert stream.reasoning_text == "Let me think. Done."
    assert stream.text == "The answer is 42.!"
    assert "EqQB" not in stream.text + stream.reasoning_text
    assert m.ttfr_ms == 350.0 and m.ttft_ms == 520.0 and m.e2e_ms == 600.0
    # usage.output_tokens counts thinking too, so content tokens come from the 3 deltas: (3 - 1) / 0.08 s
    assert stream.output_tokens is None and m.output_tokens == 3
    assert m.tokens_per_s == pytest.approx(25.0)
    assert any("thinking tokens" in n for n in stream.meta.notes)


def test_message_delta_usage_gives_output_tokens():
    stream = load(TIMED).streams[1]
    m = compute(stream)
    assert stream.output_tokens == 7 and m.output_tokens == 7
    assert m.ttft_ms == 120.0 and m.e2e_ms == 140.0
    assert m.tokens_per_s == pytest.approx(6 / 0.02)


def test_error_event_makes_the_request_a_named_failure():
    result = load(TIMED)
    assert [s.id for s in result.streams] == ["msg_t1", "msg_t2"]
    assert len(result.notes) == 1
    assert "request 2" in result.notes[0] and "overloaded_error" in result.notes[0]


def test_untimestamped_sample_refused_by_default_and_inspectable_with_assumed_times():
    with pytest.raises(TraceFormatError, match="record_sse.py"):
        load(SAMPLE)
    stream = load(SAMPLE, assume_interval_ms=10).streams[0]
    assert stream.text == "A streamed answer can feel quick even when its total time is long."
    assert stream.output_tokens == 15
    # events: message_start 0, content_block_start 10, ping 20, first text delta 30
    assert compute(stream).ttft_ms == 30.0


def test_missing_message_stop_is_noted(tmp_path):
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}
    path = write(tmp_path, HEADER, *event(1, START), *event(2, delta))
    stream = load(path, "anthropic_sse").streams[0]
    assert stream.text == "x" and any("message_stop" in n for n in stream.meta.notes)


@pytest.mark.parametrize(
    ("obj", "name", "field"),
    [
        (
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": 3}},
            None,
            "delta.text",
        ),
        (
            {"type": "message_delta", "delta": {}, "usage": {"output_tokens": "many"}},
            None,
            "usage.output_tokens",
        ),
        ({"type": "message_start"}, None, "message"),
        ({"type": "ping"}, "message_stop", "type"),
    ],
)
def test_broken_event_names_file_request_line_and_field(tmp_path, obj, name, field):
    path = write(tmp_path, HEADER, *event(1, START), *event(2, obj, name))
    err = refusal(IMPORTER, path)
    assert err.path == str(path)
    assert "request 0" in err.where and "line 5" in err.where
    assert err.field == field


def test_invalid_json_data_is_named(tmp_path):
    path = write(tmp_path, HEADER, "1\tevent: message_start", "1\tdata: {oops", "1\t")
    with pytest.raises(TraceFormatError, match=r"line 2: data: invalid JSON"):
        IMPORTER.load(path)
