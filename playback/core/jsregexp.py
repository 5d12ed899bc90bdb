"""Syntax errors in a JavaScript RegExp source that every browser refuses, found without a JavaScript engine.

A designer types a RegExp in the playground or a study file (``ai-sdk-smooth``'s ``chunking: regexp``); the
browser compiles it with ``new RegExp(source, flags)``. Python's ``re`` is the wrong judge: it refuses valid
JavaScript (``(?<name>…)``, ``\\p{L}``, ``\\q``) and accepts invalid JavaScript. So this walks the pattern with the
rules of ECMAScript's grammar that hold with and without the ``u`` flag (Annex B included) and reports only what
JavaScript refuses in both modes: a trailing backslash, an unclosed ``[`` or ``(``, an unmatched ``)``, a
quantifier with nothing to repeat, ``{m,n}`` with m > n, a range out of order (``[z-a]``) and an unknown
``(?`` group. Subtler ``u``-mode rules are left to the browser, which checks the field with ``new RegExp`` before
the form is sent. No Django import.
"""

from __future__ import annotations

import re

BRACED = re.compile(r"\{(\d+)(,(\d*))?\}")
GROUP_NAME = re.compile(r"<([$_A-Za-z\u0080-\uffff][$\w\u0080-\uffff]*)>")
MODIFIERS = re.compile(r"[ims]*(-[ims]*)?:")
FLAGS = re.compile(r"[dgimsuvy]*")


def flags_problem(flags: str) -> str | None:
    """Why ``flags`` are not RegExp flags (None when they are)."""
    if not FLAGS.fullmatch(flags):
        return f"unknown flag in {flags!r} (flags are d, g, i, m, s, u, v, y)"
    if len(set(flags)) != len(flags):
        return f"a flag is repeated in {flags!r}"
    if "u" in flags and "v" in flags:
        return "the flags u and v cannot be used together"
    return None


def _class_end(source: str, i: int) -> tuple[int, str | None]:
    """Index past the character class that opens at ``source[i] == "["``, or a problem."""
    j = i + 1
    if source.startswith("^", j):
        j += 1
    prev: str | None = None  # the last single literal character, for ranges
    while j < len(source):
        c = source[j]
        if c == "]":
            return j + 1, None
        if c == "\\":
            if j + 1 >= len(source):
                return j, "\\ at end of pattern"
            prev, j = None, j + 2
            continue
        if c == "-" and prev is not None and j + 1 < len(source) and source[j + 1] not in "]\\":
            end = source[j + 1]
            if ord(end) < ord(prev):
                return j, f"range out of order in character class: {prev}-{end}"
            prev, j = None, j + 2
            continue
        prev, j = c, j + 1
    return i, "missing ] (an unterminated character class)"


def _group_problem(source: str, i: int) -> tuple[int, str | None]:
    """At ``source[i] == "("``: the index past the group's opening, or a problem."""
    if not source.startswith("(?", i):
        return i + 1, None
    rest = source[i + 2:]
    if rest[:1] in (":", "=", "!") or rest[:2] in ("<=", "<!"):
        return i + 2 + (2 if rest[:1] == "<" else 1), None
    m = GROUP_NAME.match(rest)
    if m:
        return i + 2 + m.end(), None
    if rest.startswith("<"):
        return i, "invalid capture group name"
    m = MODIFIERS.match(rest)
    if m and m.group(0) not in (":", "-:"):
        return i + 2 + m.end(), None
    return i, "invalid group (after '(?' comes ':', '=', '!', '<=', '<!' or '<name>')"


def _quantifier(source: str, i: int, can_repeat: bool) -> tuple[int, str | None] | None:
    """At a quantifier (``*``, ``+``, ``?``, ``{m,n}``): the index past it (and its lazy ``?``) or a problem;
    None when ``source[i]`` starts no quantifier (a lone ``{`` is a literal without the u flag)."""
    m = BRACED.match(source, i)
    if source[i] in "*+?":
        token, end = source[i], i + 1
    elif m:
        token, end = m.group(0), m.end()
        if m.group(3) and int(m.group(3)) < int(m.group(1)):
            return i, f"numbers out of order in {token}"
    else:
        return None
    if not can_repeat:
        return i, f"nothing to repeat before {token!r}"
    return end + (1 if source.startswith("?", end) else 0), None


def problem(source: str) -> str | None:
    """The first syntax error of ``source`` that JavaScript reports with any flags, or None."""
    depth = 0
    can_repeat = False  # is there an atom before this point that a quantifier may follow
    i = 0
    while i < len(source):
        c = source[i]
        err = None
        if (q := _quantifier(source, i, can_repeat)) is not None:
            (i, err), can_repeat = q, False
        elif c == "\\":
            if i + 1 >= len(source):
                return "\\ at end of pattern"
            i, can_repeat = i + 2, True
        elif c == "[":
            (i, err), can_repeat = _class_end(source, i), True
        elif c == "(":
            (i, err), depth, can_repeat = _group_problem(source, i), depth + 1, False
        elif c == ")":
            if depth == 0:
                return "unmatched ')'"
            depth, can_repeat, i = depth - 1, True, i + 1
        else:
            can_repeat = c not in "^$|"  # an assertion cannot be repeated; `|` starts a new alternative
            i += 1
        if err:
            return err
    return "missing ) (an unterminated group)" if depth else None
