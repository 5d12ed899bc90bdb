"""How many participants to recruit: simulate the study's own design many times and read the headline intervals.

The planner runs the end-to-end validation's harness (``analysis.stats.simulate``) on the researcher's study file (its
levels, conditions, trials per participant, attention checks and exclusion rules, through the server's journeys)
with a population of bots (``studyapp.bots.observers.Population``: ``DEFAULT_MODEL``, or a model file, or a pilot's
``results.json``; ``load_model``), analyses every simulated study with the pipeline's acceptability stages and
reports per participant count:

- per condition, the expected (median over runs) width of the 95 % interval of the population's P % point, the
  headline a researcher reads, as ± half its width and in full;
- per pair of conditions of a block, the true difference of their P % points under the model and the power: the
  share of runs in which the two 95 % intervals do not overlap (so the results page shows them apart). Not
  overlapping is stricter than a test of the difference at 5 %: the power it reports is conservative.

The analysis is the pipeline's headline stages (``analysis.stats.pipeline.headline_run``: exclusions, the
per-condition fits and the population model, through ``pipeline.run``'s functions) on the acceptability trials, with
the options that change no population interval turned off to save time: no goodness-of-fit bootstrap, no participant
jackknife of the pooled curve (it widens the pooled interval, not the population's), no individual fits (they feed
only the mean of individual thresholds). Pure Python; processes on every core.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from analysis.stats import pipeline, simulate
from analysis.tables import headline
from studyapp.bots import observers as bot_models
from studyapp.design.counterbalance import sub_seed

# The default population (docs/analysis.md, "Planning"): thresholds log-normal around 12 tokens/s at zero TTFT with
# SD 0.10 log10 units between people, raised 0.12 log10 units per second of TTFT, lapse 0.03; the bots' default
# slope. The values of the issue-40 study; a pilot's fit is better (``--model``).
DEFAULT_MODEL = bot_models.Population(threshold=12.0, threshold_sd=0.10, ttft_shift=0.12, lapse=0.03)
DEFAULT_PARTICIPANTS = (20, 40, 80)
DEFAULT_RUNS = 200
QUICK_RUNS = 50
OPTIONS = pipeline.Options(deviance_samples=0, cluster_groups=0, individual_max=0, n_boot=20)
YES_NO = ("acceptability", "yesno", "yes/no")

Progress = Callable[[int, int], None]


class ModelFileError(ValueError):
    """A model file that cannot be used; ``str()`` names the file and the field."""


# --- the model ------------------------------------------------------------------------------------------------


def load_model(path: str | Path | None) -> bot_models.Population:
    """The population to simulate: ``DEFAULT_MODEL``; a bot model file (YAML or JSON, the keys of docs/bots.md,
    as ``run_bots --model`` reads, over the defaults); or an analysis run's ``results.json`` (``from_results``)."""
    if path is None:
        return DEFAULT_MODEL
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelFileError(f"{path}: {exc.strerror or exc}") from None
    try:
        obj = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ModelFileError(f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: "
                             f"{str(exc).splitlines()[0]}") from None
    if isinstance(obj, Mapping) and "population" in obj and "pipeline_version" in obj:
        return from_results(obj, source=str(path))
    if not isinstance(obj, Mapping):
        raise ModelFileError(f"{path}: must be a mapping of model parameters (docs/bots.md) or a results.json")
    try:
        return bot_models.Population.from_config({**DEFAULT_MODEL.to_dict(), **obj})
    except bot_models.ModelError as exc:
        raise ModelFileError(f"{path}: {exc}") from None


def _ttft_s(condition: str) -> float | None:
    for part in str(condition).split(","):
        name, _, value = part.strip().partition("=")
        if name in ("ttft", "ttft_ms"):
            try:
                return float(value) / 1000.0
            except ValueError:
                return None
    return None


def from_results(results: Mapping[str, Any], *, source: str = "results.json") -> bot_models.Population:
    """A population from a pilot's analysis: the first acceptability block's population rows give the median
    threshold per condition (``population_mu``), the spread (``population_sigma``, converted to log10 units) and
    the lapse; with conditions at two or more TTFTs (``ttft=…`` in the label), a straight line of log10 median over
    TTFT gives the threshold at zero TTFT and the shift per second. Other parameters keep their defaults."""
    blocks = results.get("population")
    if not isinstance(blocks, list) or not blocks:
        raise ModelFileError(f"{source}: population: no acceptability block was analysed")
    b = next((i for i, blk in enumerate(blocks) if isinstance(blk, Mapping) and blk.get("rows")), None)
    if b is None:
        raise ModelFileError(f"{source}: population[0].rows: no condition was fitted")
    block = blocks[b]
    rows = block["rows"]
    mus, sds, lapses, ttfts = [], [], [], []
    for i, row in enumerate(rows):
        where = f"{source}: population[{b}].rows[{i}]"
        mu, sigma = row.get("population_mu"), row.get("population_sigma")
        for name, value in (("population_mu", mu), ("population_sigma", sigma)):
            if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
                raise ModelFileError(f"{where}.{name}: must be a positive number, got {value!r}")
        scale = row.get("population_sigma_scale") or ("ln" if block.get("log_axis") else "level")
        mus.append(math.log10(mu))
        sds.append(sigma / math.log(10) if scale == "ln" else sigma / (mu * math.log(10)))
        lapse = row.get("lapse", 0.02)
        if not isinstance(lapse, int | float) or isinstance(lapse, bool) or not 0 <= lapse < 0.5:
            raise ModelFileError(f"{where}.lapse: must be a number in [0, 0.5), got {lapse!r}")
        lapses.append(float(lapse))
        ttfts.append(_ttft_s(str(row.get("condition", ""))))
    known = [(t, m) for t, m in zip(ttfts, mus, strict=True) if t is not None]
    if len({t for t, _ in known}) >= 2:
        slope, intercept = np.polyfit([t for t, _ in known], [m for _, m in known], 1)
        shift, base = max(float(slope), 0.0), float(intercept) if slope >= 0 else float(np.mean(mus))
    else:
        shift, base = 0.0, float(np.mean(mus))
    try:
        return replace(DEFAULT_MODEL, threshold=10 ** base, threshold_sd=float(np.median(sds)), ttft_shift=shift,
                       lapse=float(np.median(lapses)))
    except (bot_models.ModelError, ValueError) as exc:
        raise ModelFileError(f"{source}: {exc}") from None


# --- one simulated study ---------------------------------------------------------------------------------------


def yes_no_only(trials):
    """The acceptability trials (the headline's data): the other blocks' stages would only cost time."""
    return trials.loc[trials["trial_type"].astype(str).str.lower().isin(YES_NO)]


def one_run(spec: Mapping[str, Any], population: simulate.PopulationLike, n: int, seed: int) -> dict[str, Any]:
    """Simulate and analyse one study of ``n`` participants: its headline rows and the seconds it took."""
    import warnings

    warnings.simplefilter("ignore")
    t = time.perf_counter()
    trials, participants = simulate.study_frame(spec, population, n, seed, streams=simulate.streams_for(spec))
    results = pipeline.headline_run(yes_no_only(trials), participants, spec=spec, options=OPTIONS)
    return {"n": n, "seed": seed, "seconds": time.perf_counter() - t, "rows": headline.numbers(results)}


def _in_daemon() -> bool:
    return bool(multiprocessing.current_process().daemon)


def _jobs(participants: Sequence[int], runs: int, seed: int) -> list[tuple[int, int]]:
    return [(n, sub_seed(seed, "plan", n, i)) for i in range(runs) for n in participants]


# --- the plan -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """The planner's table (``to_dict`` is its JSON)."""

    study: str
    quantile: float
    runs: int
    participants: list[int]
    model: dict[str, Any]
    conditions: list[dict[str, Any]]  # per n and condition: truth, median width, ± half width, coverage
    pairs: list[dict[str, Any]]  # per n and pair: true difference, power
    seconds_per_study: float
    wall_s: float
    processes: int

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def plan(spec: Mapping[str, Any], population: simulate.PopulationLike = DEFAULT_MODEL, *,
         participants: Sequence[int] = DEFAULT_PARTICIPANTS, runs: int = DEFAULT_RUNS, seed: int = 0,
         processes: int | None = None, progress: Progress | None = None) -> Plan:
    """Simulate ``runs`` studies per participant count and summarise the headline intervals."""
    if runs < 1:
        raise ValueError("runs: must be at least 1")
    if not participants or any(int(n) < 2 for n in participants):
        raise ValueError("participants: each count must be at least 2")
    participants = sorted({int(n) for n in participants})
    quantile = OPTIONS.quantile
    truths = simulate.truth(spec, population, quantile=quantile, streams=simulate.streams_for(spec))
    if not truths:
        raise ValueError("the study has no acceptability block over a rate: there is no headline to plan for")
    jobs = _jobs(participants, runs, seed)
    processes = 1 if _in_daemon() else max(1, processes or os.cpu_count() or 1)
    t0 = time.perf_counter()
    done: list[dict[str, Any]] = []
    if progress:
        progress(0, len(jobs))
    if processes == 1:
        for k, (n, s) in enumerate(jobs, 1):
            done.append(one_run(spec, population, n, s))
            if progress:
                progress(k, len(jobs))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=processes, mp_context=ctx) as pool:
            futures = [pool.submit(one_run, dict(spec), population, n, s) for n, s in jobs]
            for k, future in enumerate(as_completed(futures), 1):
                done.append(future.result())
                if progress:
                    progress(k, len(jobs))
    return summarise(spec, population, truths, done, participants, runs, quantile,
                     wall=time.perf_counter() - t0, processes=processes)


def summarise(spec, population, truths, done, participants, runs, quantile, *, wall: float,
              processes: int) -> Plan:
    conditions, pairs = [], []
    for n in participants:
        studies = [d for d in done if d["n"] == n]
        found = {t.condition: [] for t in truths}
        for d in studies:
            for r in d["rows"]:
                if r["condition"] in found:
                    found[r["condition"]].append(r)
        for t in truths:
            got = [r for r in found[t.condition] if r["q_low"] is not None and r["q_high"] is not None
                   and math.isfinite(r["q_low"]) and math.isfinite(r["q_high"])]
            widths = [r["q_high"] - r["q_low"] for r in got]
            conditions.append({
                "participants": n, "block": t.block, "condition": t.condition, "unit": t.unit,
                "true_q": t.quantile_level, "median_width": float(np.median(widths)) if widths else None,
                "median_width_ci_95": median_ci(widths),
                "plus_minus": float(np.median(widths)) / 2 if widths else None,
                "coverage": (sum(r["q_low"] <= t.quantile_level <= r["q_high"] for r in got) / len(got)
                             if got else None),
                "fitted": len(got), "runs": len(studies),
            })
        for i, a in enumerate(truths):
            for b in truths[i + 1:]:
                if a.block != b.block:
                    continue
                apart = 0
                for d in studies:
                    ra = next((r for r in d["rows"] if r["condition"] == a.condition), None)
                    rb = next((r for r in d["rows"] if r["condition"] == b.condition), None)
                    if ra and rb and None not in (ra["q_low"], ra["q_high"], rb["q_low"], rb["q_high"]):
                        apart += ra["q_high"] < rb["q_low"] or rb["q_high"] < ra["q_low"]
                pairs.append({"participants": n, "block": a.block, "a": a.condition, "b": b.condition,
                              "unit": a.unit, "true_difference": b.quantile_level - a.quantile_level,
                              "power": apart / len(studies) if studies else None,
                              "power_ci_95": wilson(apart, len(studies)), "runs": len(studies)})
    model = population.to_dict() if isinstance(population, bot_models.Population) else {"mixture": True}
    seconds = float(np.median([d["seconds"] for d in done])) if done else math.nan
    return Plan(study=str(spec.get("id", "")), quantile=quantile, runs=runs, participants=list(participants),
                model=model, conditions=conditions, pairs=pairs, seconds_per_study=seconds, wall_s=wall,
                processes=processes)


def median_ci(values: Sequence[float]) -> list[float] | None:
    """A distribution-free 95 % interval of the median of the runs (order statistics): how precisely the runs
    pin down the expected width (``--quick`` runs fewer, so this is wider)."""
    if len(values) < 2:
        return None
    from scipy import stats

    v = np.sort(np.asarray(values, float))
    lo, hi = stats.binom.ppf([0.025, 0.975], len(v), 0.5)
    return [float(v[max(int(lo) - 1, 0)]), float(v[min(int(hi), len(v) - 1)])]


def wilson(k: int, n: int, z: float = 1.959963984540054) -> list[float] | None:
    """The Wilson 95 % interval of a share k/n: the precision of a power from n runs."""
    if n == 0:
        return None
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [max(0.0, centre - half), min(1.0, centre + half)]


def _power_half(runs: int) -> float:
    """Half the Wilson 95 % interval of a power of 50 % from ``runs`` runs, in percentage points."""
    lo, hi = wilson(runs // 2, runs) or [0.0, 1.0]
    return 100 * (hi - lo) / 2


def sentences(result: Plan) -> list[str]:
    """The table as a researcher reads it: "with 40 participants the 75 % point at ttft=1500 is known to ±1.8
    tokens/s"."""
    pct = f"{100 * result.quantile:g} %"
    out = []
    for c in result.conditions:
        if c["plus_minus"] is None:
            out.append(f"with {c['participants']} participants the {pct} point at {c['condition']} could not be "
                       f"fitted in any run")
            continue
        out.append(f"with {c['participants']} participants the {pct} point at {c['condition']} is known to "
                   f"±{c['plus_minus']:.3g} {c['unit']} (true {c['true_q']:.3g})")
    return out


def table(result: Plan) -> str:
    """The plain-text table ``plan_study`` prints."""
    pct = f"{100 * result.quantile:g} %"
    lines = [f"{pct} point of the population per condition: expected 95 % interval (median over {result.runs} "
             f"simulated studies per row; 'width 95 % CI': how precisely the runs pin that median down)"]
    head = (f"{'participants':>12}  {'condition':24} {'true':>8} {'± half':>8} {'width':>8} {'width 95 % CI':>15} "
            f"{'coverage':>8} {'fitted':>7}")
    lines += [head, "-" * len(head)]
    for c in result.conditions:
        def f(v, spec=".3g"):
            return "n/a" if v is None else format(v, spec)
        cov = "n/a" if c["coverage"] is None else f"{100 * c['coverage']:.0f} %"
        ci = c.get("median_width_ci_95")
        ci_text = "n/a" if not ci else f"{ci[0]:.3g}-{ci[1]:.3g}"
        lines.append(f"{c['participants']:>12}  {c['condition'][:24]:24} {f(c['true_q']):>8} {f(c['plus_minus']):>8} "
                     f"{f(c['median_width']):>8} {ci_text:>15} {cov:>8} {c['fitted']:>3}/{c['runs']:<3}")
    if result.pairs:
        lines += ["", "power: share of simulated studies whose two 95 % intervals do not overlap (told apart)"]
        head = f"{'participants':>12}  {'conditions':44} {'true difference':>16} {'power':>6} {'95 % CI':>11}"
        lines += [head, "-" * len(head)]
        for p in result.pairs:
            pair = f"{p['a']} vs {p['b']}"[:44]
            power = "n/a" if p["power"] is None else f"{100 * p['power']:.0f} %"
            ci = p.get("power_ci_95")
            ci_text = "n/a" if not ci else f"{100 * ci[0]:.0f}-{100 * ci[1]:.0f} %"
            lines.append(f"{p['participants']:>12}  {pair:44} {p['true_difference']:>+12.3g} {p['unit']:<3} "
                         f"{power:>6} {ci_text:>11}")
    lines += ["", *sentences(result), "",
              f"{result.seconds_per_study:.2f} s per simulated study (median), {result.wall_s:.0f} s wall on "
              f"{result.processes} process(es)"]
    if result.runs < DEFAULT_RUNS:
        lines.append(f"{result.runs} runs per participant count (the default is {DEFAULT_RUNS}): a rough plan; each "
                     f"median width is known only to its 'width 95 % CI' and each power to its '95 % CI' above "
                     f"(at {result.runs} runs a power near 50 % to about ±{_power_half(result.runs):.0f} points)")
    return "\n".join(lines)
