"""The client presets (ai-sdk-smooth, chat-ui-smooth, accelerating, typewriter) driven on a virtual clock.

Each strategy module runs in headless Chromium (the same ES module the player loads, with the browser's own
Intl.Segmenter), fed the arrival patterns of arrival_patterns.py on a virtual 60 Hz clock: no timers, so every
assertion is exact. A last test plays the four presets in the real player.
"""

from __future__ import annotations

import pytest
from arrival_patterns import PATTERNS, build

pytestmark = pytest.mark.browser

FRAME_MS = 1000 / 60
PRESETS = ["ai-sdk-smooth", "chat-ui-smooth", "accelerating", "typewriter"]

DRIVE = """async ({name, opts, frames, frameMs, hiddenFrom, hiddenTo, locale}) => {
  const { createStrategy } = await import("/static/js/playback/strategies/index.js");
  const reveals = [];
  const releases = [];
  let now = 0;
  let hidden = false;
  const sink = { reveal(text) { reveals.push([now, text]); }, release(text, at) { releases.push([at, text]); } };
  const o = { ...opts, isHidden: () => hidden };
  const s = createStrategy(name, sink, o);
  let i = 0;
  let ended = false;
  for (let k = 0; k < 1e6; k++) {
    now = k * frameMs;
    hidden = hiddenFrom !== null && now >= hiddenFrom && now < hiddenTo;
    while (i < frames.length && frames[i].t_ms <= now) {
      const f = frames[i++];
      s.push({ seq: f.seq, text: f.text, at: f.t_ms }, now);
    }
    if (i >= frames.length && !ended) { ended = true; s.end(now); }
    s.tick(now);
    if (ended && s.idle()) break;
  }
  const full = frames.map((f) => f.text).join("");
  const words = Array.from(new Intl.Segmenter(locale, { granularity: "word" }).segment(full), (x) => x.index);
  return { reveals, releases, words };
}"""


@pytest.fixture(scope="module")
def page(browser, static_server):
    p = browser.new_page()
    p.goto(f"{static_server}/player-test/")
    p.wait_for_function("window.__pacelab && window.__pacelab.ready")
    yield p
    p.close()


def drive(page, name: str, frames: list[dict], opts: dict | None = None, *, hidden: tuple | None = None,
          locale: str = "en") -> dict:
    out = page.evaluate(DRIVE, {"name": name, "opts": opts or {}, "frames": frames, "frameMs": FRAME_MS,
                                "hiddenFrom": hidden[0] if hidden else None,
                                "hiddenTo": hidden[1] if hidden else None, "locale": locale})
    assert "".join(t for _, t in out["reveals"]) == "".join(f["text"] for f in frames), "text lost or changed"
    return out


def holds(frames: list[dict], reveals: list) -> list[float]:
    """Per UTF-16 unit: painted − arrived (ms)."""
    arrived = [f["t_ms"] for f in frames for _ in f["text"].encode("utf-16-le")[::2]]
    painted = [t for t, text in reveals for _ in text.encode("utf-16-le")[::2]]
    assert len(arrived) == len(painted)
    return [p - a for p, a in zip(painted, arrived, strict=True)]


@pytest.mark.parametrize("name", PRESETS)
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_character_is_painted_once_in_order_and_never_early(page, name, pattern):
    frames = build(pattern)
    out = drive(page, name, frames, locale="zh" if pattern == "cjk" else "en")
    h = holds(frames, out["reveals"])
    assert min(h) >= 0, "painted before it arrived"
    times = [t for t, _ in out["reveals"]]
    assert times == sorted(times)


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_chat_ui_never_holds_a_character_past_max_buffered_ms(page, pattern):
    frames = build(pattern)
    for max_ms in (400, 150):
        out = drive(page, "chat-ui-smooth", frames, {"maxBufferedMs": max_ms},
                    locale="zh" if pattern == "cjk" else "en")
        assert max(holds(frames, out["reveals"])) <= max_ms + 1e-6


def test_chat_ui_paints_at_once_when_the_stream_is_slower_than_its_floor(page):
    words = "one two three four five six seven eight ".split(" ")
    frames = [{"seq": i, "t_ms": 300 + 500.0 * i, "text": w + " ", "channel": "content", "tokens": 1}
              for i, w in enumerate(words[:8])]  # 2 words/s, about 10 chars/s, below the 20 chars/s floor
    out = drive(page, "chat-ui-smooth", frames)
    assert max(holds(frames, out["reveals"])) < FRAME_MS
    out = drive(page, "chat-ui-smooth", frames, {"floorCharsPerSec": 1})  # above the floor: it smooths
    assert max(holds(frames, out["reveals"])) > FRAME_MS


def test_chat_ui_releases_whole_words_at_the_start_of_the_next_word_even_in_chinese(page):
    for pattern, locale in (("steady", "en"), ("cjk", "zh")):
        frames = build(pattern)
        out = drive(page, "chat-ui-smooth", frames, locale=locale)
        cuts, pos = [], 0
        for _, text in out["reveals"][:-1]:
            pos += len(text.encode("utf-16-le")) // 2
            cuts.append(pos)
        at_word = sum(c in set(out["words"]) for c in cuts)
        assert at_word / len(cuts) >= 0.95, (pattern, at_word, len(cuts))
        assert len(cuts) > 20  # word cadence, not one dump


def test_chat_ui_flushes_boundary_less_text_in_64_char_runs(page):
    frames = build("blob")
    # no deadline and no floor: only the 64-char rule lets a hash out
    out = drive(page, "chat-ui-smooth", frames, {"maxBufferedMs": 10_000, "floorCharsPerSec": 0})
    sizes = [len(t) for _, t in out["reveals"]]
    assert all(s % 64 == 0 for s in sizes[:-1]), sizes
    assert out["reveals"][0][0] < frames[-1]["t_ms"]  # it streams, not at the end


@pytest.mark.parametrize("pattern", ["steady", "bursts", "fast-dump", "end-dump", "stalls"])
@pytest.mark.parametrize("delay", [10, 40])
def test_ai_sdk_releases_at_most_one_chunk_per_delay(page, pattern, delay):
    frames = build(pattern)
    out = drive(page, "ai-sdk-smooth", frames, {"delayInMs": delay})
    at = [a for a, _ in out["releases"]]
    assert min(b - a for a, b in zip(at, at[1:])) >= delay - 1e-9
    for _, text in out["releases"][:-1]:  # word chunking: one word and the blanks after it
        assert text.strip() and not any(c.isspace() for c in text.strip()) and text[-1].isspace(), repr(text)


def test_ai_sdk_skips_the_delay_while_the_tab_is_hidden(page):
    frames = build("fast-dump")
    visible = drive(page, "ai-sdk-smooth", frames, {"delayInMs": 40})
    hidden = drive(page, "ai-sdk-smooth", frames, {"delayInMs": 40}, hidden=(0, 1e9))
    gaps = [b[0] - a[0] for a, b in zip(hidden["releases"], hidden["releases"][1:])]
    assert min(gaps) < 40
    assert hidden["reveals"][-1][0] < visible["reveals"][-1][0] - 1000


def test_ai_sdk_line_chunking_releases_whole_lines(page):
    frames = build("steady")
    out = drive(page, "ai-sdk-smooth", frames, {"chunking": "line"})
    assert all(t.endswith("\n") for _, t in out["releases"][:-1])
    out = drive(page, "ai-sdk-smooth", frames, {"chunking": {"regexp": "[.!?]\\s+"}})
    assert all(t.rstrip()[-1] in ".!?" for _, t in out["releases"][:-1])


def test_ai_sdk_regexp_chunking_from_the_flat_options_a_designer_sets(page):
    """The playground and study files give chunking "regexp" with `regexp` and `flags` (strings, JSON)."""
    frames = build("steady")
    out = drive(page, "ai-sdk-smooth", frames, {"chunking": "regexp", "regexp": "[.!?]\\s+"})
    assert len(out["releases"]) > 3
    assert all(t.rstrip()[-1] in ".!?" and t[-1].isspace() for _, t in out["releases"][:-1])
    # the flags reach the RegExp: without i, "T" is no chunk end; with i, "t" and "T" both are
    upper = drive(page, "ai-sdk-smooth", frames, {"chunking": "regexp", "regexp": "T"})
    either = drive(page, "ai-sdk-smooth", frames, {"chunking": "regexp", "regexp": "T", "flags": "i"})
    assert all(t.endswith("T") for _, t in upper["releases"][:-1])
    assert all(t[-1] in "tT" for _, t in either["releases"][:-1])
    assert len(either["releases"]) > len(upper["releases"])


@pytest.mark.parametrize("name", ["ai-sdk-smooth", "chat-ui-smooth"])
def test_the_segmenter_locale_reaches_intl_segmenter_and_empty_means_the_browsers(page, name):
    frames = build("cjk")
    opts = {"chunking": "segmenter"} if name == "ai-sdk-smooth" else {}
    zh = drive(page, name, frames, {**opts, "locale": "zh"}, locale="zh")
    default = drive(page, name, frames, {**opts, "locale": ""}, locale="zh")
    assert len(zh["reveals"]) > 10 and default["reveals"]


def test_ai_sdk_segmenter_splits_chinese_into_words(page):
    frames = build("cjk")
    out = drive(page, "ai-sdk-smooth", frames, {"chunking": "segmenter", "locale": "zh"}, locale="zh")
    ends, pos = [], 0
    for _, text in out["releases"]:
        pos += len(text.encode("utf-16-le")) // 2
        ends.append(pos)
    words = set(out["words"]) | {pos}
    # the buffer is segmented as it grows, so a few cuts differ from the whole text's segmentation
    at_word = sum(e in words for e in ends) / len(ends)
    multi = sum(len(t) > 1 for _, t in out["releases"]) / len(ends)
    assert at_word >= 0.9, at_word
    assert multi > 0.2, multi  # words, not single characters
    assert len(ends) > 50


@pytest.mark.parametrize("pattern", ["steady", "fast-dump", "end-dump"])
def test_accelerating_speed_rises_with_the_backlog_from_start_to_end_speed(page, pattern):
    opts = {"startSpeed": 2, "endSpeed": 20, "rampChars": 100}
    frames = build(pattern)
    out = drive(page, "accelerating", frames, opts)
    sizes = [len(t) for _, t in out["reveals"]]
    assert max(sizes) <= 20 and min(sizes) >= 1
    if pattern != "steady":
        assert max(sizes) >= 18  # a long backlog reaches (nearly) the end speed


@pytest.mark.parametrize("pattern", ["steady", "fast-dump", "bursts"])
def test_typewriter_never_exceeds_its_rate(page, pattern):
    frames = build(pattern)
    out = drive(page, "typewriter", frames, {"charsPerSec": 50})
    first = out["reveals"][0][0]
    shown = 0
    for t, text in out["reveals"]:
        shown += len(text)
        assert shown <= 50 * (t - first + FRAME_MS) / 1000 + 1
    if pattern == "fast-dump":  # the backlog drains at the fixed rate
        total = sum(len(f["text"]) for f in frames)
        assert out["reveals"][-1][0] - first == pytest.approx(1000 * total / 50, rel=0.05)


def test_presets_play_in_the_real_player_in_english_and_chinese(page):
    players = []
    for lang, pattern in (("en", "steady"), ("zh", "cjk")):
        for name in PRESETS:
            players.append({"id": f"{name}-{lang}", "mode": "prefetch", "schedule": build(pattern),
                            "options": {"strategy": name, "indicator": "dots", "format": "plain",
                                        "lang": "zh-hans" if lang == "zh" else "en"}})
    page.evaluate("config => window.__pacelab.run(config)", {"players": players})
    page.wait_for_function("window.__pacelab.done", timeout=120_000, polling=200)
    results = page.evaluate("window.__pacelab.results()")
    for p in players:
        r = results[p["id"]]
        assert r["textContent"] == "".join(f["text"] for f in p["schedule"]), p["id"]
        assert r["summary"]["unpainted"] == 0
        if p["id"].startswith("chat-ui"):  # the deadline holds in a real browser too (give it two frames)
            assert r["summary"]["max_ms"] <= 400 + 2 * FRAME_MS + 20
