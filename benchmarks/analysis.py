"""Validation of the psychometric fits: coverage, bias, CI length, RMSE and time, side by side with psignifit.

    python benchmarks/analysis.py                                   # 1,000 data sets per design (long)
    python benchmarks/analysis.py --datasets 50 --psignifit-datasets 5    # quick check, about a minute
    python benchmarks/analysis.py --design population --population-runs 200   # population rows only

Each design simulates data sets from a known observer (``analysis.stats.psychometric.simulate``: each level's trials
in ``BLOCKS`` rows, guess and lapse rates, beta-binomial overdispersion drawn per row) and fits them with
``analysis.stats.psychometric.fit``, once per threshold interval method (``--intervals``: the hybrid interval, the
default; the posterior percentile interval, psignifit's; the profile-likelihood interval).
Reported per design:

- coverage: share of 95 % threshold intervals that hold the true threshold (target: the binomial band of
  a 95 % rate for that many data sets, 93.6-96.4 % for 1,000);
- bias/width: mean (estimate - truth) over the true width (target within ±2 %);
- CI length and RMSE of the threshold, in level units;
- time per fit (ours, and psignifit 4 on the first ``--psignifit-datasets`` data sets of the same run).

``--by-eta`` adds, after the summary, each row's misses on each side of the truth and its coverage per fitted η
node: the breakdown that shows where a design's coverage comes from (docs/validation/coverage.md, "Eighth round").

After the summary: psignifit's time, median CI length and RMSE over ours on those same data sets (the fit-time
ratio), and a "targets" block that says, per interval method, how many designs meet each target and names the
ones that do not.

``--proportion P`` checks instead the interval of the level where ψ reaches P (``FitResult.threshold_at(P)``, the
75 % point a researcher reads off with P = 0.75) against that level of the true observer. Away from the fitted
proportion that reading is shifted by the guess and lapse rates, so it is the interval the pipeline reports
that this checks; psignifit is left out there (its intervals at other proportions are bounds, not intervals).

Then the population rows (``POPULATION``; ``--population-runs`` data sets each, 0 leaves them out; ``--design
population`` runs only them): participants' thresholds drawn from Normal(40, 8), each participant answering 5
yes/no trials at each of the 7 levels with width 20, guess and lapse 0.02, fitted with
``analysis.stats.population.fit_population`` (guess and lapse fixed at the truth).
The rows report the coverage of ``quantile_ci_95`` for the population's 75 % point (true 45.4), bias over the
width, median CI length, RMSE and time per fit; the method column names the interval method(s) the fits used.

psignifit (GPLv3) is a dev-only reference: it is imported only here and in tests, if installed.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats.population import fit_population  # noqa: E402
from analysis.stats.psychometric import FitOptions, fit, simulate  # noqa: E402
from analysis.stats.sigmoids import Sigmoid  # noqa: E402

DEFAULT_INTERVAL = FitOptions().interval

# Each level's trials come in this many rows (blocks of a session, or participants of a pooled fit), as in real
# PaceLab data; η is drawn per row. For binomial data the rows change nothing (the likelihood is the pooled
# one); for overdispersed data they are what lets the fit estimate η (docs/analysis.md, "Validation").
BLOCKS = 4


@dataclass(frozen=True)
class Design:
    name: str
    levels: tuple
    n: int
    m: float
    w: float
    truth: str = "logistic"
    fitted: str = "logistic"
    experiment: str = "yes/no"
    guess: float = 0.02
    lapse: float = 0.02
    eta: float = 0.0
    blocks: int = BLOCKS


LEVELS = tuple(np.linspace(10, 70, 7))  # tokens/s
SKEWED = tuple(np.linspace(30, 90, 7))
LOG_LEVELS = tuple(np.geomspace(5, 80, 7))

DESIGNS = [
    Design("yes/no 20/level", LEVELS, 20, 40.0, 40.0),
    Design("yes/no 50/level", LEVELS, 50, 40.0, 40.0),
    Design("yes/no lapse .06", LEVELS, 30, 40.0, 40.0, lapse=0.06),
    Design("yes/no overdispersed", LEVELS, 30, 40.0, 40.0, eta=0.15),
    Design("yes/no overdispersed .3", LEVELS, 30, 40.0, 40.0, eta=0.3),
    Design("yes/no skewed levels", SKEWED, 30, 40.0, 40.0),
    Design("yes/no wrong sigmoid", LEVELS, 30, 40.0, 40.0, truth="norm", fitted="logistic"),
    Design("2AFC 30/level", LEVELS, 30, 40.0, 40.0, experiment="2AFC", guess=0.5, lapse=0.01),
    Design("2AFC weibull log", LOG_LEVELS, 30, math.log(20.0), 2.0, truth="weibull", fitted="weibull",
           experiment="2AFC", guess=0.5, lapse=0.01),
]


@dataclass(frozen=True)
class PopulationDesign:
    name: str
    people: int
    trials: int = 5  # per participant and level
    mu: float = 40.0  # participants' thresholds ~ Normal(mu, sd), level units
    sd: float = 8.0
    w: float = 20.0
    guess: float = 0.02
    lapse: float = 0.02
    quantile: float = 0.75


POPULATION = [
    PopulationDesign("population 12 people", 12),
    PopulationDesign("population 30 people", 30),
]


def _truth_level(d: Design, proportion: float | None = None) -> float:
    """The true threshold in level units (the fits report level units), or the level where ψ reaches
    ``proportion``."""
    if proportion is None:
        z = d.m
    else:
        z = float(Sigmoid(d.truth).inverse((proportion - d.guess) / (1 - d.guess - d.lapse), d.m, d.w))
    return math.exp(z) if d.truth == "weibull" else z


def _width_levels(d: Design) -> float:
    """The true 5-95 % rise in level units, for bias relative to the width."""
    if d.truth != "weibull":
        return d.w
    s = Sigmoid("gumbel")
    return float(math.exp(s.inverse(0.95, d.m, d.w)) - math.exp(s.inverse(0.05, d.m, d.w)))


def _psignifit_fit(data, d: Design):
    import psignifit as ps

    x = np.log(data.levels) if d.fitted == "weibull" else data.levels
    arr = np.column_stack([x, data.n_positive, data.n_total])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ps.psignifit(arr, sigmoid=d.fitted, experiment_type=d.experiment, verbose=False)
    est = res.parameter_estimate["threshold"]
    lo, hi = res.confidence_intervals["threshold"]["0.95"]
    if d.fitted == "weibull":
        est, lo, hi = math.exp(est), math.exp(lo), math.exp(hi)
    return est, lo, hi


def _stats(est, lo, hi, truth, width, times, eta=None):
    """A row's numbers; with ``eta`` (the fitted η of each data set) also the misses on each side and the coverage
    per fitted η node, which is where the intervals' errors sit (docs/validation/coverage.md, "Eighth round")."""
    est, lo, hi = map(np.asarray, (est, lo, hi))
    covered = (lo <= truth) & (truth <= hi)
    out = {
        "n": len(est),
        "coverage": float(np.mean(covered)),
        "bias_w": float(np.mean(est - truth) / width),
        "ci_len": float(np.median(hi - lo)),
        "rmse": float(np.sqrt(np.mean((est - truth) ** 2))),
        "time": float(np.mean(times)),
        "miss_low": int(np.sum(truth < lo)),  # the interval lies above the truth
        "miss_high": int(np.sum(truth > hi)),
    }
    if eta is not None:
        eta = np.round(np.asarray(eta, dtype=float), 6)
        out["by_eta"] = {float(e): (int(np.sum(eta == e)), float(np.mean(covered[eta == e]))) for e in np.unique(eta)}
    return out


def _run_design(di: int, d: Design, datasets: int, psignifit_datasets: int, seed: int,
                intervals: tuple[str, ...], have_ps: bool,
                proportion: float | None = None) -> list[tuple[str, str, dict]]:
    """One design's rows: every interval method on the same simulated data sets, then psignifit on the first K
    (not with ``proportion``: then the rows are about ``threshold_at(proportion)``)."""
    rng = np.random.default_rng([seed, di])
    truth, width = _truth_level(d, proportion), _width_levels(d)
    sims = [simulate(rng, np.asarray(d.levels), d.n, m=d.m, w=d.w, sigmoid=d.truth, guess=d.guess,
                     lapse=d.lapse, eta=d.eta, blocks_per_level=d.blocks) for _ in range(datasets)]
    rows = []
    ours = None  # the default method's results (or the first method's), for the psignifit comparison
    for interval in intervals:
        opts = FitOptions(sigmoid=d.fitted, experiment=d.experiment, deviance_samples=0, interval=interval)
        res = {"est": [], "lo": [], "hi": [], "t": [], "eta": []}
        for data in sims:
            t = time.perf_counter()
            r = fit(data, opts)
            est, (lo, hi) = (r.threshold, r.threshold_ci_95) if proportion is None else r.threshold_at(proportion)
            res["t"].append(time.perf_counter() - t)
            res["est"].append(est)
            res["lo"].append(lo)
            res["hi"].append(hi)
            res["eta"].append(r.eta)
        if interval == DEFAULT_INTERVAL or ours is None:
            ours = res
        label = "pacelab" if interval == DEFAULT_INTERVAL else f"pacelab {interval}"
        rows.append((d.name, label, _stats(res["est"], res["lo"], res["hi"], truth, width, res["t"], res["eta"])))
    k = min(psignifit_datasets, datasets) if have_ps and proportion is None else 0
    if k:
        theirs = {"est": [], "lo": [], "hi": [], "t": []}
        for data in sims[:k]:
            t = time.perf_counter()
            est, lo, hi = _psignifit_fit(data, d)
            theirs["t"].append(time.perf_counter() - t)
            theirs["est"].append(est)
            theirs["lo"].append(lo)
            theirs["hi"].append(hi)
        sub = {key: v[:k] for key, v in ours.items()}  # the default interval method on psignifit's data sets
        rows.append((d.name, f"pacelab (same {k})", _stats(sub["est"], sub["lo"], sub["hi"], truth, width,
                                                           sub["t"])))
        rows.append((d.name, f"psignifit ({k})", _stats(theirs["est"], theirs["lo"], theirs["hi"], truth, width,
                                                        theirs["t"])))
    return rows


def _run_population(pi: int, d: PopulationDesign, runs: int, seed: int) -> list[tuple[str, str, dict]]:
    """One population design's row: coverage of ``fit_population``'s interval for the population quantile."""
    from scipy import special

    rng = np.random.default_rng([seed, 1000 + pi])  # apart from the psychometric designs' streams
    truth = d.mu + float(special.ndtri(d.quantile)) * d.sd
    opts = FitOptions(guess=d.guess, lapse=d.lapse, deviance_samples=0)
    res = {"est": [], "lo": [], "hi": [], "t": []}
    methods: dict[str, int] = {}
    failed = 0
    for _ in range(runs):
        level, k, n, who = [], [], [], []
        for p in range(d.people):
            s = simulate(rng, np.asarray(LEVELS), d.trials, m=rng.normal(d.mu, d.sd), w=d.w, guess=d.guess,
                         lapse=d.lapse)
            level += list(s.levels)
            k += list(s.n_positive)
            n += list(s.n_total)
            who += [p] * len(s.levels)
        frame = {"participant": who, "level": level, "n_positive": k, "n_total": n}
        t = time.perf_counter()
        try:
            r = fit_population(pd.DataFrame(frame), opts, quantile=d.quantile, individual=False,
                               sigma_interval=False)
        except ValueError:  # censored: every answer one way (counted as a miss)
            failed += 1
            res["t"].append(time.perf_counter() - t)
            continue
        res["t"].append(time.perf_counter() - t)
        res["est"].append(r.quantile_level)
        res["lo"].append(r.quantile_ci_95[0])
        res["hi"].append(r.quantile_ci_95[1])
        methods[r.interval_method] = methods.get(r.interval_method, 0) + 1
    stats = _stats(res["est"], res["lo"], res["hi"], truth, d.w, res["t"])
    stats["coverage"] *= len(res["est"]) / runs if runs else 1.0
    stats["n"] = runs
    label = " + ".join(f"{m}" if c == len(res["est"]) else f"{m} {c}" for m, c in
                       sorted(methods.items(), key=lambda kv: -kv[1]))
    if failed:
        label += f" ({failed} failed)"
    return [(d.name, f"pacelab {label}", stats)]


def run_population(runs: int, seed: int, only: str | None, jobs: int = 1) -> list[tuple[str, str, dict]]:
    """Every selected population design (``POPULATION``), ``jobs`` at a time, rows printed in design order."""
    args = [(pi, d, runs, seed) for pi, d in enumerate(POPULATION) if not only or only in d.name]
    rows = []
    if jobs > 1 and len(args) > 1:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_run_population, *zip(*args)))
    else:
        results = (_run_population(*a) for a in args)
    for design_rows in results:
        print("\n".join(_format_row(*r) for r in design_rows), flush=True)
        rows.extend(design_rows)
    return rows


def run(datasets: int, psignifit_datasets: int, seed: int, only: str | None,
        intervals: tuple[str, ...] = (DEFAULT_INTERVAL,), jobs: int = 1,
        blocks: int | None = None, proportion: float | None = None) -> list[tuple[str, str, dict]]:
    """Every selected design, ``jobs`` designs at a time in separate processes (rows printed in design order).

    ``blocks`` replaces every design's rows per level (a sensitivity check: how the intervals behave when η is
    seen through more, smaller rows, as in a pooled fit over participants); the data sets differ from the
    default run's, the seed being the same. ``proportion``: the rows check ``threshold_at(proportion)``."""
    try:
        import psignifit  # noqa: F401

        have_ps = True
    except ImportError:
        have_ps = False
        print("note: psignifit is not installed (pip install psignifit); its columns are left out")
    chosen = [(di, d if blocks is None else replace(d, blocks=blocks))
              for di, d in enumerate(DESIGNS) if not only or only in d.name]
    if proportion is not None:  # ψ runs from the guess rate to 1 − lapse: outside, no level reaches the proportion
        for _, d in chosen:
            if not d.guess < proportion < 1 - d.lapse:
                print(f"note: {d.name} left out: its ψ never reaches {100 * proportion:g} % "
                      f"(it runs from {100 * d.guess:g} to {100 * (1 - d.lapse):g} %)")
        chosen = [(di, d) for di, d in chosen if d.guess < proportion < 1 - d.lapse]
    args = [(di, d, datasets, psignifit_datasets, seed, intervals, have_ps, proportion) for di, d in chosen]
    rows = []
    if jobs > 1:
        # one BLAS thread per process (they would otherwise contend for the same cores and inflate s/fit); the
        # workers are spawned so that they read it when they load numpy
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = pool.map(_run_design, *zip(*args))
            for design_rows in results:
                print("\n".join(_format_row(*r) for r in design_rows), flush=True)
                rows.extend(design_rows)
        return rows
    for a in args:
        design_rows = _run_design(*a)
        print("\n".join(_format_row(*r) for r in design_rows), flush=True)
        rows.extend(design_rows)
    return rows


def _band(n: int) -> tuple[float, float]:
    half = 1.96 * math.sqrt(0.95 * 0.05 / n)
    return max(0.0, 0.95 - half), min(1.0, 0.95 + half)


HEADER = f"{'design':24} {'method':22} {'n':>5} {'coverage':>9} {'bias/w':>8} {'CI len':>8} {'RMSE':>7} {'s/fit':>7}"


def _format_row(design: str, method: str, s: dict) -> str:
    return (f"{design:24} {method:22} {s['n']:5d} {100 * s['coverage']:8.1f}% {100 * s['bias_w']:7.2f}% "
            f"{s['ci_len']:8.2f} {s['rmse']:7.2f} {s['time']:7.3f}")


def _paired(rows: list[tuple[str, str, dict]]) -> list[tuple[str, dict, dict]]:
    """(design, ours, psignifit's) for every design psignifit also fitted: both on the same first K data sets."""
    ours = {d: s for d, m, s in rows if m.startswith("pacelab (same ")}
    return [(d, ours[d], s) for d, m, s in rows if m.startswith("psignifit (") and d in ours and ours[d]["time"] > 0]


def _against_psignifit(rows: list[tuple[str, str, dict]]) -> list[str]:
    """Per design, psignifit's time, median CI length and RMSE over ours on the same data sets (the first K):
    the "fit-time ratio" and the "no worse than psignifit" comparisons, read off rather than worked out by hand."""
    lines = [f"{d:24} {s['n']:5d} {s['time'] / o['time']:9.1f}x {s['ci_len'] / o['ci_len']:11.2f} "
             f"{s['rmse'] / o['rmse']:9.2f}" for d, o, s in _paired(rows)]
    if not lines:
        return []
    return ["", "against psignifit on the same data sets (psignifit's over pacelab's; above 1: pacelab is faster, "
            "shorter, closer)", f"{'design':24} {'K':>5} {'time':>10} {'CI len':>11} {'RMSE':>9}", *lines]


def _by_eta(rows: list[tuple[str, str, dict]]) -> list[str]:
    """Per design and method: the misses on each side, then n and coverage of the data sets grouped by the fit's η
    (``FitResult.eta``, the grid node of the MAP fit). A design's coverage is an average over these groups,
    and a fit at η = 0 may need a longer interval (the data are overdispersed, the rows merely look binomial) or
    not (they are binomial): this shows how the average is made up."""
    body = [f"{d:24} {m:22} {s['miss_low']:5d} {s['miss_high']:5d}  "
            + "  ".join(f"{e:g}: {n} {100 * c:.1f}%" for e, (n, c) in sorted(s["by_eta"].items()))
            for d, m, s in rows if "by_eta" in s]
    if not body:
        return []
    return ["", "misses and coverage by fitted η (n sets, coverage)",
            f"{'design':24} {'method':22} {'low':>5} {'high':>5}  by fitted η", *body]


def _targets(rows: list[tuple[str, str, dict]], band: tuple[float, float]) -> list[str]:
    """Which designs meet each target of the issue, per interval method. Coverage is judged as printed (to 0.1 %)
    against the band as printed, the form in which the target is stated ("93.6-96.4 %")."""
    lo, hi = round(100 * band[0], 1), round(100 * band[1], 1)
    methods = dict.fromkeys(m for d, m, _ in rows if m.startswith("pacelab") and "(same" not in m
                            and not d.startswith("population"))
    lines = ["", "targets"]
    for method in methods:
        mine = [(d, s) for d, m, s in rows if m == method and not d.startswith("population")]
        out = [f"{d} {100 * s['coverage']:.1f}%" for d, s in mine if not lo <= round(100 * s["coverage"], 1) <= hi]
        biased = [d for d, s in mine if abs(s["bias_w"]) > 0.02]
        lines.append(f"{method:22} coverage in {lo:.1f}-{hi:.1f}%: {len(mine) - len(out)} of {len(mine)}"
                     + (f" (outside: {', '.join(out)})" if out else ""))
        lines.append(f"{method:22} |bias/w| <= 2%: {len(mine) - len(biased)} of {len(mine)}"
                     + (f" (outside: {', '.join(biased)})" if biased else ""))
        for kind, limit in (("yes/no", 0.5), ("2AFC", 0.1)):
            times = [s["time"] for d, s in mine if d.startswith(kind)]
            if times:
                lines.append(f"{method:22} s/fit {kind}: at most {max(times):.3f} (target {limit})")
    ratios = {}
    for d, o, s in _paired(rows):
        ratios.setdefault("2AFC" if d.startswith("2AFC") else "yes/no", []).append(s["time"] / o["time"])
    for kind, r in ratios.items():
        lines.append(f"{'psignifit':22} time per {kind} fit over pacelab's: {min(r):.0f}-{max(r):.0f}x "
                     f"(median {float(np.median(r)):.0f}x)")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=1000, help="simulated data sets per design")
    ap.add_argument("--psignifit-datasets", type=int, default=20, help="how many of them psignifit also fits")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--design", default=None, help="run only designs whose name contains this")
    ap.add_argument("--jobs", type=int, default=1, help="designs run at once, each in its own process")
    ap.add_argument("--intervals", default="posterior,profile,hybrid",
                    help="threshold interval methods to report (FitOptions.interval), comma-separated")
    ap.add_argument("--blocks", type=int, default=None,
                    help=f"rows per level for every design (default {BLOCKS}); η is drawn per row")
    ap.add_argument("--proportion", type=float, default=None,
                    help="check the interval of the level where ψ reaches this proportion (threshold_at), e.g. 0.75, "
                         "instead of the fitted threshold's; psignifit is left out")
    ap.add_argument("--population-runs", type=int, default=1000,
                    help="simulated studies per population design (the population quantile's interval); 0: none")
    ap.add_argument("--by-eta", action="store_true",
                    help="after the summary, the misses on each side and the coverage per fitted η node, per design")
    args = ap.parse_args(argv)
    fewest = min(d.n for d in DESIGNS)
    if args.blocks is not None and not 1 <= args.blocks <= fewest:
        ap.error(f"--blocks must lie between 1 and {fewest} (the fewest trials per level of any design)")
    if args.proportion is not None and not 0 < args.proportion < 1:
        ap.error("--proportion must lie strictly between 0 and 1")
    intervals = tuple(i.strip() for i in args.intervals.split(",") if i.strip())
    lo, hi = _band(args.datasets)
    print(f"coverage target {100 * lo:.1f}-{100 * hi:.1f}% (binomial band for {args.datasets} data sets), "
          "|bias/w| <= 2%, s/fit <= 0.5 (yes/no) and 0.1 (2AFC)")
    print(f"rows per level: {args.blocks or BLOCKS}{'' if args.blocks else ' (default)'}, seed {args.seed}")
    if args.proportion is not None:
        print(f"checked: the level where ψ reaches {100 * args.proportion:g} % (threshold_at), not the fitted "
              "threshold; psignifit left out (its intervals at other proportions are bounds)")
    print(HEADER)
    rows = run(args.datasets, args.psignifit_datasets, args.seed, args.design, intervals, args.jobs, args.blocks,
               args.proportion)
    if args.population_runs > 0 and any(not args.design or args.design in d.name for d in POPULATION):
        lo, hi = _band(args.population_runs)
        print(f"population quantile: coverage target {100 * lo:.1f}-{100 * hi:.1f}% "
              f"(binomial band for {args.population_runs} studies); bias/w over the curve's width")
        rows += run_population(args.population_runs, args.seed, args.design, args.jobs)
    print()
    print("summary")
    print(HEADER)
    for r in rows:
        print(_format_row(*r))
    extra = _by_eta(rows) if args.by_eta else []
    for line in extra + _against_psignifit(rows) + _targets(rows, _band(args.datasets)):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
