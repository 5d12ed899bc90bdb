"""The designer playground end to end: a real Daphne, a designer logged in through the login form, four
variants played side by side over the playback websocket, paint logs stored, and timing fidelity measured."""

from __future__ import annotations

import os
from urllib.parse import parse_qsl

import pytest
from pagewait import wait_js

from playback.core import playground, texts
from playback.models.delivery import PaintReport, Playback
from playback.services.delivery import playback_fidelity

pytestmark = [pytest.mark.browser, pytest.mark.integration]

TWO_FRAMES_MS = 33.4  # two frames at 60 Hz: the bound docs/rendering.md and playback/core/fidelity.py use
LOADED_MS = 50.0      # allowed when the machine is busy (load average above one per core)
# Four players share one page, so a loaded browser draws frames late; as in test_live_and_fidelity.py the bound
# is also counted in the page's own frames (three median frame intervals), so the browser's pause is not blamed
# on the player (the milliseconds are printed).
PAGE_FRAMES = 3

PARAMS = {
    "src": "demo", "name": "en-chat-coffee", "seed": "1", "n": "4",
    "a.rate": "40", "a.ttft": "300", "a.render": "token", "a.ind": "dots", "a.mode": "prefetch",
    "b.rate": "40", "b.ttft": "300", "b.render": "batch", "b.batch_ms": "50", "b.ind": "shimmer",
    "c.rate": "40", "c.ttft": "300", "c.render": "smooth", "c.ind": "spinner", "c.mode": "live",
    "d.rate": "40", "d.ttft": "300", "d.render": "fade", "d.ind": "progress", "d.mode": "live",
    "d.jitter": "gamma", "d.cv": "0.5",
}


@pytest.fixture
def site(service_env, request) -> str:
    service_env["SERVE_STATIC"] = "1"
    return request.getfixturevalue("daphne_server")


@pytest.fixture
def designer(django_user_model, site):
    return django_user_model.objects.create_user("designer", password="pw-designer-1")


@pytest.fixture
def page(browser, site, designer):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("response", lambda r: errors.append(f"HTTP {r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    config = playground.parse(PARAMS).config
    page.goto(f"{site}/playground/?{playground.to_query(config)}")
    page.fill("#id_username", "designer")  # redirected to the login form first
    page.fill("#id_password", "pw-designer-1")
    page.click("button[type=submit]")
    wait_js(page, "window.__playground && window.__playground.ready")
    page.js_errors = errors
    yield page
    page.close()


def _bound(frame_times: list[float]) -> float:
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    gaps = sorted(b - a for a, b in zip(frame_times, frame_times[1:]))
    own = PAGE_FRAMES * gaps[len(gaps) // 2] if gaps else 0.0
    return max(LOADED_MS if load > 1.0 else TWO_FRAMES_MS, own)


def test_four_variants_play_side_by_side_and_their_paint_logs_are_stored(page, designer, screenshot_dir):
    assert dict(parse_qsl(page.url.split("?", 1)[1])) == playground.to_params(playground.parse(PARAMS).config)
    assert page.locator(".pg-panel").count() == 4
    page.evaluate("() => { window.__frameTimes = []; const f = (t) => { window.__frameTimes.push(t);"
                  " requestAnimationFrame(f); }; requestAnimationFrame(f); }")
    page.click("#pg-play")
    wait_js(page, "window.__playground.started", timeout=15_000)
    page.wait_for_timeout(1500)
    page.screenshot(path=str(screenshot_dir / "playground-4-variants.png"), full_page=True)
    wait_js(page, "window.__playground.done", timeout=60_000, polling=200)
    results = page.evaluate("window.__playground.results()")
    frame_times = page.evaluate("window.__frameTimes")
    assert [e for e in page.js_errors if not e.startswith("Failed to load resource")] == []

    config = playground.parse(PARAMS).config
    source = texts.bundled_text("en-chat-coffee")
    figures = {}
    for letter, variant in zip("abcd", config.variants):
        got = results[letter]
        stream = playground.variant_stream(variant, seed=config.seed, text=source, language="en")
        assert got["errors"] == [] and got["state"] == "done", (letter, got["errors"])
        assert got["revealedText"] == source, letter
        assert got["summary"]["unpainted"] == 0
        playback = Playback.objects.get(token=got["token"], owner=designer)
        assert playback.mode == variant.mode and playback.config["render"] == variant.render
        assert playback.stream == stream.to_obj()
        reports = list(PaintReport.objects.filter(playback=playback).order_by("batch"))
        assert reports and all(r.clock_offset_ms is not None for r in reports)
        entries = [e for r in reports for e in r.entries]
        shown = [i for i, p in enumerate(stream.pieces) if p.text]
        assert sorted(e["seq"] for e in entries) == shown, letter
        server = playback_fidelity(playback=playback)
        assert server.frames == len(shown)
        assert got["server"]["fidelity"]["p95_ms"] == pytest.approx(server.p95_ms)
        assert "p95" in got["shown"]["server"] and got["shown"]["p95"] != "–"
        figures[letter] = (variant.render, variant.mode, server.p50_ms, server.p95_ms, got["summary"]["p95_ms"])
    for letter, (render, mode, p50, p95, client_p95) in figures.items():
        print(f"playground {letter} {render}/{mode}: server p50 {p50:.1f} ms, p95 {p95:.1f} ms "
              f"(client p95 {client_p95:.1f} ms)")
    token_p95 = figures["a"][3]
    bound = _bound(frame_times)
    print(f"prefetch token p95 painted - scheduled: {token_p95:.1f} ms (bound {bound} ms)")
    assert token_p95 <= bound


def test_replay_plays_fresh_playbacks_of_the_same_variants(page, designer):
    page.click("#pg-play")
    wait_js(page, "window.__playground.done", timeout=60_000, polling=200)
    first = {k: v["token"] for k, v in page.evaluate("window.__playground.results()").items()}
    page.click("#pg-replay")
    wait_js(page, "window.__playground.round() === 2 && window.__playground.done", timeout=60_000,
                           polling=200)
    second = page.evaluate("window.__playground.results()")
    assert [e for e in page.js_errors if not e.startswith("Failed to load resource")] == []
    assert set(first) == set(second) == set("abcd")
    source = texts.bundled_text("en-chat-coffee")
    for letter, got in second.items():
        assert got["token"] != first[letter] and got["revealedText"] == source and got["state"] == "done"
        assert PaintReport.objects.filter(playback__token=got["token"]).exists()
