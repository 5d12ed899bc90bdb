"""pacelab.browsers: the engine (not the brand) and its version from a user agent, and the study file's engine
restriction (``limits.browsers``)."""

from __future__ import annotations

import pytest

from pacelab import browsers

UAS = {
    # Debian's engines as this machine's browser tests drive them
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.129 "
    "Safari/537.36": ("chromium", "156.0.8078.129"),
    "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0": ("firefox", "153.0"),
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/60.5 Safari/605.1.15":
        ("safari", "60.5"),
    # brands on other engines
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
    "Safari/537.36 Edg/131.0.2903.86": ("chromium", "131.0.0.0"),
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.2 "
    "Safari/605.1.15": ("safari", "18.2"),
    "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0": ("firefox", "133.0"),
    # every iOS browser is WebKit, whatever it is called
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1": ("safari", "605.1.15"),
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "FxiOS/133.0 Mobile/15E148 Safari/605.1.15": ("safari", "605.1.15"),
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 "
    "Mobile/15E148 Safari/604.1": ("safari", "17.5"),
    "": (None, ""),
    "curl/8.5.0": (None, ""),
}


@pytest.mark.parametrize("ua", list(UAS))
def test_the_engine_and_its_version_come_from_the_user_agent(ua):
    assert browsers.engine_of(ua) == UAS[ua]


def test_no_restriction_allows_every_engine_and_an_unknown_one():
    assert browsers.allowed("firefox", None) and browsers.allowed(None, [])


def test_a_restriction_allows_only_the_engines_it_names_and_webkit_is_safari():
    assert browsers.allowed("chromium", ["chromium", "safari"])
    assert not browsers.allowed("firefox", ["chromium", "safari"])
    assert browsers.allowed("safari", ["webkit"])
    assert not browsers.allowed(None, ["chromium"])  # an unknown engine cannot be vouched for


def test_the_participant_is_told_brands_once_each():
    assert browsers.brands(["chromium", "safari", "webkit"]) == ["Chrome", "Edge", "Safari"]
