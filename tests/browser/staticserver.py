"""A stdlib HTTP server for static/ and the player test page (the browser tests and benchmarks/rendering.py).

No Django: the test page is plain HTML (templates/playback/player_test.html) and the player is plain ES modules.
"""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
TEST_PAGE = ROOT / "templates" / "playback" / "player_test.html"


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


class StaticServer:
    """``with StaticServer() as base_url: ...`` serves static/ and /player-test/ on a free local port."""

    def __enter__(self) -> str:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(STATIC)))
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
