"""What a participant saw, frame by frame: a playback's paint log set against its schedule, for the replay page.

Pure Python (no Django). A paint-log entry says that frame ``seq`` (one piece of the delivered stream) became
visible at ``paint_ms`` on the trial clock, where the schedule wanted it at ``t_ms``; the frame's text is the
stream piece with that number. So the screen at time *T* is the text of every frame painted by *T*, in stream
order, and the intended screen is the text of every piece scheduled by *T*. Frames the log does not name (empty
pieces, or a trial left before the end) were never on screen.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from playback.core import fidelity
from playback.core.protocol import frames_of


def build(stream: Mapping[str, Any], entries: Iterable[Mapping[str, Any]], *,
          bound_ms: float = fidelity.DEFAULT_BOUND_MS) -> dict[str, Any]:
    """The replay of one playback: scheduled and painted frames (JSON-ready), the final texts and the summary."""
    frames = frames_of(dict(stream))
    by_seq: dict[int, Mapping[str, Any]] = {}
    for entry in entries:
        by_seq.setdefault(int(entry["seq"]), entry)  # a batch sent twice is stored once; a repeat counts once
    scheduled = [{"seq": f.seq, "t_ms": f.t_ms, "text": f.text, "channel": f.channel} for f in frames]
    painted = []
    for f in frames:
        e = by_seq.get(f.seq)
        if e is None:
            continue
        painted.append({"seq": f.seq, "t_ms": f.t_ms, "paint_ms": float(e["paint_ms"]), "text": f.text,
                        "channel": f.channel, "hidden": bool(e.get("hidden", False)),
                        "late_ms": round(float(e["paint_ms"]) - float(e["t_ms"]), 3),
                        "recv_ms": e.get("recv_ms"), "sent_ms": e.get("sent_ms")})
    unknown = sorted(s for s in by_seq if s >= len(frames))
    never = [f.seq for f in frames if f.seq not in by_seq and f.text]
    end = max([f.t_ms for f in frames] + [p["paint_ms"] for p in painted] + [0.0])
    summary = fidelity.summarize(list(by_seq.values()), bound_ms=bound_ms).as_dict() if by_seq else None
    return {
        "scheduled": scheduled,
        "painted": painted,
        "scheduled_text": "".join(f.text for f in frames if f.channel == "content"),
        "painted_text": "".join(p["text"] for p in painted if p["channel"] == "content"),
        "scheduled_reasoning": "".join(f.text for f in frames if f.channel == "reasoning"),
        "painted_reasoning": "".join(p["text"] for p in painted if p["channel"] == "reasoning"),
        "never_painted": never,
        "unknown_seqs": unknown,
        "duration_ms": end,
        "bound_ms": bound_ms,
        "summary": summary,
    }


def screen_at(replay: Mapping[str, Any], t_ms: float, *, painted: bool = True) -> str:
    """The content text on screen at ``t_ms`` (painted, or as scheduled): what the replay page shows then."""
    if painted:
        return "".join(p["text"] for p in replay["painted"] if p["channel"] == "content" and p["paint_ms"] <= t_ms)
    return "".join(f["text"] for f in replay["scheduled"] if f["channel"] == "content" and f["t_ms"] <= t_ms)
