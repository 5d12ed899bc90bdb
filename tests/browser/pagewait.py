"""Waiting on page state from Python.

Pages served with PaceLab's Content-Security-Policy forbid the string evaluation that Playwright's
``page.wait_for_function`` performs inside the page; ``page.evaluate`` is not affected, so poll with it.
"""

from __future__ import annotations

import time


def wait_js(page, expression: str, timeout: float = 30_000, polling: float = 100) -> None:
    deadline = time.monotonic() + timeout / 1000
    while time.monotonic() < deadline:
        if page.evaluate(expression):
            return
        page.wait_for_timeout(polling)
    raise AssertionError(f"timed out after {timeout / 1000:g} s waiting for {expression}")
