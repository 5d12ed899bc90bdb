"""Metrics of a stream, defined as the serving benchmarks (vLLM, GenAI-Perf) define them.

Definitions (all times in ms from the request start; see docs/metrics.md):

- *content piece*: a piece on the ``content`` channel whose text is not empty (a role-only or empty chunk,
  or a token still waiting for the rest of a UTF-8 character, is not content).
- ``ttft_ms``: time of the first content piece. ``ttfr_ms``: time of the first non-empty reasoning piece.
- ``e2e_ms``: time of the last content piece.
- ``output_tokens``: the count the trace recorded (``Stream.output_tokens``) or else the sum of the tokens
  carried by content-channel pieces.
- ``tokens_per_s`` (decode rate): ``(output_tokens - 1) / (e2e_ms - ttft_ms)`` in seconds; ``None`` when the
  stream has a single content piece.
- ``chars_per_s`` / ``words_per_s``: characters (code points) / words (CJK counted per character) that arrive
  after the first content piece, divided by the same decode time.
- ITL statistics: over the gaps between successive content pieces; percentiles interpolate linearly (as
  numpy's default); ``itl_cv`` is the population standard deviation over the mean.
- stalls: gaps between successive content pieces longer than ``stall_threshold_ms`` (default 250 ms);
  ``stall_total_ms`` is the sum of those whole gaps.

Pure Python, no Django and no numpy, so it is cheap on small streams and exact everywhere.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from playback.core.stream import Stream
from playback.core.textunits import count_chars, count_words

DEFAULT_STALL_THRESHOLD_MS = 250.0


@dataclass(frozen=True, slots=True)
class StreamMetrics:
    id: str
    ttft_ms: float | None
    ttfr_ms: float | None
    e2e_ms: float | None
    output_tokens: int
    content_pieces: int
    chars: int
    words: int
    tokens_per_s: float | None
    chars_per_s: float | None
    words_per_s: float | None
    itl_mean_ms: float | None
    itl_median_ms: float | None
    itl_p95_ms: float | None
    itl_p99_ms: float | None
    itl_cv: float | None
    stall_count: int
    stall_total_ms: float
    stall_threshold_ms: float

    def as_dict(self) -> dict:
        return asdict(self)


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default method) of an already sorted, non-empty list."""
    if not sorted_values:
        raise ValueError("percentile of an empty list")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:])]


def compute(stream: Stream, stall_threshold_ms: float = DEFAULT_STALL_THRESHOLD_MS) -> StreamMetrics:
    """All metrics of one stream."""
    content = [p for p in stream.pieces if p.channel == "content" and p.text]
    reasoning = [p for p in stream.pieces if p.channel == "reasoning" and p.text]
    if stream.output_tokens is not None:
        output_tokens = stream.output_tokens
    else:
        output_tokens = sum(p.tokens for p in stream.pieces if p.channel == "content")
    text = "".join(p.text for p in content)
    chars = count_chars(text)
    words = count_words(text)

    ttft = content[0].t_ms if content else None
    e2e = content[-1].t_ms if content else None
    ttfr = reasoning[0].t_ms if reasoning else None

    tokens_per_s = chars_per_s = words_per_s = None
    if content and e2e > ttft:
        decode_s = (e2e - ttft) / 1000.0
        first = content[0].text
        tokens_per_s = max(output_tokens - 1, 0) / decode_s
        chars_per_s = (chars - count_chars(first)) / decode_s
        words_per_s = (count_words(text) - count_words(first)) / decode_s

    itl = gaps([p.t_ms for p in content])
    itl_mean = itl_median = itl_p95 = itl_p99 = itl_cv = None
    if itl:
        s = sorted(itl)
        itl_mean = math.fsum(itl) / len(itl)
        itl_median = percentile(s, 50)
        itl_p95 = percentile(s, 95)
        itl_p99 = percentile(s, 99)
        var = math.fsum((g - itl_mean) ** 2 for g in itl) / len(itl)
        itl_cv = math.sqrt(var) / itl_mean if itl_mean > 0 else None
    stalls = [g for g in itl if g > stall_threshold_ms]

    return StreamMetrics(
        id=stream.id,
        ttft_ms=ttft,
        ttfr_ms=ttfr,
        e2e_ms=e2e,
        output_tokens=output_tokens,
        content_pieces=len(content),
        chars=chars,
        words=words,
        tokens_per_s=tokens_per_s,
        chars_per_s=chars_per_s,
        words_per_s=words_per_s,
        itl_mean_ms=itl_mean,
        itl_median_ms=itl_median,
        itl_p95_ms=itl_p95,
        itl_p99_ms=itl_p99,
        itl_cv=itl_cv,
        stall_count=len(stalls),
        stall_total_ms=math.fsum(stalls),
        stall_threshold_ms=stall_threshold_ms,
    )
