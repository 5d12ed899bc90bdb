"""Writing a study's tidy data to a directory: trials (CSV, Parquet), participants, codebook, exclusion report.

Files: ``trials.csv`` / ``trials.parquet`` (one row per answered trial; excluded rows only with
``include_excluded``), ``participants.csv`` (the only file with panel ids, for the payment step; every session),
``codebook.csv`` and ``codebook.md`` (every column of both tables with type, unit and meaning) and
``exclusions.json`` / ``exclusions.txt`` (who and what was excluded and why). Parquet keeps the codebook dtypes
exactly (nullable integers and booleans); CSV writes NA as an empty cell, and a text cell that a spreadsheet would
run as a formula (``=``, ``+``, ``-``, ``@`` first: comments and panel ids are typed by participants) gets a
leading ``'``. No Django import.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.tables import codebook, exclusions

FORMATS = ("csv", "parquet")


@dataclass
class ExportResult:
    files: list[Path]
    report: exclusions.ExclusionReport
    trials_written: int
    participants_written: int


def parse_formats(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"csv,parquet"`` → ``("csv", "parquet")``; ``ValueError`` naming an unknown format."""
    items = [f.strip().lower() for f in (text.split(",") if isinstance(text, str) else text) if f.strip()]
    unknown = [f for f in items if f not in FORMATS]
    if unknown or not items:
        raise ValueError(f"format: {', '.join(unknown) or 'none given'}: choose from {', '.join(FORMATS)}")
    return tuple(dict.fromkeys(items))


def read_parquet(path: str | Path) -> pd.DataFrame:
    """A Parquet file this module wrote, with the codebook dtypes."""
    return pd.read_parquet(path, engine="pyarrow")


# a cell a spreadsheet would run as a formula (OWASP "CSV injection"): participants type comments and panel ids
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every text cell that starts like a formula prefixed with ``'`` (numbers such as ``-3`` are
    left alone), for the CSV files; Parquet keeps the values as given."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object or isinstance(out[col].dtype, pd.StringDtype):
            out[col] = out[col].map(
                lambda v: f"'{v}" if isinstance(v, str) and v.startswith(_FORMULA_START) and not _NUMBER.fullmatch(v)
                else v, na_action="ignore")
    return out


def _stale(out: Path, formats: Sequence[str]) -> None:
    """Remove the trials file of a format not asked for, left by an earlier export to the same directory."""
    for fmt in FORMATS:
        if fmt not in formats:
            (out / f"trials.{fmt}").unlink(missing_ok=True)


def codebook_frame(trials: pd.DataFrame, participants: pd.DataFrame,
                   spec: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Both tables' codebooks in one frame, with a ``table`` column (``spec``: factor units)."""
    return pd.concat([codebook.codebook(trials, "trials", spec).assign(table="trials"),
                      codebook.codebook(participants, "participants").assign(table="participants")],
                     ignore_index=True)[["table", "column", "type", "unit", "description"]]


def write(out_dir: str | Path, trials: pd.DataFrame, participants: pd.DataFrame,
          report: exclusions.ExclusionReport, *, formats: Sequence[str] = FORMATS, title: str = "",
          spec: Mapping[str, Any] | None = None) -> list[Path]:
    """Write the files for already-marked frames; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _stale(out, formats)
    files = []
    if "csv" in formats:
        files.append(out / "trials.csv")
        spreadsheet_safe(trials).to_csv(files[-1], index=False)
    if "parquet" in formats:
        files.append(out / "trials.parquet")
        trials.to_parquet(files[-1], index=False, engine="pyarrow")
    files.append(out / "participants.csv")
    spreadsheet_safe(participants).to_csv(files[-1], index=False)
    book = codebook_frame(trials, participants, spec)
    files.append(out / "codebook.csv")
    book.to_csv(files[-1], index=False)
    files.append(out / "codebook.md")
    name = f" of {title}" if title else ""
    files[-1].write_text(
        codebook.to_markdown(book[book["table"] == "trials"].drop(columns="table"), f"Codebook{name}: trials.csv")
        + "\n" + codebook.to_markdown(book[book["table"] == "participants"].drop(columns="table"),
                                      "participants.csv").replace("# participants.csv", "## participants.csv"),
        encoding="utf-8")
    files.append(out / "exclusions.json")
    files[-1].write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
    files.append(out / "exclusions.txt")
    files[-1].write_text("\n".join(report.lines()) + "\n", encoding="utf-8")
    return files


def export(out_dir: str | Path, trials: pd.DataFrame, participants: pd.DataFrame,
           rules: Iterable[Mapping[str, Any]], *, formats: Sequence[str] = FORMATS, include_excluded: bool = False,
           title: str = "", spec: Mapping[str, Any] | None = None) -> ExportResult:
    """Apply the exclusion rules and write every file (excluded trials dropped unless ``include_excluded``;
    ``spec``, the study file, gives the codebook its factor units)."""
    marked, report = exclusions.apply(trials, rules, participants=participants)
    people = exclusions.mark_participants(participants, report)
    kept = marked if include_excluded else marked[~marked["excluded"].astype(bool)]
    kept = kept.reset_index(drop=True)
    files = write(out_dir, kept, people, report, formats=formats, title=title, spec=spec)
    return ExportResult(files, report, len(kept), len(people))


def archive(trials: pd.DataFrame, participants: pd.DataFrame, rules: Iterable[Mapping[str, Any]], *,
            formats: Sequence[str] = FORMATS, include_excluded: bool = False, title: str = "",
            spec: Mapping[str, Any] | None = None) -> bytes:
    """The same files as ``export``, zipped in memory (for a download from the dashboard)."""
    with tempfile.TemporaryDirectory() as tmp:
        result = export(tmp, trials, participants, rules, formats=formats, include_excluded=include_excluded,
                        title=title, spec=spec)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for path in result.files:
                zf.write(path, arcname=path.name)
    return buf.getvalue()
