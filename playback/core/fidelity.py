"""Timing fidelity of one playback, from the browser's paint log: did the participant see what was scheduled?

Lateness is ``paint_ms − t_ms`` (both on the client's trial clock), summarised over the frames painted while
the page was visible: a hidden tab pauses animation frames, so its paints say nothing about the renderer and
are counted separately, as are visibility changes. Dropped frames are the client's own count where it reports
one, otherwise estimated from the animation-frame interval that painted the entry (an interval longer than two
nominal frames means ``round(interval / nominal) − 1`` frames were skipped).

``paint_ms`` is the moment the text entered the DOM (the later of the frame start and the DOM write; issue 43).
Entries may carry ``design_ms``, when the render strategy meant to show the frame (the player's design clock:
the same strategy on an ideal 60 Hz clock); lateness beyond design, ``paint_ms − design_ms``, is then what the
bound applies to, so a ``smooth`` play is late only beyond what smoothing intends (entries without it fall
back to lateness against the schedule). A playback is flagged when that p95 exceeds the bound (default two
frames at 60 Hz, 33.4 ms), or when the participant saw a stall: a gap between paints at least twice, and more
than the bound above, the longest gap the design had over the same stretch (``seen_stalls``), whatever the
strategy. No Django import here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

FRAME_MS = 16.7
DEFAULT_BOUND_MS = 2 * FRAME_MS


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) with linear interpolation between order statistics (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class Fidelity:
    frames: int
    visible_frames: int
    hidden_frames: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    long_frames: int
    dropped_frames: int
    visibility_changes: int
    bound_ms: float
    flagged: bool
    late_p95_ms: float = math.nan
    stalls_seen: int = 0
    longest_stall_ms: float = math.nan

    def as_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def _dropped(entry: Mapping[str, Any], frame_ms: float) -> tuple[bool, int]:
    interval = entry.get("frame_ms")
    long = interval is not None and interval > 2 * frame_ms
    reported = entry.get("dropped")
    if reported is not None:
        return long or reported > 0, int(reported)
    return long, (max(0, round(interval / frame_ms) - 1) if long else 0)


def seen_stalls(paint_times: Sequence[float], design_times: Sequence[float], bound_ms: float = DEFAULT_BOUND_MS
                ) -> list[tuple[float, float, float]]:
    """``(from_ms, gap_ms, design_gap_ms)`` of each gap between successive paint moments (ascending) that is at
    least twice, and more than ``bound_ms`` above, the longest gap between design paints inside it (cut at both
    ends; a design with no paint inside the gap meant the whole gap). Mirrors ``seenStalls`` in fidelity.js."""
    out = []
    j = 0
    for a, b in zip(paint_times, paint_times[1:]):
        gap = b - a
        if gap <= bound_ms:
            continue
        while j < len(design_times) and design_times[j] <= a:
            j += 1
        prev, longest = a, 0.0
        k = j
        while k < len(design_times) and design_times[k] < b:
            longest = max(longest, design_times[k] - prev)
            prev = design_times[k]
            k += 1
        design_gap = gap if prev == a else max(longest, b - prev)
        if gap >= 2 * design_gap and gap - design_gap > bound_ms:
            out.append((a, gap, design_gap))
    return out


def summarize(
    entries: Iterable[Mapping[str, Any]], *, bound_ms: float = DEFAULT_BOUND_MS, frame_ms: float = FRAME_MS
) -> Fidelity:
    """The fidelity summary of paint-log entries (dicts as in ``PaintEntry.to_obj``); a repeated seq counts once."""
    by_seq: dict[int, Mapping[str, Any]] = {}
    for entry in entries:
        by_seq.setdefault(entry["seq"], entry)
    ordered = [by_seq[s] for s in sorted(by_seq)]
    visible = [e for e in ordered if not e.get("hidden", False)]
    lateness = [e["paint_ms"] - e["t_ms"] for e in visible]
    late = [e["paint_ms"] - (e["design_ms"] if e.get("design_ms") is not None else e["t_ms"]) for e in visible]
    has_design = any(e.get("design_ms") is not None for e in visible)
    stalls = seen_stalls(sorted({e["paint_ms"] for e in visible}),
                         sorted({e["design_ms"] for e in visible if e.get("design_ms") is not None}),
                         bound_ms) if has_design else []
    long_frames = dropped = changes = 0
    previous_hidden = False
    for entry in ordered:
        is_long, n = _dropped(entry, frame_ms)
        long_frames += is_long
        dropped += n
        hidden = bool(entry.get("hidden", False))
        changes += hidden != previous_hidden
        previous_hidden = hidden
    p95 = percentile(lateness, 95)
    late_p95 = percentile(late, 95)
    return Fidelity(
        frames=len(ordered),
        visible_frames=len(lateness),
        hidden_frames=len(ordered) - len(lateness),
        p50_ms=percentile(lateness, 50),
        p95_ms=p95,
        max_ms=max(lateness) if lateness else math.nan,
        long_frames=long_frames,
        dropped_frames=dropped,
        visibility_changes=changes,
        bound_ms=bound_ms,
        flagged=bool(lateness) and (late_p95 > bound_ms or bool(stalls)),
        late_p95_ms=late_p95,
        stalls_seen=len(stalls),
        longest_stall_ms=max((g for _, g, _ in stalls), default=math.nan),
    )
