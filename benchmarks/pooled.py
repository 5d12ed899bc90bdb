"""Coverage of a pooled threshold's interval when participants differ: the model's, and widened by the jackknife.

    python benchmarks/pooled.py                          # 200 data sets per design, about 20 minutes on 2 jobs
    python benchmarks/pooled.py --datasets 20 --jobs 2   # quick check

Each data set is a study's pooled yes/no fit: every participant draws a threshold from Normal(40, SD) (the bots'
model: people differ), answers ``trials`` times per level at seven levels with width 20, guess and lapse 0.02,
and the fit has one row per (participant, level), as the pipeline's. The truth is the population curve's 50 %
point, 40. Reported per design: coverage of the model's 95 % interval (rows taken as independent) and of the
interval the pipeline reports (widened to the participant jackknife, ``analysis.stats.clustered``), their median
lengths, and seconds per pooled fit with its jackknife.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats import clustered  # noqa: E402
from analysis.stats.psychometric import FitOptions, blocks, fit, simulate  # noqa: E402

LEVELS = tuple(np.linspace(10, 70, 7))
TRUTH = 40.0
OPTS = FitOptions(deviance_samples=0, lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2))  # the pipeline's bounds


@dataclass(frozen=True)
class Design:
    name: str
    people: int
    trials: int  # per participant and level
    sd: float  # of participants' thresholds, level units (the curve's 5-95 % width is 20)


DESIGNS = [
    Design("12 people, alike", 12, 5, 0.0),
    Design("12 people, SD 5", 12, 5, 5.0),
    Design("12 people, SD 10", 12, 5, 10.0),
    Design("30 people x 2, SD 10", 30, 2, 10.0),
]


def _run(di: int, d: Design, datasets: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, di])
    hits = {"model": 0, "reported": 0}
    lengths = {"model": [], "reported": []}
    times = []
    for _ in range(datasets):
        level, k, n, who = [], [], [], []
        for p in range(d.people):
            s = simulate(rng, np.asarray(LEVELS), d.trials, m=rng.normal(TRUTH, d.sd) if d.sd else TRUTH, w=20.0,
                         guess=0.02, lapse=0.02)
            level += list(s.levels)
            k += list(s.n_positive)
            n += list(s.n_total)
            who += [p] * len(s.levels)
        t = time.perf_counter()
        full = fit(blocks(level, k, n), OPTS)
        jk = clustered.jackknife(level, k, n, who, OPTS, full)
        times.append(time.perf_counter() - t)
        for key, (lo, hi) in (("model", full.threshold_ci_95),
                              ("reported", clustered.widest(full.threshold_ci_95, jk.threshold_ci if jk else None))):
            hits[key] += lo <= TRUTH <= hi
            lengths[key].append(hi - lo)
    return {"design": d.name, "n": datasets, **{f"cov_{k}": v / datasets for k, v in hits.items()},
            **{f"len_{k}": float(np.median(v)) for k, v in lengths.items()}, "time": float(np.mean(times))}


HEADER = (f"{'design':22} {'n':>5} {'model cov':>10} {'reported cov':>13} {'model len':>10} {'reported len':>13} "
          f"{'s/fit+jk':>9}")


def _row(r: dict) -> str:
    return (f"{r['design']:22} {r['n']:5d} {100 * r['cov_model']:9.1f}% {100 * r['cov_reported']:12.1f}% "
            f"{r['len_model']:10.2f} {r['len_reported']:13.2f} {r['time']:9.2f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=200, help="simulated studies per design")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--jobs", type=int, default=1, help="designs run at once, each in its own process")
    args = ap.parse_args(argv)
    if args.datasets < 1:
        ap.error("--datasets must be at least 1")
    half = 1.96 * math.sqrt(0.95 * 0.05 / args.datasets)
    lo, hi = max(0.95 - half, 0.0), min(0.95 + half, 1.0)
    print(f"target: reported coverage {100 * lo:.1f}-{100 * hi:.1f}% (binomial band for "
          f"{args.datasets} data sets); truth = the population curve's 50 % point")
    print(HEADER)
    work = [(di, d, args.datasets, args.seed) for di, d in enumerate(DESIGNS)]
    if args.jobs > 1:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        with ProcessPoolExecutor(args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
            for r in pool.map(_run, *zip(*work)):
                print(_row(r), flush=True)
    else:
        for w in work:
            print(_row(_run(*w)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
