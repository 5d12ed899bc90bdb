"""What every trace importer returns and how it reports a broken file.

An importer reads one file and returns an ``ImportResult``: the streams it could replay, and, for formats
that record only averages or endpoints (guidellm, LLMPerf), ``TimingSeed`` rows that can seed a synthetic
timing model but cannot be replayed as recorded. A broken file raises ``TraceFormatError`` naming the file,
the request or line, and the field; nothing is imported from it (importers build the whole result first).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from playback.core.columns import StreamList

# What an importer notes when a file records only averages or endpoints, never the chunk times.
SUMMARY_ONLY_NOTE = "summary only: can seed a synthetic timing model, not be replayed"


class TraceFormatError(ValueError):
    """A trace file that cannot be imported. ``str()`` reads ``file: where: field: problem``."""

    def __init__(self, path: str | Path, where: str, field_name: str, problem: str) -> None:
        self.path = str(path)
        self.where = where
        self.field = field_name
        self.problem = problem
        parts = [self.path]
        if where:
            parts.append(where)
        if field_name:
            parts.append(field_name)
        parts.append(problem)
        super().__init__(": ".join(parts))


@dataclass(frozen=True, slots=True)
class TimingSeed:
    """Summary timing of a request or a run: enough to parameterise ``synth``, not to replay."""

    id: str
    ttft_ms: float | None = None
    tokens_per_s: float | None = None
    output_tokens: int | None = None
    e2e_ms: float | None = None
    itl_mean_ms: float | None = None
    model: str = ""
    source: str = ""


@dataclass(slots=True)
class ImportResult:
    format: str
    path: str
    # a list of ``Stream``; formats of many requests hold theirs in columns until each is read (``columns``)
    streams: StreamList = field(default_factory=StreamList)
    seeds: list[TimingSeed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def replayable(self) -> bool:
        return bool(self.streams)

    def __post_init__(self) -> None:
        if not isinstance(self.streams, StreamList):  # given as a plain list
            self.streams = StreamList(self.streams)


class Importer(Protocol):
    """One trace format. ``sniff`` sees the first bytes of a file and says whether it is this format."""

    name: str
    description: str

    def sniff(self, head: bytes, path: Path) -> bool: ...

    def load(self, path: Path) -> ImportResult: ...
