"""Timing fidelity of one playback, from the browser's paint log: did the participant see what was scheduled?

Lateness is ``paint_ms − t_ms`` (both on the client's trial clock), summarised over the frames painted while
the page was visible: a hidden tab pauses animation frames, so its paints say nothing about the renderer and
are counted separately, as are visibility changes. Dropped frames are the client's own count where it reports
one, otherwise estimated from the animation-frame interval that painted the entry (an interval longer than two
nominal frames means ``round(interval / nominal) − 1`` frames were skipped). A playback is flagged when its
p95 lateness exceeds the bound (default two frames at 60 Hz, 33.4 ms). No Django import here.
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

    def as_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


def _dropped(entry: Mapping[str, Any], frame_ms: float) -> tuple[bool, int]:
    interval = entry.get("frame_ms")
    long = interval is not None and interval > 2 * frame_ms
    reported = entry.get("dropped")
    if reported is not None:
        return long or reported > 0, int(reported)
    return long, (max(0, round(interval / frame_ms) - 1) if long else 0)


def summarize(
    entries: Iterable[Mapping[str, Any]], *, bound_ms: float = DEFAULT_BOUND_MS, frame_ms: float = FRAME_MS
) -> Fidelity:
    """The fidelity summary of paint-log entries (dicts as in ``PaintEntry.to_obj``); a repeated seq counts once."""
    by_seq: dict[int, Mapping[str, Any]] = {}
    for entry in entries:
        by_seq.setdefault(entry["seq"], entry)
    ordered = [by_seq[s] for s in sorted(by_seq)]
    lateness = [e["paint_ms"] - e["t_ms"] for e in ordered if not e.get("hidden", False)]
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
        flagged=bool(lateness) and p95 > bound_ms,
    )
