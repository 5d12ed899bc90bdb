"""The Python checks of a typed RegExp and locale (playback/core/jsregexp.py, locales.py) against Chromium's own
``new RegExp`` and ``Intl.getCanonicalLocales``: the server never refuses what the browser accepts, and the
mistakes it names are ones the browser refuses too."""

from __future__ import annotations

import pytest

from playback.core import jsregexp, locales

pytestmark = pytest.mark.browser

SOURCES = ["[.!?]\\s+", "\\n+", "(?<end>[.!?])\\s+", "\\p{L}+", "\\q", "a{", "{", "]", "(?:a|b)+?", "a{2,3}?",
           "(?<=\\.)\\s", "(?<!x)y", "[^]", "[]", "[\\w-z]", "(?i:a)b", "[.。！？]", "a\\/b", "\\\\", "(?=a)*",
           "[.!?", "(a", "a)", "*a", "a**", "a|+", "^*", "{2}", "a{3,1}", "[z-a]", "(?x)", "(?<1a>b)", "a\\",
           "\\b*", "(?<n>a)(?<n>b)", "\\k<x>(?<y>a)", "(?ii:a)", "a{1}{2}", "x{2,}+"]
TAGS = ["zh", "ja", "zh-Hant", "zh-Hans-CN", "es-419", "de-DE-1996", "en-u-nu-latn", "en-x-pacelab", "xx",
        "zh_CN", "x", "chinese!", "de-1996-1996", "en-u-nu-latn-u-ca-gregory", "root", "i-klingon", "en-"]

CHECK = """({sources, tags}) => ({
  re: sources.map((s) => ["", "u"].map((f) => {
    try { new RegExp(s, f); return null; } catch (e) { return e.message; }
  })),
  tags: tags.map((t) => { try { Intl.getCanonicalLocales(t); return true; } catch (e) { return false; } }),
})"""


def test_the_server_refuses_only_what_chromium_refuses_and_agrees_on_locales(browser, static_server):
    page = browser.new_page()
    page.goto(f"{static_server}/player-test/")
    out = page.evaluate(CHECK, {"sources": SOURCES, "tags": TAGS})
    page.close()
    named = 0
    for source, (plain, unicode) in zip(SOURCES, out["re"], strict=True):
        problem = jsregexp.problem(source)
        if problem is not None:  # named by the server: refused by the browser, with and without the u flag
            assert plain and unicode, f"{source!r}: the server says {problem!r}, Chromium accepts it"
            named += 1
    assert named >= 13  # the common mistakes are caught without a browser
    assert [locales.well_formed(t) for t in TAGS] == out["tags"]
