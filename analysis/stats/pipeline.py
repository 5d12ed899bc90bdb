"""The analysis pipeline: every stage over a study's tidy trial frame, as one JSON-ready results dict.

Pure orchestration (no Django): the cores in ``analysis/`` do the statistics; this module picks the data each
stage needs from the tidy frame (``analysis.selectors.study_frame``, columns in docs/data.md), runs the stages in
order and reports progress through ``progress(stage, percent)``, checking ``cancelled()`` between steps so a
cancel takes effect within one fit. A stage that cannot run on the data (too few levels, one participant) leaves
a warning and the others still run: a report with a gap is more useful than no report.

Stages: exclusions → psychometric (yes/no, per condition and pooled) → population acceptability → ratings
(MOS, subject model, mixed model) → pairwise (2AFC: preference shares, PSE/JND, Thurstone/BT scales) →
predictors (which stream metric predicts the answers) → fidelity (painted − scheduled, per strategy and device).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

PIPELINE_VERSION = 12  # a stored run of an older version is recomputed; what each changed: CHANGELOG.md
STAGES: tuple[tuple[str, float], ...] = (
    ("exclusions", 3), ("psychometric", 25), ("population", 30), ("ratings", 12), ("pairwise", 12),
    ("predictors", 10), ("fidelity", 8),
)
YES_NO = {"acceptability", "yesno", "yes/no"}
RATING = {"rating"}
AFC = {"afc", "2afc"}
# parameters whose larger values make a stream slower: their acceptability curves fall with the level
FALLING = {"ttft_ms", "ttft", "stall_ms", "stall_rate_per_s", "jitter_cv", "stall_total_ms", "e2e_ms", "itl_cv"}
# rates are fitted on a log axis unless the study file says otherwise: perceived magnitude of a speed follows
# ratios (Weber), and a linear axis pushes the misfit into the lapse rate; TTFT and durations stay linear
LOG_DEFAULT = {"rate", "tokens_per_s", "chars_per_s"}
AXES = ("log", "linear")
# a fitted lapse or guess this close to its upper bound (as a share of the bound) is flagged
NEAR_BOUND = 0.05
UNITS = {"rate": "tokens/s", "tokens_per_s": "tokens/s", "chars_per_s": "chars/s", "ttft_ms": "ms", "ttft": "ms",
         "stall_ms": "ms"}
MAX_FLAGGED = 200
MIN_LOG_RATIO = 0.05  # PSE/JND on a metric only where A and B differ in it by ~5 % or more (not just noise)
MAX_VALUES = 5000

Progress = Callable[[str, float], None]


class Cancelled(Exception):
    """The run was cancelled between two steps."""


@dataclass(frozen=True)
class Options:
    """Choices the methods paragraph reports; ``fast`` tests use small bootstrap counts."""

    sigmoid: str = "logistic"
    quantile: float = 0.75
    ci: float = 0.95
    lapse_max: float = 0.2
    guess_max: float = 0.2
    interval: str = "hybrid"  # the threshold interval method (analysis.stats.psychometric.INTERVALS; its default)
    deviance_samples: int = 200
    n_boot: int = 1000
    # participants per condition up to which individual fits are added for the mean of individual thresholds
    # (about 0.02 s each, the lapse and guess fixed); above it the row says why there is no mean
    individual_max: int = 1000
    # groups of the participant jackknife that widens a fit over participants (analysis.stats.clustered); 0: the
    # model's interval only (rows taken as independent, too short when people differ)
    cluster_groups: int = 20
    fidelity_bound_ms: float = 33.4
    seed: int = 0
    # the acceptability fits' axis: "auto" reads it from the study file (block ``analysis.axis``, then the level's
    # factor ``axis``, then an adaptive procedure's ``axis``), else log for rates and linear for the rest;
    # "log" or "linear" override the study file for every block
    axis: str = "auto"

    def __post_init__(self):
        if self.axis not in ("auto", *AXES):
            raise ValueError(f"axis must be 'auto', 'log' or 'linear', got {self.axis!r}")


# --- progress and cancel ---------------------------------------------------------------------------------------


class _Tracker:
    """Maps (stage, fraction of the stage) to an overall percent, and raises ``Cancelled`` when asked to stop."""

    def __init__(self, progress: Progress | None, cancelled: Callable[[], bool] | None):
        self._progress = progress
        self._cancelled = cancelled
        total = sum(w for _, w in STAGES)
        start = 0.0
        self._span: dict[str, tuple[float, float]] = {}
        for name, weight in STAGES:
            self._span[name] = (100 * start / total, 100 * weight / total)
            start += weight

    def at(self, stage: str, fraction: float = 0.0) -> None:
        if self._cancelled is not None and self._cancelled():
            raise Cancelled(stage)
        if self._progress is not None:
            start, width = self._span[stage]
            self._progress(stage, round(start + width * min(max(fraction, 0.0), 1.0), 1))

    def done(self) -> None:
        if self._progress is not None:
            self._progress("done", 100.0)


# --- JSON ------------------------------------------------------------------------------------------------------


def jsonable(value: Any) -> Any:
    """Plain JSON values: NaN and ±inf become None, numpy scalars Python numbers, frames lists of records."""
    if isinstance(value, pd.DataFrame):
        return [jsonable(r) for r in value.to_dict("records")]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray | pd.Series):
        return [jsonable(v) for v in list(value)]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        return v if math.isfinite(v) else None
    if value is None or isinstance(value, int | str):
        return value
    if value is pd.NA or value is pd.NaT:
        return None
    return str(value)


# --- preparing the frame ---------------------------------------------------------------------------------------


def _bool_col(df: pd.DataFrame, *names: str) -> pd.Series:
    """A flag column as plain bools (missing → False); a text column (``attention_check``) is set when non-empty."""
    for name in names:
        if name in df.columns:
            col = df[name]
            if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
                return col.fillna(False).astype(bool)
            return col.fillna("").astype(str).str.len().gt(0) & ~col.astype(str).str.lower().isin(["false", "0"])
    return pd.Series(False, index=df.index)


def binary(value: Any) -> float:
    """A yes/no answer as 1/0 (``yes``, ``true``, 1 → 1; ``no``, ``false``, 0 → 0); anything else NaN."""
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value) if value in (0, 1) else math.nan
    if isinstance(value, Mapping):
        for key in ("accept", "response", "value"):
            if key in value:
                return binary(value[key])
        return math.nan
    text = str(value).strip().lower()
    return {"yes": 1.0, "true": 1.0, "1": 1.0, "accept": 1.0, "no": 0.0, "false": 0.0, "0": 0.0}.get(text, math.nan)


def _factor_cols(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith("f_") and df[c].notna().any() and df[c].nunique(dropna=True) > 1]


def _design_factors(g: pd.DataFrame, spec: Mapping | None, block: str) -> list[str]:
    """The varying factor columns of a block's own design (a between-subjects factor of another block, present in
    every row through the group, is left out); all varying factor columns when the study file does not say."""
    varying = _factor_cols(g)
    design = _block_spec(spec, block).get("design") or {}
    names = list(design.get("factorial") or [])
    for cond in design.get("conditions") or []:
        names += [n for n in cond if n not in names]
    if not names:
        return varying
    wanted = {f"f_{n}" for n in names}
    return [c for c in varying if c in wanted]


def _label(df: pd.DataFrame, cols: list[str]) -> pd.Series:
    if not cols:
        return pd.Series("all", index=df.index)
    parts = [c[2:] + "=" + df[c].astype(str) for c in cols]
    out = parts[0]
    for p in parts[1:]:
        out = out + ", " + p
    return out


def condition_label(df: pd.DataFrame, cols: list[str] | None = None) -> pd.Series:
    """A readable condition per row: the varying factors (``strategy=token, indicator=dots``) or the id."""
    cols = _factor_cols(df) if cols is None else cols
    if cols:
        return _label(df, cols)
    if "condition" in df.columns:
        return df["condition"].astype(str).str.split(":", n=1).str[-1]
    return pd.Series("all", index=df.index)


def _numeric(s: pd.Series) -> pd.Series:
    return pd.to_numeric(s, errors="coerce")


def analysable(trials: pd.DataFrame) -> pd.DataFrame:
    """Main, non-attention trials of included participants, answered."""
    keep = ~_bool_col(trials, "excluded") & ~_bool_col(trials, "practice") & ~_bool_col(trials, "attention",
                                                                                        "attention_check")
    out = trials.loc[keep]
    if "response_value" in out.columns:
        out = out.loc[out["response_value"].notna()]
    return out


def _blocks(df: pd.DataFrame, types: set[str]) -> list[tuple[str, pd.DataFrame]]:
    if "trial_type" not in df.columns:
        return []
    sel = df.loc[df["trial_type"].astype(str).str.lower().isin(types)]
    if "block" not in sel.columns:
        return [("all", sel)] if len(sel) else []
    return [(str(b), g) for b, g in sel.groupby("block", sort=False)]


def _block_spec(spec: Mapping | None, block: str) -> dict:
    for b in (spec or {}).get("blocks") or []:
        if str(b.get("id")) == block:
            return dict(b)
    return {}


def _factor_sets(spec: Mapping | None) -> dict[str, str]:
    return {str(f.get("name")): str(f.get("sets") or f.get("name")) for f in (spec or {}).get("factors") or []}


# --- stages ----------------------------------------------------------------------------------------------------


def _reasons(text: Any) -> list[str]:
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return []
    return [r.strip() for r in re.split(r"[;,]", str(text)) if r.strip()]


TIDY_COLUMNS = {"participant", "practice", "failed_attention", "session_state", "session_excluded", "response_ms",
                "fidelity_p95_ms"}


def apply_rules(trials: pd.DataFrame, participants: pd.DataFrame | None, spec: Mapping | None
                ) -> tuple[pd.DataFrame, pd.DataFrame | None, dict | None]:
    """The study file's exclusion rules (``analysis.tables.exclusions``) applied to a tidy frame, with their report.

    Frames that are not tidy tables (no rule columns) are returned as they are, with their own marks.
    """
    if not TIDY_COLUMNS <= set(trials.columns):
        return trials, participants, None
    from analysis.tables import exclusions

    marked, report = exclusions.apply(trials, exclusions.rules_of(spec or {}), participants=participants)
    if participants is not None:
        participants = exclusions.mark_participants(participants, report)
    return marked, participants, report.to_dict() | {"lines": report.lines()}


def stage_exclusions(trials: pd.DataFrame, participants: pd.DataFrame | None, report: dict | None = None) -> dict:
    """Who and what is left out, and why (nothing is deleted: the rules only mark)."""
    people = participants if participants is not None and "participant" in participants.columns else None
    if people is None:
        cols = [c for c in ("participant", "excluded", "exclusion_reason") if c in trials.columns]
        people = trials[cols].drop_duplicates("participant") if "participant" in cols else pd.DataFrame()
    excluded = _bool_col(people, "excluded") if len(people) else pd.Series(dtype=bool)
    by_reason: dict[str, int] = {}
    listed = []
    if len(people):
        for _, row in people.loc[excluded].iterrows():
            reasons = _reasons(row.get("exclusion_reason"))
            for r in reasons or ["unspecified"]:
                by_reason[r] = by_reason.get(r, 0) + 1
            listed.append({"participant": str(row["participant"]), "reasons": reasons})
    trial_excl = _bool_col(trials, "excluded")
    practice = _bool_col(trials, "practice")
    attention = _bool_col(trials, "attention", "attention_check")
    return {
        "rules": (report or {}).get("rules", []),
        "lines": (report or {}).get("lines", []),
        "participants_total": int(len(people)),
        "participants_excluded": int(excluded.sum()) if len(people) else 0,
        "participants_included": int(len(people) - (excluded.sum() if len(people) else 0)),
        "by_reason": dict(sorted(by_reason.items())),
        "excluded": listed,
        "trials_total": int(len(trials)),
        "trials_excluded": int(trial_excl.sum()),
        "trials_practice": int(practice.sum()),
        "trials_attention": int(attention.sum()),
        "trials_analysed": int(len(analysable(trials))),
    }


def _level(block: pd.DataFrame, sets: Mapping[str, str], factors: list[str]
           ) -> tuple[pd.Series, str, list[str], str | None] | None:
    """The stimulus level of a yes/no block, its name, the factor columns that define its conditions, and the
    factor the level comes from (None for an adaptive level no factor sets)."""
    numeric = {c: _numeric(block[c]) for c in factors}
    if "level" in block.columns and _numeric(block["level"]).nunique() >= 2:
        level = _numeric(block["level"])
        match = [c for c, v in numeric.items() if np.allclose(v.fillna(-1e300), level.fillna(-1e300))]
        name = sets.get(match[0][2:], match[0][2:]) if match else "level"
        return level, name, [c for c in factors if c not in match], match[0][2:] if match else None
    candidates = [(v.nunique(), c) for c, v in numeric.items() if v.notna().all() and v.nunique() >= 2]
    if not candidates:
        return None
    _, col = max(candidates)
    return numeric[col], sets.get(col[2:], col[2:]), [c for c in factors if c != col], col[2:]


def block_analysis(spec: Mapping | None, block: str) -> dict:
    """A block's ``analysis`` settings from the study file (docs/study-file.md: ``axis``, ``population_share``)."""
    return dict(_block_spec(spec, block).get("analysis") or {})


def _procedure_axis(block_spec: Mapping) -> str | None:
    """An adaptive block's axis: the procedure's ``axis``, or its tracks' when they all agree."""
    proc = block_spec.get("procedure") or {}
    axes = {t.get("axis", proc.get("axis")) for t in proc.get("tracks") or []} or {proc.get("axis")}
    return axes.pop() if len(axes) == 1 and next(iter(axes)) in AXES else None


def choose_axis(spec: Mapping | None, block: str, level_name: str, factor: str | None, options: Options,
                dimension: str | None = None) -> tuple[bool, str]:
    """Whether a yes/no block's levels are fitted on a log axis, and what decided it (``axis_source``, shown with
    the results): ``Options.axis`` when not "auto" ("options"), the block's ``analysis.axis`` ("block"), the level's
    factor's ``axis`` ("factor"), an adaptive procedure's ``axis`` ("procedure"), else the quantity's default: log
    for a rate ("rate"), linear for TTFT, durations and the rest ("default"). A log axis asked for levels that
    are not all positive falls back to linear ("nonpositive")."""
    if options.axis in AXES:
        return options.axis == "log", "options"
    said = block_analysis(spec, block).get("axis")
    if said in AXES:
        return said == "log", "block"
    for f in (spec or {}).get("factors") or []:
        if factor is not None and str(f.get("name")) == factor and f.get("axis") in AXES:
            return f["axis"] == "log", "factor"
    proc_axis = _procedure_axis(_block_spec(spec, block))
    if proc_axis is not None:
        return proc_axis == "log", "procedure"
    quantity = dimension if level_name == "level" and dimension else level_name
    if quantity in LOG_DEFAULT:
        return True, "rate"
    return False, "default"


def _psi_band(result, xs: np.ndarray, draws: int, rng: np.random.Generator) -> tuple[list, list] | None:
    """A pointwise CI band of ψ from draws of the fit's posterior grid (the fit keeps its grid and mass)."""
    try:
        mass = result._mass.sum(axis=4)
        ax, pb, axis = result._axes, result._pb, result._axis
    except AttributeError:
        return None
    p = mass.ravel() / mass.sum()
    idx = np.unravel_index(rng.choice(p.size, size=draws, p=p), mass.shape)
    m, w = ax["m"][idx[0]][:, None], ax["w"][idx[1]][:, None]
    lam, gam = ax["lapse"][idx[2]][:, None], ax["guess"][idx[3]][:, None]
    psi = gam + (1 - gam - lam) * pb.sigmoid(axis.forward(xs)[None, :], m, w)
    lo, hi = np.percentile(psi, [2.5, 97.5], axis=0)
    return lo.tolist(), hi.tolist()


def _fit_yes_no(data: pd.DataFrame, opts, options: Options, rng, quantile: float | None = None, *,
                curve: bool = True) -> dict:
    """One acceptability fit with its report keys; ``curve=False`` (``headline_run``) leaves out the plotted
    curve's band, the only use of ``rng``."""
    from analysis.stats import clustered
    from analysis.stats import psychometric as psy

    # one row (block) per level and participant: η, the overdispersion, is per row, so the spread between
    # participants at a level is what the fit sees and widens the interval for (docs/analysis.md, "Validation");
    # the binomial part of the fit is the same as with one pooled row per level
    rows = data.groupby(["level", "participant"])["y"].agg(["sum", "count"]).reset_index()
    result = psy.fit(psy.blocks(rows["level"], rows["sum"], rows["count"]), opts)
    agg = data.groupby("level")["y"].agg(["sum", "count"]).reset_index()  # pooled per level: the plotted points
    out = result.to_dict()
    q = options.quantile if quantile is None else quantile
    q_level, q_ci = result.threshold_at(q)
    out.update(threshold_q=q_level, threshold_q_ci_95=list(q_ci), q=q)
    # one person's rows move together: widen to the participant jackknife where it reaches further
    out.update(clustered.spread_keys(rows["level"], rows["sum"], rows["count"], rows["participant"], opts, result,
                                     q=q, max_groups=options.cluster_groups))
    lo, hi = float(agg["level"].min()), float(agg["level"].max())
    if result.beyond_levels:
        out["beyond_levels"] = result.beyond_levels  # the prior's number, not the data's
    out["warnings"] = result.warnings()  # taken out by ``stage_psychometric`` into the block's warnings
    out["at_bound"] = _at_bound(out, opts.lapse_bounds[1], opts.guess_bounds[1])  # worded by ``stage_psychometric``
    xs = np.geomspace(lo, hi, 60) if opts.uses_log_axis and lo > 0 else np.linspace(lo, hi, 60)
    band = _psi_band(result, xs, 300, rng) if curve else None
    out["curve"] = {"x": xs.tolist(), "psi": np.asarray(result.psi(xs), dtype=float).tolist(),
                    "lo": band[0] if band else None, "hi": band[1] if band else None}
    out["points"] = [{"level": float(r["level"]), "n": int(r["count"]), "k": int(r["sum"]),
                      "p": float(r["sum"] / r["count"])} for _, r in agg.iterrows()]
    out["n_participants"] = int(data["participant"].nunique())
    out["n_blocks"] = int(len(rows))
    return out


def _condition_order(g: pd.DataFrame, cols: list[str]) -> list[str]:
    """Condition labels in the factors' natural order (numbers as numbers: ttft=300 before ttft=2000)."""
    if not cols:
        return ["all"]
    keys = g[cols].drop_duplicates()
    sort = pd.DataFrame({c: _numeric(keys[c]) if _numeric(keys[c]).notna().all() else keys[c].astype(str)
                         for c in cols}, index=keys.index)
    return list(dict.fromkeys(_label(keys.loc[sort.sort_values(cols).index], cols)))


def yes_no_sets(df: pd.DataFrame, spec: Mapping | None, options: Options | None = None) -> list[dict]:
    """Per yes/no block: the level, its direction, its axis, the population share asked for and the
    per-condition data (rows participant, level, y)."""
    options = options or Options()
    sets = _factor_sets(spec)
    out = []
    for block, g in _blocks(df, YES_NO):
        found = _level(g, sets, _design_factors(g, spec, block))
        if found is None:
            out.append({"block": block, "skip": "no stimulus level with two or more values"})
            continue
        level, name, cond_cols, factor = found
        y = g["response_value"].map(binary)
        data = pd.DataFrame({"participant": g["participant"].astype(str), "level": level, "y": y,
                             "condition": _label(g, cond_cols)}).dropna(subset=["level", "y"])
        if name in FALLING:
            decreasing = True
        elif name in UNITS:
            decreasing = False
        else:
            rho = data[["level", "y"]].corr(method="spearman").iloc[0, 1] if len(data) > 2 else 0.0
            decreasing = bool(rho < 0) if np.isfinite(rho) else False
        unit = UNITS.get(name, "")
        if name == "rate" and "rate_unit" in g.columns and (g["rate_unit"].dropna() == "chars").any():
            unit = "chars/s"  # the study's rate counts characters (timing rate_unit: chars)
        dims = g["dimension"].dropna().unique() if "dimension" in g.columns else []
        log_axis, axis_source = choose_axis(spec, block, name, factor, options,
                                            str(dims[0]) if len(dims) == 1 else None)
        if log_axis and not (data["level"] > 0).all():
            log_axis, axis_source = False, "nonpositive"
        said = block_analysis(spec, block)
        share = said.get("population_share")
        out.append({"block": block, "level_name": name, "unit": unit, "decreasing": decreasing,
                    "log_axis": log_axis, "axis_source": axis_source,
                    "quantile": float(share) if share is not None else options.quantile,
                    "lapse_max": float(said.get("lapse_max", options.lapse_max)),
                    "guess_max": float(said.get("guess_max", options.guess_max)),
                    "data": data, "order": _condition_order(g, cond_cols)})
    return out


def _at_bound(fitted: Mapping, lapse_max: float, guess_max: float) -> list[str]:
    """The rates ("lapse", "guess") that ended at, or within NEAR_BOUND of, their upper bound."""
    return [name for name, bound in (("lapse", lapse_max), ("guess", guess_max))
            if bound > 0 and float(fitted.get(name) or 0.0) >= (1 - NEAR_BOUND) * bound]


REACH = 0.9  # the population-averaged core sigmoid must pass this (and 1 − this) within the levels tested


def reach_short(reach: tuple[float, float]) -> list[str]:
    """The ends of the curve the levels tested stop short of: "top" (the lapse rate is then read from the curve's
    shape), "bottom" (the guess rate)."""
    low, high = reach
    return ([name for name, short in (("bottom", math.isfinite(low) and low > 1 - REACH),
                                      ("top", math.isfinite(high) and high < REACH)) if short])


def reach_notices(cond: str, reach: tuple[float, float], lapse: float, guess: float, quantile: float
                  ) -> list[dict]:
    """Where the levels tested stop short of the curve's ends, the lapse (top) or guess (bottom) rate cannot be told
    from people's spread, and the population point leans on the curve's shape: the end-to-end validation's
    design with its 75 % point near the top level came out 5-8 % low (docs/validation/e2e.md). Notices
    (analysis.reporting.notices): the pages word them."""
    from analysis.reporting import notices

    low, high = reach
    at = {"top": (high, lapse), "bottom": (low, guess)}
    return [notices.reach(cond, end, *at[end], quantile) for end in ("top", "bottom") if end in reach_short(reach)]


def bound_notices(cond: str, fitted: Mapping, bounds: Mapping[str, float], log_axis: bool, model: str
                  ) -> list[dict]:
    """A notice per rate of ``fitted`` that ended at its bound (``at_bound``): the page says what to try."""
    from analysis.reporting import notices

    return [notices.bound(cond, name, float(fitted[name]), float(bounds[name]), log_axis, model)
            for name in fitted.get("at_bound") or []]


def _notify(notices_out: list[dict], warnings: list[str], found: list[dict]) -> None:
    """Adds ``found`` notices to ``notices_out`` (the pages word them) and their English to ``warnings`` (the plain
    text of results.json)."""
    from analysis.reporting import notices

    notices_out += found
    warnings += [notices.english(n) for n in found]


def stage_psychometric(yn: list[dict], options: Options, tick: Callable[[float], None], *,
                       headline_only: bool = False) -> list[dict]:
    """The pooled acceptability fits, per block over all conditions ("pooled") and per condition.
    ``headline_only`` (``headline_run``) fits only what the headline reads: no fit over all conditions where a
    block has several (it is only plotted), and no curve bands."""
    from analysis.stats.psychometric import FitOptions

    rng = np.random.default_rng(options.seed)
    results = []
    jobs = sum(1 + d["data"]["condition"].nunique() for d in yn if "data" in d) or 1
    done = 0
    for d in yn:
        if "data" not in d:
            results.append({"block": d["block"], "skipped": d["skip"]})
            continue
        log_axis = bool(d.get("log_axis", False))
        quantile = float(d.get("quantile", options.quantile))
        opts = FitOptions(sigmoid=options.sigmoid, decreasing=d["decreasing"], ci=options.ci, log_axis=log_axis,
                          lapse_bounds=(0.0, d.get("lapse_max", options.lapse_max)),
                          guess_bounds=(0.0, d.get("guess_max", options.guess_max)),
                          deviance_samples=options.deviance_samples, seed=options.seed, interval=options.interval)
        entry = {"block": d["block"], "level_name": d["level_name"], "unit": d["unit"],
                 "decreasing": d["decreasing"], "log_axis": log_axis, "axis_source": d.get("axis_source", ""),
                 "quantile": quantile, "lapse_max": opts.lapse_bounds[1], "guess_max": opts.guess_bounds[1],
                 "conditions": [], "warnings": [], "notices": []}
        groups = [("pooled", d["data"])] + [(c, d["data"].loc[d["data"]["condition"] == c]) for c in d["order"]]
        if headline_only and len(d["order"]) > 1:
            groups = groups[1:]
        for cond, g in groups:
            tick(done / jobs)
            done += 1
            try:
                fitted = _fit_yes_no(g, opts, options, rng, quantile, curve=not headline_only)
            except ValueError as exc:
                entry["warnings"].append(f"{cond}: {exc}")
                continue
            fitted["condition"] = str(cond)
            entry["warnings"] += [f"{cond}: {w}" for w in fitted.pop("warnings")]
            _notify(entry["notices"], entry["warnings"], bound_notices(
                str(cond), fitted, {"lapse": opts.lapse_bounds[1], "guess": opts.guess_bounds[1]},
                opts.uses_log_axis, "pooled"))
            if cond == "pooled":
                entry["pooled"] = fitted
            else:
                entry["conditions"].append(fitted)
        if len(entry["conditions"]) == 1 and entry["conditions"][0]["condition"] == "all":
            entry["conditions"] = []  # one condition: the pooled fit is the same data
        results.append(entry)
    return results


def stage_population(yn: list[dict], psychometric: list[dict], options: Options,
                     tick: Callable[[float], None], *, sigma_interval: bool = True) -> list[dict]:
    from analysis.stats.population import fit_population, shift_phrase
    from analysis.stats.psychometric import FitOptions

    pooled = {(p["block"], c["condition"]): c for p in psychometric for c in p.get("conditions", [])}
    pooled.update({(p["block"], "all"): p["pooled"] for p in psychometric if "pooled" in p})
    jobs = sum(d["data"]["condition"].nunique() for d in yn if "data" in d) or 1
    done = 0
    out = []
    for d in yn:
        if "data" not in d:
            continue
        log_axis = bool(d.get("log_axis", False))
        quantile = float(d.get("quantile", options.quantile))
        rows, warnings, notes = [], [], []
        for cond in d["order"]:
            g = d["data"].loc[d["data"]["condition"] == cond]
            tick(done / jobs)
            done += 1
            frame = g.rename(columns={"y": "response"})
            n_people = frame["participant"].nunique()
            individual = n_people <= options.individual_max
            pf = pooled.get((d["block"], str(cond)), {})
            # lapse and guess are the model's own, shared by the participants within the block's bounds. Fixed at
            # the pooled fit's (the population-averaged curve's, which is not an individual's shape) and floored at
            # 1 %, they put the 75 % point 2-7 % high in the end-to-end validation (docs/validation/e2e.md)
            opts = FitOptions(sigmoid=options.sigmoid, decreasing=d["decreasing"], ci=options.ci, log_axis=log_axis,
                              lapse=None, guess=None, lapse_bounds=(0.0, d["lapse_max"]),
                              guess_bounds=(0.0, d["guess_max"]), deviance_samples=0)
            try:
                pop = fit_population(frame, opts, quantile=quantile, individual=individual,
                                     sigma_interval=sigma_interval)
            except ValueError as exc:
                warnings.append(f"{cond}: {exc}")
                continue
            if not all(map(math.isfinite, pop.quantile_ci_95)):
                warnings.append(f"{cond}: the population quantile's interval could not be computed")
            ci = pf.get("threshold_ci_95") or [None, None]
            q_ci = pf.get("threshold_q_ci_95") or [None, None]
            row = {
                "condition": str(cond),
                "pooled_threshold": pf.get("threshold"), "pooled_ci_low": ci[0], "pooled_ci_high": ci[1],
                # the pooled curve's level where ``quantile`` of all answers are yes (not a population quantile)
                "pooled_q": pf.get("threshold_q"), "pooled_q_ci_low": q_ci[0], "pooled_q_ci_high": q_ci[1],
                **pop.columns(),
                "converged": pop.converged, "lapse": pop.lapse, "guess": pop.guess,
                # the population model's own rates that ended at (or near) their bound
                "at_bound": _at_bound({"lapse": pop.lapse, "guess": pop.guess}, d["lapse_max"], d["guess_max"]),
            }
            if not individual:
                row["individual_note"] = (f"not fitted: {n_people} participants, over the limit of "
                                          f"{options.individual_max} set for this run")
                row["individual_limit"] = options.individual_max
            rows.append(row)
            _notify(notes, warnings, bound_notices(
                str(cond), row, {"lapse": d["lapse_max"], "guess": d["guess_max"]}, log_axis, "population"))
            row["reach_short"] = reach_short(pop.reach)
            _notify(notes, warnings, reach_notices(str(cond), pop.reach, pop.lapse, pop.guess, quantile))
        phrases = []
        if len(rows) > 1:
            table = pd.DataFrame(rows)
            for row in rows[1:]:
                try:
                    phrases.append(shift_phrase(table, rows[0]["condition"], row["condition"], unit=d["unit"]))
                except (KeyError, TypeError, ValueError):
                    pass
        out.append({"block": d["block"], "level_name": d["level_name"], "unit": d["unit"],
                    "decreasing": d["decreasing"], "log_axis": log_axis, "axis_source": d.get("axis_source", ""),
                    "quantile": quantile, "rows": rows, "phrases": phrases, "warnings": warnings,
                    "notices": notes})
    return out


def _scale(block_spec: Mapping, values: pd.Series) -> tuple[float, float] | None:
    """The block's scale ends, with the study file's defaults (a slider without min/max runs 0-100)."""
    from studyapp.design.scales import scale_range

    if not block_spec:  # no study file: the scale is unknown, and the MOS interval is not clipped
        return None
    return scale_range((block_spec.get("task") or {}).get("scale"))


def stage_ratings(df: pd.DataFrame, spec: Mapping | None, tick: Callable[[float], None]) -> list[dict]:
    from analysis.stats.ratings import (
        RatingsError,
        mixed_model,
        mos,
        straight_liner_warning,
        straight_liners,
        subject_model,
    )

    blocks = _blocks(df, RATING)
    out = []
    for i, (block, g) in enumerate(blocks):
        tick(i / max(len(blocks), 1))
        rating = _numeric(g["response_value"].map(lambda v: v.get("response") if isinstance(v, Mapping) else v))
        factors = _design_factors(g, spec, block)
        data = pd.DataFrame({"participant": g["participant"].astype(str), "rating": rating,
                             "condition": condition_label(g, factors)}).dropna(subset=["rating"])
        for c in factors:
            data[c] = g[c].astype(str)
        scale = _scale(_block_spec(spec, block), data["rating"])
        entry: dict[str, Any] = {"block": block, "scale": list(scale) if scale else None, "warnings": [],
                                 "factors": [c[2:] for c in factors], "n_trials": int(len(data)),
                                 "n_participants": int(data["participant"].nunique())}
        entry["straight_liners"] = straight_liners(data)
        if entry["straight_liners"]:
            entry["warnings"].append(straight_liner_warning(entry["straight_liners"]))
        try:
            entry["mos"] = jsonable(mos(data, scale=scale))
            entry["mos_by_factor"] = {c[2:]: jsonable(mos(data, condition=c, scale=scale).rename(columns={c: "level"}))
                                      for c in factors}
        except RatingsError as exc:
            entry["warnings"].append(f"MOS: {exc}")
        try:
            sm = subject_model(data, stimulus="condition")
            raters = sm.raters
            flagged = raters.loc[raters[["straight_liner", "harsh", "lenient", "inconsistent"]].any(axis=1)]
            entry["subject_model"] = {"stimuli": jsonable(sm.stimuli), "raters_flagged": jsonable(flagged),
                                      "n_raters": int(len(raters)), "iterations": sm.iterations,
                                      "excluded_raters": list(sm.excluded), "interval": sm.interval,
                                      "rater_bias_sd": sm.rater_bias_sd}
        except RatingsError as exc:
            entry["warnings"].append(f"subject model: {exc}")
        if factors and data["participant"].nunique() >= 2:
            terms = [f"C(Q('{c}'))" for c in factors]
            formulas = [f"rating ~ {' * '.join(terms)}"] if len(terms) > 1 else []
            formulas.append(f"rating ~ {' + '.join(terms)}")
            for formula in formulas:
                try:
                    fitted = mixed_model(data, formula)
                except (ValueError, np.linalg.LinAlgError, RatingsError) as exc:
                    entry["warnings"].append(f"mixed model {formula}: {exc}")
                    continue
                fitted["term"] = fitted["term"].str.replace(r"C\(Q\('f_(\w+)'\)\)\[T\.", r"\1[", regex=True)
                entry["mixed_model"] = {"formula": formula.replace("C(Q('f_", "C(").replace("'))", ")"),
                                        "terms": jsonable(fitted), "attrs": jsonable(dict(fitted.attrs))}
                break
        out.append(entry)
    return out


AFC_SIDE_COLUMNS = ("source", "tokenizer", "strategy", "indicator", "delivery")


def _afc_sides(g: pd.DataFrame, compare: str | None, sets: Mapping[str, str]) -> tuple[pd.Series, pd.Series] | None:
    """The labels of stream A and B per row: the compared factor's levels (the design's ``A~B`` value of
    ``f_<factor>``, A first; or ``a_f_<factor>``, or the A/B column of the parameter it sets), else the first
    stimulus column that differs between A and B."""
    column = f"f_{compare}"
    if compare and column in g.columns:
        pairs = g[column].astype(str)
        if pairs.str.contains("~", regex=False).all():
            ab = pairs.str.split("~", n=1, expand=True)
            return ab[0], ab[1]
    names = [f"f_{compare}", sets.get(compare, compare)] if compare else []
    names += list(AFC_SIDE_COLUMNS)
    for name in names:
        a, b = f"a_{name}", f"b_{name}"
        if a in g.columns and b in g.columns and g[a].notna().all() and g[b].notna().all():
            sa, sb = g[a].astype(str), g[b].astype(str)
            if (sa != sb).any():
                return sa, sb
    return None


def chose_a(value: Any) -> float:
    """1 when stream A was chosen, 0 for B: the tidy ``response_value`` (chose A = 1), or ``A``/``B`` naming the
    stream (not the position shown: ``response`` a/b is first/second); NaN when unknown."""
    if isinstance(value, Mapping):
        value = value.get("chosen")
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return float(value) if value in (0, 1) else math.nan
    return {"a": 1.0, "b": 0.0}.get(str(value).strip().lower(), math.nan)


def stage_pairwise(df: pd.DataFrame, spec: Mapping | None, options: Options,
                   tick: Callable[[float], None]) -> list[dict]:
    from analysis.stats.pairwise import PairwiseError, pse_jnd, scale

    blocks = _blocks(df, AFC)
    out = []
    for i, (block, g) in enumerate(blocks):
        tick(i / max(len(blocks), 1))
        compare = (_block_spec(spec, block).get("task") or {}).get("compare")
        entry: dict[str, Any] = {"block": block, "compare": compare, "warnings": []}
        sides = _afc_sides(g, compare, _factor_sets(spec))
        y = g["response_value"].map(chose_a)
        if sides is None:
            entry["warnings"].append("no A/B labels in the frame")
            out.append(entry)
            continue
        a, b = sides
        strata = [c for c in _design_factors(g, spec, block) if c != f"f_{compare}"]
        data = pd.DataFrame({"participant": g["participant"].astype(str), "a": a, "b": b, "y": y,
                             "stratum": condition_label(g, strata)}).dropna(subset=["y"])
        data["winner"] = np.where(data["y"] == 1, data["a"], data["b"])
        entry["n_trials"] = int(len(data))
        entry["n_participants"] = int(data["participant"].nunique())
        shares = []
        for (ca, cb, stratum), h in data.groupby(["a", "b", "stratum"], sort=True):
            k, n = int(h["y"].sum()), int(len(h))
            lo, hi = _wilson(k, n, _z(options.ci))
            shares.append({"a": ca, "b": cb, "stratum": stratum, "n": n, "chose_a": k, "share_a": k / n,
                           "ci_low": lo, "ci_high": hi})
        entry["preferences"] = shares
        conditions = sorted(set(data["a"]) | set(data["b"]))
        if len(conditions) >= 2:
            for method in ("thurstone", "bradley_terry"):
                try:
                    table = scale(data[["participant", "a", "b", "winner"]], method=method,
                                  conditions=conditions, n_boot=options.n_boot, ci=options.ci, seed=options.seed)
                    entry[method] = jsonable(table)
                except (PairwiseError, ValueError, ImportError) as exc:
                    entry["warnings"].append(f"{method}: {exc}")
        if data["stratum"].nunique() > 1:
            entry["by_stratum"] = _stratum_scales(data, options, entry["warnings"])
        for metric in ("tokens_per_s", "chars_per_s", "ttft_ms"):
            ca, cb = f"a_{metric}", f"b_{metric}"
            if ca not in g.columns or cb not in g.columns:
                continue
            xa, xb = _numeric(g[ca]).loc[data.index], _numeric(g[cb]).loc[data.index]
            ratio = np.log(xa / xb)
            ok = np.isfinite(ratio)
            if ratio[ok].round(2).nunique() < 2 or np.median(np.abs(ratio[ok])) < MIN_LOG_RATIO:
                continue  # the streams do not differ in this metric (beyond measurement noise)
            try:
                res = pse_jnd(pd.DataFrame({"level": ratio[ok], "response": data.loc[ok, "y"],
                                            "participant": data.loc[ok, "participant"]}),
                              n_boot=options.n_boot, ci=options.ci, seed=options.seed)
            except PairwiseError as exc:
                entry["warnings"].append(f"PSE/JND on {metric}: {exc}")
                continue
            d = res.as_dict()
            d.update(metric=metric, pse_ratio=math.exp(res.pse) if math.isfinite(res.pse) else None)
            entry["pse_jnd"] = d
            break
        out.append(entry)
    return out


def _stratum_scales(data: pd.DataFrame, options: Options, warnings: list[str]) -> list[dict]:
    """A Thurstone scale of the compared levels within each stratum (each combination of the block's other
    factors, e.g. per arrival pattern): where the ranking depends on the stratum, the pooled scale hides it."""
    from analysis.stats.pairwise import PairwiseError, scale

    out = []
    for stratum, h in data.groupby("stratum", sort=True):
        conditions = sorted(set(h["a"]) | set(h["b"]))
        item: dict[str, Any] = {"stratum": stratum, "n_trials": int(len(h)),
                                "n_participants": int(h["participant"].nunique())}
        if len(conditions) >= 2:
            try:
                item["thurstone"] = jsonable(scale(h[["participant", "a", "b", "winner"]], method="thurstone",
                                                   conditions=conditions, n_boot=options.n_boot, ci=options.ci,
                                                   seed=options.seed))
            except (PairwiseError, ValueError) as exc:
                warnings.append(f"thurstone ({stratum}): {exc}")
        out.append(item)
    return out


def _z(ci: float) -> float:
    """The normal quantile of a two-sided ``ci`` interval (1.96 for 95 %)."""
    from scipy.special import ndtri

    return float(ndtri(0.5 + ci / 2))


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _stimulus_key(g: pd.DataFrame) -> pd.Series:
    """What counts as one stimulus: the condition id (the same stream for everyone in the synthetic designs), and
    for an adaptive trial also the level it showed: a staircase is one condition whose stream changes from trial
    to trial, and averaging its metrics over the track would leave one "stimulus" per track."""
    if "condition" in g.columns and g["condition"].notna().all():
        key = g["condition"].astype(str)
    else:
        key = g["block"].astype(str) + ":" + condition_label(g) if "block" in g.columns else condition_label(g)
    if "level" in g.columns:
        level = _numeric(g["level"])
        key = key.where(level.isna(), key + "@" + level.map(lambda v: f"{v:g}"))
    return key


def stage_predictors(df: pd.DataFrame, options: Options, tick: Callable[[float], None]) -> list[dict]:
    from analysis.stats.predictors import CANDIDATES, PredictorError, rank_predictors

    out = []
    kinds = (("yes/no", YES_NO, "binary"), ("rating", RATING, "rating"))
    for i, (name, types, kind) in enumerate(kinds):
        tick(i / len(kinds))
        if "trial_type" not in df.columns:
            break
        g = df.loc[df["trial_type"].astype(str).str.lower().isin(types)]
        if "fluidity" in g.columns and "fluidity_index" not in g.columns:
            g = g.rename(columns={"fluidity": "fluidity_index"})
        present = [c for c in CANDIDATES if c in g.columns and _numeric(g[c]).notna().any()]
        if not len(g) or not present:
            continue
        if kind == "binary":
            y = g["response_value"].map(binary)
        else:
            y = _numeric(g["response_value"].map(lambda v: v.get("response") if isinstance(v, Mapping) else v))
            if "block" in g.columns:  # blocks may use different scales: z-score within block
                y = y.groupby(g["block"]).transform(lambda s: (s - s.mean()) / (s.std() or 1.0))
        stim = _stimulus_key(g)
        responses = pd.DataFrame({"stimulus": stim, "response": y,
                                  "participant": g["participant"].astype(str)}).dropna(subset=["response"])
        metrics = g[present].apply(_numeric).assign(stimulus=stim).groupby("stimulus", as_index=False).mean()
        if len(metrics) < 3:
            continue
        try:
            table = rank_predictors(metrics, responses, candidates=present, kind=kind, n_boot=options.n_boot,
                                    seed=options.seed)
        except PredictorError as exc:
            out.append({"kind": name, "warnings": [str(exc)]})
            continue
        means = responses.groupby("stimulus")["response"].agg(["mean", "count"])
        points = {}
        for metric in table.loc[table["rank"].notna(), "metric"].head(3):  # the best three that are ranked
            m = metrics.set_index("stimulus")[metric].reindex(means.index)
            points[metric] = [{"stimulus": s, "x": m.loc[s], "y": means.loc[s, "mean"],
                               "n": int(means.loc[s, "count"])} for s in means.index]
        warnings = [] if points else ["no candidate metric varies across these stimuli, or the answers never vary: "
                                      "there is nothing to rank"]
        out.append({"kind": name, "response": "share yes" if kind == "binary" else "rating (z within block)",
                    "table": jsonable(table), "points": jsonable(points), "warnings": warnings})
    return out


def _render_strategy(df: pd.DataFrame) -> pd.Series:
    """Each trial's render strategy for the fidelity groups: a 2AFC trial has one per stream (``a_``/``b_``),
    named once when both streams used it and as "A / B" when they differ; "unknown" when none is recorded (a trial
    must never fall out of the groups while still counted in the totals)."""
    def column(name: str) -> pd.Series:
        if name not in df.columns:
            return pd.Series(None, index=df.index, dtype=object)
        s = df[name].astype(object)
        return s.where(s.notna(), None)

    own, a, b = column("strategy"), column("a_strategy"), column("b_strategy")
    pair = [x if y is None or x == y else (y if x is None else f"{x} / {y}") for x, y in zip(a, b, strict=True)]
    out = own.where(own.notna(), pd.Series(pair, index=df.index, dtype=object))
    if "strategy" not in df.columns and out.isna().all():
        return pd.Series("all", index=df.index)
    return out.where(out.notna(), "unknown").astype(str)


def _known(df: pd.DataFrame, col: str | None) -> pd.Series | str:
    """The column as text with "unknown" for a missing value (or "unknown" throughout without the column)."""
    if col is None:
        return "unknown"
    return df[col].astype(object).where(df[col].notna(), "unknown").astype(str)


def stage_fidelity(trials: pd.DataFrame, participants: pd.DataFrame | None, options: Options) -> dict:
    """Painted − scheduled p95 per trial, by render strategy, device class and browser engine (engines differ most
    in paint timing), with the trials over the bound."""
    if "fidelity_p95_ms" not in trials.columns:
        return {"available": False}
    df = trials.loc[_numeric(trials["fidelity_p95_ms"]).notna()].copy()
    df["p95"] = _numeric(df["fidelity_p95_ms"])
    if participants is not None and "participant" in participants.columns:
        wanted = [] if "device" in df.columns or "device_class" in df.columns else \
            [c for c in ("device", "device_class") if c in participants.columns][:1]
        wanted += ["browser"] if "browser" in participants.columns and "browser" not in df.columns else []
        if wanted:
            df = df.merge(participants[["participant", *wanted]], on="participant", how="left")
    device = next((c for c in ("device_class", "device") if c in df.columns), None)
    df["strategy_"] = _render_strategy(df)
    df["device_"] = _known(df, device)
    df["browser_"] = _known(df, "browser" if "browser" in df.columns else None)
    bounds = _numeric(df["fidelity_bound_ms"]).dropna() if "fidelity_bound_ms" in df.columns else pd.Series()
    bound = float(bounds.iloc[0]) if len(bounds) else options.fidelity_bound_ms
    violated = df["p95"] > bound
    if "fidelity_violated" in df.columns:
        marked = df["fidelity_violated"]
        violated = marked.where(marked.notna(), violated).astype(bool)
    df["violated_"] = violated
    groups = []
    edges = np.arange(0, 105, 5.0)
    for (strategy, dev, browser), g in df.groupby(["strategy_", "device_", "browser_"], sort=True, dropna=False):
        v = g["p95"].to_numpy(float)
        counts, _ = np.histogram(np.clip(v, edges[0], edges[-1] - 1e-9), bins=edges)
        groups.append({"strategy": strategy, "device": dev, "browser": browser, "n": int(len(v)),
                       "median": float(np.median(v)),
                       "p95": float(np.percentile(v, 95)), "max": float(v.max()),
                       "violated": int(g["violated_"].sum()), "share_violated": float(g["violated_"].mean()),
                       "hist_edges": edges.tolist(), "hist_counts": counts.tolist(),
                       "values": v[:MAX_VALUES].tolist()})
    cols = [c for c in ("participant", "block", "trial", "trial_index", "condition", "strategy", "browser")
            if c in df.columns]
    flagged = df.loc[df["violated_"]].sort_values("p95", ascending=False)
    return {
        "available": True, "bound_ms": bound, "n_trials": int(len(df)),
        "n_violated": int(df["violated_"].sum()), "groups": groups,
        "flagged": jsonable(flagged[cols + ["p95"]].head(MAX_FLAGGED)),
        "n_flagged_listed": int(min(len(flagged), MAX_FLAGGED)),
    }


# --- the run ---------------------------------------------------------------------------------------------------


def run(trials: pd.DataFrame, participants: pd.DataFrame | None = None, *, spec: Mapping | None = None,
        options: Options | None = None, progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None) -> dict:
    """Every stage over the tidy frames; returns the JSON-ready results. Raises ``Cancelled`` if asked to stop."""
    options = options or Options()
    track = _Tracker(progress, cancelled)
    results: dict[str, Any] = {"pipeline_version": PIPELINE_VERSION, "options": asdict(options)}

    track.at("exclusions")
    trials, participants, report = apply_rules(trials, participants, spec)
    results["exclusions"] = stage_exclusions(trials, participants, report)
    data = analysable(trials)
    results["n"] = {"participants": int(data["participant"].nunique()) if "participant" in data.columns else 0,
                    "trials": int(len(data))}

    track.at("psychometric")
    yn = yes_no_sets(data, spec, options)
    results["psychometric"] = stage_psychometric(yn, options, lambda f: track.at("psychometric", f))

    track.at("population")
    results["population"] = stage_population(yn, results["psychometric"], options,
                                             lambda f: track.at("population", f))
    track.at("ratings")
    results["ratings"] = stage_ratings(data, spec, lambda f: track.at("ratings", f))
    track.at("pairwise")
    results["pairwise"] = stage_pairwise(data, spec, options, lambda f: track.at("pairwise", f))
    track.at("predictors")
    results["predictors"] = stage_predictors(data, options, lambda f: track.at("predictors", f))
    track.at("fidelity")
    results["fidelity"] = stage_fidelity(trials, participants, options)
    track.at("fidelity", 1.0)
    track.done()
    return jsonable(results)


def headline_run(trials: pd.DataFrame, participants: pd.DataFrame | None = None, *, spec: Mapping | None = None,
                 options: Options | None = None) -> dict:
    """Only the stages the headline reads (``analysis.tables.headline.numbers``), through ``run``'s own functions:
    exclusions, the per-condition acceptability fits with their (jackknife-widened) intervals and the population
    model with its intervals. Left out, as they feed no headline number: the fit over all conditions of a block with
    several (plotted only), curve bands, the deviance test, individual fits (the mean of individual thresholds),
    ratings, pairwise, predictors, fidelity and σ's interval. For the end-to-end validation and the planner, which
    simulate hundreds of studies; ``headline.numbers`` of its results equals that of ``run``'s for the same data
    and options (tests/analysis/stats/test_headline_run.py)."""
    options = replace(options or Options(), deviance_samples=0, individual_max=0)
    results: dict[str, Any] = {"pipeline_version": PIPELINE_VERSION, "options": asdict(options),
                               "headline_only": True}
    trials, participants, report = apply_rules(trials, participants, spec)
    results["exclusions"] = stage_exclusions(trials, participants, report)
    data = analysable(trials)
    results["n"] = {"participants": int(data["participant"].nunique()) if "participant" in data.columns else 0,
                    "trials": int(len(data))}
    yn = yes_no_sets(data, spec, options)
    results["psychometric"] = stage_psychometric(yn, options, lambda f: None, headline_only=True)
    # σ's interval is shown beside the headline, not in it: its profile is an eighth of a study's time
    results["population"] = stage_population(yn, results["psychometric"], options, lambda f: None,
                                             sigma_interval=False)
    return jsonable(results)
