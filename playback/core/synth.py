"""Synthetic streams: a real text, cut by a real tokenizer, timed by a ``TimingSpec``.

The timing model, precisely (times in ms from the request start):

1. **Pieces.** The tokenizer gives one visible string per token (``""`` for a token ending mid-character).
   With ``burst_size`` k the tokens are grouped in order, k per piece (the last piece may hold fewer);
   ``Piece.tokens`` is the group size and its text the group's texts joined. With k = 1 every token is its
   own piece, empty ones included, so token counts and token times stay exact.
2. **Anchor.** The first piece with visible text (the metric's first content piece) is at ``ttft_ms``.
   Pieces before it (a text that opens with a character split over several tokens) cannot be seen
   earlier, so they share its time.
3. **Weights.** Each later piece j costs a weight w_j: its token count (``rate_unit="tokens"``) or its
   character count (``"chars"``, code points as ``textunits.count_chars``). In chars mode a run of empty
   pieces and the piece that completes their character share that piece's characters equally, so each
   still gets its own time. The constant-rate gap before piece j is ``w_j / rate`` seconds.
4. **Jitter.** Gaps are multiplied by i.i.d. factors with mean 1 and CV ``jitter_cv`` (gamma with shape
   1/cv², or lognormal with σ² = ln(1 + cv²)); the factors are then rescaled so that the weighted sum of the
   gaps equals the constant-rate total exactly. Jitter changes the shape of the stream, never its length.
5. **Ramp.** Generation time s (ms after TTFT at full rate) is warped to real time t so that the
   instantaneous rate is ``rate × (f + (1 − f)·t/ramp_ms)`` for t < ``ramp_ms`` and ``rate`` after, with
   f = ``ramp_start_fraction``: the stream ends ``ramp_ms·(1 − f)/2`` later than without the ramp.
6. **Stalls.** Over the (warped) generation time T, stalls arrive as a Poisson process of
   ``stall_rate_per_s`` per second: their count is Poisson(rate·T), their positions uniform on (0, T). A
   stall at p delays every piece after p by its duration, drawn from ``stall_dist`` with mean ``stall_ms``.
   With ``stall_count`` n instead, exactly n stalls are placed the same way (positions uniform on (0, T)).
7. **Pauses.** With ``pause_every_ms`` E and ``pause_ms`` P, a piece at (stalled) time t after TTFT is delayed
   by ⌊t / E⌋·P (a piece exactly on a multiple of E comes before that pause): regular keep-alive gaps.
8. **Flush.** ``flush="interval"``: a buffering proxy releases what it holds at ticks ``flush_ms`` apart
   (phase uniform on [0, ``flush_ms``) after TTFT), so each piece moves to the first tick at or after it and
   the first visible piece arrives after ``ttft_ms``. ``flush="end"``: every piece arrives with the last one.

Consequences: with the defaults (no jitter, stalls, bursts or ramp) and a tokens rate, token i is at
``ttft_ms + i/rate·1000`` and ``metrics.compute`` reports exactly ``rate`` tokens/s; with a chars rate
``chars_per_s`` is exactly ``rate``. With jitter the decode rate is still exact. With k-token bursts the
long-run rate is ``rate`` but the metric's (N − 1)/(last − TTFT) reads ``rate·(N − 1)/(N − k)``, since the
first piece already carries k tokens (the same holds for f leading mid-character tokens, with f + 1 for k).

Randomness: ``numpy.random.Generator(PCG64(seed))``, drawn in a fixed order (jitter factors, stall count, stall
positions, stall durations, flush phase; a draw is skipped when its feature is off, so specs without the later
parts give the streams they always gave). The same spec, text, tokenizer and seed give the same stream bit for bit
with a given numpy version (numpy does not promise its ``Generator`` streams across versions). The stream's
``meta.notes`` gets ``synth:{...}`` (spec, seed and tokenizer as compact JSON); ``synth_params`` reads it back.
No Django import.
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import repeat

import numpy as np

from playback.core import tokenizers
from playback.core.stream import Piece, Stream, StreamMeta
from playback.core.timing import TimingSpec

NOTE_PREFIX = "synth:"


def synthesize(text: str, tokenizer: str, timing: TimingSpec, seed: int = 0, meta: StreamMeta | None = None) -> Stream:
    """A stream of ``text`` cut by ``tokenizer`` and timed by ``timing`` (see the module docstring)."""
    if not isinstance(timing, TimingSpec):
        raise TypeError(f"timing: expected a TimingSpec, got {type(timing).__name__}")
    tokens = tokenizers.get(tokenizer).pieces(text)
    k = timing.burst_size
    if k == 1:
        texts = tokens
        counts = None
    else:
        texts = ["".join(tokens[i : i + k]) for i in range(0, len(tokens), k)]
        counts = [k] * len(texts)
        if len(tokens) % k:
            counts[-1] = len(tokens) % k

    times = piece_times(texts, counts, timing, seed)
    note = NOTE_PREFIX + json.dumps(
        {"seed": seed, "tokenizer": tokenizer, "spec": timing.to_dict()},
        separators=(",", ":"),
        sort_keys=True,
    )
    base = meta if meta is not None else StreamMeta()
    meta_out = replace(base, source="synthetic", tokenizer=tokenizer, notes=(*base.notes, note))
    pieces = tuple(map(Piece, texts, times.tolist(), repeat("content"), repeat(1) if counts is None else counts))
    return Stream(pieces=pieces, meta=meta_out)


def piece_times(texts: list[str], counts: list[int] | None, timing: TimingSpec, seed: int = 0) -> np.ndarray:
    """Emission times (ms) of pieces with these texts and token counts (``None``: one token each)."""
    n = len(texts)
    if n == 0:
        return np.zeros(0)
    lens = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    visible = np.flatnonzero(lens)
    if visible.size == 0:  # nothing ever shows: every piece at TTFT
        return np.full(n, float(timing.ttft_ms))
    first = int(visible[0])

    if timing.rate_unit == "tokens":
        weights = np.ones(n) if counts is None else np.asarray(counts, dtype=np.float64)
    else:
        weights = _char_weights(lens, visible)
    w = weights[first + 1 :]  # gaps before each piece after the first visible one

    rng = np.random.Generator(np.random.PCG64(seed))
    if timing.jitter != "none" and timing.jitter_cv > 0 and w.size:
        factors = jitter_factors(rng, w.size, timing.jitter, timing.jitter_cv)
        w = w * factors * (w.sum() / np.dot(w, factors))

    s = np.empty(n - first)
    s[0] = 0.0
    np.cumsum(w, out=s[1:])
    s *= 1000.0 / timing.rate
    t = ramp_warp(s, timing.ramp_ms, timing.ramp_start_fraction) if timing.ramp_ms > 0 else s

    if timing.stall_rate_per_s > 0 and t[-1] > 0:
        total = float(t[-1])
        count = int(rng.poisson(timing.stall_rate_per_s * total / 1000.0))
        if count:
            at = np.sort(rng.uniform(0.0, total, count))
            durations = stall_durations(rng, count, timing.stall_ms, timing.stall_dist, timing.stall_cv)
            t = t + stall_delays(t, at, durations)
    elif timing.stall_count > 0 and t[-1] > 0:
        at = np.sort(rng.uniform(0.0, float(t[-1]), timing.stall_count))
        durations = stall_durations(rng, timing.stall_count, timing.stall_ms, timing.stall_dist, timing.stall_cv)
        t = t + stall_delays(t, at, durations)
    if timing.pause_every_ms > 0:
        t = t + pause_delays(t, timing.pause_every_ms, timing.pause_ms)
    if timing.flush == "interval":
        t = flush_ticks(t, timing.flush_ms, float(rng.uniform(0.0, timing.flush_ms)))
    elif timing.flush == "end":
        t = np.full_like(t, t[-1])

    out = np.empty(n)
    out[:first] = timing.ttft_ms
    out[first:] = timing.ttft_ms + t
    if timing.flush != "none":  # pieces before the first visible one leave the proxy with it
        out[:first] = out[first]
    return out


def pause_delays(times: np.ndarray, every_ms: float, pause_ms: float) -> np.ndarray:
    """Delay of each time (ms after TTFT): one ``pause_ms`` per whole ``every_ms`` strictly before it."""
    return np.maximum(np.ceil(times / every_ms) - 1.0, 0.0) * pause_ms


def flush_ticks(times: np.ndarray, flush_ms: float, phase_ms: float) -> np.ndarray:
    """Each time (ms after TTFT) moved to the first tick ``phase_ms + k·flush_ms`` (k >= 0) at or after it."""
    k = np.maximum(np.ceil((times - phase_ms) / flush_ms), 0.0)
    return phase_ms + k * flush_ms


def _char_weights(lens: np.ndarray, visible: np.ndarray) -> np.ndarray:
    """Characters per piece; a run of empty pieces shares the characters of the piece that ends it."""
    weights = lens.astype(np.float64)
    if visible.size == lens.size:
        return weights
    owner = np.searchsorted(visible, np.arange(lens.size))  # index (into visible) of the piece ending the run
    inside = owner < visible.size  # trailing empty pieces (not produced by real tokenizers) weigh nothing
    run = np.bincount(owner[inside], minlength=visible.size)
    weights[:] = 0.0
    weights[inside] = lens[visible[owner[inside]]] / run[owner[inside]]
    return weights


def jitter_factors(rng: np.random.Generator, n: int, kind: str, cv: float) -> np.ndarray:
    """``n`` i.i.d. positive factors with mean 1 and coefficient of variation ``cv``."""
    if kind == "gamma":
        return rng.gamma(1.0 / cv**2, cv**2, n)
    if kind == "lognormal":
        sigma2 = np.log1p(cv**2)
        return rng.lognormal(-sigma2 / 2.0, np.sqrt(sigma2), n)
    raise ValueError(f"jitter: unknown kind {kind!r}")


def stall_durations(rng: np.random.Generator, n: int, mean_ms: float, dist: str, cv: float = 0.0) -> np.ndarray:
    """``n`` stall durations (ms) with mean ``mean_ms`` from ``dist`` (fixed, exponential, lognormal)."""
    if dist == "fixed" or (dist == "lognormal" and cv == 0):
        return np.full(n, float(mean_ms))
    if dist == "exponential":
        return rng.exponential(mean_ms, n)
    if dist == "lognormal":
        sigma2 = np.log1p(cv**2)
        return rng.lognormal(np.log(mean_ms) - sigma2 / 2.0, np.sqrt(sigma2), n)
    raise ValueError(f"stall_dist: unknown distribution {dist!r}")


def stall_delays(times: np.ndarray, at: np.ndarray, durations: np.ndarray) -> np.ndarray:
    """Delay of each time: the summed durations of the stalls strictly before it (``at`` sorted)."""
    cum = np.concatenate(([0.0], np.cumsum(durations)))
    return cum[np.searchsorted(at, times, side="left")]


def ramp_warp(s: np.ndarray, ramp_ms: float, start_fraction: float) -> np.ndarray:
    """Map full-rate generation time ``s`` to real time under a linear rate ramp (see step 5 above)."""
    f = start_fraction
    if ramp_ms <= 0 or f >= 1:
        return s
    knee = ramp_ms * (1.0 + f) / 2.0  # full-rate work done by the end of the ramp
    early = s < knee
    t = s + (ramp_ms - knee)
    t[early] = ramp_ms * (np.sqrt(f * f + 2.0 * (1.0 - f) * s[early] / ramp_ms) - f) / (1.0 - f)
    return t


def synth_params(stream: Stream) -> tuple[TimingSpec, int, str] | None:
    """The (spec, seed, tokenizer) a stream was synthesised with, from its ``synth:`` note; else ``None``."""
    for note in stream.meta.notes:
        if note.startswith(NOTE_PREFIX):
            obj = json.loads(note[len(NOTE_PREFIX) :])
            return TimingSpec.from_dict(obj["spec"]), int(obj["seed"]), str(obj["tokenizer"])
    return None
