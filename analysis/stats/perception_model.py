"""A perception model as a file: the population acceptability model of a study, to score serving traces with.

Built from an analysis run's results dict alone (pure, no Django): the yes/no block's population fits
(``results["population"]``), one per condition, become *anchors* of the model. The block's level (a decode rate
in tokens/s or chars/s, or TTFT) is the model's first predictor; a condition factor that sets a stream metric
(``ttft`` setting ``ttft_ms`` in the demo study) is its second, and between its tested values the population's
median threshold μ and log spread log σ are interpolated linearly (extrapolated along the end segments, and
flagged). Conditions that differ only in what a trace cannot show (delivery, render strategy) are averaged,
equally weighted (μ on the fitting axis, σ on its own scale). The share of the population that accepts a
request is Φ(±(x − μ)/σ) on the fitting axis (x the natural log of a rate): the share of people whose own
threshold the request meets, the model the population fit stands on (``analysis.stats.population``).

The uncertainty is carried as joint draws of every anchor's μ and log σ (``population.draws``, schema version 2):
draws from each condition's likelihood, the population fit's own (``analysis.stats.population_draws``: σ with μ
integrated out, then μ given σ, conditions answered by the same participants coupled), so the draws keep the
correlation of μ with σ, and of conditions and anchors that share participants, and σ's spread where its
likelihood is flat towards zero. Each
anchor also states ``mu_se`` and ``log_sigma_se``: the draws' SDs, or, for a model built without the answers
(version 1, or ``build`` without ``answers``), normals read from the fit's 95 % intervals with the Student-t
quantile of n − 1 degrees of freedom, drawn independently (docs/scoring.md says how much narrower that is).
The schema is docs/scoring.md; ``validate`` refuses a file that does not follow it, naming the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from analysis.stats import population_draws

SCHEMA = "pacelab.perception-model"
VERSION = 2
SIMULATED_LABEL = "simulated participants (bots), not human data"
# a block's level name → the stream metric it is measured by (``playback.core.metrics``) and its unit
LEVEL_METRICS = {"rate": "tokens_per_s", "tokens_per_s": "tokens_per_s", "chars_per_s": "chars_per_s",
                 "ttft": "ttft_ms", "ttft_ms": "ttft_ms"}
UNITS = {"tokens_per_s": "tokens/s", "chars_per_s": "chars/s", "ttft_ms": "ms"}
# a condition factor that sets one of these stream parameters is a predictor a trace can show
FACTOR_METRICS = {"ttft_ms": "ttft_ms", "ttft": "ttft_ms", "rate": "tokens_per_s"}
METRICS = tuple(UNITS)
# log σ's standard error where the fit could bound σ on neither side (its profile interval is 0 – ∞)
WIDE_LOG_SIGMA_SE = 1.0


class ModelFileError(ValueError):
    """A model that cannot be built or a model file that is not valid; ``str()`` names the field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}" if field else problem)


@dataclass(frozen=True)
class Anchor:
    """The population at one value of the second predictor (or the only one): μ and log σ with their SEs."""

    at: float | None
    mu: float
    mu_se: float
    log_sigma: float
    log_sigma_se: float
    n_participants: int


# --- building a model from results -----------------------------------------------------------------------------


def _block(results: Mapping[str, Any], block: str | None) -> Mapping[str, Any]:
    entries = [e for e in results.get("population") or [] if e.get("rows")]
    if block is not None:
        entries = [e for e in entries if str(e.get("block")) == block]
        if not entries:
            raise ModelFileError("block", f"no population fit for block {block!r} in this analysis run")
    if not entries:
        raise ModelFileError("population", "the analysis run has no population acceptability fit (a yes/no block "
                                           "whose population model could be fitted)")
    return max(entries, key=lambda e: sum(int(r.get("n_participants") or 0) for r in e["rows"]))


def pick_block(results: Mapping[str, Any], block: str | None = None) -> Mapping[str, Any]:
    """The population entry a model is built from (``block``, or the yes/no block with the most participants)."""
    return _block(results, block)


def _metric_of(entry: Mapping[str, Any]) -> str:
    name = str(entry.get("level_name") or "")
    metric = LEVEL_METRICS.get(name)
    if metric is None:
        raise ModelFileError("level", f"block {entry.get('block')!r} varies {name!r}, which no stream metric "
                                      f"measures (known: {', '.join(LEVEL_METRICS)})")
    if metric == "tokens_per_s" and entry.get("unit") == "chars/s":
        metric = "chars_per_s"
    return metric


def _parse_condition(label: str) -> dict[str, str]:
    """``"ttft=300, delivery=live"`` → ``{"ttft": "300", "delivery": "live"}`` (``"all"`` → nothing)."""
    out = {}
    for part in re.split(r",\s*", str(label)):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _factor_sets(spec: Mapping[str, Any]) -> dict[str, str]:
    return {str(f.get("name")): str(f.get("sets") or f.get("name")) for f in spec.get("factors") or []}


def _se(lo: Any, hi: Any, point: float, t: float, transform) -> float | None:
    """A normal SE from a 95 % interval on the transformed scale (one side where the other is open)."""
    ends = [None if v is None else float(v) for v in (lo, hi)]
    ok = [v is not None and math.isfinite(v) and v > 0 for v in ends] if transform is math.log else \
        [v is not None and math.isfinite(v) for v in ends]
    if all(ok):
        return abs(transform(ends[1]) - transform(ends[0])) / (2 * t)
    for v, good in zip(ends, ok):
        if good:
            return abs(transform(v) - transform(point)) / t
    return None


def _anchor_rows(entry: Mapping[str, Any], sets: Mapping[str, str], primary: str
                 ) -> tuple[str | None, dict[float | None, list[Mapping[str, Any]]]]:
    """The second predictor (a condition factor setting a metric other than the level's) and the rows per value."""
    second_factor, second_metric = None, None
    for row in entry["rows"]:
        for name, value in _parse_condition(row.get("condition", "")).items():
            metric = FACTOR_METRICS.get(sets.get(name, name))
            if metric and metric != primary and _is_number(value):
                second_factor, second_metric = name, metric
    groups: dict[float | None, list[Mapping[str, Any]]] = {}
    for row in entry["rows"]:
        cond = _parse_condition(row.get("condition", ""))
        at = float(cond[second_factor]) if second_factor and second_factor in cond else None
        groups.setdefault(at, []).append(row)
    if second_factor and None in groups:
        raise ModelFileError("population", f"some conditions do not set {second_factor!r}: cannot interpolate")
    return second_metric, groups


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _anchor(at: float | None, rows: Sequence[Mapping[str, Any]], log_axis: bool) -> Anchor:
    """One anchor from the rows at one value of the second predictor (their average, equally weighted)."""
    mus, mu_ses, lss, ls_ses, ns = [], [], [], [], []
    to_axis = math.log if log_axis else float
    for r in rows:
        n = int(r.get("n_participants") or 0)
        t = float(stats.t.ppf(0.975, max(n - 1, 1)))
        mu_level, sigma = r.get("population_mu"), r.get("population_sigma")
        if mu_level is None or sigma is None or (log_axis and float(mu_level) <= 0) or float(sigma) <= 0:
            raise ModelFileError("population", f"condition {r.get('condition')!r} has no population μ and σ")
        mu = to_axis(float(mu_level))
        mu_se = _se(r.get("population_mu_ci_low"), r.get("population_mu_ci_high"), float(mu_level), t, to_axis)
        ls_se = _se(r.get("population_sigma_ci_low"), r.get("population_sigma_ci_high"), float(sigma), t, math.log)
        mus.append(mu)
        mu_ses.append(mu_se if mu_se is not None else float(sigma))
        lss.append(math.log(float(sigma)))
        ls_ses.append(ls_se if ls_se is not None else WIDE_LOG_SIGMA_SE)
        ns.append(n)
    k = len(rows)
    # σ is averaged on its own scale (a geometric mean would follow a group whose σ collapsed to the grid's floor),
    # its SE on log σ by the delta method
    sigmas = [math.exp(v) for v in lss]
    sigma = sum(sigmas) / k
    ls_se = math.sqrt(sum((sg * se) ** 2 for sg, se in zip(sigmas, ls_ses))) / k / sigma
    return Anchor(at=at, mu=sum(mus) / k, mu_se=math.sqrt(sum(s * s for s in mu_ses)) / k,
                  log_sigma=math.log(sigma), log_sigma_se=ls_se, n_participants=sum(ns))


def _tested(results: Mapping[str, Any], block: str, spec: Mapping[str, Any], factor_metric: str | None,
            anchors: Sequence[Anchor]) -> tuple[list[float], list[float] | None]:
    psy = next((p for p in results.get("psychometric") or [] if p.get("block") == block), {})
    fits = list(psy.get("conditions") or []) + ([psy["pooled"]] if psy.get("pooled") else [])
    levels = [float(pt["level"]) for f in fits for pt in f.get("points") or [] if pt.get("level") is not None]
    if not levels:
        raise ModelFileError("psychometric", f"block {block!r} has no tested levels in the results")
    second = sorted(a.at for a in anchors if a.at is not None) if factor_metric else []
    return [min(levels), max(levels)], ([second[0], second[-1]] if second else None)


def _ranking(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    for entry in results.get("predictors") or []:
        if entry.get("kind") == "yes/no" and entry.get("table"):
            return [{"metric": r.get("metric"), "rank": r.get("rank"), "loglik_gain": r.get("loglik_gain"),
                     "spearman": r.get("spearman")} for r in entry["table"]]
    return []


def _anchor_draws(groups: Mapping[float | None, Sequence[Mapping[str, Any]]], order: Sequence[float | None],
                  drawn: population_draws.Draws, decreasing: bool) -> tuple[np.ndarray, np.ndarray]:
    """(draws × anchors) μ and log σ on the model's axis (the fitting axis, not negated), each anchor the average
    of its conditions' draws as ``_anchor`` averages their estimates (μ on the axis, σ on its own scale)."""
    col = {c: j for j, c in enumerate(drawn.conditions)}
    sign = -1.0 if decreasing else 1.0
    mu = np.empty((drawn.mu.shape[0], len(order)))
    ls = np.empty_like(mu)
    for k, at in enumerate(order):
        cols = [col[str(r["condition"])] for r in groups[at]]
        mu[:, k] = sign * drawn.mu[:, cols].mean(axis=1)
        ls[:, k] = np.log(drawn.sigma[:, cols].mean(axis=1))
    return mu, ls


def build(results: Mapping[str, Any], spec: Mapping[str, Any], provenance: Mapping[str, Any], *,
          block: str | None = None, answers: pd.DataFrame | None = None, draws: int = population_draws.DRAWS,
          seed: int = 0) -> dict[str, Any]:
    """The model file's content from a finished run's results and its study file.

    ``provenance``: ``study, data_version, analysis_run, n_participants, created, bots`` (the rest is read
    from the study file and the results). ``answers``: the block's analysed answers
    (``population_draws.block_data``), for the joint draws; without them the model carries the intervals' normals
    only."""
    entry = _block(results, block)
    primary = _metric_of(entry)
    log_axis = bool(entry.get("log_axis"))
    decreasing = bool(entry.get("decreasing"))
    second_metric, groups = _anchor_rows(entry, _factor_sets(spec), primary)
    anchors = sorted((_anchor(at, rows, log_axis) for at, rows in groups.items()),
                     key=lambda a: -math.inf if a.at is None else a.at)
    joint = None
    if answers is not None and len(answers):
        sigmoid = str((results.get("options") or {}).get("sigmoid") or "logistic")
        drawn = population_draws.likelihood_draws(answers, entry["rows"], log_axis=log_axis, decreasing=decreasing,
                                                  sigmoid=sigmoid, draws=draws, seed=seed)
        d_mu, d_ls = _anchor_draws(groups, [a.at for a in anchors], drawn, decreasing)
        anchors = [Anchor(at=a.at, mu=a.mu, mu_se=float(d_mu[:, k].std(ddof=1)), log_sigma=a.log_sigma,
                          log_sigma_se=float(d_ls[:, k].std(ddof=1)), n_participants=a.n_participants)
                   for k, a in enumerate(anchors)]
        joint = {"method": "likelihood (σ integrated, flat on σ; μ given σ normal; conditions coupled by shared "
                           "participants)", "n": int(draws), "seed": int(seed),
                 "mu": np.round(d_mu, 6).tolist(), "log_sigma": np.round(d_ls, 6).tolist()}
    level_range, second_range = _tested(results, str(entry.get("block")), spec, second_metric, anchors)
    predictors = [{"metric": primary, "unit": UNITS[primary], "axis": "log" if log_axis else "linear",
                   "direction": "falling" if decreasing else "rising", "role": "level", "tested": level_range}]
    if second_metric:
        predictors.append({"metric": second_metric, "unit": UNITS[second_metric], "axis": "linear",
                           "role": "interpolated", "tested": second_range})
    bots = bool(provenance.get("bots"))
    tokenizers = sorted({str(s.get("tokenizer")) for s in (spec.get("stimuli") or {}).values()
                         if isinstance(s, Mapping) and s.get("tokenizer")})
    model = {
        "schema": SCHEMA,
        "version": VERSION,
        "simulated": bots,
        "label": SIMULATED_LABEL if bots else "",
        "provenance": {
            "study": str(provenance.get("study") or spec.get("id") or ""),
            "title": _title(spec.get("title")),
            "block": str(entry.get("block")),
            "data_version": str(provenance.get("data_version") or ""),
            "analysis_run": provenance.get("analysis_run"),
            "pipeline_version": results.get("pipeline_version"),
            "n_participants": int(provenance.get("n_participants")
                                  or (results.get("n") or {}).get("participants") or 0),
            "languages": list(spec.get("languages") or []),
            "tokenizers": tokenizers,
            "created": str(provenance.get("created") or ""),
            "participants": "bots" if bots else "people",
        },
        "predictors": predictors,
        "population": {
            "share": float(entry.get("quantile") or 0.75),
            "axis_scale": "ln" if log_axis else "level",
            "anchors": [{"at": a.at, "mu": a.mu, "mu_se": a.mu_se, "log_sigma": a.log_sigma,
                         "log_sigma_se": a.log_sigma_se, "n_participants": a.n_participants} for a in anchors],
            "uncertainty": "joint draws" if joint else "independent normals",
            **({"draws": joint} if joint else {}),
        },
        "predictor_ranking": _ranking(results),
    }
    validate(model)
    return model


def _title(value: Any) -> str:
    if isinstance(value, Mapping):
        return str(value.get("en") or next(iter(value.values()), ""))
    return str(value or "")


# --- validation ------------------------------------------------------------------------------------------------


def _need(obj: Mapping[str, Any], key: str, where: str, kinds: tuple[type, ...], what: str) -> Any:
    if key not in obj:
        raise ModelFileError(f"{where}{key}", "missing")
    value = obj[key]
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        raise ModelFileError(f"{where}{key}", f"must be {what}, got {json.dumps(value)[:60]}")
    return value


def _finite(obj: Mapping[str, Any], key: str, where: str, *, positive: bool = False) -> float:
    value = float(_need(obj, key, where, (int, float), "a number"))
    if not math.isfinite(value) or (positive and value <= 0) or (not positive and False):
        raise ModelFileError(f"{where}{key}", f"must be a finite{' positive' if positive else ''} number, "
                                              f"got {value!r}")
    return value


def validate(model: Any) -> None:  # noqa: C901 (a flat list of field checks, one per field of the schema)
    """Raise ``ModelFileError`` naming the first field that does not follow the schema (docs/scoring.md)."""
    if not isinstance(model, Mapping):
        raise ModelFileError("", "a model file must hold a JSON object")
    if model.get("schema") != SCHEMA:
        raise ModelFileError("schema", f"must be {SCHEMA!r}, got {json.dumps(model.get('schema'))}: not a "
                                       f"PaceLab perception model")
    version = _need(model, "version", "", (int,), "an integer")
    if version > VERSION:
        raise ModelFileError("version", f"{version} is newer than this PaceLab reads ({VERSION}): update PaceLab")
    if version < 1:
        raise ModelFileError("version", f"must be 1 or more, got {version}")
    simulated = _need(model, "simulated", "", (bool,), "true or false")
    label = _need(model, "label", "", (str,), "text")
    if simulated and not label:
        raise ModelFileError("label", "a model fitted on simulated participants must say so")
    prov = _need(model, "provenance", "", (dict,), "an object")
    for key in ("study", "data_version", "created", "participants"):
        _need(prov, key, "provenance.", (str,), "text")
    if prov["participants"] not in ("bots", "people"):
        raise ModelFileError("provenance.participants", "must be 'bots' or 'people'")
    if (prov["participants"] == "bots") != simulated:
        raise ModelFileError("provenance.participants", "disagrees with simulated")
    _need(prov, "n_participants", "provenance.", (int,), "an integer")
    for key in ("languages", "tokenizers"):
        _need(prov, key, "provenance.", (list,), "a list")
    preds = _need(model, "predictors", "", (list,), "a list")
    if not 1 <= len(preds) <= 2:
        raise ModelFileError("predictors", f"must list one or two predictors, got {len(preds)}")
    for i, p in enumerate(preds):
        where = f"predictors[{i}]."
        if not isinstance(p, Mapping):
            raise ModelFileError(f"predictors[{i}]", "must be an object")
        metric = _need(p, "metric", where, (str,), "text")
        if metric not in METRICS:
            raise ModelFileError(f"{where}metric", f"{metric!r} is not a metric PaceLab measures "
                                                   f"({', '.join(METRICS)})")
        if _need(p, "axis", where, (str,), "text") not in ("log", "linear"):
            raise ModelFileError(f"{where}axis", "must be 'log' or 'linear'")
        role = _need(p, "role", where, (str,), "text")
        if role != ("level" if i == 0 else "interpolated"):
            raise ModelFileError(f"{where}role", f"must be {'level' if i == 0 else 'interpolated'!r}")
        tested = _need(p, "tested", where, (list,), "a list [low, high]")
        if len(tested) != 2 or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in tested) \
                or not tested[0] <= tested[1]:
            raise ModelFileError(f"{where}tested", "must be [low, high] with low <= high")
        if p["axis"] == "log" and tested[0] <= 0:
            raise ModelFileError(f"{where}tested", "a log axis needs positive levels")
    if _need(preds[0], "direction", "predictors[0].", (str,), "text") not in ("rising", "falling"):
        raise ModelFileError("predictors[0].direction", "must be 'rising' or 'falling'")
    pop = _need(model, "population", "", (dict,), "an object")
    share = _finite(pop, "share", "population.")
    if not 0 < share < 1:
        raise ModelFileError("population.share", "must lie strictly between 0 and 1")
    if pop.get("axis_scale") not in ("ln", "level"):
        raise ModelFileError("population.axis_scale", "must be 'ln' or 'level'")
    if (pop["axis_scale"] == "ln") != (preds[0]["axis"] == "log"):
        raise ModelFileError("population.axis_scale", "disagrees with predictors[0].axis")
    anchors = _need(pop, "anchors", "population.", (list,), "a list")
    if not anchors:
        raise ModelFileError("population.anchors", "must hold at least one anchor")
    if len(preds) == 1 and len(anchors) != 1:
        raise ModelFileError("population.anchors", "one predictor: exactly one anchor (with at null)")
    if len(preds) == 2 and len(anchors) < 2:
        raise ModelFileError("population.anchors", "two predictors: at least two anchors to interpolate between")
    last = -math.inf
    for i, a in enumerate(anchors):
        where = f"population.anchors[{i}]."
        if not isinstance(a, Mapping):
            raise ModelFileError(f"population.anchors[{i}]", "must be an object")
        if len(preds) == 2:
            at = _finite(a, "at", where)
            if at <= last:
                raise ModelFileError(f"{where}at", "anchors must be in increasing order of at, without repeats")
            last = at
        elif a.get("at") is not None:
            raise ModelFileError(f"{where}at", "must be null with one predictor")
        _finite(a, "mu", where)
        _finite(a, "mu_se", where, positive=True)
        _finite(a, "log_sigma", where)
        _finite(a, "log_sigma_se", where, positive=True)
    _validate_uncertainty(pop, len(anchors), version)
    if not isinstance(model.get("predictor_ranking", []), list):
        raise ModelFileError("predictor_ranking", "must be a list")


def _validate_uncertainty(pop: Mapping[str, Any], n_anchors: int, version: int) -> None:
    """Version 2: ``uncertainty`` says which; ``draws`` (when joint) holds ``mu`` and ``log_sigma``, each a list of
    draws of one number per anchor."""
    if version < 2:
        return
    kind = _need(pop, "uncertainty", "population.", (str,), "text")
    if kind not in ("joint draws", "independent normals"):
        raise ModelFileError("population.uncertainty", "must be 'joint draws' or 'independent normals'")
    if kind == "independent normals":
        return
    draws = _need(pop, "draws", "population.", (dict,), "an object")
    _need(draws, "method", "population.draws.", (str,), "text")
    n = None
    for key in ("mu", "log_sigma"):
        rows = _need(draws, key, "population.draws.", (list,), "a list of draws")
        if len(rows) < 20:
            raise ModelFileError(f"population.draws.{key}", f"must hold at least 20 draws, got {len(rows)}")
        if n is not None and len(rows) != n:
            raise ModelFileError(f"population.draws.{key}", "must hold as many draws as population.draws.mu")
        n = len(rows)
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != n_anchors or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in row):
                raise ModelFileError(f"population.draws.{key}[{i}]",
                                     f"must be a list of {n_anchors} finite numbers (one per anchor)")


def load(path: str | Path) -> dict[str, Any]:
    """A model file, read and validated; every problem is a ``ModelFileError`` naming the file and field."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelFileError("", f"{path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ModelFileError("", f"{path}: not UTF-8 text") from None
    try:
        model = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFileError("", f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    try:
        validate(model)
    except ModelFileError as exc:
        raise ModelFileError(exc.field, f"{exc.problem} (in {path})") from None
    return model


def dumps(model: Mapping[str, Any]) -> str:
    return json.dumps(model, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
