"""Paint times that cannot flatter (issue 43 item 4), in the real player in headless Chromium.

Each paint records the frame start (t_ms), the moment its text was in the DOM (dom_ms) and, where animation
frames drive, the first task after the frame's rendering (after_paint_ms); a frame's painted time is the DOM
moment. Each content frame carries its design time (what the strategy meant, designclock.js), so the bound
judges lateness beyond design; and a stall the participant saw is counted whatever the strategy.
"""

from __future__ import annotations

import random

import pytest
from browser_schedules import english_pieces, schedule

from playback.core.fidelity import seen_stalls

pytestmark = pytest.mark.browser

PIECES = 120


@pytest.fixture(scope="module")
def played(browser, static_server):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(f"{static_server}/player-test/")
    page.wait_for_function("window.__pacelab && window.__pacelab.ready")
    players = [{"id": s, "mode": "prefetch", "schedule": schedule(english_pieces(PIECES)),
                "options": {"strategy": s, "indicator": "none", "format": "plain"}}
               for s in ("token", "smooth", "chat-ui-smooth")]
    page.evaluate("config => window.__pacelab.run(config)", {"players": players})
    # freeze the page's main thread for 150 ms in the middle of the stream: a stall every player shows
    page.wait_for_timeout(1500)
    page.evaluate("() => { const t = performance.now(); while (performance.now() - t < 150) {} }")
    page.wait_for_function("window.__pacelab.done", timeout=120_000, polling=200)
    page.wait_for_timeout(100)  # the last after-paint timers
    results = page.evaluate("window.__pacelab.results()")
    page.close()
    return results


@pytest.mark.parametrize("pid", ["token", "smooth", "chat-ui-smooth"])
def test_every_paint_records_frame_start_dom_and_after_paint_in_that_order(played, pid):
    paints = [p for p in played[pid]["paints"] if p["channel"] == "content"]
    assert all(p["dom_ms"] >= p["t_ms"] for p in paints)
    after = [p for p in paints if p["after_paint_ms"] is not None]
    assert len(after) >= 0.9 * len(paints)
    assert all(p["after_paint_ms"] >= p["dom_ms"] for p in after)


@pytest.mark.parametrize("pid", ["token", "smooth", "chat-ui-smooth"])
def test_a_frames_painted_time_is_the_later_dom_moment_and_it_carries_its_design_time(played, pid):
    frames = [f for f in played[pid]["frames"] if f["channel"] == "content"]
    assert len(frames) == PIECES and all(f["painted_ms"] is not None for f in frames)
    assert all(f["painted_ms"] >= f["frame_start_ms"] for f in frames)
    assert all(f["painted_minus_design"] == pytest.approx(f["painted_ms"] - f["design_ms"]) for f in frames)
    assert all(f["design_ms"] >= f["t_ms"] - 1e-6 for f in frames)  # no strategy means to paint early


def test_smooth_is_judged_against_its_own_design_lag(played):
    s = played["smooth"]["summary"]
    # ~120 ms behind the schedule by design; beyond its design, far less
    assert s["p50_ms"] > 60
    assert s["late_p50_ms"] < s["p50_ms"] - 50
    t = played["token"]["summary"]
    assert t["late_p50_ms"] == pytest.approx(t["p50_ms"], abs=17)  # token's design is the schedule


@pytest.mark.parametrize("pid", ["token", "smooth", "chat-ui-smooth"])
def test_the_frozen_main_thread_is_a_stall_every_player_shows(played, pid):
    s = played[pid]["summary"]
    assert s["stalls_seen"] >= 1 and s["longest_stall_ms"] >= 140
    assert s["dom_minus_frame_p95_ms"] is not None and s["dom_minus_frame_p95_ms"] >= 0


def test_seen_stalls_in_the_browser_match_the_servers_mirror(browser, static_server):
    rng = random.Random(4)
    cases = []
    for _ in range(30):
        paints = sorted(rng.uniform(0, 2000) for _ in range(rng.randint(2, 40)))
        design = sorted(rng.uniform(0, 2000) for _ in range(rng.randint(0, 60)))
        cases.append((paints, design))
    page = browser.new_page()
    page.goto(f"{static_server}/player-test/")
    got = page.evaluate("""async (cases) => {
      const { seenStalls } = await import("/static/js/playback/fidelity.js");
      return cases.map(([p, d]) => seenStalls(p, d).map((s) => [s.from_ms, s.gap_ms, s.design_gap_ms]));
    }""", cases)
    page.close()
    want = [[list(s) for s in seen_stalls(p, d)] for p, d in cases]
    assert sum(map(len, want)) > 5
    for g, w in zip(got, want, strict=True):
        assert len(g) == len(w)
        for gs, ws in zip(g, w, strict=True):
            assert gs == pytest.approx(ws)
