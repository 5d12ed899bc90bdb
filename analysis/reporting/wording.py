"""English wording shared by the methods paragraph and the exclusion report, so counts read the same in both."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it needs, with a thousands separator: "1 trial", "3,162 trials"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
