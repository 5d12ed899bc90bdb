"""The three browser engines behind one small page interface, so a browser test can run in each of them.

- chromium: Debian's Chromium through Playwright-python (the page *is* a Playwright page).
- firefox: Debian's ``firefox-esr``, headless, driven over its built-in WebDriver BiDi websocket
  (``--remote-debugging-port``; no geckodriver, which Debian does not package and Selenium would download).
  BiDi is a W3C protocol spoken over the ``websockets`` client the platform already depends on.
- webkit: WebKitGTK's ``MiniBrowser --automation`` through Debian's ``WebKitWebDriver`` and Selenium's WebKitGTK
  driver, on a private Xvfb display (the MiniBrowser needs one; it does not run headless here).

The Firefox and WebKit pages implement the part of Playwright's ``Page`` the per-engine tests use: ``goto``,
``evaluate`` (a function source with one argument, or an expression; promises awaited; the result comes back
through JSON), ``wait_for_function``, ``wait_for_selector``, ``wait_for_timeout``, ``click``, ``fill``,
``inner_text``, ``get_attribute``, ``count``, ``is_visible``, ``screenshot``, ``reload``, ``url``, ``close`` and
``js_errors`` (uncaught exceptions and console errors). Nothing here downloads a browser.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

ENGINES = ("chromium", "firefox", "webkit")
# the engines this run drives (PACELAB_ENGINES narrows them for a quick local loop; scripts/test under CI=true
# insists on all three). Here rather than in conftest.py: other test folders put their own conftest on sys.path.
SELECTED = [e.strip() for e in os.environ.get("PACELAB_ENGINES", ",".join(ENGINES)).split(",") if e.strip()]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-gpu"]
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
MINIBROWSER_GLOBS = ("/usr/lib/*/webkit2gtk-4.1/MiniBrowser", "/usr/lib/*/webkitgtk-6.0/MiniBrowser",
                     "/usr/lib/*/webkit2gtk-4.0/MiniBrowser")

# A function source: `x => ...`, `(a, b) => ...`, `([a, b]) => ...`, `async (...) => ...`, `function ...`.
_FUNCTION = re.compile(r"^\s*(async\s+)?(function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)")
_UNDEFINED = "__pacelab_undefined__"
COMMAND_TIMEOUT_S = 150  # longest a WebKitWebDriver command may take (scripts wait at most 120 s)

# Firefox preferences for an automated, quiet, repeatable profile (what Puppeteer and geckodriver also set).
FIREFOX_PREFS = {
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.tabs.warnOnClose": False,
    "browser.aboutwelcome.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "toolkit.startup.max_resumed_crashes": -1,
    "app.update.disabledForTesting": True,
    "app.normandy.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "extensions.update.enabled": False,
    "extensions.autoDisableScopes": 0,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "browser.newtabpage.enabled": False,
    "remote.active-protocols": 1,  # WebDriver BiDi only
    "dom.disable_open_during_load": False,
}


class EngineUnavailable(RuntimeError):
    """An engine's browser or driver is not installed (scripts/lib/setup.sh installs them)."""


def minibrowser() -> str | None:
    import glob

    for pattern in MINIBROWSER_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def missing(engine: str) -> str | None:
    """What is missing to run ``engine`` here, or None."""
    if engine == "chromium":
        return None if Path(CHROMIUM).exists() else CHROMIUM
    if engine == "firefox":
        return None if Path(FIREFOX).exists() else FIREFOX
    if engine == "webkit":
        for path in (WEBKIT_DRIVER, minibrowser() or "MiniBrowser", shutil.which("Xvfb") or "Xvfb"):
            if not Path(path).exists():
                return path
        return None
    raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


def _wrap(expression: str, with_arg: bool) -> tuple[str, bool]:
    """A function source that runs ``expression`` (called with the JSON-decoded argument when it is a function)
    and returns its awaited value as JSON, so every engine hands back plain data the same way."""
    is_function = bool(_FUNCTION.match(expression))
    call = f"({expression})(JSON.parse(__arg))" if is_function else f"({expression})"
    body = (f"const __v = await {call};"
            f" return __v === undefined ? {json.dumps(_UNDEFINED)} : JSON.stringify(__v);")
    return f"async function(__arg) {{ {body} }}", is_function


def _unwrap(text: Any) -> Any:
    if text is None or text == _UNDEFINED:
        return None
    return json.loads(text)


class _DomHelpers(ABC):
    """Playwright-like DOM conveniences built on ``evaluate`` and ``click``, which each engine's page defines (the
    Firefox and WebKit pages share the rest)."""

    @abstractmethod
    def evaluate(self, expression: str, arg: Any = None) -> Any:
        """Run ``expression`` (a function of ``arg``) in the page and return its JSON value."""

    def wait_for_function(self, expression: str, timeout: float = 30_000, polling: float = 100, arg: Any = None):
        deadline = time.monotonic() + timeout / 1000
        while True:
            value = self.evaluate(expression, arg)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout / 1000:g} s waiting for {expression}")
            time.sleep(polling / 1000)

    def wait_for_timeout(self, ms: float) -> None:
        time.sleep(ms / 1000)

    def wait_for_selector(self, selector: str, timeout: float = 30_000, state: str = "visible") -> None:
        check = {"attached": "s => document.querySelector(s) !== null",
                 "visible": "s => { const e = document.querySelector(s); if (!e) return false;"
                            " const r = e.getBoundingClientRect();"
                            " return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; }"}
        deadline = time.monotonic() + timeout / 1000
        while True:
            try:
                if self.evaluate(check[state], selector):
                    return
            except Exception:  # noqa: BLE001 - the page is between documents (a navigation): try again
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout / 1000:g} s waiting for {selector} ({state})")
            time.sleep(0.1)

    def count(self, selector: str) -> int:
        return self.evaluate("s => document.querySelectorAll(s).length", selector)

    def inner_text(self, selector: str) -> str:
        return self.evaluate("s => document.querySelector(s).innerText", selector)

    def get_attribute(self, selector: str, name: str) -> str | None:
        return self.evaluate("([s, n]) => document.querySelector(s).getAttribute(n)", [selector, name])

    def is_visible(self, selector: str) -> bool:
        return self.evaluate("s => { const e = document.querySelector(s); if (!e) return false;"
                             " const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }", selector)

    def fill(self, selector: str, value: str) -> None:
        """Set a form control's value as typing would, and fire ``input`` and ``change``."""
        self.evaluate("([s, v]) => { const e = document.querySelector(s); e.focus();"
                      " const proto = Object.getPrototypeOf(e);"
                      " Object.getOwnPropertyDescriptor(proto, 'value').set.call(e, v);"
                      " e.dispatchEvent(new Event('input', {bubbles: true}));"
                      " e.dispatchEvent(new Event('change', {bubbles: true})); }", [selector, value])

    def check(self, selector: str) -> None:
        if not self.evaluate("s => document.querySelector(s).checked", selector):
            self.click(selector)

    @abstractmethod
    def click(self, selector: str) -> None:
        """A real pointer click on the element ``selector`` names."""

    def wait_for_url(self, url: str, timeout: float = 30_000) -> None:
        deadline = time.monotonic() + timeout / 1000
        while self._current_url() != url:
            if time.monotonic() > deadline:
                raise TimeoutError(f"timed out after {timeout / 1000:g} s waiting for {url}")
            time.sleep(0.1)

    def _current_url(self) -> str | None:
        try:
            return self.url
        except Exception:  # noqa: BLE001 - between documents
            return None

    @property
    def url(self) -> str:
        return self.evaluate("location.href")


# --- Firefox over WebDriver BiDi ---------------------------------------------------------------------------------


class BidiError(RuntimeError):
    pass


class _Bidi:
    """One WebDriver BiDi connection: commands with ids answered in order of arrival, events to listeners."""

    def __init__(self, url: str) -> None:
        from websockets.sync.client import connect

        self._connection = connect(url, max_size=None, open_timeout=30)
        self._ws = self._connection.__enter__()  # held open for the browser's life; closed by close()
        self._next = 0
        self._pending: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.listeners: list = []
        self._reader = threading.Thread(target=self._read, daemon=True, name="bidi-reader")
        self._reader.start()

    def _read(self) -> None:
        try:
            for raw in self._ws:
                msg = json.loads(raw)
                if "id" in msg and msg["id"] in self._pending:
                    self._pending.pop(msg["id"]).put(msg)
                elif msg.get("type") == "event":
                    for cb in list(self.listeners):
                        cb(msg["method"], msg["params"])
        except Exception:  # noqa: BLE001 - the connection closed: fail whoever still waits
            for q in list(self._pending.values()):
                q.put({"type": "error", "error": "connection closed", "message": "the browser went away"})

    def send(self, method: str, params: dict, timeout: float = 60) -> dict:
        with self._lock:
            self._next += 1
            cid = self._next
            q: queue.Queue = queue.Queue(maxsize=1)
            self._pending[cid] = q
            self._ws.send(json.dumps({"id": cid, "method": method, "params": params}))
        try:
            msg = q.get(timeout=timeout)
        except queue.Empty:
            self._pending.pop(cid, None)
            raise TimeoutError(f"BiDi {method}: no answer in {timeout:g} s") from None
        if msg.get("type") == "error":
            raise BidiError(f"BiDi {method}: {msg.get('error')}: {msg.get('message')}")
        return msg["result"]

    def close(self) -> None:
        self._connection.__exit__(None, None, None)


class FirefoxBrowser:
    """Debian's Firefox ESR, headless, one process; each page is a window in its own user context (its own
    cookies), so pages never hide behind one another as background tabs would."""

    engine = "firefox"

    def __init__(self) -> None:
        if not Path(FIREFOX).exists():
            raise EngineUnavailable(f"{FIREFOX} is not installed (scripts/lib/setup.sh ensure_firefox)")
        self._profile = tempfile.mkdtemp(prefix="pacelab-firefox-")
        prefs = "".join(f'user_pref("{k}", {json.dumps(v)});\n' for k, v in FIREFOX_PREFS.items())
        Path(self._profile, "user.js").write_text(prefs)
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            [FIREFOX, "--headless", "--no-remote", "--remote-debugging-port=0", "--profile", self._profile,
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, "MOZ_CRASHREPORTER_DISABLE": "1"})
        url = self._wait_for_endpoint()
        self.bidi = _Bidi(f"{url}/session")
        caps = self.bidi.send("session.new", {"capabilities": {"alwaysMatch": {"acceptInsecureCerts": True}}})
        self.version = caps["capabilities"].get("browserVersion", "")
        self.bidi.send("session.subscribe", {"events": ["log.entryAdded"]})

    def _wait_for_endpoint(self, timeout: float = 60) -> str:
        found: queue.Queue = queue.Queue()

        def pump() -> None:  # keep draining stderr so Firefox never blocks on a full pipe
            for raw in self._proc.stderr:
                line = raw.decode(errors="replace")
                m = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
                if m:
                    found.put(m.group(1))

        threading.Thread(target=pump, daemon=True, name="firefox-stderr").start()
        try:
            return found.get(timeout=timeout)
        except queue.Empty:
            self._proc.kill()
            raise EngineUnavailable(f"Firefox did not open its BiDi port within {timeout:g} s") from None

    def new_page(self, viewport: dict | None = None) -> FirefoxPage:
        return FirefoxPage(self, viewport or {"width": 1280, "height": 720})

    def close(self) -> None:
        try:
            self.bidi.send("session.end", {}, timeout=10)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.bidi.close()
        finally:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            shutil.rmtree(self._profile, ignore_errors=True)


class FirefoxPage(_DomHelpers):
    engine = "firefox"

    def __init__(self, browser: FirefoxBrowser, viewport: dict) -> None:
        self._browser = browser
        self._bidi = browser.bidi
        self.user_context = self._bidi.send("browser.createUserContext", {})["userContext"]
        self.context = self._bidi.send("browsingContext.create",
                                       {"type": "window", "userContext": self.user_context})["context"]
        self._bidi.send("browsingContext.setViewport", {"context": self.context, "viewport": viewport})
        self.js_errors: list[str] = []
        self._bidi.listeners.append(self._on_event)

    def _on_event(self, method: str, params: dict) -> None:
        if method != "log.entryAdded" or params.get("source", {}).get("context") != self.context:
            return
        if params.get("level") == "error":
            self.js_errors.append(str(params.get("text")))

    def goto(self, url: str, timeout: float = 60) -> None:
        self._bidi.send("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"},
                        timeout=timeout)

    def reload(self) -> None:
        self._bidi.send("browsingContext.reload", {"context": self.context, "wait": "complete"})

    def evaluate(self, expression: str, arg: Any = None) -> Any:
        source, _ = _wrap(expression, arg is not None)
        result = self._bidi.send("script.callFunction", {
            "functionDeclaration": source, "awaitPromise": True, "target": {"context": self.context},
            "arguments": [{"type": "string", "value": json.dumps(arg)}], "resultOwnership": "none"})
        if result.get("type") == "exception":
            details = result.get("exceptionDetails", {})
            raise BidiError(f"evaluate failed: {details.get('text')}")
        return _unwrap(result["result"].get("value"))

    def click(self, selector: str) -> None:
        """A real pointer click (pointer move, down, up) at the element's centre, as a person's would be."""
        found = self._bidi.send("script.callFunction", {
            "functionDeclaration": "function(s) { const e = document.querySelector(s);"
                                   " if (e) e.scrollIntoView({block: 'center'}); return e; }",
            "awaitPromise": False, "target": {"context": self.context},
            "arguments": [{"type": "string", "value": selector}], "resultOwnership": "none"})
        node = found.get("result", {})
        if node.get("type") != "node":
            raise BidiError(f"click: no element {selector}")
        origin = {"type": "element", "element": {"sharedId": node["sharedId"]}}
        self._bidi.send("input.performActions", {"context": self.context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "x": 0, "y": 0, "origin": origin},
                        {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    def screenshot(self, path: str, full_page: bool = False) -> None:
        shot = self._bidi.send("browsingContext.captureScreenshot",
                               {"context": self.context, "origin": "document" if full_page else "viewport"})
        Path(path).write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        if self._on_event in self._bidi.listeners:
            self._bidi.listeners.remove(self._on_event)
        try:
            self._bidi.send("browsingContext.close", {"context": self.context}, timeout=15)
            self._bidi.send("browser.removeUserContext", {"userContext": self.user_context}, timeout=15)
        except Exception:  # noqa: BLE001 - the browser is going away anyway
            pass


# --- WebKit (WebKitGTK MiniBrowser) over classic WebDriver ----------------------------------------------------------


class Xvfb:
    """A private X display for the MiniBrowser (``-displayfd`` picks a free display number). Its framebuffer is
    kept in a file (``-fbdir``), which is how WebKit pages are photographed: WebKitWebDriver's screenshot command
    took 10-20 s here and, on an idle participant page, never answered."""

    def __init__(self, size: str = "1920x1200x24") -> None:
        binary = shutil.which("Xvfb")
        if not binary:
            raise EngineUnavailable("Xvfb is not installed (scripts/lib/setup.sh ensure_webkit)")
        self._fbdir = tempfile.mkdtemp(prefix="pacelab-xvfb-")
        read, write = os.pipe()
        self._proc = subprocess.Popen([binary, "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp",
                                       "-fbdir", self._fbdir],
                                      pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as fh:
            number = fh.readline().strip()
        if not number:
            self._proc.kill()
            raise EngineUnavailable("Xvfb did not start")
        self.display = f":{number}"

    def screenshot(self, path: str) -> None:
        """The whole display as a PNG, from the framebuffer file (XWD: a big-endian header, a colour map, then
        32-bit pixels in the server's byte order)."""
        import struct

        import numpy as np
        from matplotlib import image

        data = Path(self._fbdir, "Xvfb_screen0").read_bytes()
        h = struct.unpack(">25I", data[:100])
        header_size, width, height, byte_order, bits_per_pixel, bytes_per_line, ncolors = (
            h[0], h[4], h[5], h[7], h[11], h[12], h[19])
        if bits_per_pixel != 32:
            raise EngineUnavailable(f"Xvfb framebuffer has {bits_per_pixel} bits per pixel; 32 expected")
        start = header_size + ncolors * 12
        rows = np.frombuffer(data, np.uint8, bytes_per_line * height, start).reshape(height, bytes_per_line)
        pixels = rows[:, : width * 4].reshape(height, width, 4)
        rgb = pixels[..., [2, 1, 0]] if byte_order == 0 else pixels[..., [1, 2, 3]]
        image.imsave(path, np.ascontiguousarray(rgb))

    def close(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        shutil.rmtree(self._fbdir, ignore_errors=True)


# Errors raised in a WebKit page are collected by the page itself (classic WebDriver has no log events).
_ERROR_TRAP = """() => { if (window.__engineErrors) return; window.__engineErrors = [];
  addEventListener("error", (e) => window.__engineErrors.push(String(e.message || e)));
  addEventListener("unhandledrejection", (e) => window.__engineErrors.push(String(e.reason)));
  const original = console.error.bind(console);
  console.error = (...a) => { window.__engineErrors.push(a.map(String).join(" ")); original(...a); }; }"""


class WebKitBrowser:
    """WebKitGTK: one Xvfb display; each page is its own MiniBrowser session (its own cookies and window)."""

    engine = "webkit"

    def __init__(self) -> None:
        gone = missing("webkit")
        if gone:
            raise EngineUnavailable(f"{gone} is not installed (scripts/lib/setup.sh ensure_webkit)")
        self.minibrowser = minibrowser()
        self.xvfb = Xvfb()
        self.version = ""
        self._pages: list[WebKitPage] = []

    def new_page(self, viewport: dict | None = None) -> WebKitPage:
        page = WebKitPage(self, viewport or {"width": 1280, "height": 720})
        self.version = page.version
        self._pages.append(page)
        return page

    def close(self) -> None:
        for page in self._pages:
            page.close()
        self.xvfb.close()


class WebKitPage(_DomHelpers):
    engine = "webkit"

    def __init__(self, browser: WebKitBrowser, viewport: dict) -> None:
        from selenium.webdriver import WebKitGTK
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        options = Options()
        options.binary_location = browser.minibrowser
        options.add_argument("--automation")
        # Without a GPU, WebKitGTK's accelerated compositing goes through Mesa's software GL and a frame with a DOM
        # change takes ~60 ms here (rAF at 16 ms when idle); the non-composited path paints in time, as a
        # participant's GPU-backed Safari does. Chromium runs with --disable-gpu for the same reason.
        env = {**os.environ, "DISPLAY": browser.xvfb.display, "WEBKIT_DISABLE_COMPOSITING_MODE": "1"}
        service = Service(executable_path=WEBKIT_DRIVER, env=env)
        # Selenium's HTTP client waits for the driver forever unless the socket default says otherwise (it is read
        # once, here): a command WebKitWebDriver never answers fails after COMMAND_TIMEOUT_S instead of hanging.
        default = socket.getdefaulttimeout()
        socket.setdefaulttimeout(COMMAND_TIMEOUT_S)
        try:
            self.driver = WebKitGTK(options=options, service=service)
        finally:
            socket.setdefaulttimeout(default)
        self.driver.set_script_timeout(120)
        self.driver.set_page_load_timeout(60)
        self.version = self.driver.capabilities.get("browserVersion", "")
        self._closed = False
        self._xvfb = browser.xvfb
        self._errors_seen: list[str] = []
        self.set_viewport(viewport)

    def set_viewport(self, viewport: dict) -> None:
        """Size the window so the page's own viewport (innerWidth x innerHeight) is the one asked for."""
        self.driver.set_window_size(viewport["width"], viewport["height"])
        for _ in range(3):
            inner = self.driver.execute_script("return [innerWidth, innerHeight]")
            dw, dh = viewport["width"] - inner[0], viewport["height"] - inner[1]
            if dw == 0 and dh == 0:
                return
            size = self.driver.get_window_size()
            self.driver.set_window_size(size["width"] + dw, size["height"] + dh)

    @property
    def js_errors(self) -> list[str]:
        try:
            now = self.driver.execute_script("return window.__engineErrors || []")
        except Exception:  # noqa: BLE001 - between documents
            now = []
        return self._errors_seen + list(now)

    def _trap_errors(self) -> None:
        try:
            self._errors_seen += self.driver.execute_script("return window.__engineErrors || []")
        except Exception:  # noqa: BLE001 - no document yet
            pass
        self.driver.execute_script(f"({_ERROR_TRAP})()")

    def goto(self, url: str, timeout: float = 60) -> None:
        self._errors_seen += self._current_errors()
        self.driver.get(url)
        self.driver.execute_script(f"({_ERROR_TRAP})()")

    def _current_errors(self) -> list[str]:
        try:
            return list(self.driver.execute_script("return window.__engineErrors || []") or [])
        except Exception:  # noqa: BLE001
            return []

    def reload(self) -> None:
        self._errors_seen += self._current_errors()
        self.driver.refresh()
        self.driver.execute_script(f"({_ERROR_TRAP})()")

    def evaluate(self, expression: str, arg: Any = None) -> Any:
        source, _ = _wrap(expression, arg is not None)
        return _unwrap(self.driver.execute_script(f"return ({source})(arguments[0]);", json.dumps(arg)))

    def click(self, selector: str) -> None:
        from selenium.webdriver.common.by import By

        element = self.driver.find_element(By.CSS_SELECTOR, selector)
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
        element.click()

    def screenshot(self, path: str, full_page: bool = False) -> None:
        """The display the MiniBrowser window is on (the viewport and the window's toolbar), from Xvfb."""
        self._xvfb.screenshot(path)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.driver.quit()
        except Exception:  # noqa: BLE001 - the session is gone already
            pass


def launch(engine: str, playwright_browser=None):
    """A running browser of ``engine`` with ``new_page(viewport)``, ``version`` and ``close()``. Chromium wraps a
    Playwright browser: the one given (the test session's), or one started here (a script's)."""
    if engine == "firefox":
        return FirefoxBrowser()
    if engine == "webkit":
        return WebKitBrowser()
    if engine == "chromium":
        return ChromiumBrowser(playwright_browser)
    raise ValueError(f"unknown engine {engine!r}; expected one of {', '.join(ENGINES)}")


class ChromiumBrowser:
    """Debian's Chromium through Playwright; pages are Playwright pages, each in its own context."""

    engine = "chromium"

    def __init__(self, browser=None) -> None:
        self._pw = None
        if browser is None:
            from playwright.sync_api import sync_playwright

            self._pw = sync_playwright().start()
            browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        self.browser = browser
        self.version = browser.version
        self._contexts: list = []

    def new_page(self, viewport: dict | None = None):
        context = self.browser.new_context(viewport=viewport or {"width": 1280, "height": 720})
        self._contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.js_errors = errors
        page.engine = "chromium"
        return page

    def close(self) -> None:
        for context in self._contexts:
            context.close()
        if self._pw is not None:
            self.browser.close()
            self._pw.stop()
