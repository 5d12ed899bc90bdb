"""The trace importer registry: every format by name, auto-detection, and atomic loading of many files.

Each format lives in its own module here (named as the format) exposing a module-level ``IMPORTER``.
Modules are imported lazily, on first use: a format whose module is not installed yet is simply not
available, but an import error *inside* an existing module surfaces instead of hiding the format.

Detection reads the first 64 KiB of a file and asks each available importer's ``sniff`` in the order of
``FORMAT_NAMES``, most specific first: PaceLab's own files (an explicit version key), then benchmark
exports with distinctive top-level keys, then raw SSE captures (the Anthropic ``message_start`` marker
before the generic OpenAI ``data: {...}`` chunk). The first importer that claims the file wins.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

from playback.core.importers.base import Importer, ImportResult, TimingSeed, TraceFormatError
from playback.core.stream import StreamError

__all__ = [
    "FORMAT_NAMES",
    "SNIFF_BYTES",
    "ImportResult",
    "Importer",
    "TimingSeed",
    "TraceFormatError",
    "UnknownFormatError",
    "available_formats",
    "detect",
    "expand_paths",
    "get_importer",
    "load",
    "load_many",
]

# Detection order (most specific first); each name is also the module that implements it.
FORMAT_NAMES: tuple[str, ...] = (
    "pacelab_jsonl",
    "genai_perf",
    "aiperf",
    "sglang",
    "vllm",
    "guidellm",
    "llmperf",
    "anthropic_sse",
    "openai_sse",
)
SNIFF_BYTES = 64 * 1024


class UnknownFormatError(ValueError):
    """A format name that is not one of ``FORMAT_NAMES`` (or whose module is not installed)."""


def _module(name: str) -> ModuleType | None:
    """The format's module, or None when that exact module does not exist (yet)."""
    modname = f"{__name__}.{name}"
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name == modname:
            return None
        raise


def available_formats() -> tuple[str, ...]:
    """The formats of ``FORMAT_NAMES`` whose module is installed, in detection order."""
    return tuple(name for name in FORMAT_NAMES if _module(name) is not None)


def get_importer(name: str) -> Importer:
    """The importer of a format name; an unknown or missing format is an ``UnknownFormatError``."""
    if name not in FORMAT_NAMES:
        raise UnknownFormatError(f"unknown trace format {name!r}; known formats: {', '.join(FORMAT_NAMES)}")
    module = _module(name)
    if module is None:
        raise UnknownFormatError(
            f"trace format {name!r} is not installed; available formats: {', '.join(available_formats())}"
        )
    return module.IMPORTER


def detect(path: str | Path) -> str:
    """The format name of a file, from its first 64 KiB; raises ``TraceFormatError`` if nothing claims it."""
    path = Path(path)
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
    names = available_formats()
    if not head.strip():
        raise TraceFormatError(path, "", "", f"empty file; expected one of: {', '.join(names)}")
    for name in names:
        if get_importer(name).sniff(head, path):
            return name
    raise TraceFormatError(
        path, "", "", f"not a recognised trace format; tried: {', '.join(names)} (pass format= to force one)"
    )


def load(path: str | Path, format: str | None = None, **options: Any) -> ImportResult:
    """Import one file, detecting its format unless ``format`` is given.

    ``options`` go to the importer's ``load``; only the SSE importers take one (``assume_interval_ms``,
    to inspect captures without timestamps).
    """
    path = Path(path)
    name = format if format is not None else detect(path)
    importer = get_importer(name)
    try:
        return importer.load(path, **options) if options else importer.load(path)
    except StreamError as exc:  # a stream the file describes is not valid (a NUL character in a piece, ...)
        raise TraceFormatError(path, "", "", str(exc)) from None


# Files that sit beside a trace and are read by its importer, never traces themselves; skipped when a directory
# is expanded (naming one directly is still an error, so a mistake is not silent).
COMPANION_PATTERNS: tuple[str, ...] = (
    "*outputs.json",  # AIPerf response texts beside profile_export.jsonl
    "profile_export_aiperf.json",  # AIPerf run summary
    "*_summary.json",  # LLMPerf run summary beside *_individual_responses.json
    "*.md",
    "*.txt",
)


def _is_companion(path: Path) -> bool:
    return any(path.match(pattern) for pattern in COMPANION_PATTERNS)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, and the trace files under named directories (sorted, recursive, no hidden ones,
    no companion files such as AIPerf's outputs.json or LLMPerf's summary, see ``COMPANION_PATTERNS``)."""
    out: list[Path] = []
    seen: set[Path] = set()
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(
                f
                for f in p.rglob("*")
                if f.is_file()
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
                and not _is_companion(f)
            )
        else:
            found = [p]
        for f in found:
            key = f.resolve()
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def load_many(paths: Iterable[str | Path], format: str | None = None, **options: Any) -> list[ImportResult]:
    """Import every file (directories expanded); atomic: the first broken file raises, nothing is returned."""
    files = expand_paths(paths)
    return [load(f, format, **options) for f in files]
