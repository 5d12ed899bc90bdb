"""Tokenizers behind one interface, all working offline (no download at run time, ever).

A tokenizer turns text into the token sequence a model would emit. For streaming what matters is the
*visible text of each token*: ``pieces(text)`` returns one string per token, joining back to ``text``. A
byte-level BPE token can end inside a multi-byte UTF-8 character (common for Chinese in ``cl100k_base``); its
piece is ``""`` and the token that completes the character carries it, as servers' incremental detokenisers
hold back incomplete characters. Token counts stay exact.

Registry: ``get(name)``, ``names()``. BPE tokenizers are loaded lazily and cached. No Django import.
"""

from __future__ import annotations

import codecs
from abc import ABC, abstractmethod
from collections.abc import Callable

from playback.textunits import split_words


class TokenizerUnavailable(LookupError):
    """The tokenizer is known but its offline vocabulary is not installed (the message says how to get it)."""


class Tokenizer(ABC):
    """One tokenizer. Subclasses implement ``token_bytes`` (byte-level BPE) or override ``pieces``."""

    name: str = ""
    description: str = ""

    @abstractmethod
    def token_bytes(self, text: str) -> list[bytes]:
        """The bytes of each token of ``text``."""

    def pieces(self, text: str) -> list[str]:
        """Visible text per token; ``""`` for a token that ends mid-character. ``"".join(...) == text``."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        out = [decoder.decode(b) for b in self.token_bytes(text)]
        tail = decoder.decode(b"", final=True)
        if tail:  # cannot happen for valid text, kept for safety
            out[-1] += tail
        return out

    def count(self, text: str) -> int:
        return len(self.pieces(text))


class CharTokenizer(Tokenizer):
    """One token per Unicode code point: the finest granularity a stream can have."""

    name = "char"
    description = "one token per character (fallback)"

    def token_bytes(self, text: str) -> list[bytes]:
        return [ch.encode("utf-8") for ch in text]

    def pieces(self, text: str) -> list[str]:
        return list(text)


class WordTokenizer(Tokenizer):
    """One token per whitespace-separated word (with its trailing space), each CJK character its own token."""

    name = "word"
    description = "whitespace words, CJK per character (fallback)"

    def token_bytes(self, text: str) -> list[bytes]:
        return [w.encode("utf-8") for w in split_words(text)]

    def pieces(self, text: str) -> list[str]:
        return split_words(text)


_FACTORIES: dict[str, Callable[[], Tokenizer]] = {}
_CACHE: dict[str, Tokenizer] = {}


def register(name: str, factory: Callable[[], Tokenizer]) -> None:
    """Add a tokenizer to the registry; ``factory`` is called once, on first use."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    """Every registered tokenizer name, in registration order."""
    return list(_FACTORIES)


def available() -> list[str]:
    """Registered tokenizers whose vocabulary can be loaded on this machine."""
    out = []
    for n in _FACTORIES:
        try:
            get(n)
        except TokenizerUnavailable:
            continue
        out.append(n)
    return out


def get(name: str) -> Tokenizer:
    """The tokenizer called ``name``; ``KeyError`` lists the known names."""
    if name in _CACHE:
        return _CACHE[name]
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise KeyError(f"unknown tokenizer {name!r}; known: {', '.join(_FACTORIES)}") from None
    tok = factory()
    _CACHE[name] = tok
    return tok


register("char", CharTokenizer)
register("word", WordTokenizer)
