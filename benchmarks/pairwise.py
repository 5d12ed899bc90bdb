"""Speed of pairwise scaling with observer-bootstrap CIs: 2,000 refits of a 10-condition design.

    python benchmarks/pairwise.py                       # 10 conditions, 20 observers, 2,000 refits
    python benchmarks/pairwise.py --conditions 6 --boot 200   # smoke test

The baseline is one fit of the same data from a cold start, measured in the same run (median of repeats);
the bootstrap is reported as total wall time and as a ratio to ``refits × baseline``. Target: 2,000
Thurstone refits (with the distance prior) of 10 conditions in under 30 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats.pairwise import SIGMA, Comparisons, bradley_terry_scale, scale, thurstone_scale  # noqa: E402

TARGET_S = 30.0


def design(conditions: int, observers: int, reps: int, seed: int = 0) -> Comparisons:
    """A full design: every observer compares every pair ``reps`` times; true scores 0..3 JOD."""
    rng = np.random.default_rng(seed)
    q = np.linspace(0.0, 3.0, conditions)
    counts = np.zeros((observers, conditions, conditions))
    for p in range(observers):
        for i in range(conditions):
            for j in range(i + 1, conditions):
                w = rng.binomial(reps, ndtr((q[i] - q[j]) / SIGMA))
                counts[p, i, j] += w
                counts[p, j, i] += reps - w
    return Comparisons(tuple(f"c{i}" for i in range(conditions)), tuple(f"p{i}" for i in range(observers)), counts)


def timed(fn, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conditions", type=int, default=10)
    ap.add_argument("--observers", type=int, default=20)
    ap.add_argument("--reps", type=int, default=2, help="comparisons per pair per observer")
    ap.add_argument("--boot", type=int, default=2000)
    args = ap.parse_args()
    data = design(args.conditions, args.observers, args.reps)
    thurstone_scale(data.total)  # warm imports and the prior's normalising-constant cache
    rows = []
    for method, single in (("thurstone", thurstone_scale), ("bradley_terry", bradley_terry_scale)):
        base = timed(lambda single=single: single(data.total))
        t = time.perf_counter()
        out = scale(data, method=method, n_boot=args.boot)
        total = time.perf_counter() - t
        rows.append((method, base, total, out.attrs["n_boot"], total / (args.boot * base)))
    print(f"{args.conditions} conditions, {args.observers} observers x {args.reps} per pair, {args.boot} refits")
    header = ("method", "one fit (ms)", "bootstrap (s)", "refits", "vs refits x fit", "target")
    print("{:<14} {:>12} {:>14} {:>7} {:>16} {:>8}".format(*header))
    for method, base, total, used, ratio in rows:
        ok = "ok" if total < TARGET_S else "SLOW"
        print(f"{method:<14} {base * 1e3:>12.2f} {total:>14.2f} {used:>7d} {ratio:>16.2f} {ok:>8}")


if __name__ == "__main__":
    main()
