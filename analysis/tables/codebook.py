"""The codebook of PaceLab's exports: every column of the trials and participants tables, its type, unit and meaning.

The codebook is also the schema: ``cast`` gives each column the pandas dtype of its type, so a CSV, a Parquet file
and the frame in memory agree. Study-dependent columns are described by pattern: ``f_<factor>`` (a factor's level
label) and ``a_<x>`` / ``b_<x>`` (stimulus column ``x`` of side A or B of a 2AFC pair). A column without an entry
is an error, never a silent gap. No Django import.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

Table = Literal["trials", "participants"]
TYPES = ("string", "integer", "number", "boolean", "datetime")
DTYPES = {"string": "string", "integer": "Int64", "number": "float64", "boolean": "boolean",
          "datetime": "datetime64[us, UTC]"}
FACTOR_PREFIX = "f_"
SIDES = ("a_", "b_")


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str
    unit: str
    description: str


def _cols(*rows: tuple[str, str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*r) for r in rows)


IDENTITY = _cols(
    ("study", "string", "", "study id (the study file's `id`)"),
    ("participant", "integer", "", "participant: the PaceLab session id (never the panel id; see participants.csv)"),
    ("group", "string", "", "between-subjects group, `factor=label,...` (`all` when the study has none)"),
    ("language", "string", "", "language the participant took the study in"),
    ("session_state", "string", "", "session state: completed, active, screened_out, returned, timed_out, withdrawn"),
    ("session_excluded", "boolean", "", "the session itself is marked excluded (e.g. withdrawn, data kept excluded)"),
    ("block", "string", "", "block id from the study file"),
    ("block_practice", "boolean", "", "the block is a practice block"),
    ("trial_index", "integer", "", "0-based index of the trial in the participant's whole plan"),
    ("position", "integer", "", "0-based position of the trial within its block"),
    ("trial_type", "string", "", "acceptability, rating, afc (two-alternative forced choice) or reading"),
    ("condition", "string", "", "condition id `block:factor=label,...` (`attention:<id>` for attention checks)"),
)

ADAPTIVE = _cols(
    ("level", "number", "unit of the adapted dimension", "adaptive trial: the level shown (e.g. tokens/s or ms)"),
    ("track", "string", "", "adaptive trial: the staircase/QUEST track (empty for a catch trial)"),
    ("dimension", "string", "", "adaptive trial: the stimulus parameter the level sets"),
    ("catch", "boolean", "", "adaptive trial: a catch trial at an obvious level"),
)

STIMULUS = _cols(
    ("source", "string", "", "bundled text id, or trace id/file/library name, the stream was built from"),
    ("tokenizer", "string", "", "tokenizer that cut the text into tokens (empty for a recorded trace)"),
    ("strategy", "string", "", "render strategy: token, batch, word, line, sentence, smooth, fade, ai-sdk-smooth, "
     "chat-ui-smooth, accelerating, typewriter"),
    ("indicator", "string", "", "waiting indicator shown before the first token"),
    ("delivery", "string", "", "delivery mode: prefetch (browser paces) or live (server paces)"),
    ("rate_unit", "string", "", "what the study's rate counts per second: tokens or chars (a rate factor's unit)"),
    ("ttft_ms", "number", "ms", "time to first token: first content piece after the request start"),
    ("tokens_per_s", "number", "tokens/s", "decode rate: (output tokens - 1) / (e2e - TTFT)"),
    ("chars_per_s", "number", "characters/s", "characters after the first piece / (e2e - TTFT)"),
    ("words_per_s", "number", "words/s", "words (CJK: characters) after the first piece / (e2e - TTFT)"),
    ("output_tokens", "integer", "tokens", "tokens in the answer"),
    ("itl_mean_ms", "number", "ms", "mean inter-token latency (gap between successive content pieces)"),
    ("itl_cv", "number", "ratio", "coefficient of variation of the inter-token latency (SD / mean)"),
    ("itl_p99_ms", "number", "ms", "99th percentile of the inter-token latency"),
    ("stall_count", "integer", "count", "gaps between content pieces longer than the stall threshold (250 ms)"),
    ("stall_total_ms", "number", "ms", "total length of those stalls"),
    ("e2e_ms", "number", "ms", "time of the last content piece after the request start"),
    ("andes_qoe", "number", "ratio 0-1", "Andes token-delivery QoE (expected TTFT 1 s, 5 tokens/s)"),
    ("fluidity", "number", "ratio 0-1", "Etalon fluidity index (deadlines 1 s first token, 200 ms per token)"),
)

PAIR = _cols(
    ("order", "string", "", "2AFC: presentation order, AB (A shown first/left) or BA"),
    ("first", "string", "", "2AFC: which stimulus was shown first, A or B"),
)

RESPONSE = _cols(
    ("response", "string", "", "the raw response as given: yes/no, rating value, a/b (first/second shown), done"),
    ("response_value", "number", "see description",
     "numeric response: acceptability yes=1 no=0; rating value; 2AFC chose A=1 B=0; reading: reading time in ms"),
    ("chose_first", "integer", "", "2AFC: 1 when the stimulus shown first was chosen, else 0"),
    ("response_ms", "number", "ms", "response time measured by the browser (from when answering was possible)"),
    ("comment", "string", "", "the participant's comment on the trial, if any"),
    ("plays", "integer", "count", "how many times the trial was shown (1 unless interrupted)"),
    ("interrupted", "integer", "count", "interruptions: reloads/reconnects that restarted the trial"),
    ("tab_hidden", "boolean", "",
     "the page was hidden (tab switched) during the answered showing; empty when no paint log arrived"),
    ("answered_at", "datetime", "UTC", "when the answer was stored"),
)

FIDELITY = _cols(
    ("fidelity_frames", "integer", "frames", "paint-log entries of the answered showing (0: no paint log)"),
    ("fidelity_p50_ms", "number", "ms", "median lateness of painted frames (paint time - scheduled time), visible"),
    ("fidelity_p95_ms", "number", "ms", "95th percentile of that lateness"),
    ("fidelity_max_ms", "number", "ms", "largest lateness"),
    ("fidelity_dropped_frames", "integer", "frames", "animation frames dropped while painting"),
    ("fidelity_bound_ms", "number", "ms", "lateness bound: the fidelity_violated rule's bound_ms, else 33.4"),
    ("fidelity_late_p95_ms", "number", "ms",
     "95th percentile of lateness beyond the render strategy's design (paint time - when the strategy meant to "
     "show it); as fidelity_p95_ms for paint logs without design times"),
    ("fidelity_stalls_seen", "integer", "", "gaps between paints far above the design's (stalls the participant saw)"),
    ("fidelity_violated", "boolean", "",
     "lateness beyond design (p95) above the bound, or a stall seen (empty when there is no paint log)"),
)

FLAGS = _cols(
    ("failed_attention", "boolean", "", "the participant failed at least one attention check (any trial)"),
    ("attention_check", "string", "", "id of the attention check this trial is (empty for an ordinary trial)"),
    ("attention_passed", "boolean", "", "attention-check trial: whether it was passed"),
    ("practice", "boolean", "", "a practice trial"),
    ("excluded", "boolean", "", "excluded by the study's exclusion rules (see exclusion_reason)"),
    ("exclusion_reason", "string", "", "the rules that excluded it, separated by '; ' (empty when kept)"),
)

PARTICIPANT = _cols(
    ("participant", "integer", "", "participant: the PaceLab session id (the key of the trials table)"),
    ("study", "string", "", "study id (the study file's `id`)"),
    ("panel_pid", "string", "", "the recruitment panel's participant id (for payment only; never in trials)"),
    ("panel_study_id", "string", "", "the panel's study id"),
    ("panel_session_id", "string", "", "the panel's session id"),
    ("state", "string", "", "session state: completed, active, screened_out, returned, timed_out, withdrawn"),
    ("group", "string", "", "between-subjects group"),
    ("language", "string", "", "language the participant took the study in"),
    ("device", "string", "", "device class the browser reported: desktop, tablet, phone"),
    ("viewport_width", "integer", "CSS px", "viewport width"),
    ("viewport_height", "integer", "CSS px", "viewport height"),
    ("refresh_hz", "number", "Hz", "measured display refresh rate"),
    ("dpr", "number", "ratio", "device pixel ratio"),
    ("browser", "string", "", "browser engine the environment check recorded (else guessed from the user agent): "
                              "chromium, firefox, safari (WebKit, every iOS browser included); else empty"),
    ("browser_version", "string", "", "the engine's version the environment check recorded (WebKit: the Safari "
                                      "version it claims)"),
    ("user_agent", "string", "", "the browser's user-agent string"),
    ("started_at", "datetime", "UTC", "when the session started"),
    ("finished_at", "datetime", "UTC", "when it ended (completed, screened out, withdrawn, timed out)"),
    ("flags", "string", "", "what the platform flagged during the session, separated by '; '"),
    ("withdrawn", "boolean", "", "the participant withdrew"),
    ("session_excluded", "boolean", "", "the session is marked excluded in the database"),
    ("trials_answered", "integer", "count", "trials the participant answered"),
    ("excluded", "boolean", "", "excluded by the study's exclusion rules"),
    ("exclusion_reason", "string", "", "the rules that excluded the participant, separated by '; '"),
)

TRIAL_FIXED: dict[str, Column] = {c.name: c for c in (*IDENTITY, *ADAPTIVE, *STIMULUS, *PAIR, *RESPONSE, *FIDELITY,
                                                      *FLAGS)}
PARTICIPANT_FIXED: dict[str, Column] = {c.name: c for c in PARTICIPANT}
_STIMULUS = {c.name: c for c in STIMULUS}


# the unit of a parameter a factor sets (``sets: ttft_ms`` or every level's ``set: {ttft_ms: ...}``)
PARAMETER_UNITS = {"ttft_ms": "ms", "stall_ms": "ms", "ramp_ms": "ms", "stall_rate_per_s": "1/s", "jitter_cv": "ratio",
                   "stall_cv": "ratio", "ramp_start_fraction": "ratio", "burst_size": "tokens", "max_chars": "chars",
                   "stall_count": "stalls", "pause_every_ms": "ms", "pause_ms": "ms", "flush_ms": "ms"}


def _rate_units(node: Any) -> set[str]:
    """Every ``rate_unit`` the study file names, anywhere."""
    if isinstance(node, Mapping):
        found = {str(node["rate_unit"])} if "rate_unit" in node else set()
        return found.union(*(_rate_units(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_rate_units(v) for v in node))
    return set()


def factor_units(spec: Mapping[str, Any] | None) -> dict[str, str]:
    """Each factor's unit, from the one parameter its levels set (``rate`` in the study's rate unit per second;
    blank when the levels set several parameters or a text)."""
    out: dict[str, str] = {}
    rate_units = _rate_units(spec or {}) or {"tokens"}
    for f in (spec or {}).get("factors") or []:
        params = set()
        for level in f.get("levels") or []:
            if isinstance(level, Mapping):
                params |= set((level.get("set") or {}).keys())
            elif f.get("sets"):
                params.add(f["sets"])
        if len(params) != 1:
            continue
        (param,) = params
        if param == "rate":
            out[f["name"]] = f"{next(iter(rate_units))}/s" if len(rate_units) == 1 else "see rate_unit"
        elif param in PARAMETER_UNITS:
            out[f["name"]] = PARAMETER_UNITS[param]
    return out


def describe(name: str, table: Table = "trials", units: Mapping[str, str] | None = None) -> Column:
    """The codebook entry of a column; ``KeyError`` naming the column when it has none. ``units``: the factors'
    units (``factor_units``)."""
    if table == "participants":
        if name in PARTICIPANT_FIXED:
            return PARTICIPANT_FIXED[name]
        raise KeyError(f"no codebook entry for participants column {name!r}")
    if name in TRIAL_FIXED:
        return TRIAL_FIXED[name]
    if name.startswith(FACTOR_PREFIX) and len(name) > len(FACTOR_PREFIX):
        factor = name[len(FACTOR_PREFIX):]
        return Column(name, "string", (units or {}).get(factor, ""),
                      f"level label of factor `{factor}` in this trial's condition "
                      "(between-subjects factors: the participant's group)")
    for side in SIDES:
        base = name[len(side):]
        if name.startswith(side) and base in _STIMULUS:
            c = _STIMULUS[base]
            return Column(name, c.type, c.unit, f"2AFC stimulus {side[0].upper()}: {c.description}")
    raise KeyError(f"no codebook entry for trials column {name!r}")


def codebook(columns: Iterable[str] | pd.DataFrame, table: Table = "trials",
             spec: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """One row per column (in order): column, type, unit, description. ``KeyError`` on an undocumented column.
    ``spec`` (the study file) gives factor columns their units."""
    names = list(columns.columns if isinstance(columns, pd.DataFrame) else columns)
    units = factor_units(spec)
    rows = [describe(n, table, units) for n in names]
    return pd.DataFrame({"column": [c.name for c in rows], "type": [c.type for c in rows],
                         "unit": [c.unit for c in rows], "description": [c.description for c in rows]})


def _present(series: pd.Series) -> list:
    """The column's values with every missing one (None, NaN, NaT, NA) as None."""
    values = series.tolist()
    if series.dtype.kind in "biu":  # integers and booleans: nothing missing
        return values
    missing = pd.isna(series).to_numpy()  # one pass over the column, not a Python test per value
    if not missing.any():
        return values
    return [None if gone else v for v, gone in zip(values, missing.tolist(), strict=True)]


def cast(frame: pd.DataFrame, table: Table = "trials") -> pd.DataFrame:
    """The frame with every column in the dtype its codebook type names (nullable ints and booleans)."""
    out = {}
    for name in frame.columns:
        kind = describe(name, table).type
        series = frame[name]
        if kind == "number" and series.dtype.kind in "biuf":  # no None possible: float(v) of every value at once
            out[name] = np.array(series.to_numpy(), dtype="float64")
            continue
        values = _present(series)
        if kind == "datetime":
            out[name] = pd.to_datetime(pd.Series(values, dtype=object), utc=True).astype(DTYPES[kind]).array
        elif kind == "number":
            out[name] = np.array([math.nan if v is None else float(v) for v in values], dtype="float64")
        else:
            out[name] = pd.array(values, dtype=DTYPES[kind])
    return pd.DataFrame(out, index=frame.index, columns=frame.columns)


def to_markdown(book: pd.DataFrame, title: str) -> str:
    """The codebook as a Markdown table (pipes in descriptions escaped)."""
    lines = [f"# {title}", "", "| column | type | unit | description |", "| --- | --- | --- | --- |"]
    for row in book.itertuples(index=False):
        cells = [str(v).replace("|", "\\|") for v in (row.column, row.type, row.unit, row.description)]
        lines.append("| " + " | ".join(f"`{cells[0]}`" if i == 0 else c for i, c in enumerate(cells)) + " |")
    return "\n".join(lines) + "\n"


def stimulus_names() -> Sequence[str]:
    """The stimulus columns of a single-stream trial (``a_``/``b_`` prefixed for a 2AFC pair)."""
    return tuple(_STIMULUS)
