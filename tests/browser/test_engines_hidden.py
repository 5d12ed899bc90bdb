"""A hidden tab, where engines stop animation frames and throttle timers: the player keeps its clock with a timer,
shows every frame in order, and marks what it painted while hidden. Firefox only: a BiDi tab opened in front
hides the player's tab (a headless Chromium page and a WebKitGTK MiniBrowser window stay visible); Chromium and
Safari throttle hidden timers the same way (docs/browsers.md)."""

from __future__ import annotations

import time

import pytest
from browser_schedules import english_pieces, schedule
from engines import SELECTED

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def firefox():
    if "firefox" not in SELECTED:
        pytest.fail("PACELAB_ENGINES leaves Firefox out, which this test is about; add it or deselect this file")
    from engines import launch

    b = launch("firefox")
    yield b
    b.close()


def test_a_player_in_a_hidden_tab_keeps_time_and_marks_its_hidden_paints(firefox, static_server):
    page = firefox.new_page({"width": 900, "height": 700})
    page.goto(f"{static_server}/player-test/")
    page.wait_for_function("window.__pacelab && window.__pacelab.ready")
    frames = schedule(english_pieces(120))  # 120 pieces at 40 tokens/s: about 3.3 s
    page.evaluate("config => window.__pacelab.run(config)",
                  {"players": [{"id": "t", "mode": "prefetch", "options": {"strategy": "token"}, "schedule": frames}]})
    time.sleep(1.0)
    front = firefox.bidi.send("browsingContext.create", {"type": "tab", "referenceContext": page.context,
                                                         "userContext": page.user_context})["context"]
    page.wait_for_function("document.visibilityState === 'hidden'", timeout=5_000)
    page.wait_for_function("window.__pacelab.done", timeout=20_000, polling=200)  # finishes while hidden
    result = page.evaluate("window.__pacelab.result('t')")
    firefox.bidi.send("browsingContext.close", {"context": front})
    page.close()

    assert result["revealedText"] == "".join(f["text"] for f in frames)
    summary = result["summary"]
    assert summary["unpainted"] == 0 and summary["visibility_changes"] >= 1
    hidden = [p for p in result["paints"] if p["hidden"]]
    shown = [p for p in result["paints"] if not p["hidden"]]
    assert hidden and shown and summary["hidden_paints"] == len([p for p in hidden if p["channel"] == "content"])
    assert max(p["t_ms"] for p in shown) < min(p["t_ms"] for p in hidden)  # hidden ones all after hiding
    gaps = [b["t_ms"] - a["t_ms"] for a, b in zip(hidden, hidden[1:])]
    # no animation frames while hidden: the 100 ms timer paints, and Firefox throttles it (about once a second)
    assert all(g >= 90 for g in gaps), gaps
    print(f"firefox hidden-tab paints at {[round(p['t_ms']) for p in hidden]} ms")
