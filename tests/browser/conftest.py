"""Browser-test fixtures: a stdlib HTTP server for static/ and the player test page, headless Chromium, and the
per-engine layer (``engine``, ``engine_browser``) that runs the tests that matter per engine in Chromium, Firefox
and WebKit (tests/browser/engines.py; docs/browsers.md).

No Django: the test page is plain HTML (templates/playback/player_test.html) and the player is plain ES
modules, so a ``http.server`` in a thread serves everything. Every browser is Debian's, never downloaded.

``PACELAB_ENGINES=chromium,firefox`` narrows the engines for a quick local loop (scripts/test refuses a narrowed
set under ``CI=true``); an engine that is asked for but not installed fails its tests, it never skips them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # browser_schedules, engines
from engines import CHROMIUM, CHROMIUM_ARGS, ENGINES, SELECTED, launch  # noqa: E402
from staticserver import StaticServer  # noqa: E402

if unknown := set(SELECTED) - set(ENGINES):
    raise pytest.UsageError(f"PACELAB_ENGINES: unknown engine(s) {sorted(unknown)}; choose from {ENGINES}")


@pytest.fixture(scope="session")
def static_server():
    with StaticServer() as base_url:
        yield base_url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session", params=SELECTED)
def engine(request) -> str:
    """The browser engine a per-engine test runs in (session scope: the tests are grouped by engine, and one
    engine's browser is closed before the next one starts)."""
    return request.param


@pytest.fixture(scope="session")
def engine_browser(engine, request):
    """The running browser of ``engine``: Chromium is the session's Playwright browser; Firefox and WebKit are
    started here (engines.launch)."""
    b = launch(engine, request.getfixturevalue("browser") if engine == "chromium" else None)
    yield b
    b.close()


@pytest.fixture(scope="module")
def open_player_page(engine_browser, static_server):
    """A factory opening the player test page in a fresh page of the engine under test; pages close with the
    module. The page's ``engine`` names the engine."""
    pages = []

    def open_page(width: int = 1400, height: int = 900):
        page = engine_browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{static_server}/player-test/")
        page.wait_for_function("window.__pacelab && window.__pacelab.ready")
        page.engine = engine_browser.engine
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        page.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
