"""Token-delivery QoE metrics from the LLM-serving literature, computed on a ``playback.core.stream.Stream``.

Both compare when tokens *became visible* with when a reader expected them. A token's visible time is the time
of the content piece that carries it; tokens in a piece with no visible text yet (a byte-level token ending
inside a UTF-8 character) count at the next piece that shows text, and trailing invisible tokens are dropped.

**Andes QoE** (Liu et al. 2024, arXiv 2404.16283, §3.1). The expected timeline delivers the first token at
``ttft_ms`` and then ``tds`` tokens per second: ``e_i = ttft + i / tds``. A reader cannot digest tokens before
they are expected, so token ``i`` is digested at ``d_i = max(a_i, e_i)`` (``a_i`` its arrival), i.e. the
actual curve clipped by the expected one. QoE is the area under the digested-tokens curve divided by the area
under the expected curve, both from 0 to the later of the two completion times: 1 when every token is on time
or early, lower the later and longer tokens lag. ``pacing="buffer"`` instead models Andes' client buffer, which
releases tokens no faster than ``tds`` after a stall (``d_i = max(a_i, e_i, d_{i-1} + 1/tds)``).

**Etalon fluidity index** (Agrawal et al. 2024, arXiv 2407.07000; reference code
``etalon/metrics/metric_utils.py``). Token 0 has a deadline ``ttft_deadline_ms`` after the request, each later
token ``tbt_deadline_ms`` after the previous one; time saved by early tokens is carried forward as slack. When a
token is late, every whole deadline period that passed without it counts as a missed deadline (for the first
token: one plus the whole periods past the TTFT deadline) and the slack resets. The fluidity index is the share of
deadlines met, ``1 − missed / total``; this follows the reference code's counting exactly.

Defaults (ours, not the papers'; change them per study): an expected TTFT of 1 s and 5 tokens/s, about an
average silent reading speed (≈240 words/min at ≈1.3 tokens per English word); the fluidity deadlines use the
same numbers (1 s, 200 ms), so both metrics ask "did the stream keep up with a reader?".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from playback.core.stream import Channel, Stream

DEFAULT_TTFT_MS = 1000.0
DEFAULT_TDS_TOKENS_PER_S = 5.0
DEFAULT_TBT_DEADLINE_MS = 1000.0 / DEFAULT_TDS_TOKENS_PER_S


def token_times(stream: Stream, channel: Channel = "content") -> list[float]:
    """The time (ms from request start) each token of ``channel`` became visible, in order."""
    times: list[float] = []
    pending = 0
    for p in stream.pieces:
        if p.channel != channel:
            continue
        pending += p.tokens
        if p.text:
            times.extend([p.t_ms] * pending)
            pending = 0
    return times


def andes_qoe_from_times(
    arrivals_ms: list[float],
    *,
    ttft_ms: float = DEFAULT_TTFT_MS,
    tds_tokens_per_s: float = DEFAULT_TDS_TOKENS_PER_S,
    pacing: Literal["clip", "buffer"] = "clip",
) -> float | None:
    """Andes QoE of a list of token arrival times (ms); ``None`` for no tokens."""
    if ttft_ms < 0 or tds_tokens_per_s <= 0:
        raise ValueError("andes_qoe: ttft_ms must be >= 0 and tds_tokens_per_s > 0")
    if pacing not in ("clip", "buffer"):
        raise ValueError(f"andes_qoe: unknown pacing {pacing!r}")
    if not arrivals_ms:
        return None
    gap = 1000.0 / tds_tokens_per_s
    expected = [ttft_ms + i * gap for i in range(len(arrivals_ms))]
    digested: list[float] = []
    for a, e in zip(sorted(arrivals_ms), expected):
        d = max(a, e)
        if pacing == "buffer" and digested:
            d = max(d, digested[-1] + gap)
        digested.append(d)
    horizon = max(digested[-1], expected[-1])
    area_expected = math.fsum(horizon - e for e in expected)
    area_digested = math.fsum(horizon - d for d in digested)
    if area_expected <= 0:  # a single token expected at t=0 and horizon 0: nothing to lose
        return 1.0
    return area_digested / area_expected


def andes_qoe(
    stream: Stream,
    *,
    ttft_ms: float = DEFAULT_TTFT_MS,
    tds_tokens_per_s: float = DEFAULT_TDS_TOKENS_PER_S,
    pacing: Literal["clip", "buffer"] = "clip",
    channel: Channel = "content",
) -> float | None:
    """Andes token-delivery QoE in [0, 1] of one stream (``None`` when it shows no tokens)."""
    return andes_qoe_from_times(
        token_times(stream, channel), ttft_ms=ttft_ms, tds_tokens_per_s=tds_tokens_per_s, pacing=pacing
    )


@dataclass(frozen=True, slots=True)
class Fluidity:
    """Etalon deadline accounting of one stream: ``fluidity = 1 − missed / total`` (NaN when the stream shows no
    tokens: with nothing delivered there are no deadlines to meet or miss, and 1.0 would call it perfectly fluid)."""

    fluidity: float
    missed: int
    total: int


def fluidity_from_times(
    arrivals_ms: list[float],
    *,
    ttft_deadline_ms: float = DEFAULT_TTFT_MS,
    tbt_deadline_ms: float = DEFAULT_TBT_DEADLINE_MS,
) -> Fluidity:
    """Etalon fluidity index of token arrival times (ms from the request start)."""
    if ttft_deadline_ms < 0 or tbt_deadline_ms <= 0:
        raise ValueError("fluidity: ttft_deadline_ms must be >= 0 and tbt_deadline_ms > 0")
    total = missed = 0
    slack = 0.0
    previous = 0.0
    for i, t in enumerate(sorted(arrivals_ms)):
        interval = t - previous
        previous = t
        allowed = ttft_deadline_ms if i == 0 else tbt_deadline_ms
        if interval <= allowed + slack:
            slack += allowed - interval
            total += 1
            continue
        if i == 0:
            late = 1 + math.floor((interval - slack - ttft_deadline_ms) / tbt_deadline_ms)
        else:
            late = math.floor((interval - slack) / tbt_deadline_ms)
        missed += late
        total += late
        slack = 0.0
    return Fluidity(fluidity=1.0 - missed / total if total else math.nan, missed=missed, total=total)


def fluidity_index(
    stream: Stream,
    *,
    ttft_deadline_ms: float = DEFAULT_TTFT_MS,
    tbt_deadline_ms: float = DEFAULT_TBT_DEADLINE_MS,
    channel: Channel = "content",
) -> Fluidity:
    """Etalon fluidity index of one stream's visible tokens."""
    return fluidity_from_times(
        token_times(stream, channel), ttft_deadline_ms=ttft_deadline_ms, tbt_deadline_ms=tbt_deadline_ms
    )
