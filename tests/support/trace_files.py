"""Trace files for the importer tests: the sample files, files a test writes into its own folder, and the error an
importer refuses a file with (which file, where in it and which field: the three things a user needs to fix it)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from playback.core.importers.base import TraceFormatError

DATA = Path(__file__).resolve().parents[1] / "data"

# ``@each_sample`` runs a test once per sample file (``path``), e.g. to check that an importer sniffs only its own
each_sample = pytest.mark.parametrize("path", sorted(DATA.iterdir()), ids=lambda p: p.name)


def sniffs(importer, path: Path) -> bool:
    """Whether ``importer`` claims ``path`` from its first 64 KiB, as the registry asks it."""
    return importer.sniff(path.read_bytes()[:65536], path)


def write_json(folder: Path, doc, name: str, *, ensure_ascii: bool = True) -> Path:
    """``doc`` as one JSON document in ``folder/name``."""
    path = folder / name
    path.write_text(json.dumps(doc, ensure_ascii=ensure_ascii), encoding="utf-8")
    return path


def write_jsonl(folder: Path, records: Iterable, name: str, *, ensure_ascii: bool = True) -> Path:
    """``records`` as JSON Lines (one document a line) in ``folder/name``."""
    path = folder / name
    path.write_text("".join(json.dumps(r, ensure_ascii=ensure_ascii) + "\n" for r in records), encoding="utf-8")
    return path


def write_lines(folder: Path, name: str, lines: Iterable[str]) -> Path:
    """``lines`` as a text file in ``folder/name``, each ended by a newline."""
    path = folder / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def refusal(importer, path: Path) -> TraceFormatError:
    """The error ``importer.load(path)`` refuses the file with (the test fails if it loads)."""
    with pytest.raises(TraceFormatError) as e:
        importer.load(path)
    return e.value


def placed(error: TraceFormatError) -> tuple[str, str, str]:
    """(file, where in it, field) of a refusal."""
    return error.path, error.where, error.field
