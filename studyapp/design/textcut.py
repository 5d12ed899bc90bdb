"""Cutting a markdown answer to ``max_chars`` without leaving broken markup (pure, no Django).

The bundled answers are markdown, and the player renders them as markdown: a cut inside ``**bold**`` would show
the reader a raw ``**``, a cut inside a list item would leave half an item. A cut is *well formed* when the text
the reader sees (markdown-it's parse, markup removed) is a prefix of the text they would see in the whole answer;
markdown-it-py is the judge, so there is no hand-written markdown parsing here.

Where the cut falls inside an emphasis or a code span, the span is closed (``**Grind a little coarser.**``); a
list item cut mid-sentence, or left empty, is dropped. Closing markup does not count towards ``max_chars``.
"""

from __future__ import annotations

import itertools
import re
from functools import cache

from markdown_it import MarkdownIt

SENTENCE_ENDS = ".!?。！？\n"
WORD_ENDS = " ，、；,;"
_CLOSERS = ("**", "*", "_", "__", "`", "``", "~~")
_LIST_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_BARE_MARKER = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s*$")
_SPACE = re.compile(r"\s+")


@cache
def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False})


def visible_text(markdown: str) -> str:
    """The text a reader sees in ``markdown`` (inline text and code; blocks and line breaks as one space)."""
    parts: list[str] = []
    for token in _parser().parse(markdown):
        if token.type != "inline":
            if token.nesting == -1 or token.type in ("fence", "code_block"):
                parts.append(" " + (token.content if token.type in ("fence", "code_block") else ""))
            continue
        for child in token.children or []:
            if child.type in ("text", "code_inline", "html_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
    return _SPACE.sub(" ", "".join(parts)).strip()


def _repaired(head: str, whole: str) -> str | None:
    """``head`` as is, or with its open spans closed, if the reader would see a prefix of ``whole``; else None."""
    if not head.strip():
        return None
    for closer in ("", *_CLOSERS, *("".join(p) for p in itertools.permutations(_CLOSERS, 2))):
        candidate = head + closer
        seen = visible_text(candidate)
        if seen and whole.startswith(seen):
            return candidate
    return None


def _drop_unfinished_item(head: str, *, mid_sentence: bool) -> str:
    """``head`` without a trailing empty list item, or a list item cut mid-sentence."""
    lines = head.rstrip().split("\n")
    last = lines[-1]
    if _BARE_MARKER.match(last) or (mid_sentence and _LIST_ITEM.match(last)):
        return "\n".join(lines[:-1]).rstrip()
    return head.rstrip()


def cut_markdown(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters at a sentence end (else a word end) in the second half,
    as well-formed markdown. Deterministic."""
    if len(text) <= max_chars:
        return text
    whole = visible_text(text)
    head = text[:max_chars]
    for marks, mid_sentence in ((SENTENCE_ENDS, False), (WORD_ENDS, True)):
        ends = sorted({i for i, ch in enumerate(head) if ch in marks and i >= max_chars // 2}, reverse=True)
        for end in ends:
            candidate = _drop_unfinished_item(head[: end + 1], mid_sentence=mid_sentence)
            fixed = _repaired(candidate, whole)
            if fixed is not None:
                return fixed
    fixed = _repaired(_drop_unfinished_item(head, mid_sentence=True), whole)
    return fixed if fixed is not None else visible_text(head)
