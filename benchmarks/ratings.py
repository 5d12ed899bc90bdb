"""Coverage of the subject model's quality intervals on simulated raters, straight-liners included.

    python benchmarks/ratings.py                  # 500 studies per design (several minutes on 2 cores)
    python benchmarks/ratings.py --studies 40     # quick check
    python benchmarks/ratings.py --jobs 2         # processes (default 1: the machine is shared)

Each simulated study has raters who rate every stimulus (``repeats`` times) on a 1–7 scale:
``rating = ψ_stimulus + Δ_rater + ν_rater·ε`` with ψ uniform on [2.5, 5.5], Δ ~ Normal(0, 0.4),
ν log-normal around 0.7 (SD of log 0.3), ε standard normal; "likert" rounds to the nearest point and clips to
1–7. Straight-liners answer one point (drawn uniformly from 3–6 per rater) throughout, whatever they see: the
case of issue 40 (one constant rater took all the weight: 5.1582 ± 0.0005 on a 1–7 scale). Truth: ψ, the score
of a rater of average bias (the population's, not the sampled raters').

``analysis.stats.ratings.subject_model`` fits each study; a row reports the share of 95 % intervals holding the truth,
for the first stimulus of each study (independent across studies: the binomial band applies) and for all of
them (stimuli share their raters, so that share varies more than the band), the median interval width, how
often straight-liners were left out, and seconds per fit. Target: 93–97 % widened by the run's binomial noise
(±1.96·√(0.95·0.05/studies)).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # many small fits: threads only fight over the cores
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats.ratings import subject_model  # noqa: E402

TARGET = (0.93, 0.97)


@dataclass(frozen=True)
class Design:
    name: str
    raters: int
    stimuli: int
    repeats: int = 1
    straight: int = 0
    likert: bool = False


DESIGNS = (
    Design("20 raters x 8, none flat", 20, 8),
    Design("20 raters x 8, 2 flat", 20, 8, straight=2),
    Design("12 raters x 10 x2, 1 flat", 12, 10, repeats=2, straight=1),
    Design("40 raters x 20, 4 flat", 40, 20, straight=4),
    Design("24 raters x 12 Likert, 3 flat", 24, 12, straight=3, likert=True),
)


def simulate(design: Design, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    """One study's ratings (participant, stimulus, rating) and the true ψ per stimulus (``s00``, ``s01``, ...)."""
    psi = rng.uniform(2.5, 5.5, design.stimuli)
    bias = rng.normal(0.0, 0.4, design.raters)
    nu = 0.7 * np.exp(rng.normal(0.0, 0.3, design.raters))
    flat = rng.integers(3, 7, design.raters)
    rows = []
    for r in range(design.raters):
        for s in range(design.stimuli):
            for _ in range(design.repeats):
                if r < design.straight:
                    value = float(flat[r])
                else:
                    value = psi[s] + bias[r] + nu[r] * rng.standard_normal()
                    if design.likert:
                        value = float(np.clip(np.round(value), 1, 7))
                rows.append((f"r{r:03d}", f"s{s:02d}", value))
    return pd.DataFrame(rows, columns=["participant", "stimulus", "rating"]), psi


def one_study(design: Design, seed: int) -> dict:
    df, psi = simulate(design, np.random.default_rng([seed, design.raters, design.stimuli, design.straight]))
    t = time.perf_counter()
    model = subject_model(df)
    elapsed = time.perf_counter() - t
    st = model.stimuli.set_index("stimulus").loc[[f"s{s:02d}" for s in range(design.stimuli)]]
    hit = ((st["ci_low"] <= psi) & (psi <= st["ci_high"])).to_numpy()
    flat = {f"r{r:03d}" for r in range(design.straight)}
    return {"first": bool(hit[0]), "hits": int(hit.sum()), "n": len(hit),
            "width": float((st["ci_high"] - st["ci_low"]).median()), "excluded": set(model.excluded) == flat,
            "seconds": elapsed}


def band(studies: int) -> tuple[float, float]:
    half = 1.96 * math.sqrt(0.95 * 0.05 / studies)
    return max(0.0, TARGET[0] - half), min(1.0, TARGET[1] + half)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--studies", type=int, default=500, help="simulated studies per design (default 500)")
    ap.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--design", action="append", help="only designs whose name contains this (repeatable)")
    args = ap.parse_args(argv)
    if args.studies < 1 or args.jobs < 1:
        ap.error("--studies and --jobs must be at least 1")
    designs = [d for d in DESIGNS if not args.design or any(k in d.name for k in args.design)]
    if not designs:
        ap.error(f"--design: none of {', '.join(d.name for d in DESIGNS)} matches")
    low, high = band(args.studies)
    print(f"subject-model quality intervals: {args.studies} studies per design; "
          f"coverage target {TARGET[0]:.0%}-{TARGET[1]:.0%}, band {low:.1%}-{high:.1%} for this many studies")
    header = (f"{'design':32} {'studies':>7} {'cover 1st':>9} {'cover all':>9} {'median width':>12} "
              f"{'flat excluded':>13} {'s/fit':>7}  in band")
    print(header)
    print("-" * len(header))
    outside = []
    pool = ProcessPoolExecutor(args.jobs) if args.jobs > 1 else None
    try:
        for design in designs:
            seeds = [args.seed * 1_000_003 + i for i in range(args.studies)]
            if pool is not None:
                rows = list(pool.map(one_study, [design] * len(seeds), seeds, chunksize=8))
            else:
                rows = [one_study(design, s) for s in seeds]
            first = sum(r["first"] for r in rows) / len(rows)
            every = sum(r["hits"] for r in rows) / sum(r["n"] for r in rows)
            ok = low <= first <= high
            if not ok:
                outside.append(design.name)
            print(f"{design.name:32} {len(rows):7d} {first:9.1%} {every:9.1%} "
                  f"{float(np.median([r['width'] for r in rows])):12.3f} "
                  f"{sum(r['excluded'] for r in rows):6d}/{len(rows):<6d} "
                  f"{float(np.median([r['seconds'] for r in rows])):7.3f}  {'yes' if ok else 'NO'}", flush=True)
    finally:
        if pool is not None:
            pool.shutdown()
    print(f"designs outside the band: {', '.join(outside) if outside else 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
