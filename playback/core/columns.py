"""Streams kept in columns until one is needed: what the trace importers hold for thousands of requests.

A ``Stream`` is a tuple of ``Piece`` objects: right for playing, measuring and storing one stream, but a Python
object per piece (with its text and time) for a 10,000-request benchmark file of 200 pieces each is most of an
import's time and memory. ``StreamColumns`` holds one stream as its whole text, the character offsets where
its pieces end (numpy) and their times and token counts (numpy), and builds the ``Stream`` on request.
``StreamList`` is the list of an import's streams: ``Stream`` values and columnar ones mixed, a ``Stream``
whenever one is read (built each time, not kept: iterating a large import holds one stream at a time).

Columns are checked when they are made (``StreamColumns.check``) with the ``Stream`` invariants and the same
messages, so a bad stream is refused during the import, never later when it is read. No Django import.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, overload

import numpy as np

from playback.core.stream import Piece, Stream, StreamError, StreamMeta


@dataclass(frozen=True, slots=True)
class StreamColumns:
    """One ``content`` stream in columns: piece ``k`` is ``text[cuts[k]:cuts[k + 1]]`` at ``t_ms[k]`` with
    ``tokens[k]`` tokens. ``cuts`` has one entry more than the pieces and runs from 0 to ``len(text)``."""

    text: str
    cuts: np.ndarray
    t_ms: np.ndarray
    tokens: np.ndarray
    meta: StreamMeta
    id: str = ""
    output_tokens: int | None = None

    def __len__(self) -> int:
        return len(self.t_ms)

    def check(self) -> StreamColumns:
        """The ``Stream`` invariants on the columns (vectorised); ``StreamError`` with ``Stream``'s message."""
        n = len(self.t_ms)
        if len(self.cuts) != n + 1 or len(self.tokens) != n:
            raise StreamError(f"columns: {n} times, {len(self.tokens)} token counts and {len(self.cuts)} cuts")
        cuts, t_ms, tokens = self.cuts, self.t_ms, self.tokens
        if n and (cuts[0] != 0 or cuts[-1] != len(self.text) or (cuts[1:] < cuts[:-1]).any()):
            raise StreamError("columns: the cuts do not split the text in order")
        nul = self.text.find("\x00")
        if nul >= 0:  # the piece whose text holds it (the last piece ending after it)
            i = int(np.searchsorted(cuts, nul, side="right")) - 1
            raise StreamError(f"pieces[{i}].text: contains the NUL character (U+0000)")
        if n and tokens.min() < 0:
            i = int(np.flatnonzero(tokens < 0)[0])
            raise StreamError(f"pieces[{i}].tokens: must be >= 0, got {tokens[i]}")
        if n and not t_ms.min() >= 0:  # also NaN
            i = int(np.flatnonzero(~(t_ms >= 0))[0])
            raise StreamError(f"pieces[{i}].t_ms: must be >= 0, got {float(t_ms[i])}")
        if n > 1 and (t_ms[1:] < t_ms[:-1]).any():
            i = int(np.flatnonzero(t_ms[1:] < t_ms[:-1])[0]) + 1
            raise StreamError(f"pieces[{i}].t_ms: {float(t_ms[i])} is earlier than the previous piece "
                              f"({float(t_ms[i - 1])})")
        if self.output_tokens is not None and self.output_tokens < 0:
            raise StreamError(f"output_tokens: must be >= 0, got {self.output_tokens}")
        return self

    def piece_texts(self) -> list[str]:
        text = self.text
        cuts = self.cuts.tolist()
        return [text[a:b] for a, b in zip(cuts, cuts[1:])]  # noqa: B905 (one longer by design)

    def to_stream(self) -> Stream:
        """The ``Stream`` these columns hold (its pieces built now; the columns were checked when made)."""
        pieces = tuple(map(Piece, self.piece_texts(), self.t_ms.tolist(), repeat("content"), self.tokens.tolist()))
        return Stream.checked_elsewhere(pieces, self.meta, self.id, self.output_tokens)


Item = Stream | StreamColumns


def _stream(item: Item) -> Stream:
    return item.to_stream() if isinstance(item, StreamColumns) else item


class StreamList(MutableSequence[Stream]):
    """An import's streams: a list of ``Stream`` whose items may be held as ``StreamColumns`` until read."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._items: list[Item] = list(items.raw() if isinstance(items, StreamList) else items)

    def raw(self) -> list[Item]:
        """The items as held (columns not built): for counting pieces or moving items without building them."""
        return list(self._items)

    def piece_count(self) -> int:
        """Pieces in all the streams, counted without building the columnar ones."""
        return sum(len(i) if isinstance(i, StreamColumns) else len(i.pieces) for i in self._items)

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> Stream: ...

    @overload
    def __getitem__(self, index: slice) -> StreamList: ...

    def __getitem__(self, index: int | slice) -> Stream | StreamList:
        if isinstance(index, slice):
            return StreamList(self._items[index])
        return _stream(self._items[index])

    def __setitem__(self, index: Any, value: Any) -> None:
        self._items[index] = list(value) if isinstance(index, slice) else value

    def __delitem__(self, index: int | slice) -> None:
        del self._items[index]

    def insert(self, index: int, value: Item) -> None:
        self._items.insert(index, value)

    def extend(self, values: Iterable[Item]) -> None:
        self._items.extend(values.raw() if isinstance(values, StreamList) else values)

    def __iter__(self) -> Iterator[Stream]:
        return map(_stream, self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StreamList | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  (mutable, like list)

    def __repr__(self) -> str:
        return f"StreamList({len(self._items)} streams)"
