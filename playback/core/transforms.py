"""Transforms of a stream's timing, for recorded and synthetic streams alike.

Each returns a new ``Stream`` (texts, channels and token counts untouched) and appends a note
``name:{json}`` to ``meta.notes`` so that a stimulus always says how it was derived. TTFT, decode rate and
content pieces mean what ``playback.core.metrics`` says they mean.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from playback.core.metrics import compute
from playback.core.stream import Piece, Stream
from playback.core.synth import stall_delays, stall_durations
from playback.core.timing import STALL_DISTS


class TransformError(ValueError):
    """A transform that cannot apply to this stream or these arguments (the message says why)."""


def _note(name: str, **params: Any) -> str:
    return f"{name}:" + json.dumps(params, separators=(",", ":"), sort_keys=True)


def _content_span(stream: Stream) -> tuple[float, float]:
    """(TTFT, last content time) by the metric's definition; raises when there is no content."""
    content = [p.t_ms for p in stream.pieces if p.channel == "content" and p.text]
    if not content:
        raise TransformError("stream has no content piece (no visible answer text), so no TTFT")
    return content[0], content[-1]


def _retimed(stream: Stream, times: Sequence[float]) -> list[Piece]:
    return [Piece(p.text, t, p.channel, p.tokens) for p, t in zip(stream.pieces, times, strict=True)]


def rescale_rate(stream: Stream, tokens_per_s: float) -> Stream:
    """Stretch the decode phase so that the metric's decode rate equals ``tokens_per_s``.

    Every piece after TTFT moves to ``TTFT + factor·(t − TTFT)``, so TTFT and the relative gaps (the jitter
    and stall shape) are kept; pieces at or before TTFT do not move.
    """
    if not (isinstance(tokens_per_s, int | float) and math.isfinite(tokens_per_s) and tokens_per_s > 0):
        raise TransformError(f"tokens_per_s: must be a finite number > 0, got {tokens_per_s!r}")
    m = compute(stream)
    if m.tokens_per_s is None or m.tokens_per_s == 0:
        raise TransformError(
            "stream has no decode phase (needs >= 2 output tokens and a last content piece after TTFT)"
        )
    ttft, e2e = m.ttft_ms, m.e2e_ms
    span = (m.output_tokens - 1) / tokens_per_s * 1000.0
    factor = span / (e2e - ttft)
    times = [t if t <= ttft else ttft + (t - ttft) * factor for t in (p.t_ms for p in stream.pieces)]
    note = _note("rescale_rate", tokens_per_s=tokens_per_s, factor=factor)
    return stream.with_pieces(_retimed(stream, times), note=note)


def set_ttft(stream: Stream, ttft_ms: float, clamp: bool = False) -> Stream:
    """Shift every piece by one offset so that the first content piece is at ``ttft_ms``.

    Reasoning pieces before it shift with it. If that would put a piece before 0 ms, raise, or with
    ``clamp=True`` put such pieces at 0 ms (order is kept; their gaps to each other are lost).
    """
    if not (isinstance(ttft_ms, int | float) and math.isfinite(ttft_ms) and ttft_ms >= 0):
        raise TransformError(f"ttft_ms: must be a finite number >= 0, got {ttft_ms!r}")
    old, _ = _content_span(stream)
    delta = ttft_ms - old
    earliest = stream.pieces[0].t_ms + delta
    if earliest < 0 and not clamp:
        raise TransformError(
            f"ttft_ms: moving TTFT from {old} to {ttft_ms} ms would put the first piece at {earliest} ms "
            "(earlier pieces, e.g. reasoning, come before TTFT); pass clamp=True to start them at 0 ms"
        )
    target = float(ttft_ms)
    times = []
    for p in stream.pieces:  # TTFT lands exactly on target; float rounding must not reorder neighbours
        if p.t_ms == old:
            times.append(target)
        elif p.t_ms < old:
            times.append(min(max(p.t_ms + delta, 0.0), target))
        else:
            times.append(max(p.t_ms + delta, target))
    note = _note("set_ttft", ttft_ms=ttft_ms, shift_ms=delta, clamped=earliest < 0)
    return stream.with_pieces(_retimed(stream, times), note=note)


def inject_stalls(
    stream: Stream,
    at_ms: Sequence[float] | None = None,
    duration_ms: float | Sequence[float] = 1000.0,
    *,
    rate_per_s: float | None = None,
    seed: int = 0,
    dist: str = "fixed",
    cv: float = 0.0,
) -> Stream:
    """Insert pauses: a stall at time a lasting d delays every piece later than a (original times) by d.

    Either give the stall times ``at_ms`` (with one ``duration_ms`` for all, or one per stall), or give
    ``rate_per_s``: stalls then arrive as a Poisson process of that rate over the decode phase
    (TTFT, last content piece), drawn with ``numpy.random.Generator(PCG64(seed))`` as ``synth`` does, each
    lasting a draw from ``dist`` ("fixed", "exponential", "lognormal" with ``cv``) of mean ``duration_ms``.
    """
    if (at_ms is None) == (rate_per_s is None):
        raise TransformError("give exactly one of at_ms (stall times) or rate_per_s (Poisson stalls)")
    if at_ms is not None:
        at = np.asarray(list(at_ms), dtype=np.float64)
        if at.size and not np.all(np.isfinite(at)):
            raise TransformError("at_ms: every stall time must be a finite number")
        if isinstance(duration_ms, int | float):
            durations = np.full(at.size, float(duration_ms))
        else:
            durations = np.asarray(list(duration_ms), dtype=np.float64)
            if durations.size != at.size:
                raise TransformError(
                    f"duration_ms: {durations.size} durations for {at.size} stall times (give one or as many)"
                )
        if np.any(durations < 0) or not np.all(np.isfinite(durations)):
            raise TransformError("duration_ms: every duration must be a finite number >= 0")
        order = np.argsort(at, kind="stable")
        at, durations = at[order], durations[order]
        params: dict[str, Any] = {"at_ms": at.tolist(), "duration_ms": durations.tolist()}
    else:
        if not (isinstance(rate_per_s, int | float) and math.isfinite(rate_per_s) and rate_per_s >= 0):
            raise TransformError(f"rate_per_s: must be a finite number >= 0, got {rate_per_s!r}")
        if not (isinstance(duration_ms, int | float) and math.isfinite(duration_ms) and duration_ms > 0):
            raise TransformError(f"duration_ms: must be one number > 0 (the mean) with rate_per_s, got {duration_ms!r}")
        if dist not in STALL_DISTS:
            raise TransformError(f"dist: must be one of {', '.join(STALL_DISTS)}; got {dist!r}")
        if not (math.isfinite(cv) and cv >= 0):
            raise TransformError(f"cv: must be a finite number >= 0, got {cv!r}")
        ttft, e2e = _content_span(stream)
        rng = np.random.Generator(np.random.PCG64(seed))
        count = int(rng.poisson(rate_per_s * (e2e - ttft) / 1000.0))
        at = np.sort(rng.uniform(ttft, e2e, count))
        durations = stall_durations(rng, count, float(duration_ms), dist, cv)
        params = {
            "rate_per_s": rate_per_s,
            "mean_ms": duration_ms,
            "dist": dist,
            "cv": cv,
            "seed": seed,
            "count": count,
            "total_ms": float(durations.sum()),
        }
    old = np.fromiter((p.t_ms for p in stream.pieces), dtype=np.float64, count=len(stream.pieces))
    times = (old + stall_delays(old, at, durations)).tolist()
    return stream.with_pieces(_retimed(stream, times), note=_note("inject_stalls", **params))


def truncate(stream: Stream, max_tokens: int | None = None, max_ms: float | None = None) -> Stream:
    """Keep the leading pieces that fit both limits: at most ``max_tokens`` tokens and times <= ``max_ms``.

    Tokens are counted over all channels (reasoning tokens are output too). A piece carrying several tokens
    is never split, so the kept count may be below ``max_tokens``. If pieces are dropped, a recorded
    ``output_tokens`` no longer applies and becomes ``None`` (count the kept pieces).
    """
    if max_tokens is None and max_ms is None:
        raise TransformError("give max_tokens, max_ms or both")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0):
        raise TransformError(f"max_tokens: must be an integer >= 0, got {max_tokens!r}")
    if max_ms is not None and not (isinstance(max_ms, int | float) and max_ms >= 0):
        raise TransformError(f"max_ms: must be a number >= 0, got {max_ms!r}")
    kept: list[Piece] = []
    tokens = 0
    for p in stream.pieces:
        if max_ms is not None and p.t_ms > max_ms:
            break
        if max_tokens is not None and tokens + p.tokens > max_tokens:
            break
        tokens += p.tokens
        kept.append(p)
    dropped = len(stream.pieces) - len(kept)
    output_tokens = stream.output_tokens if dropped == 0 else None
    note = _note("truncate", max_tokens=max_tokens, max_ms=max_ms, dropped_pieces=dropped)
    return stream.with_pieces(kept, note=note, output_tokens=output_tokens)
