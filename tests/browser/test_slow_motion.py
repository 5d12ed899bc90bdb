"""Slow motion in the player (``timeScale``), per engine: the whole stream runs on a slowed clock, so a ½-speed
play paints the same text at the same stream times as a normal one and takes twice as long to watch, in
prefetch and in live delivery (a live frame waits in the inbox until its stream time)."""

from __future__ import annotations

import pytest
from browser_schedules import english_pieces, schedule

pytestmark = pytest.mark.browser

FRAMES = schedule(english_pieces(40), ttft_ms=300.0, interval_ms=25.0)


def _players() -> list[dict]:
    out = []
    for ident, mode, scale in (("normal", "prefetch", 1), ("half", "prefetch", 0.5), ("half-live", "live", 0.5)):
        out.append({"id": ident, "mode": mode, "schedule": FRAMES,
                    "options": {"strategy": "smooth", "indicator": "dots", "format": "plain", "timeScale": scale}})
    return out


def test_half_speed_paints_the_same_stream_times_and_takes_twice_as_long(open_player_page):
    page = open_player_page(width=1400, height=900)
    page.evaluate("config => window.__pacelab.run(config)", {"players": _players()})
    page.wait_for_function("window.__pacelab.done", timeout=60_000, polling=200)
    results = page.evaluate("window.__pacelab.results()")
    text = "".join(f["text"] for f in FRAMES)
    arrival = {f["seq"]: f["t_ms"] for f in FRAMES}
    last_arrival = FRAMES[-1]["t_ms"]
    for ident, factor in (("normal", 1.0), ("half", 2.0), ("half-live", 2.0)):
        got = results[ident]
        assert got["revealedText"] == text, ident
        paints = [p for p in got["paints"] if p["channel"] == "content"]
        last = paints[-1]
        assert last["t_ms"] >= last_arrival  # stream time: after the last arrival, as at normal speed
        assert last["wall_ms"] / last["t_ms"] == pytest.approx(factor, rel=0.12), (page.engine, ident)
        for frame in got["frames"]:  # nothing is painted before it arrived on the stream clock
            if frame.get("painted_ms") is not None and frame["channel"] == "content":
                assert frame["painted_ms"] >= arrival[frame["seq"]] - 0.01, (ident, frame["seq"])
    normal, half = results["normal"]["summary"], results["half"]["summary"]
    assert half["first_paint_ms"] == pytest.approx(normal["first_paint_ms"], abs=40)
