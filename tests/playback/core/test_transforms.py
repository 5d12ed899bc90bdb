"""Stream transforms: hand-computed timings, the metric they target, notes, and clear refusals."""

import json

import pytest

from playback.core.metrics import compute
from playback.core.stream import Piece, Stream, StreamMeta
from playback.core.synth import synthesize
from playback.core.timing import TimingSpec
from playback.core.transforms import TransformError, inject_stalls, rescale_rate, set_ttft, truncate


def make(*pieces, output_tokens=None):
    """Pieces as (t_ms, text) or (t_ms, text, channel, tokens)."""
    return Stream(
        pieces=tuple(Piece(p[1], p[0], *p[2:]) for p in pieces),
        meta=StreamMeta(source="vllm", notes=("imported",)),
        id="req-1",
        output_tokens=output_tokens,
    )


def times(stream):
    return [p.t_ms for p in stream.pieces]


def last_note(stream):
    name, _, payload = stream.meta.notes[-1].partition(":")
    return name, json.loads(payload)


BASIC = make((100.0, "a"), (150.0, "b"), (250.0, "c"), (300.0, "d"))  # 3 tokens in 200 ms: 15 tok/s
REASONING = make((20.0, "think", "reasoning", 1), (60.0, "more", "reasoning", 1), (100.0, "a"), (140.0, "b"))


# --- rescale_rate --------------------------------------------------------------------------------------


def test_rescale_rate_halves_the_decode_gaps_to_double_the_rate():
    out = rescale_rate(BASIC, 30.0)
    assert times(out) == pytest.approx([100.0, 125.0, 175.0, 200.0])
    assert compute(out).tokens_per_s == pytest.approx(30.0, rel=1e-12)
    assert compute(out).ttft_ms == 100.0


def test_rescale_rate_keeps_pieces_before_ttft_and_the_texts():
    s = make((20.0, "r", "reasoning", 1), (100.0, "a"), (110.0, "b"), (130.0, "c"))
    out = rescale_rate(s, 10.0)  # 2 tokens at 10/s: 200 ms instead of 30 ms
    assert times(out) == pytest.approx([20.0, 100.0, 100.0 + 200 / 3, 300.0])
    assert [(p.text, p.channel, p.tokens) for p in out.pieces] == [(p.text, p.channel, p.tokens) for p in s.pieces]


def test_rescale_rate_uses_the_recorded_output_tokens():
    # vLLM records output_lens: 7 tokens over 4 SSE messages; 6 decoded tokens in 300 ms = 20 tok/s
    s = make((100.0, "ab"), (200.0, "cd"), (300.0, "e"), (400.0, "fg"), output_tokens=7)
    out = rescale_rate(s, 60.0)
    assert times(out)[-1] == pytest.approx(200.0)
    assert compute(out).tokens_per_s == pytest.approx(60.0, rel=1e-12)


def test_rescale_rate_keeps_the_jitter_shape_of_a_synthetic_stream():
    s = synthesize("word " * 400, "word", TimingSpec(rate=20, jitter="gamma", jitter_cv=0.4), seed=4)
    out = rescale_rate(s, 55.0)
    before, after = compute(s), compute(out)
    assert after.tokens_per_s == pytest.approx(55.0, rel=1e-12)
    assert after.ttft_ms == before.ttft_ms
    assert after.itl_cv == pytest.approx(before.itl_cv, rel=1e-9)


def test_rescale_rate_notes_the_target_and_factor():
    out = rescale_rate(BASIC, 30.0)
    assert out.meta.notes[0] == "imported"
    assert last_note(out) == ("rescale_rate", {"factor": 0.5, "tokens_per_s": 30.0})
    assert BASIC.meta.notes == ("imported",)  # the input is untouched


@pytest.mark.parametrize("bad", [0, -5, float("inf"), float("nan"), "fast"])
def test_rescale_rate_rejects_a_bad_target(bad):
    with pytest.raises(TransformError, match="tokens_per_s"):
        rescale_rate(BASIC, bad)


def test_rescale_rate_refuses_a_stream_without_a_decode_phase():
    with pytest.raises(TransformError, match="no decode phase"):
        rescale_rate(make((100.0, "all at once", "content", 5)), 20.0)


# --- set_ttft ------------------------------------------------------------------------------------------


def test_set_ttft_shifts_every_piece_including_reasoning():
    out = set_ttft(REASONING, 300.0)
    assert times(out) == [220.0, 260.0, 300.0, 340.0]
    m = compute(out)
    assert (m.ttft_ms, m.ttfr_ms) == (300.0, 220.0)


def test_set_ttft_ignores_empty_pieces_when_finding_the_first_content():
    s = make((50.0, ""), (80.0, "hello"), (120.0, " world"))
    out = set_ttft(s, 30.0)
    assert times(out) == [0.0, 30.0, 70.0]
    assert compute(out).ttft_ms == 30.0


def test_set_ttft_lands_exactly_on_the_target_despite_float_offsets():
    s = make((0.7, "x", "reasoning", 1), (0.9, "a"), (1.1, "b"))
    assert 0.9 + (0.3 - 0.9) != 0.3  # a plain shift would miss the target by an ulp
    out = set_ttft(s, 0.3)
    assert compute(out).ttft_ms == 0.3
    assert times(out) == pytest.approx([0.1, 0.3, 0.5])


def test_set_ttft_refuses_to_move_a_piece_before_zero():
    with pytest.raises(TransformError, match=r"ttft_ms: .*clamp=True"):
        set_ttft(REASONING, 50.0)


def test_set_ttft_with_clamp_starts_early_pieces_at_zero():
    out = set_ttft(REASONING, 50.0, clamp=True)
    assert times(out) == [0.0, 10.0, 50.0, 90.0]
    assert last_note(out) == ("set_ttft", {"clamped": True, "shift_ms": -50.0, "ttft_ms": 50.0})


def test_set_ttft_refuses_a_stream_without_content():
    with pytest.raises(TransformError, match="no content piece"):
        set_ttft(make((10.0, "thinking", "reasoning", 1)), 100.0)


# --- inject_stalls -----------------------------------------------------------------------------------


def test_a_stall_delays_every_later_piece_by_its_duration():
    out = inject_stalls(BASIC, at_ms=[120.0], duration_ms=500.0)
    assert times(out) == [100.0, 650.0, 750.0, 800.0]
    m = compute(out)
    assert (m.stall_count, m.stall_total_ms) == (1, 550.0)


def test_a_piece_exactly_at_the_stall_time_is_not_delayed():
    assert times(inject_stalls(BASIC, at_ms=[150.0], duration_ms=500.0)) == [100.0, 150.0, 750.0, 800.0]


def test_several_stalls_with_their_own_durations_add_up_in_any_order():
    out = inject_stalls(BASIC, at_ms=[260.0, 120.0], duration_ms=[1000.0, 500.0])
    assert times(out) == [100.0, 650.0, 750.0, 1800.0]
    assert last_note(out) == ("inject_stalls", {"at_ms": [120.0, 260.0], "duration_ms": [500.0, 1000.0]})


def test_a_stall_before_ttft_delays_the_first_token():
    assert times(inject_stalls(BASIC, at_ms=[0.0], duration_ms=400.0)) == [500.0, 550.0, 650.0, 700.0]


def test_poisson_stalls_are_seeded_and_fall_in_the_decode_phase():
    s = synthesize("x" * 10_000, "char", TimingSpec(ttft_ms=400, rate=100))  # 99.99 s of decoding
    a = inject_stalls(s, rate_per_s=0.5, duration_ms=800.0, seed=12)
    b = inject_stalls(s, rate_per_s=0.5, duration_ms=800.0, seed=12)
    c = inject_stalls(s, rate_per_s=0.5, duration_ms=800.0, seed=13)
    assert a.to_json() == b.to_json()
    assert times(a) != times(c)
    name, params = last_note(a)
    assert name == "inject_stalls"
    assert abs(params["count"] - 50) < 4 * 50**0.5  # Poisson(0.5/s x 100 s)
    m = compute(a)
    assert m.ttft_ms == 400.0
    assert m.e2e_ms == pytest.approx(compute(s).e2e_ms + 800.0 * params["count"])
    assert params["total_ms"] == pytest.approx(800.0 * params["count"])


def test_poisson_stalls_can_have_random_durations():
    s = synthesize("x" * 2000, "char", TimingSpec(rate=100))
    out = inject_stalls(s, rate_per_s=2.0, duration_ms=300.0, dist="exponential", seed=1)
    _, params = last_note(out)
    assert params["count"] > 10
    assert compute(out).e2e_ms == pytest.approx(compute(s).e2e_ms + params["total_ms"])
    assert params["total_ms"] != pytest.approx(300.0 * params["count"])


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "exactly one of"),
        ({"at_ms": [100.0], "rate_per_s": 1.0}, "exactly one of"),
        ({"at_ms": [100.0, 200.0], "duration_ms": [1.0, 2.0, 3.0]}, "duration_ms: 3 durations for 2"),
        ({"at_ms": [100.0], "duration_ms": -1.0}, "duration_ms"),
        ({"at_ms": [float("nan")]}, "at_ms"),
        ({"rate_per_s": -1.0}, "rate_per_s"),
        ({"rate_per_s": 1.0, "dist": "uniform"}, "dist"),
    ],
)
def test_inject_stalls_rejects_bad_arguments(kwargs, fragment):
    with pytest.raises(TransformError, match=fragment):
        inject_stalls(BASIC, **kwargs)


# --- truncate ----------------------------------------------------------------------------------------

BURSTS = make((0.0, "a b c d ", "content", 4), (400.0, "e f g h ", "content", 4), (600.0, "i j", "content", 2))


def test_truncate_by_tokens_keeps_whole_pieces_only():
    out = truncate(BURSTS, max_tokens=9)
    assert [p.text for p in out.pieces] == ["a b c d ", "e f g h "]
    assert compute(out).output_tokens == 8


def test_truncate_by_time_keeps_pieces_at_or_before_the_limit():
    assert times(truncate(BASIC, max_ms=250.0)) == [100.0, 150.0, 250.0]


def test_truncate_with_both_limits_stops_at_the_first_one_reached():
    assert times(truncate(BASIC, max_tokens=3, max_ms=1000.0)) == [100.0, 150.0, 250.0]
    assert times(truncate(BASIC, max_tokens=3, max_ms=120.0)) == [100.0]


def test_truncate_counts_reasoning_tokens_too():
    out = truncate(REASONING, max_tokens=3)
    assert [p.text for p in out.pieces] == ["think", "more", "a"]


def test_truncate_drops_a_recorded_output_token_count_only_when_it_cuts():
    s = make((100.0, "ab"), (200.0, "cd"), (300.0, "e"), output_tokens=7)
    assert truncate(s, max_ms=1000.0).output_tokens == 7
    cut = truncate(s, max_ms=250.0)
    assert cut.output_tokens is None
    assert last_note(cut) == ("truncate", {"dropped_pieces": 1, "max_ms": 250.0, "max_tokens": None})


def test_truncate_can_keep_nothing():
    assert truncate(BASIC, max_tokens=0).pieces == ()


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({}, "give max_tokens, max_ms or both"),
        ({"max_tokens": -1}, "max_tokens"),
        ({"max_tokens": 2.5}, "max_tokens"),
        ({"max_ms": -3.0}, "max_ms"),
    ],
)
def test_truncate_rejects_bad_limits(kwargs, fragment):
    with pytest.raises(TransformError, match=fragment):
        truncate(BASIC, **kwargs)


def test_transforms_keep_id_and_metadata():
    for out in (
        rescale_rate(BASIC, 30.0),
        set_ttft(BASIC, 10.0),
        inject_stalls(BASIC, at_ms=[1.0]),
        truncate(BASIC, max_tokens=2),
    ):
        assert out.id == "req-1"
        assert out.meta.source == "vllm"
        assert out.meta.notes[:1] == ("imported",)
        assert len(out.meta.notes) == 2
