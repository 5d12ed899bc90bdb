"""The sample assistant answers shipped in ``playback/data/texts`` (English and Chinese, chat and long-form).

They give tokenizer statistics and synthetic streams realistic text without any download. A file's name
starts with its language (``en-chat-coffee.md`` is English); ``README.md`` there states their provenance.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

LANGUAGES = ("en", "zh")


@cache
def bundled_texts() -> dict[str, tuple[str, str]]:
    """``{name: (language, text)}`` for every bundled text, name without ``.md``, sorted by name."""
    folder = resources.files("playback") / "data" / "texts"
    out: dict[str, tuple[str, str]] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        language = entry.name.split("-", 1)[0]
        if not entry.name.endswith(".md") or language not in LANGUAGES:
            continue
        out[entry.name.removesuffix(".md")] = (language, entry.read_text(encoding="utf-8"))
    return out


def bundled_text(name: str) -> str:
    """The text called ``name`` (``"en-chat-coffee"``); ``KeyError`` lists the names."""
    texts = bundled_texts()
    if name not in texts:
        raise KeyError(f"unknown bundled text {name!r}; known: {', '.join(texts)}")
    return texts[name][1]


def texts_in(language: str) -> dict[str, str]:
    """``{name: text}`` of the bundled texts in ``language`` (``"en"`` or ``"zh"``)."""
    return {name: text for name, (lang, text) in bundled_texts().items() if lang == language}
