"""When each render strategy's rule lets a content frame out, given its schedule: the design bound that the
player tests and benchmarks/rendering.py measure lateness against (the same boundary rules as
static/js/playback/strategies/{word,line,sentence}.js; docs/rendering.md's "lag by design")."""

from __future__ import annotations

import math
import re

CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
BOUNDARIES = {
    "word": re.compile(f"\\s+|[{CJK}\\u3000-\\u303f\\uff00-\\uffef]"),
    "line": re.compile(r"\n"),
    "sentence": re.compile(r"[.!?…]+[\"'”’)\]]*\s+|[。！？]+[”’」』）]*\s*|\n+"),
}


def release_ms(strategy: str, frames: list[dict], *, batch_ms: float = 20.0, drain_ms: float = 120.0) -> list[float]:
    """The time (ms from start) the rule of ``strategy`` releases each of ``frames`` (content frames in order,
    ``{t_ms, text}``) if every frame arrives on time. ``smooth`` is bounded by twice its drain time."""
    if strategy in ("token", "fade"):
        return [f["t_ms"] for f in frames]
    if strategy == "batch":
        origin = frames[0]["t_ms"]
        return [origin + math.ceil((f["t_ms"] - origin) / batch_ms) * batch_ms for f in frames]
    if strategy == "smooth":
        return [f["t_ms"] + 2 * drain_ms for f in frames]
    rule = BOUNDARIES[strategy]
    released_at: list[float | None] = [None] * len(frames)
    buffer, buffer_start, shown, ends = "", 0, 0, []
    for j, f in enumerate(frames):
        buffer += f["text"]
        ends.append(buffer_start + len(buffer))
        cut = max((m.end() for m in rule.finditer(buffer)), default=0)
        if cut:
            shown = buffer_start + cut
            buffer, buffer_start = buffer[cut:], shown
        for i in range(j + 1):
            if released_at[i] is None and ends[i] <= shown:
                released_at[i] = f["t_ms"]
    last = frames[-1]["t_ms"]
    return [t if t is not None else last for t in released_at]
