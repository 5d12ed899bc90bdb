"""The study's own texts (consent, instructions, debrief, ...) as HTML: markdown paragraphs (pure, no Django).

Study files write these texts as YAML blocks, wrapped at whatever column the author's editor used. They are
markdown: a blank line starts a paragraph, a wrapped line is not a line break. Raw HTML is not allowed (it is
shown as text, as before); links open in a new tab so the participant does not leave the study.

Chinese has no spaces between words, and browsers (Chromium among them) still draw a space where a source line
was wrapped between two Chinese characters. A soft line break between two wide (CJK) characters is therefore
dropped, as CSS Text Level 4 describes; next to a Latin word it stays a space.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from markdown_it import MarkdownIt
from markdown_it.token import Token


def _wide(ch: str) -> bool:
    """East Asian wide or full-width, Hangul excepted (Korean separates words with spaces)."""
    return unicodedata.east_asian_width(ch) in ("W", "F") and "HANGUL" not in unicodedata.name(ch, "")


def _edge_char(tokens: list[Token], start: int, step: int) -> str:
    """The nearest visible character before (step -1) or after (step +1) the token at ``start``."""
    i = start + step
    while 0 <= i < len(tokens):
        content = tokens[i].content
        if tokens[i].type in ("text", "code_inline") and content:
            return content[-1] if step < 0 else content[0]
        if tokens[i].type in ("softbreak", "hardbreak"):
            return ""
        i += step
    return ""


def _softbreak(self, tokens: list[Token], idx: int, options, env) -> str:
    before, after = _edge_char(tokens, idx, -1), _edge_char(tokens, idx, 1)
    if before and after and _wide(before) and _wide(after):
        return ""
    return "\n"


def _link_open(self, tokens: list[Token], idx: int, options, env) -> str:
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


@cache
def _renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "breaks": False}).disable("image")
    md.add_render_rule("softbreak", _softbreak)
    md.add_render_rule("link_open", _link_open)
    return md


def to_html(text: str) -> str:
    """``text`` (markdown) as HTML; raw HTML in it is escaped, never passed through."""
    return _renderer().render(str(text or "")).strip()
