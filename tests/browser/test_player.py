"""The browser player, end to end in headless Chromium: every render strategy in English and Chinese, side by
side in one page, paced by the player itself from a 300-token schedule at 40 tokens/s (prefetch mode).

Lags are checked against a model of each strategy: the time its rule lets a frame out, given the schedule.
The player may add at most two animation frames to that (frame quantisation plus one missed frame).
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter

import pytest
from browser_schedules import REASONING_EN, REASONING_ZH, chinese_pieces, english_pieces, schedule
from strategy_model import release_ms

from playback.core.metrics import percentile

pytestmark = pytest.mark.browser

FRAME_MS = 1000 / 60
STRATEGIES = ["token", "batch", "word", "line", "sentence", "smooth", "fade"]
INDICATORS_EN = ["dots", "spinner", "progress", "elapsed", "shimmer", "reasoning", "none"]
INDICATORS_ZH = ["reasoning-collapsed", "shimmer", "elapsed", "progress", "dots", "reasoning", "spinner"]
BATCH_MS = 20.0
SMOOTH = {"drainMs": 120, "minChars": 1, "maxChars": 24}

def players() -> list[dict]:
    out = []
    for lang, pieces, reasoning, indicators in (
        ("en", english_pieces(), REASONING_EN, INDICATORS_EN),
        ("zh", chinese_pieces(), REASONING_ZH, INDICATORS_ZH),
    ):
        for strategy, indicator in zip(STRATEGIES, indicators, strict=True):
            options = {"strategy": strategy, "indicator": indicator, "lang": "zh-hans" if lang == "zh" else "en"}
            if strategy == "batch":
                options["strategyOptions"] = {"intervalMs": BATCH_MS}
            if strategy == "smooth":
                options["strategyOptions"] = SMOOTH
            with_reasoning = indicator.startswith("reasoning")
            out.append({"id": f"{strategy}-{lang}", "mode": "prefetch", "options": options,
                        "schedule": schedule(pieces, reasoning=reasoning if with_reasoning else None)})
    return out


CONFIG = players()
SPEC = {p["id"]: p for p in CONFIG}
IDS = list(SPEC)


@pytest.fixture(scope="module")
def run(open_player_page, screenshot_dir):
    """All fourteen players in one page, run to the end; returns the page's results per player id."""
    page = open_player_page(width=1600, height=1000)
    # Every animation frame's timestamp, the same value the players stamp on their paints (``perf_ms``), so a
    # test can count the browser's frames between two paints.
    page.evaluate("() => { window.__frameTimes = []; const f = (t) => { window.__frameTimes.push(t);"
                  " requestAnimationFrame(f); }; requestAnimationFrame(f); }")
    page.evaluate("config => window.__pacelab.run(config)", {"players": CONFIG})
    # No screenshot while playing: capturing blocks the compositor for ~100 ms and would be measured.
    page.wait_for_function("window.__pacelab.done", timeout=30_000, polling=200)
    page.screenshot(path=str(screenshot_dir / "strategies-done.png"), full_page=True)
    results = page.evaluate("window.__pacelab.results()")
    frame_times = page.evaluate("window.__frameTimes")
    for r in results.values():
        r["frame_times"] = frame_times
    assert page.js_errors == []
    (screenshot_dir / "strategies-results.json").write_text(
        json.dumps({pid: r["summary"] for pid, r in results.items()}, indent=1)
    )
    return results


def content_frames(pid: str) -> list[dict]:
    return [f for f in SPEC[pid]["schedule"] if f["channel"] == "content"]


def source_text(pid: str) -> str:
    return "".join(f["text"] for f in content_frames(pid))


def model_release_ms(pid: str) -> list[float]:
    """When the strategy's rule lets each content frame out (ms from start), if every frame arrived on time."""
    return release_ms(SPEC[pid]["options"]["strategy"], content_frames(pid), batch_ms=BATCH_MS)


def painted_content(result: dict) -> list[dict]:
    """The player's settled content frames (empty ones left out), in sequence order."""
    frames = [f for f in result["frames"] if f["channel"] == "content" and not f.get("empty")]
    return sorted(frames, key=lambda f: f["seq"])


def lags(result: dict) -> list[float]:
    return [f["painted_minus_scheduled"] for f in painted_content(result)]


def content_painted_ms(result: dict) -> list[float]:
    """The start of the animation frame that painted each content frame (its painted_ms is the later DOM moment;
    the checks below count the browser's frames, so they read the frame that did it)."""
    return [f.get("frame_start_ms", f["painted_ms"]) for f in painted_content(result)]


def frames_drawn(times: list[float], after: float, upto: float) -> int:
    """How many animation frames (timestamps ``times``, sorted) were drawn after ``after``, up to ``upto``."""
    return bisect.bisect_right(times, upto + 0.01) - bisect.bisect_right(times, after)


def frames_late(result: dict, due_ms: list[float], painted_ms: list[float]) -> list[int]:
    """For each paint, how many of the browser's animation frames were drawn after it was due, up to and including
    the one that painted it: 1 is the first frame after its due time, 2 one frame missed.

    "Within two frames" is checked in the browser's own frames rather than in milliseconds: a headless browser
    on a loaded machine sometimes draws a frame late, and that is the browser's pause, not the player's (the
    milliseconds are reported in the failure messages).
    """
    first = result["paints"][0]
    start = first["perf_ms"] - first["t_ms"]  # the player's start on the frames' clock
    return [frames_drawn(result["frame_times"], start + d, start + p) for d, p in zip(due_ms, painted_ms, strict=True)]


@pytest.mark.parametrize("pid", IDS)
def test_revealed_text_is_exactly_the_source(run, pid):
    assert run[pid]["revealedText"] == source_text(pid)
    assert "".join(p["text"] for p in run[pid]["paints"] if p["channel"] == "content") == source_text(pid)


@pytest.mark.parametrize("pid", IDS)
def test_rendered_markdown_shows_every_word_of_the_source(run, pid):
    prose = re.sub(r"^```.*$", "", source_text(pid), flags=re.M)  # a fence's info string is not shown
    words = Counter(w for w in re.findall(r"\w+", prose) if not w.isdigit())
    shown = Counter(re.findall(r"\w+", run[pid]["textContent"]))
    assert words - shown == Counter()
    assert not re.search(r"^#+ ", run[pid]["textContent"], flags=re.M)  # headings rendered, not shown raw


@pytest.mark.parametrize("pid", IDS)
def test_every_content_frame_is_painted_once_in_order(run, pid):
    frames = sorted((f for f in run[pid]["frames"] if f["channel"] == "content"), key=lambda f: f["seq"])
    assert [f["seq"] for f in frames] == [f["seq"] for f in content_frames(pid)]
    painted = [f["painted_ms"] for f in frames]
    assert None not in painted
    assert painted == sorted(painted)
    assert run[pid]["summary"]["unpainted"] == 0


@pytest.mark.parametrize("pid", IDS)
def test_indicator_leaves_in_the_frame_of_the_first_paint(run, pid):
    result = run[pid]
    summary = result["summary"]
    assert summary["indicator_removed_ms"] == summary["first_paint_ms"]
    assert summary["first_paint_ms"] >= content_frames(pid)[0]["t_ms"]
    assert not result["indicatorPresent"]
    # Seen from outside, after every DOM change: never indicator and answer together, never neither once
    # the indicator has been shown.
    states = [(s["indicator"], s["text"]) for s in result["states"]]
    while states and states[0] == (False, False):  # the player's own setup, before any indicator
        states.pop(0)
    assert (True, True) not in states
    if SPEC[pid]["options"]["indicator"] != "none":
        assert states == [(True, False), (False, True)]
    else:
        assert states == [(False, True)]


@pytest.mark.parametrize("pid", [p for p in IDS if SPEC[p]["options"]["indicator"] == "reasoning"])
def test_reasoning_box_streams_thinking_then_closes_as_a_record(run, pid):
    reasoning = [f for f in run[pid]["frames"] if f["channel"] == "reasoning"]
    assert len(reasoning) == len([f for f in SPEC[pid]["schedule"] if f["channel"] == "reasoning"])
    first_paint = run[pid]["summary"]["first_paint_ms"]
    answer_due = content_frames(pid)[0]["t_ms"]
    for f in reasoning:
        assert f["painted_ms"] is not None and f["painted_ms"] <= first_paint
        if f["painted_ms"] == first_paint:
            # only when the browser drew no frame between this thought's due time and the answer's (a loaded
            # WebKit drew one frame in 240 ms here): both are due in the same frame, and the box closes in it
            assert frames_late(run[pid], [f["t_ms"]], [answer_due - 0.02]) == [0], (f, first_paint)
    lags = [round(f["painted_minus_scheduled"], 1) for f in reasoning]
    assert all(lag >= 0 for lag in lags), lags
    late = frames_late(run[pid], [f["t_ms"] for f in reasoning], [f["painted_ms"] for f in reasoning])
    assert max(late) <= 2, (late, lags)


@pytest.mark.parametrize("pid", [p for p in IDS if not p.startswith("smooth")])
def test_lag_follows_the_strategy_rule_within_two_frames(run, pid):
    """painted - scheduled = (rule's release - scheduled) + at most two frames, never earlier than the rule."""
    release = model_release_ms(pid)
    frames = content_frames(pid)
    extra = sorted(lag - (r - f["t_ms"]) for lag, r, f in zip(lags(run[pid]), release, frames, strict=True))
    # half a frame of slack: the rule is evaluated at animation-frame times, which jitter under load
    assert extra[0] >= -8.4, f"painted before the rule allows: {extra[0]:.1f} ms"
    late = sorted(frames_late(run[pid], release, content_painted_ms(run[pid])))
    assert percentile(late, 95) <= 2, f"frames late p95 {percentile(late, 95)}; ms p95 {percentile(extra, 95):.1f}"


@pytest.mark.parametrize("pid", [p for p in IDS if p.startswith(("token", "fade"))])
def test_token_pacing_p95_is_within_two_frames_of_schedule(run, pid):
    late = sorted(frames_late(run[pid], [f["t_ms"] for f in content_frames(pid)], content_painted_ms(run[pid])))
    assert percentile(late, 95) <= 2, f"frames late p95 {percentile(late, 95)}; ms p95 {run[pid]['summary']['p95_ms']}"


@pytest.mark.parametrize("pid", [p for p in IDS if p.startswith("batch")])
def test_batch_lag_is_bounded_by_interval_plus_two_frames(run, pid):
    due = [f["t_ms"] + BATCH_MS for f in content_frames(pid)]
    late = sorted(frames_late(run[pid], due, content_painted_ms(run[pid])))
    assert percentile(late, 95) <= 2, f"frames late p95 {percentile(late, 95)}; ms p95 {run[pid]['summary']['p95_ms']}"


@pytest.mark.parametrize("pid", [p for p in IDS if p.startswith("smooth")])
def test_smooth_drains_steadily_without_bursts_or_pauses(run, pid):
    paints = [p for p in run[pid]["paints"] if p["channel"] == "content"]
    # No bursts: at most maxChars per 60 Hz frame of time since the browser's previous frame (a browser that
    # skipped frames, as Firefox and WebKit here do under load, is allowed the characters of the skipped ones).
    times = run[pid]["frame_times"]
    for p in paints:
        before = bisect.bisect_left(times, p["perf_ms"] - 0.01)
        dt = p["perf_ms"] - times[before - 1] if before else FRAME_MS
        assert p["chars"] <= SMOOTH["maxChars"] * max(1, round(dt / FRAME_MS)), (p["chars"], round(dt, 1))
    # The typewriter paints on most frames while text flows: p95 of the gaps is at most two of the browser's
    # frames. Counted in frames, not milliseconds, so that a frame the loaded browser itself drew late (a busy CI
    # machine) is not taken for a pause of the renderer's.
    frames_between = sorted(frames_drawn(run[pid]["frame_times"], a["perf_ms"], b["perf_ms"])
                            for a, b in zip(paints, paints[1:]))
    gaps = sorted(b["t_ms"] - a["t_ms"] for a, b in zip(paints, paints[1:]))
    assert percentile(frames_between, 95) <= 2, (
        f"frames between paints p95 {percentile(frames_between, 95)}; gaps p95 {percentile(gaps, 95):.1f} ms")
    # ... and the backlog drains in about drainMs: lag p95 within twice that plus two frames.
    due = [f["t_ms"] + 2 * SMOOTH["drainMs"] for f in content_frames(pid)]
    late = sorted(frames_late(run[pid], due, content_painted_ms(run[pid])))
    assert percentile(late, 95) <= 2, f"frames late p95 {percentile(late, 95)}; ms p95 {run[pid]['summary']['p95_ms']}"


@pytest.mark.parametrize("pid", IDS)
def test_paint_batches_deliver_every_entry_once(run, pid):
    result = run[pid]
    batches = result["batches"]
    assert batches[-1]["final"] and not any(b["final"] for b in batches[:-1])
    assert [p for b in batches for p in b["paints"]] == result["paints"]
    assert [f for b in batches for f in b["frames"]] == result["frames"]
    assert len(batches) > 5  # delivered as it went, not only at the end


@pytest.mark.parametrize("pid", IDS)
def test_paint_entries_name_the_frames_they_include(run, pid):
    text = {f["seq"]: f["text"] for f in content_frames(pid)}
    revealed = ""
    for p in (p for p in run[pid]["paints"] if p["channel"] == "content"):
        assert p["seq_from"] <= p["seq_to"]
        revealed += p["text"]
        upto = "".join(text[s] for s in text if s <= p["seq_to"])
        assert upto.startswith(revealed) or revealed.startswith(upto[: len(revealed)])
        assert len(revealed) > len("".join(text[s] for s in text if s < p["seq_from"]))
        assert p["hidden"] is False
