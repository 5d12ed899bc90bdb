"""The `Stream` value: what a model emitted and when, independent of how it is delivered or drawn.

A stream is an ordered tuple of text pieces, each stamped with its emission time in milliseconds from the
request start. Pieces belong to a channel: ``content`` (the answer) or ``reasoning`` (the thinking text that
reasoning models stream first). A piece may carry several tokens (a coalesced SSE chunk, a speculative-decoding
burst) or none of the visible text yet (a byte-level token that ends inside a UTF-8 character: its text is
``""`` and the next piece completes the character), so token counts and token times stay exact while the
visible text waits, as servers' incremental detokenisers do.

Streams are immutable; ``to_json``/``from_json`` round-trip exactly (floats are written with ``repr``).
No Django import here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Channel = Literal["content", "reasoning"]
CHANNELS: tuple[str, ...] = ("content", "reasoning")
FORMAT_VERSION = 1


class StreamError(ValueError):
    """A stream that breaks an invariant (times going backwards, unknown channel, negative token count)."""


@dataclass(frozen=True, slots=True)
class Piece:
    """One emitted chunk: its visible text, emission time (ms from request start), channel and token count."""

    text: str
    t_ms: float
    channel: Channel = "content"
    tokens: int = 1

    def to_obj(self) -> list[Any]:
        """Compact JSON form: ``[t_ms, text]`` plus channel and tokens only where they differ from defaults."""
        obj: list[Any] = [self.t_ms, self.text]
        if self.channel != "content" or self.tokens != 1:
            obj.append(self.channel)
            obj.append(self.tokens)
        return obj

    @classmethod
    def from_obj(cls, obj: list[Any] | dict[str, Any]) -> Piece:
        if isinstance(obj, dict):
            return cls(
                text=obj["text"],
                t_ms=obj["t_ms"],
                channel=obj.get("channel", "content"),
                tokens=obj.get("tokens", 1),
            )
        if len(obj) == 2:
            return cls(text=obj[1], t_ms=obj[0])
        return cls(text=obj[1], t_ms=obj[0], channel=obj[2], tokens=obj[3])


@dataclass(frozen=True, slots=True)
class StreamMeta:
    """Where a stream came from. ``notes`` records anything an importer or transform did to it."""

    source: str = "synthetic"
    model: str = ""
    tokenizer: str = ""
    prompt: str = ""
    language: str = ""
    notes: tuple[str, ...] = ()

    def to_obj(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "model": self.model,
            "tokenizer": self.tokenizer,
            "prompt": self.prompt,
            "language": self.language,
            "notes": list(self.notes),
        }

    @classmethod
    def from_obj(cls, obj: dict[str, Any]) -> StreamMeta:
        return cls(
            source=obj.get("source", "synthetic"),
            model=obj.get("model", ""),
            tokenizer=obj.get("tokenizer", ""),
            prompt=obj.get("prompt", ""),
            language=obj.get("language", ""),
            notes=tuple(obj.get("notes", ())),
        )


@dataclass(frozen=True, slots=True)
class Stream:
    """An immutable, validated sequence of pieces with metadata.

    ``output_tokens`` is the token count a trace recorded (e.g. usage or ``output_lens``); ``None`` means
    "count the tokens of the pieces". ``id`` names the stream within its source (a request id).
    """

    pieces: tuple[Piece, ...]
    meta: StreamMeta = field(default_factory=StreamMeta)
    id: str = ""
    output_tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.pieces, tuple):
            object.__setattr__(self, "pieces", tuple(self.pieces))
        last = float("-inf")
        for i, p in enumerate(self.pieces):
            if "\x00" in p.text:  # nothing renders it, and PostgreSQL's jsonb cannot store it
                raise StreamError(f"pieces[{i}].text: contains the NUL character (U+0000)")
            if p.channel not in CHANNELS:
                raise StreamError(f"pieces[{i}].channel: {p.channel!r} is not one of {CHANNELS}")
            if p.tokens < 0:
                raise StreamError(f"pieces[{i}].tokens: must be >= 0, got {p.tokens}")
            if not (p.t_ms >= 0):  # also rejects NaN
                raise StreamError(f"pieces[{i}].t_ms: must be >= 0, got {p.t_ms}")
            if p.t_ms < last:
                raise StreamError(f"pieces[{i}].t_ms: {p.t_ms} is earlier than the previous piece ({last})")
            last = p.t_ms
        if self.output_tokens is not None and self.output_tokens < 0:
            raise StreamError(f"output_tokens: must be >= 0, got {self.output_tokens}")

    @classmethod
    def checked_elsewhere(
        cls, pieces: tuple[Piece, ...], meta: StreamMeta, id: str = "", output_tokens: int | None = None
    ) -> Stream:
        """A stream of pieces whose invariants the caller has already checked in bulk (``columns.StreamColumns``
        checks its numpy columns): skips ``__post_init__``'s check per piece, most of the cost of building many."""
        self = object.__new__(cls)
        for name, value in (("pieces", pieces), ("meta", meta), ("id", id), ("output_tokens", output_tokens)):
            object.__setattr__(self, name, value)
        return self

    # --- views -------------------------------------------------------------------------------------
    def channel(self, channel: Channel) -> tuple[Piece, ...]:
        """The pieces of one channel, in order (including empty ones that only carry tokens)."""
        return tuple(p for p in self.pieces if p.channel == channel)

    @property
    def text(self) -> str:
        """The full content text (what the answer says)."""
        return "".join(p.text for p in self.pieces if p.channel == "content")

    @property
    def reasoning_text(self) -> str:
        return "".join(p.text for p in self.pieces if p.channel == "reasoning")

    def with_pieces(self, pieces: Iterable[Piece], note: str | None = None, **changes: Any) -> Stream:
        """A new stream with other pieces (and optionally a note appended to its metadata)."""
        meta = changes.pop("meta", self.meta)
        if note:
            meta = replace(meta, notes=(*meta.notes, note))
        return replace(self, pieces=tuple(pieces), meta=meta, **changes)

    # --- serialisation -----------------------------------------------------------------------------
    def to_obj(self) -> dict[str, Any]:
        return {
            "pacelab_stream": FORMAT_VERSION,
            "id": self.id,
            "meta": self.meta.to_obj(),
            "output_tokens": self.output_tokens,
            "pieces": [p.to_obj() for p in self.pieces],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_obj(), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_obj(cls, obj: dict[str, Any]) -> Stream:
        version = obj.get("pacelab_stream", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise StreamError(f"pacelab_stream: unsupported version {version!r}")
        return cls(
            pieces=tuple(Piece.from_obj(p) for p in obj["pieces"]),
            meta=StreamMeta.from_obj(obj.get("meta", {})),
            id=str(obj.get("id", "")),
            output_tokens=obj.get("output_tokens"),
        )

    @classmethod
    def from_json(cls, text: str) -> Stream:
        return cls.from_obj(json.loads(text))

    def content_hash(self) -> str:
        """SHA-256 of the canonical JSON: identical streams share it (used to de-duplicate imports)."""
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()
