"""Which browser engine a user agent runs on, and its version (pure; no Django).

The engine, not the brand, decides paint timing: every browser on iOS is WebKit whatever its name (CriOS, FxiOS,
EdgiOS), Edge and Opera are Chromium. The study file's ``limits.browsers`` uses this vocabulary: ``chromium``,
``firefox`` and ``safari`` (WebKit; ``webkit`` is accepted as the same engine). See docs/browsers.md.
"""

from __future__ import annotations

import re

ENGINES = ("chromium", "firefox", "safari")
ALIASES = {"webkit": "safari"}
# What a participant is told to open, per engine (brands they know).
BRANDS = {"chromium": ("Chrome", "Edge"), "firefox": ("Firefox",), "safari": ("Safari",)}

_IOS = re.compile(r"\b(iPhone|iPad|iPod)\b|\b(CriOS|FxiOS|EdgiOS|OPiOS)/")
_FIREFOX = re.compile(r"\bFirefox/(\d+(?:\.\d+)*)")
_CHROMIUM = re.compile(r"\b(?:HeadlessChrome|Chrome|Chromium)/(\d+(?:\.\d+)*)")
_SAFARI_VERSION = re.compile(r"\bVersion/(\d+(?:\.\d+)*)")
_WEBKIT = re.compile(r"\bAppleWebKit/(\d+(?:\.\d+)*)")


def normalize(engine: str) -> str:
    """An engine name from a study file, in this module's vocabulary (``webkit`` -> ``safari``)."""
    return ALIASES.get(engine, engine)


def engine_of(user_agent: str | None) -> tuple[str | None, str]:
    """(engine, version) of a user agent: engine one of ``ENGINES`` or None when unknown; version the engine's
    own (Firefox's and Chromium's major.minor...), for WebKit the Safari ``Version/`` it claims (else the
    AppleWebKit build), '' when not stated."""
    ua = user_agent or ""
    if _IOS.search(ua):
        m = _SAFARI_VERSION.search(ua) or _WEBKIT.search(ua)
        return "safari", m.group(1) if m else ""
    if m := _FIREFOX.search(ua):
        return "firefox", m.group(1)
    if m := _CHROMIUM.search(ua):
        return "chromium", m.group(1)
    if "AppleWebKit/" in ua:
        m = _SAFARI_VERSION.search(ua) or _WEBKIT.search(ua)
        return "safari", m.group(1) if m else ""
    return None, ""


def allowed(engine: str | None, browsers: list[str] | None) -> bool:
    """Whether ``engine`` may take part, given the study file's ``limits.browsers`` (empty or absent: all)."""
    if not browsers:
        return True
    return engine is not None and engine in {normalize(b) for b in browsers}


def brands(browsers: list[str]) -> list[str]:
    """The browsers a participant can open for these engines, in the study file's order."""
    out: list[str] = []
    for b in browsers:
        for name in BRANDS[normalize(b)]:
            if name not in out:
                out.append(name)
    return out
