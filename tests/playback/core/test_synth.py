"""Synthetic streams: exact constant-rate timing, the timing model's features, statistics, determinism."""

import math

import numpy as np
import pytest

from playback.core import tokenizers
from playback.core.metrics import compute
from playback.core.stream import StreamMeta
from playback.core.synth import ramp_warp, stall_durations, synth_params, synthesize
from playback.core.timing import TimingSpec

PARAGRAPH = (
    "A streamed answer can feel quick even when its total time is long, as long as text keeps arriving. "
    "Readers notice the first words, the rhythm and the pauses more than the average rate. "
)
LONG_TEXT = PARAGRAPH * 60  # a few thousand word tokens, ~11k characters


def times(stream):
    return [p.t_ms for p in stream.pieces]


# --- the constant-rate default ---------------------------------------------------------------------


def test_constant_token_rate_puts_token_i_at_ttft_plus_i_over_rate():
    s = synthesize("one two three four five six", "word", TimingSpec(ttft_ms=300, rate=25))
    assert [p.text for p in s.pieces] == ["one ", "two ", "three ", "four ", "five ", "six"]
    assert times(s) == [300.0 + i * 40.0 for i in range(6)]


def test_constant_token_rate_is_exactly_the_metric_decode_rate():
    s = synthesize(LONG_TEXT, "word", TimingSpec(ttft_ms=750, rate=25))
    m = compute(s)
    assert m.ttft_ms == 750.0
    assert m.output_tokens == tokenizers.get("word").count(LONG_TEXT)
    assert m.tokens_per_s == pytest.approx(25.0, rel=1e-12)
    assert m.itl_cv == pytest.approx(0.0, abs=1e-9)


def test_chars_rate_gap_before_each_piece_is_its_characters_over_the_rate():
    s = synthesize("ab cde f", "word", TimingSpec(ttft_ms=100, rate=10, rate_unit="chars"))
    assert [p.text for p in s.pieces] == ["ab ", "cde ", "f"]
    # the first piece is at TTFT; then 4 chars at 10 chars/s = 400 ms, then 1 char = 100 ms
    assert times(s) == pytest.approx([100.0, 500.0, 600.0])
    assert compute(s).chars_per_s == pytest.approx(10.0, rel=1e-12)


def test_chars_rate_is_exactly_the_metric_chars_rate_on_a_long_stream():
    s = synthesize(LONG_TEXT, "word", TimingSpec(rate=80, rate_unit="chars"))
    assert compute(s).chars_per_s == pytest.approx(80.0, rel=1e-12)


def test_empty_text_gives_an_empty_stream():
    s = synthesize("", "word", TimingSpec())
    assert s.pieces == ()
    assert s.meta.source == "synthetic"


# --- tokens that end mid-character (cl100k_base) -------------------------------------------------------


def test_mid_character_tokens_keep_their_own_piece_and_time():
    text = "你好世界"
    s = synthesize(text, "cl100k_base", TimingSpec(ttft_ms=200, rate=10))
    pieces = tokenizers.get("cl100k_base").pieces(text)
    assert "" in pieces[1:]  # the fixture really has a token ending inside a character
    assert [p.text for p in s.pieces] == pieces
    assert s.text == text
    assert sum(p.tokens for p in s.pieces) == len(pieces)
    assert times(s) == [200.0 + i * 100.0 for i in range(len(pieces))]
    assert compute(s).tokens_per_s == pytest.approx(10.0, rel=1e-12)


def test_leading_mid_character_tokens_share_the_ttft_of_the_character_they_start():
    text = "鹦鹉学舌"
    pieces = tokenizers.get("cl100k_base").pieces(text)
    assert pieces == ["", "", "鹦", "", "", "鹉", "学", "", "舌"]
    s = synthesize(text, "cl100k_base", TimingSpec(ttft_ms=200, rate=10))
    assert times(s) == [200.0, 200.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0]
    m = compute(s)
    assert m.ttft_ms == 200.0
    # the metric counts the two leading tokens as decoded: rate * (N - 1) / (N - 3)
    assert m.tokens_per_s == pytest.approx(10.0 * 8 / 6)


def test_chars_rate_spreads_a_character_over_the_tokens_that_carry_it():
    s = synthesize("鹦鹉学舌", "cl100k_base", TimingSpec(ttft_ms=0, rate=3, rate_unit="chars"))
    char_ms = 1000.0 / 3
    expected = [0, 0, 0, char_ms / 3, 2 * char_ms / 3, char_ms, 2 * char_ms, 2.5 * char_ms, 3 * char_ms]
    assert times(s) == pytest.approx(expected)
    assert compute(s).chars_per_s == pytest.approx(3.0, rel=1e-12)


def test_cl100k_stream_joins_back_to_the_text_and_counts_every_token():
    text = "Hello 🦜🦜 world, 鹦鹉学舌。 " * 50
    s = synthesize(text, "cl100k_base", TimingSpec(rate=40))
    assert s.text == text
    assert s.meta.tokenizer == "cl100k_base"
    assert compute(s).output_tokens == tokenizers.get("cl100k_base").count(text)


# --- bursts ------------------------------------------------------------------------------------------


def test_bursts_release_k_tokens_per_piece_at_k_over_rate():
    text = "a b c d e f g h i j"  # 10 word tokens
    s = synthesize(text, "word", TimingSpec(ttft_ms=0, rate=10, burst_size=4))
    assert [p.tokens for p in s.pieces] == [4, 4, 2]
    assert [p.text for p in s.pieces] == ["a b c d ", "e f g h ", "i j"]
    # 4 tokens take 400 ms; the last piece waits only for its 2 tokens (200 ms)
    assert times(s) == [0.0, 400.0, 600.0]


def test_bursts_keep_the_long_run_rate():
    spec = TimingSpec(rate=50, burst_size=3)
    s = synthesize(LONG_TEXT, "word", spec)
    n = tokenizers.get("word").count(LONG_TEXT)
    assert {p.tokens for p in s.pieces[:-1]} == {3}
    m = compute(s)
    assert m.output_tokens == n
    assert m.tokens_per_s == pytest.approx(50.0 * (n - 1) / (n - 3), rel=1e-12)
    assert m.itl_median_ms == pytest.approx(60.0)


# --- jitter ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gamma", "lognormal"])
@pytest.mark.parametrize("cv", [0.3, 0.8])
def test_jitter_has_the_specified_cv_and_keeps_the_rate(kind, cv):
    text = "x" * 20_000
    s = synthesize(text, "char", TimingSpec(rate=40, jitter=kind, jitter_cv=cv), seed=7)
    m = compute(s)
    assert m.tokens_per_s == pytest.approx(40.0, rel=0.02)
    assert m.itl_cv == pytest.approx(cv, rel=0.05)
    assert m.itl_mean_ms == pytest.approx(25.0, rel=0.02)


def test_jitter_shapes_the_gaps_without_changing_the_total_duration():
    plain = synthesize(LONG_TEXT, "word", TimingSpec(rate=30))
    jittered = synthesize(LONG_TEXT, "word", TimingSpec(rate=30, jitter="gamma", jitter_cv=0.5))
    assert compute(jittered).e2e_ms == pytest.approx(compute(plain).e2e_ms, rel=1e-12)
    assert compute(jittered).itl_cv > 0.4


def test_gamma_and_lognormal_have_their_own_medians():
    # same mean (25 ms) and CV (1): gamma with shape 1 is exponential, median 25 ln 2;
    # the lognormal's median is 25 / sqrt(1 + cv^2)
    text = "x" * 20_000
    g = compute(synthesize(text, "char", TimingSpec(rate=40, jitter="gamma", jitter_cv=1.0)))
    ln = compute(synthesize(text, "char", TimingSpec(rate=40, jitter="lognormal", jitter_cv=1.0)))
    assert g.itl_median_ms == pytest.approx(25.0 * math.log(2), rel=0.03)
    assert ln.itl_median_ms == pytest.approx(25.0 / math.sqrt(2), rel=0.03)


# --- stalls ------------------------------------------------------------------------------------------


def test_stall_count_matches_the_poisson_expectation():
    n = 20_000
    spec = TimingSpec(rate=50, stall_rate_per_s=0.25, stall_ms=1000)
    s = synthesize("x" * n, "char", spec, seed=3)
    m = compute(s)
    expected = 0.25 * (n - 1) / 50  # stalls per second x generation time in seconds = 100
    assert abs(m.stall_count - expected) < 4 * math.sqrt(expected)
    # fixed 1000 ms stalls: the stream is longer than the constant one by a whole number of stalls
    extra = m.e2e_ms - (m.ttft_ms + (n - 1) * 20.0)
    assert extra / 1000.0 == pytest.approx(round(extra / 1000.0), abs=1e-6)
    assert round(extra / 1000.0) >= m.stall_count


def test_stalls_only_delay_pieces_after_them():
    s = synthesize("x" * 5000, "char", TimingSpec(rate=100, stall_rate_per_s=1, stall_ms=700), seed=1)
    gaps = np.diff(times(s))
    assert set(np.round(gaps, 6)) <= {10.0, 710.0, 1410.0, 2110.0}
    assert (np.round(gaps, 6) > 10).sum() > 10


@pytest.mark.parametrize(("dist", "cv", "expected_cv"), [("exponential", 0.0, 1.0), ("lognormal", 0.5, 0.5)])
def test_stall_durations_have_the_specified_mean_and_spread(dist, cv, expected_cv):
    rng = np.random.Generator(np.random.PCG64(11))
    d = stall_durations(rng, 40_000, 800.0, dist, cv)
    assert d.mean() == pytest.approx(800.0, rel=0.03)
    assert d.std() / d.mean() == pytest.approx(expected_cv, rel=0.05)


def test_fixed_stall_durations_are_all_the_mean():
    d = stall_durations(np.random.Generator(np.random.PCG64(0)), 5, 450.0, "fixed")
    assert d.tolist() == [450.0] * 5


# --- ramp --------------------------------------------------------------------------------------------


def test_ramp_starts_slow_and_ends_ramp_ms_times_one_minus_f_over_two_later():
    n = 100
    spec = TimingSpec(ttft_ms=0, rate=10, ramp_ms=1000, ramp_start_fraction=0.5)
    s = synthesize("x" * n, "char", spec)
    t = times(s)
    # token 1: solve 0.5 t + 0.5 t^2 / 2000 = 100  ->  t = 2000 (sqrt(0.35) - 0.5)
    assert t[1] == pytest.approx(2000 * (math.sqrt(0.35) - 0.5))
    assert t[-1] == pytest.approx((n - 1) * 100.0 + 250.0)
    gaps = np.diff(t)
    assert np.all(np.diff(gaps[:7]) < 0)  # speeding up during the ramp
    assert gaps[20:] == pytest.approx(100.0)  # constant after it


def test_ramp_warp_is_identity_when_starting_at_full_rate():
    s = np.array([0.0, 10.0, 500.0])
    assert ramp_warp(s.copy(), 1000.0, 1.0).tolist() == s.tolist()


# --- determinism and metadata --------------------------------------------------------------------------

FULL_SPEC = TimingSpec(
    ttft_ms=600,
    rate=35,
    jitter="lognormal",
    jitter_cv=0.6,
    stall_rate_per_s=0.3,
    stall_ms=900,
    stall_dist="exponential",
    burst_size=2,
    ramp_ms=800,
)


def test_same_spec_and_seed_give_the_same_stream_bit_for_bit():
    a = synthesize(LONG_TEXT, "word", FULL_SPEC, seed=42)
    b = synthesize(LONG_TEXT, "word", FULL_SPEC, seed=42)
    assert a.to_json() == b.to_json()
    assert a.content_hash() == b.content_hash()


def test_different_seeds_give_different_timings():
    a = synthesize(LONG_TEXT, "word", FULL_SPEC, seed=1)
    b = synthesize(LONG_TEXT, "word", FULL_SPEC, seed=2)
    assert a.text == b.text
    assert times(a) != times(b)


def test_meta_records_source_tokenizer_spec_and_seed():
    meta = StreamMeta(source="vllm", model="Qwen/Qwen3.6-27B", prompt="Explain streaming", notes=("picked",))
    s = synthesize(PARAGRAPH, "word", FULL_SPEC, seed=9, meta=meta)
    assert s.meta.source == "synthetic"
    assert s.meta.tokenizer == "word"
    assert (s.meta.model, s.meta.prompt) == ("Qwen/Qwen3.6-27B", "Explain streaming")
    assert s.meta.notes[0] == "picked"
    assert s.meta.notes[1].startswith("synth:{")
    assert synth_params(s) == (FULL_SPEC, 9, "word")


def test_a_stream_rebuilt_from_its_note_is_identical():
    s = synthesize(PARAGRAPH, "word", FULL_SPEC, seed=5)
    spec, seed, tok = synth_params(s)
    assert synthesize(PARAGRAPH, tok, spec, seed=seed).to_json() == s.to_json()


def test_recorded_streams_have_no_synth_params():
    s = synthesize(PARAGRAPH, "word", TimingSpec())
    assert synth_params(s.with_pieces(s.pieces, meta=StreamMeta(source="vllm"))) is None


def test_synthesize_rejects_a_timing_that_is_not_a_spec():
    with pytest.raises(TypeError, match="timing"):
        synthesize("hi", "word", {"rate": 3})  # type: ignore[arg-type]


def test_unknown_tokenizer_is_named_in_the_error():
    with pytest.raises(KeyError, match="no-such-tokenizer"):
        synthesize("hi", "no-such-tokenizer", TimingSpec())
