"""How much text a token is, per tokenizer and language: the same tokens/s is a different reading speed.

For each tokenizer and language this counts characters per token and words per token over sample texts
(words as ``textunits.count_words`` counts them: CJK characters one each), and converts a token rate into
the character rate a reader sees (characters/token × tokens/s). Pure; the bundled texts are the default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from playback.core import tokenizers
from playback.core.texts import bundled_texts
from playback.core.textunits import count_chars, count_words


@dataclass(frozen=True, slots=True)
class GranularityRow:
    """One tokenizer on the texts of one language, summed over the texts."""

    tokenizer: str
    language: str
    texts: int
    tokens: int
    chars: int
    words: int
    tokens_per_second: float

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens

    @property
    def words_per_token(self) -> float:
        return self.words / self.tokens

    @property
    def chars_per_second(self) -> float:
        """Characters a reader sees per second when this tokenizer streams at ``tokens_per_second``."""
        return self.chars_per_token * self.tokens_per_second


def granularity(
    tokenizer_names: Iterable[str] | None = None,
    texts: Mapping[str, tuple[str, str]] | None = None,
    tokens_per_second: float = 50.0,
) -> list[GranularityRow]:
    """One row per (tokenizer, language), over ``texts`` (``{name: (language, text)}``, default: the bundled
    prose texts, ``chat`` and ``long``; the arrival patterns' ``sample`` texts, a code block and a base64 blob,
    would skew a language's figures).

    ``tokenizer_names`` defaults to every tokenizer available on this machine, in registry order.
    """
    names = list(tokenizer_names) if tokenizer_names is not None else tokenizers.available()
    if texts is None:
        texts = {name: value for name, value in bundled_texts().items() if "-sample-" not in name}
    by_language: dict[str, list[str]] = {}
    for language, text in texts.values():
        by_language.setdefault(language, []).append(text)
    rows = []
    for name in names:
        tok = tokenizers.get(name)
        for language, group in by_language.items():
            rows.append(
                GranularityRow(
                    tokenizer=name,
                    language=language,
                    texts=len(group),
                    tokens=sum(tok.count(t) for t in group),
                    chars=sum(count_chars(t) for t in group),
                    words=sum(count_words(t) for t in group),
                    tokens_per_second=tokens_per_second,
                )
            )
    return rows


def format_table(rows: Iterable[GranularityRow]) -> str:
    """A plain-text table of the rows, one line each, columns aligned."""
    rows = list(rows)
    rate = rows[0].tokens_per_second if rows else 50.0
    header = ("tokenizer", "lang", "tokens", "chars/token", "words/token", f"chars/s at {rate:g} tok/s")
    body = [
        (
            r.tokenizer,
            r.language,
            str(r.tokens),
            f"{r.chars_per_token:.2f}",
            f"{r.words_per_token:.2f}",
            f"{r.chars_per_second:.0f}",
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = []
    for k, line in enumerate([header, *body]):
        pairs = enumerate(zip(line, widths, strict=True))
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    print(format_table(granularity()))
