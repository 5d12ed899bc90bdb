"""Browser-test fixtures: a stdlib HTTP server for static/ and the player test page, and headless Chromium.

No Django: the test page is plain HTML (templates/playback/player_test.html) and the player is plain ES
modules, so a ``http.server`` in a thread serves everything. Chromium is Debian's, never downloaded.
"""

from __future__ import annotations

import functools
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
TEST_PAGE = ROOT / "templates" / "playback" / "player_test.html"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # browser_schedules
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu"]


class _Handler(SimpleHTTPRequestHandler):
    """Serves /static/* from static/ and /player-test/ as the test page; nothing else."""

    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript", ".mjs": "text/javascript"}

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if clean.rstrip("/") == "/player-test":
            return str(TEST_PAGE)
        if clean.startswith("/static/"):
            target = (STATIC / clean.removeprefix("/static/")).resolve()
            if target.is_relative_to(STATIC):
                return str(target)
        return str(ROOT / "nonexistent")

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture(scope="session")
def static_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(STATIC)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def open_player_page(browser, static_server):
    """A factory opening the player test page in a fresh page; pages close with the module."""
    pages = []

    def open_page(width: int = 1400, height: int = 900):
        page = browser.new_page(viewport={"width": width, "height": height})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(f"{static_server}/player-test/")
        page.wait_for_function("window.__pacelab && window.__pacelab.ready")
        page.js_errors = errors
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        page.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
