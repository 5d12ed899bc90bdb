"""Waiting indicators in English and Chinese: what each says while waiting, and what is left after the
answer starts. A long wait (2.5 s to the first token) so the counters have something to count."""

from __future__ import annotations

import re

import pytest
from browser_schedules import REASONING_EN, REASONING_ZH, chinese_pieces, english_pieces, schedule

pytestmark = pytest.mark.browser

TTFT_MS = 2500.0
KINDS = ["none", "spinner", "dots", "shimmer", "progress", "elapsed", "reasoning", "reasoning-collapsed"]
# What each indicator reads about 1.3 s into the wait.
WAITING_TEXT = {
    "en": {"spinner": r"Thinking…", "dots": r"", "shimmer": r"", "progress": r"About [12] s left",
           "elapsed": r"Elapsed: 1 s", "reasoning": r"Thinking for 1 s.*", "reasoning-collapsed": r"Thinking for 1 s"},
    "zh": {"spinner": r"思考中…", "dots": r"", "shimmer": r"", "progress": r"预计还需 [12] 秒",
           "elapsed": r"已用时 1 秒", "reasoning": r"已思考 1 秒.*", "reasoning-collapsed": r"已思考 1 秒"},
}
DONE_TEXT = {"en": r"Thought for [23] s", "zh": r"思考用时 [23] 秒"}


def config() -> list[dict]:
    out = []
    for lang, pieces, reasoning in (("en", english_pieces(24), REASONING_EN), ("zh", chinese_pieces(24), REASONING_ZH)):
        for kind in KINDS:
            frames = schedule(pieces, ttft_ms=TTFT_MS, reasoning=reasoning if kind.startswith("reasoning") else None)
            options = {"strategy": "fade", "indicator": kind, "lang": "zh-hans" if lang == "zh" else "en"}
            out.append({"id": f"{kind}-{lang}", "schedule": frames, "options": options})
    return out


@pytest.fixture(scope="module")
def waiting_and_done(open_player_page, screenshot_dir):
    page = open_player_page(width=1500, height=1100)
    page.evaluate("config => window.__pacelab.run(config)", {"players": config()})
    page.wait_for_timeout(1300)
    waiting = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.pl-host')].map(h => {
             const ind = h.querySelector('[data-pacelab-indicator]');
             return [h.id.replace('player-', ''), ind ? {kind: ind.dataset.pacelabIndicator,
                     text: ind.textContent.trim(), open: ind.open ?? null} : null];
           }))"""
    )
    page.screenshot(path=str(screenshot_dir / "indicators-waiting.png"), full_page=True)
    page.wait_for_function("window.__pacelab.done", timeout=20_000, polling=200)
    page.screenshot(path=str(screenshot_dir / "indicators-done.png"), full_page=True)
    done = page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('.pl-host')].map(h => {
             const rec = h.querySelector('[data-state="done"].pl-reasoning, [data-state="done"].pl-reasoning-line');
             const sum = rec && (rec.querySelector('summary') || rec);
             return [h.id.replace('player-', ''), {record: sum ? sum.textContent : null,
                     open: rec ? rec.open ?? null : null,
                     indicator: h.querySelector('[data-pacelab-indicator]') !== null}];
           }))"""
    )
    results = page.evaluate("window.__pacelab.results()")
    assert page.js_errors == []
    return waiting, done, results


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", [k for k in KINDS if k != "none"])
def test_indicator_reads_its_waiting_text_in_the_participants_language(waiting_and_done, kind, lang):
    waiting, _, _ = waiting_and_done
    shown = waiting[f"{kind}-{lang}"]
    assert shown is not None and shown["kind"] == kind
    assert re.fullmatch(WAITING_TEXT[lang][kind], shown["text"], flags=re.S), shown["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_indicator_shows_nothing_while_waiting(waiting_and_done, lang):
    waiting, _, _ = waiting_and_done
    assert waiting[f"none-{lang}"] is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reasoning_box_is_open_with_the_thinking_text_while_waiting(waiting_and_done, lang):
    waiting, _, _ = waiting_and_done
    thinking = "".join(REASONING_EN if lang == "en" else REASONING_ZH).strip()
    assert waiting[f"reasoning-{lang}"]["open"] is True
    # Its frames are spread over the whole wait, so about half has streamed in by now.
    body = re.sub(r"^(Thinking for 1 s|已思考 1 秒)", "", waiting[f"reasoning-{lang}"]["text"]).strip()
    assert thinking.startswith(body) and 0 < len(body) < len(thinking)
    assert thinking not in waiting[f"reasoning-collapsed-{lang}"]["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", KINDS)
def test_indicator_gives_way_to_the_answer_in_the_first_paint_frame(waiting_and_done, kind, lang):
    _, done, results = waiting_and_done
    summary = results[f"{kind}-{lang}"]["summary"]
    assert summary["indicator_removed_ms"] == summary["first_paint_ms"] >= TTFT_MS
    assert done[f"{kind}-{lang}"]["indicator"] is False
    if kind.startswith("reasoning"):
        assert re.fullmatch(DONE_TEXT[lang], done[f"{kind}-{lang}"]["record"])
        if kind == "reasoning":
            assert done[f"{kind}-{lang}"]["open"] is False
    else:
        assert done[f"{kind}-{lang}"]["record"] is None
