"""Counting characters and words the way a reader meets them.

Chinese, Japanese and Korean scripts have no spaces between words; a reader takes them in roughly one
character at a time, so each CJK character counts as one word. Other text counts whitespace-separated
words. Pure Python, no Django.
"""

from __future__ import annotations

import re

# CJK Unified Ideographs (+ extensions A-G), compatibility ideographs, kana, hangul syllables.
_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # ext A
    "\u4e00-\u9fff"  # unified
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # compatibility
    "\U00020000-\U0003134f"  # ext B-G
)
CJK_CHAR = re.compile(f"[{_CJK}]")
# A word unit: one CJK character, or a run of non-space, non-CJK characters.
WORD_UNIT = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")
# Same, keeping the whitespace that follows, so that joined units give back the text.
WORD_PIECE = re.compile(f"\\s+|[{_CJK}]\\s*|[^\\s{_CJK}]+\\s*")


def count_chars(text: str) -> int:
    """Characters as a typewriter releases them: Unicode code points, spaces and newlines included."""
    return len(text)


def count_words(text: str) -> int:
    """Words, with each CJK character counted as one word."""
    return len(WORD_UNIT.findall(text))


def split_words(text: str) -> list[str]:
    """Split into word pieces (a word and its trailing whitespace; a CJK character alone) that join to `text`."""
    return WORD_PIECE.findall(text)
