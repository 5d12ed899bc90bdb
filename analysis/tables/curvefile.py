"""Reading a researcher's CSV for ``fit_curve``: aggregated blocks or single trials, with errors that name the cell.

Two layouts, told apart by the header:

- aggregated: ``level,n_positive,n_total``, one row per block; repeated levels stay separate rows, so the fit's
  overdispersion (η, per row) sees how blocks of the same level scatter;
- trials: ``level,response`` with response 0 or 1, counted per level, and per participant (or block) when the
  file has a ``participant`` (or ``block``) column: one row per (level, participant), for the same reason.

Other columns are ignored. Errors name the 1-based file row (the header is row 1) and the column, so a
researcher can find the cell: ``row 4, column n_total: not an integer ('3.5')``.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from analysis.stats.psychometric import Data, aggregate, blocks

AGGREGATED = ("level", "n_positive", "n_total")
TRIALS = ("level", "response")
GROUPS = ("participant", "block")  # a trial file's rows are counted per level and per the first of these
# trials per row at most: beyond it the fit's count products lose precision long before any study gets there
MAX_TRIALS = 10**9


class CurveFileError(ValueError):
    """A CSV that cannot be read as psychometric data; the message says where and why."""


def _number(text: str, row: int, col: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CurveFileError(f"row {row}, column {col}: not a number ({text!r})") from None
    if not math.isfinite(value):
        raise CurveFileError(f"row {row}, column {col}: not a finite number ({text!r})")
    return value


def _integer(text: str, row: int, col: str) -> int:
    value = _number(text, row, col)
    if value != int(value):
        raise CurveFileError(f"row {row}, column {col}: not an integer ({text!r})")
    if value < 0:
        raise CurveFileError(f"row {row}, column {col}: must not be negative ({text!r})")
    if value > MAX_TRIALS:
        raise CurveFileError(f"row {row}, column {col}: {text!r} is more than {MAX_TRIALS:,} trials")
    return int(value)


def parse(text: str, *, positive_levels: bool = False) -> Data:
    """Parse CSV text into aggregated ``Data``; raises ``CurveFileError`` naming the row and column.

    ``positive_levels``: the fit is on a log axis (``--log-axis``, Weibull), so a level must be above 0."""
    return parse_with_participants(text, positive_levels=positive_levels)[0]


def parse_with_participants(text: str, *, positive_levels: bool = False) -> tuple[Data, list[str] | None]:
    """``parse``, plus each data row's participant when a trial file has a ``participant`` column (else None).

    The participants are what ``analysis.stats.clustered`` leaves out in turn; a ``block`` column is not a person."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header = _header(reader)
    layout = _layout(header)
    idx = {c: header.index(c) for c in layout}
    group_col = next((header.index(c) for c in GROUPS if c in header), None) if layout is TRIALS else None
    levels, pos, tot, groups = [], [], [], []
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        level, k, n = _data_row(row, line, layout, idx, positive_levels)
        levels.append(level)
        pos.append(k)
        tot.append(n)
        group = row[group_col].strip() if group_col is not None and group_col < len(row) else ""
        if group_col is not None and not group:
            # blank cells would all become one pseudo-person (or block), whom the jackknife then leaves out as one
            raise CurveFileError(f"row {line}, column {header[group_col]}: missing value")
        groups.append(group)
    _check_enough(levels, tot)
    if layout is AGGREGATED:
        return blocks(levels, pos, tot), None
    if group_col is None:
        return aggregate(levels, pos, tot), None
    counts: dict[tuple[float, str], list[int]] = {}
    for level, group, k in zip(levels, groups, pos, strict=True):
        cell = counts.setdefault((level, group), [0, 0])
        cell[0] += k
        cell[1] += 1
    keys = sorted(counts)
    data = blocks([lv for lv, _ in keys], [counts[key][0] for key in keys], [counts[key][1] for key in keys])
    by_person = header[group_col] == "participant"
    return data, ([g for _, g in keys] if by_person else None)


def _header(reader) -> list[str]:
    """The first non-blank row, lower-cased; a column named twice is refused."""
    header = None
    for row in reader:
        if any(cell.strip() for cell in row):
            header = [cell.strip().lower() for cell in row]
            break
    if header is None:
        raise CurveFileError("empty file: expected a header level,n_positive,n_total or level,response")
    for i, name in enumerate(header):
        if name in (*AGGREGATED, *TRIALS, *GROUPS) and name in header[:i]:
            raise CurveFileError(f"row 1, column {name}: appears twice in the header (columns {header.index(name) + 1} "
                                 f"and {i + 1}); which one holds the data?")
    return header


def _layout(header: list[str]) -> tuple[str, ...]:
    if all(c in header for c in AGGREGATED):
        return AGGREGATED
    if all(c in header for c in TRIALS):
        return TRIALS
    raise CurveFileError(
        f"row 1: header {','.join(header)!r} has neither columns level,n_positive,n_total nor level,response"
    )


def _data_row(row: list[str], line: int, layout: tuple[str, ...], idx: dict[str, int],
              positive_levels: bool) -> tuple[float, int, int]:
    """One data row's level, positive answers and trials (a trial row is one trial)."""
    cells = {}
    for c in layout:
        if idx[c] >= len(row) or not row[idx[c]].strip():
            raise CurveFileError(f"row {line}, column {c}: missing value")
        cells[c] = row[idx[c]].strip()
    level = _number(cells["level"], line, "level")
    if positive_levels and level <= 0:
        raise CurveFileError(f"row {line}, column level: a log axis (--log-axis, weibull) needs levels above 0 "
                             f"({cells['level']!r})")
    if layout is AGGREGATED:
        k = _integer(cells["n_positive"], line, "n_positive")
        n = _integer(cells["n_total"], line, "n_total")
        if k > n:
            raise CurveFileError(f"row {line}, column n_positive: {k} is more than n_total ({n})")
        return level, k, n
    k = _integer(cells["response"], line, "response")
    if k not in (0, 1):
        raise CurveFileError(f"row {line}, column response: must be 0 or 1 ({cells['response']!r})")
    return level, k, 1


def _check_enough(levels: list[float], tot: list[int]) -> None:
    if not levels:
        raise CurveFileError("no data rows after the header")
    if sum(tot) == 0:
        raise CurveFileError("column n_total: no trials in the file")
    if len({lv for lv, n in zip(levels, tot, strict=True) if n > 0}) < 2:
        raise CurveFileError("column level: a fit needs trials at two or more distinct levels")


def read(path: str | Path, *, positive_levels: bool = False) -> Data:
    """Read and parse a CSV file."""
    return read_with_participants(path, positive_levels=positive_levels)[0]


def read_with_participants(path: str | Path, *, positive_levels: bool = False) -> tuple[Data, list[str] | None]:
    """Read a CSV file: its data and, for trial rows with a participant column, each data row's participant."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CurveFileError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return parse_with_participants(text, positive_levels=positive_levels)
