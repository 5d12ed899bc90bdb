"""The playback protocol: every malformed or out-of-order message is refused with an error naming the problem."""

import json

import pytest

from playback.core import protocol
from playback.core.protocol import Hello, Paint, Ping, ProtocolError, Session, Start, Stop, parse
from playback.core.stream import Piece, Stream


def _entry(**changes):
    entry = {"seq": 0, "t_ms": 100.0, "recv_ms": 101.0, "paint_ms": 110.5, "chars": 3, "hidden": False}
    entry.update(changes)
    return entry


def _paint(batch=1, entries=None, **extra):
    return json.dumps({"type": "paint", "batch": batch, "entries": entries or [_entry()], **extra})


def _error(text, **kw) -> str:
    with pytest.raises(ProtocolError) as exc:
        parse(text, **kw)
    return str(exc.value)


def test_a_well_formed_message_of_each_type_parses():
    assert parse(json.dumps({"type": "hello", "protocol": 1, "token": "abc"})) == Hello(token="abc")
    assert parse('{"type": "start"}') == Start()
    assert parse('{"type": "stop"}') == Stop()
    assert parse('{"type": "ping", "id": 3, "t0": 5}') == Ping(t0=5.0, id=3)
    paint = parse(_paint(batch=2, clock={"offset_ms": -3.5, "uncertainty_ms": 0.4, "rtt_ms": 0.8}))
    assert isinstance(paint, Paint) and paint.batch == 2 and paint.entries[0].paint_ms == 110.5
    assert paint.clock.offset_ms == -3.5 and paint.clock.uncertainty_ms == 0.4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{nope", "malformed JSON"),
        ("[1, 2]", "message must be a JSON object"),
        ('{"type": "dance"}', "unknown message type 'dance'; expected one of hello, start, stop, paint, ping"),
        ('{"kind": "ping"}', "unknown message type None"),
        ('{"type": "hello", "token": 5}', "hello.token: must be a non-empty string"),
        ('{"type": "hello", "token": ""}', "hello.token: must be a non-empty string"),
        ('{"type": "hello", "token": "a", "protocol": 2}', "hello.protocol: this server speaks version 1, got 2"),
        ('{"type": "hello", "token": "a", "protocol": true}', "hello.protocol: this server speaks version 1"),
        ('{"type": "ping", "t0": "x"}', "ping.t0: must be a number, got str"),
        ('{"type": "ping"}', "ping.t0: required"),
        ('{"type": "paint", "batch": 0, "entries": []}', "paint.batch: must be an integer >= 1"),
        ('{"type": "paint", "batch": 1.5, "entries": []}', "paint.batch: must be an integer >= 1"),
        ('{"type": "paint", "batch": 2147483648, "entries": []}', "paint.batch: must be at most 2147483647"),
        ('{"type": "paint", "batch": 1, "entries": {}}', "paint.entries: must be a list"),
        ('{"type": "paint", "batch": 1, "entries": [7]}', "paint.entries[0]: must be an object"),
    ],
)
def test_malformed_messages_name_the_problem(text, expected):
    assert _error(text).startswith(expected)


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (_entry(seq=-1), "paint.entries[1].seq: must be an integer >= 0"),
        (_entry(seq=True), "paint.entries[1].seq: must be an integer >= 0"),
        (_entry(t_ms=None), "paint.entries[1].t_ms: required"),
        (_entry(paint_ms="soon"), "paint.entries[1].paint_ms: must be a number, got str"),
        (_entry(chars=2.5), "paint.entries[1].chars: must be an integer >= 0"),
        (_entry(hidden="no"), "paint.entries[1].hidden: must be true or false"),
        (_entry(frame_ms=-1), "paint.entries[1].frame_ms: must be >= 0, got -1"),
        # beyond what a clock can read; larger floats would not come back equal from PostgreSQL's jsonb
        (_entry(recv_ms=5.120113203405201e16), "paint.entries[1].recv_ms: must be within ±1e+15 ms, got 5.12011e+16"),
        (_entry(sent_ms=-1e300), "paint.entries[1].sent_ms: must be within ±1e+15 ms, got -1e+300"),
        (_entry(seq=2**31), "paint.entries[1].seq: must be at most 2147483647, got 2147483648"),
    ],
)
def test_a_bad_paint_entry_is_named_by_its_index_and_field(entry, expected):
    assert _error(_paint(entries=[_entry(), entry])) == expected


def test_a_bad_clock_estimate_is_refused():
    assert _error(_paint(clock={"offset_ms": 1})) == "paint.clock.uncertainty_ms: required"
    assert _error(_paint(clock={"offset_ms": 1, "uncertainty_ms": -1})).startswith(
        "paint.clock.uncertainty_ms: must be >= 0")
    assert _error(_paint(clock=[1])) == "paint.clock: must be an object"


def test_binary_oversized_and_overlong_batches_are_refused():
    assert _error(None).startswith("binary frames are not accepted")
    assert _error(" " * (protocol.MAX_MESSAGE_CHARS + 1)).startswith("message too large")
    many = [_entry(seq=i) for i in range(protocol.MAX_ENTRIES_PER_BATCH + 1)]
    assert _error(_paint(entries=many)).startswith(f"paint.entries: at most {protocol.MAX_ENTRIES_PER_BATCH}")


def test_the_debug_hook_is_an_unknown_type_unless_enabled():
    assert _error('{"type": "debug"}').startswith("unknown message type 'debug'")
    assert parse('{"type": "debug"}', allow_debug=True) == protocol.Debug()


def _refused(session: Session, msg) -> str:
    with pytest.raises(ProtocolError) as exc:
        session.check(msg)
    return str(exc.value)


def test_nothing_but_hello_and_ping_is_accepted_before_hello():
    s = Session()
    assert _refused(s, Start()) == "start: send hello with the playback token first"
    assert _refused(s, parse(_paint())) == "paint: send hello with the playback token first"
    s.check(Ping(t0=1.0))
    s.check(Hello(token="t"))


def test_stop_before_start_and_a_second_start_are_out_of_order():
    s = Session()
    s.bind()
    assert _refused(s, Hello(token="t")) == "hello: this socket is already bound to a playback"
    assert _refused(s, Stop()) == "stop: no trial is running"
    s.check(Start())
    s.started()
    assert _refused(s, Start()) == "start: the trial has already started"
    s.check(Stop())
    s.ended()
    assert _refused(s, Stop()) == "stop: the trial has ended"
    assert _refused(s, Start()) == "start: the trial has already ended"


def test_paint_batches_must_increase_and_a_refusal_changes_nothing():
    s = Session()
    s.bind()
    s.check(parse(_paint(batch=3)))
    s.painted(3)
    assert _refused(s, parse(_paint(batch=3))) == "paint.batch: 3 is not greater than the last batch 3"
    assert _refused(s, parse(_paint(batch=2))) == "paint.batch: 2 is not greater than the last batch 3"
    s.check(parse(_paint(batch=4)))
    assert s.last_batch == 3


def test_frames_number_the_pieces_of_a_stream_in_order_with_their_times():
    stream = Stream((Piece("Hel", 250.0), Piece("", 260.0, "content", 1), Piece("lo", 275.0, "content", 2)))
    frames = protocol.frames_of(stream.to_obj())
    assert [(f.seq, f.t_ms, f.text, f.tokens) for f in frames] == [(0, 250.0, "Hel", 1), (1, 260.0, "", 1),
                                                                   (2, 275.0, "lo", 2)]
    [text] = protocol.schedule_msgs(frames, t_server=1.0)
    schedule = json.loads(text)
    assert schedule["type"] == "schedule"
    assert schedule["frames"][2] == {"seq": 2, "t_ms": 275.0, "text": "lo", "channel": "content", "tokens": 2}


def test_a_long_schedule_goes_in_parts_under_the_size_limit_that_concatenate_to_the_whole():
    frames = protocol.frames_of(Stream(tuple(Piece(f"{i} 长文本🚀\"", float(i)) for i in range(3000))).to_obj())
    [single] = protocol.schedule_msgs(frames, t_server=1.0)  # under the default 768 KiB: one message
    whole = json.loads(single)
    assert (whole["part"], whole["parts"]) == (1, 1) and len(whole["frames"]) == 3000
    texts = protocol.schedule_msgs(frames, t_server=1.0, max_bytes=20_000)
    parts = [json.loads(t) for t in texts]
    assert len(parts) > 5 and all(len(t.encode()) <= 20_000 for t in texts)
    assert [(p["type"], p["part"], p["parts"], p["t_server"]) for p in parts] == [
        ("schedule", k, len(parts), 1.0) for k in range(1, len(parts) + 1)]
    assert [f for p in parts for f in p["frames"]] == whole["frames"]
    one = protocol.schedule_msgs(frames[:10], t_server=1.0)
    assert len(one) == 1 and json.loads(one[0])["frames"] == whole["frames"][:10]


def test_paint_entries_round_trip_to_stored_objects_without_absent_optionals():
    entry = parse(_paint(entries=[_entry(sent_ms=1.7e12)])).entries[0]
    assert entry.to_obj() == {**_entry(), "sent_ms": 1.7e12}


def test_stored_streams_give_the_same_frames_without_validation_and_live_frames_encode_them_once():
    import gc
    import json

    stream = Stream((Piece("Hi", 0.0), Piece("think", 5.0, channel="reasoning", tokens=2), Piece(" there", 30.0)))
    stored = stream.to_obj()
    assert protocol.frames_of_stored(stored) == protocol.frames_of(stored)
    live = protocol.LiveFrames.of(protocol.frames_of_stored(stored))
    assert len(live) == 3 and live.t_ms == [0.0, 5.0, 30.0]
    msg = json.loads(live.heads[1] + protocol.frame_tail(sent_ms=1.5, late_ms=0.25))
    assert msg == {"type": "frame", "seq": 1, "t_ms": 5.0, "text": "think", "channel": "reasoning", "tokens": 2,
                   "sent_ms": 1.5, "late_ms": 0.25}
    # strings and floats only: a process holding hundreds of streams gives the collector nothing to walk
    assert not any(gc.is_tracked(x) for x in live.t_ms + live.heads)


@pytest.mark.parametrize("text", ["", "plain", 'quote " and \\ backslash', "line\nbreak\ttab", "中文，标点。",
                                  "emoji 🚀", "\u2028\u0000"])
def test_a_frame_message_is_the_frame_as_json_whatever_its_text(text):
    frame = protocol.Frame(seq=7, t_ms=12.5, text=text, channel="reasoning", tokens=3)
    msg = json.loads(protocol.frame_head(frame) + protocol.frame_tail(sent_ms=100.25, late_ms=-0.5))
    assert msg == {**frame.to_obj(), "type": "frame", "sent_ms": 100.25, "late_ms": -0.5}


@pytest.mark.parametrize(("sent_ms", "late_ms"), [(1765152000000.0, 0.0), (1765152000123.4567, 1.25),
                                                  (4102444800000.0, -0.001), (1765152000000.0, 999999.999)])
def test_a_live_frames_send_time_tail_has_one_width_so_its_websocket_header_is_known_in_advance(sent_ms, late_ms):
    tail = protocol.FRAME_TAIL % (sent_ms, late_ms)
    assert len(tail) == protocol.FRAME_TAIL_LEN and tail.decode() == protocol.frame_tail(sent_ms=sent_ms,
                                                                                          late_ms=late_ms)
    frame = protocol.Frame(seq=3, t_ms=75.0, text="tok ", channel="content", tokens=1)
    msg = json.loads(protocol.frame_head(frame) + tail.decode())  # the padding is JSON whitespace
    assert msg["sent_ms"] == pytest.approx(sent_ms, abs=5e-4) and msg["late_ms"] == pytest.approx(late_ms, abs=5e-4)


def test_a_tail_that_does_not_fit_its_width_is_longer_and_still_valid_json():
    tail = protocol.FRAME_TAIL % (1765152000000.0, 1e7)  # 2.8 hours late: the sender frames it at send time
    assert len(tail) > protocol.FRAME_TAIL_LEN
    frame = protocol.Frame(seq=0, t_ms=0.0, text="x", channel="content", tokens=1)
    assert json.loads(protocol.frame_head(frame) + tail.decode())["late_ms"] == 1e7
