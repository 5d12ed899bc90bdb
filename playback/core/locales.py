"""Whether a text is a language tag the browser's ``Intl`` accepts (``Intl.getCanonicalLocales`` does not throw).

ECMA-402 takes a Unicode BCP 47 locale identifier: a language (2–3 or 5–8 letters), then optionally a script
(4 letters), a region (2 letters or 3 digits), variants (5–8 letters/digits, or a digit and 3), extensions
(a singleton and subtags of 2–8) and a private part (``x`` and subtags of 1–8); no variant or singleton twice;
``-`` or ``_`` is not the same (``zh_CN`` is refused). A well-formed tag the browser has no data for (``xx``)
is accepted, as the browser does, and falls back to its default locale. No Django import.
"""

from __future__ import annotations

import re

TAG = re.compile(
    r"(?P<lang>[a-z]{2,3}|[a-z]{5,8})"
    r"(-[a-z]{4})?"
    r"(-(?:[a-z]{2}|\d{3}))?"
    r"(?P<variants>(-(?:[a-z\d]{5,8}|\d[a-z\d]{3}))*)"
    r"(?P<extensions>(-[a-wyz\d](-[a-z\d]{2,8})+)*)"
    r"(-x(-[a-z\d]{1,8})+)?",
    re.I,
)


def well_formed(tag: str) -> bool:
    """True when ``Intl.getCanonicalLocales(tag)`` accepts ``tag``."""
    m = TAG.fullmatch(tag)
    if m is None:
        return False
    variants = m.group("variants").lower().split("-")[1:]
    singletons = [part for part in m.group("extensions").lower().split("-") if len(part) == 1]
    return len(set(variants)) == len(variants) and len(set(singletons)) == len(singletons)
