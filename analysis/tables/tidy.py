"""The tidy trials table: one row per answered trial, everything an analysis needs in flat, documented columns.

Built from plain rows (dicts, as ``analysis.selectors`` reads them from the database) so it is testable without
Django. A trial's stimulus metrics come from the streams actually shown in the *answered* showing (the last one:
an interruption restarts the trial) — the ``Playback`` rows' stored streams — or, when those are missing, from
``rebuild(trial)`` (the deterministic re-synthesis in ``studyapp.stimuli``). Fidelity pools the paint logs of
that showing's playbacks. A 2AFC trial's stimuli are reported as A and B as the design defines them, whatever
order they were shown in (``order``, ``first``). Columns and types are those of ``analysis.tables.codebook``.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from analysis.stats import qoe
from analysis.tables import codebook
from pacelab import browsers
from playback.core import fidelity
from playback.core import metrics as stream_metrics
from playback.core.stream import Stream

Row = Mapping[str, Any]
Rebuild = Callable[[Row], Sequence[Stream]]
NO_GROUP = "all"
SEQ_STRIDE = 1_000_000_000  # paint seqs of the second stream of a pair are shifted by this (two trial clocks)


@dataclass(frozen=True)
class StudyRows:
    """A study's raw rows. Keys of each row (as ``analysis.selectors`` fills them):

    - sessions: id, panel_pid, panel_study_id, panel_session_id, state, group, language, environment, flags,
      excluded, started_at, finished_at
    - trials: id, session_id, index, block, kind, condition, spec, practice, attention, status, plays,
      interruptions, answered_at
    - answers (key ``trial`` only): trial_id, value, response_ms, comment
    - showings (``TrialPlayback`` + its playback): trial_id, position, showing, playback_id, stream (or None)
    - paints (``PaintReport``): playback_id, entries
    """

    slug: str
    spec: Mapping[str, Any]
    sessions: Sequence[Row]
    trials: Sequence[Row]
    answers: Sequence[Row]
    showings: Sequence[Row] = ()
    paints: Sequence[Row] = ()


def fidelity_bound(spec: Mapping[str, Any]) -> float:
    """The lateness bound (ms): the study's ``fidelity_violated`` rule's ``bound_ms``, else two 60 Hz frames."""
    for rule in spec.get("exclusions") or []:
        if rule.get("rule") == "fidelity_violated" and rule.get("bound_ms") is not None:
            return float(rule["bound_ms"])
    return fidelity.DEFAULT_BOUND_MS


def parse_levels(text: str) -> dict[str, str]:
    """``factor=label,...`` → ``{factor: label}``; a piece without ``=`` belongs to the previous label (a comma
    inside a label). Text without any ``=`` (an explicit trial's label) has no levels."""
    out: dict[str, str] = {}
    last = None
    for piece in text.split(","):
        if "=" in piece:
            last, _, label = piece.partition("=")
            out[last] = label
        elif last is not None:
            out[last] += "," + piece
    return out


def condition_levels(condition: str) -> dict[str, str]:
    """The factor levels named by a condition id ``block:factor=label,...``."""
    _, sep, rest = condition.partition(":")
    return parse_levels(rest) if sep else {}


def _source(stim: Mapping[str, Any]) -> str | None:
    if stim.get("text"):
        return str(stim["text"])
    trace = stim.get("trace") or {}
    for key in ("id", "library", "file"):
        if trace.get(key):
            return str(trace[key])
    return None


def stream_columns(stream: Stream, *, stall_threshold_ms: float = stream_metrics.DEFAULT_STALL_THRESHOLD_MS
                   ) -> dict[str, Any]:
    """The stimulus metric columns of one stream (``playback.core.metrics`` and ``analysis.stats.qoe``)."""
    m = stream_metrics.compute(stream, stall_threshold_ms=stall_threshold_ms)
    return {"ttft_ms": m.ttft_ms, "tokens_per_s": m.tokens_per_s, "chars_per_s": m.chars_per_s,
            "words_per_s": m.words_per_s, "output_tokens": m.output_tokens, "itl_mean_ms": m.itl_mean_ms,
            "itl_cv": m.itl_cv, "itl_p99_ms": m.itl_p99_ms, "stall_count": m.stall_count,
            "stall_total_ms": m.stall_total_ms, "e2e_ms": m.e2e_ms, "andes_qoe": qoe.andes_qoe(stream),
            "fluidity": qoe.fluidity_index(stream).fluidity}


class _Metrics:
    """Stream metrics, computed once per distinct stream (many trials show the same one)."""

    def __init__(self, stall_threshold_ms: float) -> None:
        self.stall_threshold_ms = stall_threshold_ms
        self.cache: dict[str, dict[str, Any]] = {}
        # a rebuilt stream object seen before (the rebuild hands out the same objects over and over): its key
        # without hashing its JSON again; the object is kept, so its id cannot be reused by another
        self.seen: dict[int, tuple[Stream, str]] = {}

    def _key(self, stream: Stream) -> str:
        known = self.seen.get(id(stream))
        if known is not None and known[0] is stream:
            return known[1]
        key = stream.content_hash()
        self.seen[id(stream)] = (stream, key)
        return key

    def __call__(self, obj: Mapping[str, Any] | Stream | None) -> dict[str, Any]:
        if obj is None:
            return {}
        stream = obj if isinstance(obj, Stream) else Stream.from_obj(dict(obj))
        key = self._key(stream) if isinstance(obj, Stream) else json.dumps(obj, sort_keys=True)
        if key not in self.cache:
            self.cache[key] = stream_columns(stream, stall_threshold_ms=self.stall_threshold_ms)
        return self.cache[key]


def _stimulus(stim: Mapping[str, Any], metrics: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    cols = {"source": _source(stim), "tokenizer": stim.get("tokenizer"), "strategy": stim.get("strategy"),
            "indicator": stim.get("indicator"), "delivery": stim.get("delivery"),
            "rate_unit": (stim.get("timing") or {}).get("rate_unit"), **metrics}
    return {f"{prefix}{k}": v for k, v in cols.items()}


def response_value(kind: str, value: Mapping[str, Any]) -> float | None:
    """The numeric response: acceptability yes=1/no=0, the rating, 2AFC chose A=1/B=0, reading time (ms)."""
    if kind == "acceptability":
        return 1.0 if value.get("accept", value.get("response") == "yes") else 0.0
    if kind == "rating":
        return float(value["response"])
    if kind == "afc":
        return 1.0 if value["chosen"] == "A" else 0.0
    if kind == "reading":
        return float(value["reading_ms"])
    return None


def _fidelity(entries: list[Mapping[str, Any]], bound_ms: float) -> dict[str, Any]:
    if not entries:  # no paint log (a bot's trial): the same columns every time, computed once per bound
        return dict(_no_paint_log(bound_ms))
    return _fidelity_columns(entries, bound_ms)


@functools.lru_cache(maxsize=8)
def _no_paint_log(bound_ms: float) -> dict[str, Any]:
    return _fidelity_columns([], bound_ms)


def _fidelity_columns(entries: list[Mapping[str, Any]], bound_ms: float) -> dict[str, Any]:
    f = fidelity.summarize(entries, bound_ms=bound_ms).as_dict()
    hidden = any(bool(e.get("hidden")) for e in entries) if entries else None  # no paint log: not known
    return {"tab_hidden": hidden, "fidelity_frames": f["frames"],
            "fidelity_p50_ms": f["p50_ms"], "fidelity_p95_ms": f["p95_ms"], "fidelity_max_ms": f["max_ms"],
            "fidelity_dropped_frames": f["dropped_frames"], "fidelity_bound_ms": bound_ms,
            "fidelity_late_p95_ms": f["late_p95_ms"], "fidelity_stalls_seen": f["stalls_seen"] if entries else None,
            "fidelity_violated": f["flagged"] if f["visible_frames"] else None}


def _failed_attention(rows: StudyRows, session_of: Mapping[Any, Any]) -> set[Any]:
    failed = {s["id"] for s in rows.sessions
              if any(str(f).startswith("failed attention check") for f in s.get("flags") or [])}
    for a in rows.answers:
        if (a.get("value") or {}).get("attention_passed") is False and a["trial_id"] in session_of:
            failed.add(session_of[a["trial_id"]])
    return failed


def _column_order(spec: Mapping[str, Any], factor_cols: set[str], adaptive: bool) -> list[str]:
    """The study file fixes the schema: every factor's column, and the adaptive columns when any block is adaptive,
    whether or not an answered trial uses them yet (a pilot's export has the final study's columns)."""
    known = [f"{codebook.FACTOR_PREFIX}{f['name']}" for f in spec.get("factors") or []]
    factors = known + sorted(factor_cols - set(known))
    adaptive = adaptive or any(b.get("procedure") for b in spec.get("blocks") or [])
    stim = list(codebook.stimulus_names())
    return [*(c.name for c in codebook.IDENTITY), *factors, *((c.name for c in codebook.ADAPTIVE) if adaptive else ()),
            *stim, *(f"a_{c}" for c in stim), *(f"b_{c}" for c in stim), *(c.name for c in codebook.PAIR),
            *(c.name for c in codebook.RESPONSE), *(c.name for c in codebook.FIDELITY),
            *(c.name for c in codebook.FLAGS)]


def trials_frame(rows: StudyRows, *, rebuild: Rebuild | None = None,
                 stall_threshold_ms: float = stream_metrics.DEFAULT_STALL_THRESHOLD_MS) -> pd.DataFrame:
    """One row per answered trial of the given sessions, in participant and trial order."""
    sessions = {s["id"]: s for s in rows.sessions}
    answers = {a["trial_id"]: a for a in rows.answers}
    session_of = {t["id"]: t["session_id"] for t in rows.trials}
    failed = _failed_attention(rows, session_of)
    showings: dict[Any, list[Row]] = defaultdict(list)
    for sh in rows.showings:
        showings[sh["trial_id"]].append(sh)
    paints: dict[Any, list[Mapping[str, Any]]] = defaultdict(list)
    for p in rows.paints:
        paints[p["playback_id"]].extend(p.get("entries") or [])
    bound = fidelity_bound(rows.spec)
    practice_blocks = {b["id"] for b in rows.spec.get("blocks") or [] if b.get("type") == "practice"}
    metrics = _Metrics(stall_threshold_ms)
    out: list[dict[str, Any]] = []
    factor_cols: set[str] = set()
    adaptive = False
    for t in sorted(rows.trials, key=lambda t: (t["session_id"], t["index"])):
        session, answer = sessions.get(t["session_id"]), answers.get(t["id"])
        if session is None or answer is None:
            continue
        spec, value = t["spec"], answer.get("value") or {}
        kind = spec.get("type", t.get("kind"))
        row: dict[str, Any] = {
            "study": rows.slug, "participant": session["id"], "group": session.get("group"),
            "language": session.get("language"), "session_state": session.get("state"),
            "session_excluded": bool(session.get("excluded")), "block": t["block"],
            "block_practice": t["block"] in practice_blocks, "trial_index": t["index"],
            "position": spec.get("position"), "trial_type": kind, "condition": t.get("condition") or spec["condition"],
        }
        levels = condition_levels(row["condition"])
        group = session.get("group") or ""
        for name, label in (parse_levels(group) if group != NO_GROUP else {}).items():
            levels.setdefault(name, label)
        for name, label in levels.items():
            row[f"{codebook.FACTOR_PREFIX}{name}"] = label
            factor_cols.add(f"{codebook.FACTOR_PREFIX}{name}")
        if "adaptive" in spec:
            adaptive = True
            a = spec["adaptive"] or {}
            row |= {"level": spec.get("level", a.get("level")), "track": a.get("track"),
                    "dimension": a.get("dimension"), "catch": bool(a.get("catch"))}

        shown = showings.get(t["id"], [])
        last = max((sh["showing"] for sh in shown), default=None)
        answered = sorted((sh for sh in shown if sh["showing"] == last), key=lambda sh: sh["position"])
        stimuli = spec["stimuli"]
        streams: list[Any] = [None] * len(stimuli)
        for sh in answered:
            if sh["position"] < len(streams):
                streams[sh["position"]] = sh.get("stream")
        if any(s is None for s in streams) and rebuild is not None:
            rebuilt = list(rebuild(t))
            streams = [s if s is not None else rebuilt[i] for i, s in enumerate(streams)]
        if kind == "afc" and len(stimuli) == 2:
            order = spec.get("order") or "AB"
            ia, ib = (0, 1) if order == "AB" else (1, 0)
            row |= _stimulus(stimuli[ia], metrics(streams[ia]), "a_") | _stimulus(stimuli[ib], metrics(streams[ib]),
                                                                                  "b_")
            row |= {"order": order, "first": order[0], "chose_first": int(value.get("response") == "a")}
        elif stimuli:
            row |= _stimulus(stimuli[0], metrics(streams[0]))

        response = value.get("response")
        entries = [dict(e, seq=e["seq"] + sh["position"] * SEQ_STRIDE)
                   for sh in answered for e in paints.get(sh["playback_id"], [])]
        row |= {"response": None if response is None else str(response),
                "response_value": response_value(kind, value), "response_ms": answer.get("response_ms"),
                "comment": answer.get("comment") or "", "plays": t.get("plays"),
                "interrupted": len(t.get("interruptions") or []), "answered_at": t.get("answered_at"),
                **_fidelity(entries, bound),
                "failed_attention": session["id"] in failed, "attention_check": spec.get("attention_check"),
                "attention_passed": value.get("attention_passed"), "practice": bool(t.get("practice")),
                "excluded": False, "exclusion_reason": ""}
        out.append(row)
    columns = _column_order(rows.spec, factor_cols, adaptive)
    return codebook.cast(pd.DataFrame(out, columns=columns), "trials")


def browser_engine(env: Mapping[str, Any] | None) -> str | None:
    """The engine family of a session (the study file's ``limits.browsers`` vocabulary), or None: the one the
    environment check recorded, else the one its user agent names (sessions from before engines were recorded)."""
    if not env:
        return None
    return env.get("engine") or browsers.engine_of(env.get("user_agent", ""))[0]


def browser_version(env: Mapping[str, Any] | None) -> str | None:
    """The engine's version the environment check recorded (else the user agent's), or None."""
    if not env:
        return None
    return env.get("engine_version") or browsers.engine_of(env.get("user_agent", ""))[1] or None


def participants_frame(rows: StudyRows) -> pd.DataFrame:
    """One row per session: panel ids (for payment), state, group, environment, times, flags."""
    answered: dict[Any, int] = defaultdict(int)
    session_of = {t["id"]: t["session_id"] for t in rows.trials}
    for a in rows.answers:
        if a["trial_id"] in session_of:
            answered[session_of[a["trial_id"]]] += 1
    out = []
    for s in sorted(rows.sessions, key=lambda s: s["id"]):
        env = s.get("environment") or {}
        viewport = env.get("viewport") or {}
        out.append({
            "participant": s["id"], "study": rows.slug, "panel_pid": s.get("panel_pid"),
            "panel_study_id": s.get("panel_study_id") or None, "panel_session_id": s.get("panel_session_id") or None,
            "state": s.get("state"), "group": s.get("group"), "language": s.get("language"),
            "device": env.get("device"), "viewport_width": viewport.get("width"),
            "viewport_height": viewport.get("height"), "refresh_hz": env.get("refresh_hz"), "dpr": env.get("dpr"),
            "browser": browser_engine(env),
            "browser_version": browser_version(env),
            "user_agent": env.get("user_agent"), "started_at": s.get("started_at"),
            "finished_at": s.get("finished_at"), "flags": "; ".join(map(str, s.get("flags") or [])),
            "withdrawn": s.get("state") == "withdrawn", "session_excluded": bool(s.get("excluded")),
            "trials_answered": answered[s["id"]], "excluded": False, "exclusion_reason": "",
        })
    return codebook.cast(pd.DataFrame(out, columns=[c.name for c in codebook.PARTICIPANT]), "participants")


def build(rows: StudyRows, *, rebuild: Rebuild | None = None,
          stall_threshold_ms: float = stream_metrics.DEFAULT_STALL_THRESHOLD_MS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, participants) of a study."""
    return (trials_frame(rows, rebuild=rebuild, stall_threshold_ms=stall_threshold_ms), participants_frame(rows))
