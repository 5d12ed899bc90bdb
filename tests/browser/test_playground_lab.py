"""The playground as a designer's lab (issue 43 item 5), in Chromium against a real Daphne: four presets side by
side that stay in view at 1280×800 with their paint timelines and smoother numbers (the screenshot the issue
asks for), each variant with its own text and question, one variant played alone, slow motion on a consistent
stream clock, and strategy options that reach the player."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from urllib.parse import urlencode

import pytest
from pagewait import wait_js

from playback.core import playground, texts
from playback.models.delivery import PaintReport

pytestmark = [pytest.mark.browser, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "var" / "screenshots" / "playground-four-presets.png"
FOUR_PRESETS = {
    "src": "demo", "name": "en-chat-coffee", "seed": "1", "n": "4", "chat": "1",
    **{f"{k}.{key}": value for k in "abcd" for key, value in (("rate", "40"), ("ttft", "1500"), ("ind", "dots"))},
    "a.render": "token", "b.render": "smooth", "c.render": "ai-sdk-smooth", "d.render": "chat-ui-smooth",
}
SHORT = ("Grind a little coarser and keep the water just off the boil. A shorter brew pulls fewer bitter "
         "compounds, and a clean filter helps too. Try one change at a time.")


def _measure_one():
    spec = importlib.util.spec_from_file_location("bench_smoothers", ROOT / "benchmarks" / "smoothers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.measure_one


@pytest.fixture
def site(service_env, request) -> str:
    service_env["SERVE_STATIC"] = "1"
    return request.getfixturevalue("daphne_server")


@pytest.fixture
def open_lab(browser, site, django_user_model):
    django_user_model.objects.create_user("lab-designer", password="pw-designer-1")
    pages = []

    def open_page(params: dict, width: int = 1280, height: int = 800, raw: bool = False):
        page = browser.new_page(viewport={"width": width, "height": height})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        query = urlencode(params) if raw else playground.to_query(playground.parse(params).config)
        page.goto(f"{site}/playground/?{query}")
        if page.locator("#id_username").count():
            page.fill("#id_username", "lab-designer")
            page.fill("#id_password", "pw-designer-1")
            page.click("button[type=submit]")
        wait_js(page, "window.__playground && window.__playground.ready")
        page.js_errors = errors
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        page.close()


def _in_view(page, selector: str) -> list[dict]:
    return page.evaluate("""sel => [...document.querySelectorAll(sel)].map(e => { const r = e.getBoundingClientRect();
        return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, w: r.width, h: r.height,
                vw: innerWidth, vh: innerHeight}; })""", selector)


def _js_round(x: float) -> int:
    return math.floor(x + 0.5)  # Math.round, as the page shows the numbers


def _visible(box: dict) -> bool:
    return box["h"] > 0 and box["top"] >= -1 and box["bottom"] <= box["vh"] + 1 and box["left"] >= -1 \
        and box["right"] <= box["vw"] + 1


def test_four_presets_stay_in_view_at_1280x800_with_their_timelines_and_benchmark_numbers(open_lab):
    page = open_lab(FOUR_PRESETS)
    page.click("#pg-play")
    wait_js(page, "window.__playground.started", timeout=15_000, polling=20)
    # the waiting indicator of every panel is on screen before the first token (TTFT 1.5 s)
    indicators = _in_view(page, ".pg-panel .pl-indicator")
    assert len(indicators) == 4 and all(_visible(b) for b in indicators), indicators
    wait_js(page, "window.__playground.results().a.paints.length > 3", timeout=15_000)
    for selector in (".pg-panel .pg-player", ".pg-panel [data-role=question]", ".pg-panel .pg-timeline",
                     ".pg-panel .pg-stats", "#pg-play"):
        boxes = _in_view(page, selector)
        assert len(boxes) == (1 if selector == "#pg-play" else 4) and all(_visible(b) for b in boxes), selector
    wait_js(page, "window.__playground.done", timeout=60_000, polling=200)
    results = page.evaluate("window.__playground.results()")
    assert [e for e in page.js_errors if not e.startswith("Failed to load resource")] == []
    measure_one = _measure_one()
    source = texts.bundled_text("en-chat-coffee")
    for letter in "abcd":
        got = results[letter]
        assert got["state"] == "done" and got["revealedText"] == source, (letter, got["errors"])
        assert got["timelinePoints"] == len(got["paints"]) > 0  # one point per paint
        frames = [{"t_ms": f["t_ms"], "text": "x" * f["chars"]} for f in got["arrivals"]]
        want = measure_one(page, frames, got["paints"])  # the benchmark's path to the numbers, on this play
        for key in ("p50", "p95", "max", "ttfp", "hold", "last"):
            assert got["stats"][key] == pytest.approx(want[key], abs=1e-6), (letter, key)
        shown = got["shown"]["stats"]
        r = {k: _js_round(want[k]) for k in ("p50", "p95", "max", "ttfp", "hold", "last")}
        assert shown["delay"] == f"{r['p50']} / {r['p95']} / {r['max']} ms"
        assert shown["ttfp"] == f"{r['ttfp']} ms" and shown["last"] == f"{r['last']} ms"
        assert shown["hold"] == f"{r['hold']} ms"
        # each answer follows its newest text in its own scroll box
        box = page.evaluate(f"""(() => {{ const e = document.querySelector('#pg-panel-{letter} .pg-player');
            return [e.scrollTop, e.clientHeight, e.scrollHeight]; }})()""")
        if box[2] > box[1] + 4:
            assert box[0] + box[1] >= box[2] - 30, (letter, box)
    questions = page.locator(".pg-panel [data-role=question]").all_text_contents()
    assert questions == [playground.DEMO_QUESTIONS["en-chat-coffee"]] * 4
    stage = _in_view(page, "#pg-stage")  # the whole stage (controls and panels) is the window: no page scroll
    assert len(stage) == 1 and _visible(stage[0]) and stage[0]["h"] >= 800 - 2, stage
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    slow = {k: (round(r["stats"]["p95"]), round(r["stats"]["last"])) for k, r in results.items()}
    print(f"four presets (p95 added delay, last-char lag, ms): {slow}; screenshot {SCREENSHOT}")


def test_each_variant_plays_its_own_text_and_one_plays_alone_leaving_the_others_idle(open_lab, designer_tokens):
    params = {"src": "demo", "name": "en-chat-sleep", "n": "3", "chat": "1", "b.name": "zh-chat-tea",
              "c.text": SHORT, "c.q": "How do I fix bitter coffee?",
              **{f"{k}.rate": "60" for k in "abc"}, **{f"{k}.ttft": "200" for k in "abc"}}
    page = open_lab(params)
    first = designer_tokens(page)
    page.click("#pg-panel-b [data-role=play-one]")
    wait_js(page, "window.__playground.done", timeout=60_000, polling=200)
    results = page.evaluate("window.__playground.results()")
    assert list(results) == ["b"]
    b = results["b"]
    assert b["token"] == first["b"] and b["state"] == "done"
    assert b["revealedText"] == texts.bundled_text("zh-chat-tea")
    assert page.get_attribute("#pg-panel-b .pl-output", "lang") == "zh-hans"
    assert page.text_content("#pg-panel-b [data-role=question]") == playground.DEMO_QUESTIONS["zh-chat-tea"]
    for letter in "ac":  # idle: nothing played, nothing stored
        assert page.text_content(f"#pg-panel-{letter} [data-role=player]") == ""
        assert page.text_content(f"#pg-panel-{letter} [data-role=status]").strip() == "Not started"
        assert not PaintReport.objects.filter(playback__token=first[letter]).exists()
    assert PaintReport.objects.filter(playback__token=first["b"]).exists()

    page.click("#pg-play")  # now all: b needs a fresh playback, a and c play theirs
    wait_js(page, "window.__playground.round() === 2 && window.__playground.done", timeout=60_000, polling=200)
    results = page.evaluate("window.__playground.results()")
    assert results["a"]["token"] == first["a"] and results["c"]["token"] == first["c"]
    assert results["b"]["token"] != first["b"]
    assert results["a"]["revealedText"] == texts.bundled_text("en-chat-sleep")
    assert results["b"]["revealedText"] == texts.bundled_text("zh-chat-tea")
    assert results["c"]["revealedText"] == SHORT
    assert page.text_content("#pg-panel-c [data-role=question]") == "How do I fix bitter coffee?"
    assert [e for e in page.js_errors if not e.startswith("Failed to load resource")] == []


@pytest.fixture
def designer_tokens():
    def tokens(page) -> dict[str, str]:
        data = page.evaluate("JSON.parse(document.getElementById('playground-data').textContent)")
        return {v["letter"]: v["token"] for v in data["variants"]}
    return tokens


def _play_alone(page, letter: str, speed: str, round_: int) -> dict:
    page.select_option("#pg-speed", speed)
    page.click(f"#pg-panel-{letter} [data-role=play-one]")
    wait_js(page, f"window.__playground.round() === {round_} && window.__playground.done", timeout=60_000,
            polling=200)
    return page.evaluate("window.__playground.results()")[letter]


@pytest.mark.parametrize("speed", ["0.5", "0.25"])
def test_slow_motion_slows_the_whole_stream_clock_consistently(open_lab, speed):
    params = {"src": "demo", "n": "2", "a.text": SHORT, "a.rate": "40", "a.ttft": "300", "a.render": "smooth",
              "a.ind": "dots"}
    page = open_lab(params)
    normal = _play_alone(page, "a", "1", 1)
    slow = _play_alone(page, "a", speed, 2)
    factor = 1 / float(speed)
    assert slow["timeScale"] == float(speed) and normal["timeScale"] == 1
    assert normal["revealedText"] == slow["revealedText"] == SHORT
    # the strategy means to paint at the same stream times (its design clock, on ideal 60 Hz ticks) ...
    # (the design clock runs until the player finishes; a loaded browser's big frames may let the real strategy
    # finish a few frames before its design does, so the shorter list is compared)
    n = min(len(slow["designPaints"]), len(normal["designPaints"]))
    assert n > 20 and n >= 0.85 * max(len(slow["designPaints"]), len(normal["designPaints"]))
    assert slow["designPaints"][:n] == pytest.approx(normal["designPaints"][:n], abs=0.01)
    # ... which takes `factor` times as long to watch: the last paint's wall time over its stream time
    last_n, last_s = normal["paints"][-1], slow["paints"][-1]
    assert last_n["wall_ms"] / last_n["t_ms"] == pytest.approx(1.0, rel=0.08)
    assert last_s["wall_ms"] / last_s["t_ms"] == pytest.approx(factor, rel=0.08)
    assert slow["wallMs"] / normal["wallMs"] == pytest.approx(factor, rel=0.2)
    # and the numbers under the panel are in stream time: about the same as at normal speed
    assert slow["stats"]["ttfp"] == pytest.approx(normal["stats"]["ttfp"], abs=40)
    assert slow["stats"]["p50"] == pytest.approx(normal["stats"]["p50"], abs=40)
    print(f"slow motion x{speed}: last paint {last_s['t_ms']:.0f} ms stream, {last_s['wall_ms']:.0f} ms wall "
          f"(normal {last_n['t_ms']:.0f} / {last_n['wall_ms']:.0f})")


def _play_both(page) -> tuple[dict, dict]:
    """Plays both variants to their end with the page's Play button: the player's results of a and b."""
    page.click("#pg-play")
    wait_js(page, "window.__playground.done", timeout=60_000, polling=200)
    results = page.evaluate("window.__playground.results()")
    return results["a"], results["b"]


def test_strategy_options_are_generated_validated_and_reach_the_player_and_the_export(open_lab):
    bad = open_lab({"src": "demo", "n": "2", "a.render": "typewriter", "a.opt.charsPerSec": "0"}, raw=True)
    assert "a.opt.charsPerSec: must be a number > 0 and <= 100000, got '0'" in bad.text_content("#pg-errors")
    params = {"src": "demo", "n": "2", "a.text": SHORT, "a.arrival": "fast-dump", "a.render": "typewriter",
              "a.opt.charsPerSec": "200", "b.render": "chat-ui-smooth", "b.opt.maxBufferedMs": "150"}
    page = open_lab(params)
    page.click("#pg-settings > summary")
    form_a = "fieldset.pg-vform:nth-of-type(1)"
    assert page.input_value(f"{form_a} input[name='a.opt.charsPerSec']") == "200"
    assert page.is_visible(f"{form_a} .pg-opts[data-strategy=typewriter]")
    assert not page.is_visible(f"{form_a} .pg-opts[data-strategy=chat-ui-smooth]")
    assert page.is_disabled(f"{form_a} input[name='a.opt.maxBufferedMs']")
    page.select_option(f"{form_a} select[name='a.render']", "accelerating")  # the form follows the strategy
    assert page.is_visible(f"{form_a} input[name='a.opt.startSpeed']")
    assert page.is_disabled(f"{form_a} input[name='a.opt.charsPerSec']")
    page.select_option(f"{form_a} select[name='a.render']", "typewriter")
    assert "charsPerSec: 200" in page.text_content("#pg-panel-a [data-role=export-module]")
    assert "maxBufferedMs: 150" in page.text_content("#pg-panel-b [data-role=export-module]")

    a, b = _play_both(page)
    assert a["strategyOptions"] == {"charsPerSec": 200} and b["strategyOptions"] == {"maxBufferedMs": 150}
    assert a["revealedText"] == SHORT
    # the whole text arrives within a few hundred ms; the typewriter then types it at 200 characters/s
    span = a["paints"][-1]["t_ms"] - a["paints"][0]["t_ms"]
    assert span == pytest.approx(len(SHORT) / 200 * 1000, rel=0.1)
    assert [e for e in page.js_errors if not e.startswith("Failed to load resource")] == []


def test_a_designer_types_a_sentence_regexp_and_a_locale_sees_bad_ones_by_the_field_and_gets_them_exported(open_lab):
    page = open_lab({"src": "demo", "n": "2", "a.text": SHORT, "a.rate": "60", "a.ttft": "300",
                     "a.render": "ai-sdk-smooth", "b.name": "zh-chat-tea", "b.rate": "60", "b.ttft": "300",
                     "b.render": "chat-ui-smooth"})
    page.click("#pg-settings > summary")
    form_a, form_b = "fieldset.pg-vform:nth-of-type(1)", "fieldset.pg-vform:nth-of-type(2)"
    page.select_option(f"{form_a} select[name='a.opt.chunking']", "regexp")
    regexp = page.locator(f"{form_a} .pg-opts[data-strategy=ai-sdk-smooth] input[name='a.opt.regexp']")
    regexp.fill("[.!?")  # an unterminated class: the browser's own RegExp says why, by the field
    error_a = page.locator(f"{form_a} .pg-opts[data-strategy=ai-sdk-smooth] [data-role=option-error]").first
    assert error_a.is_visible()
    assert "regexp" in error_a.text_content() and "Unterminated character class" in error_a.text_content()
    locale = page.locator(f"{form_b} .pg-opts[data-strategy=chat-ui-smooth] input[name='b.opt.locale']")
    locale.fill("zh_CN")
    error_b = page.locator(f"{form_b} .pg-opts[data-strategy=chat-ui-smooth] [data-role=option-error]")
    assert "locale" in error_b.text_content() and error_b.is_visible()
    url = page.url
    page.click("#pg-form button[type=submit]")  # refused while a field is invalid
    assert page.url == url and not page.evaluate("document.getElementById('pg-form').checkValidity()")
    regexp.fill("[.!?]\\s+")
    locale.fill("zh")
    assert not error_a.is_visible() and not error_b.is_visible()
    with page.expect_navigation():
        page.click("#pg-form button[type=submit]")
    wait_js(page, "window.__playground && window.__playground.ready")
    assert page.locator("#pg-errors").count() == 0
    module = page.text_content("#pg-panel-a [data-role=export-module]")
    assert 'options: { chunking: "regexp", regexp: "[.!?]\\\\s+" },' in module
    assert "smoothStream({ chunking: /[.!?]\\s+/ })" in page.text_content("#pg-panel-a [data-role=export-ai-sdk]")
    assert 'locale: "zh"' in page.text_content("#pg-panel-b [data-role=export-module]")

    a, b = _play_both(page)
    assert a["strategyOptions"] == {"chunking": "regexp", "regexp": "[.!?]\\s+"}
    assert b["strategyOptions"] == {"locale": "zh"}
    assert a["revealedText"] == SHORT and b["revealedText"]
    # every paint ends at a sentence end (the whole rest when the stream ends): three sentences, three paints
    texts_a = [p["text"] for p in a["paints"]]
    assert "".join(texts_a) == SHORT
    assert all(t.rstrip()[-1] in ".!?" for t in texts_a)
    assert len(texts_a) <= 3 and all(t[-1].isspace() for t in texts_a[:-1])
    assert [e for e in page.js_errors if not e.startswith("Failed to load resource")] == []
