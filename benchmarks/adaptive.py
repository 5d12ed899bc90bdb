"""Adaptive procedures against a simulated observer: threshold bias and spread, trials to a precision, QUEST+ speed.

    python benchmarks/adaptive.py               # 500 simulated runs per procedure (about a minute)
    python benchmarks/adaptive.py --runs 50     # quick mode, a few seconds

The observer is ``studyapp.design.adaptive.Observer`` (the bots' model): acceptability of a tokens/s rate, logistic on a
log axis with a known threshold, slope, guess and lapse. Each procedure runs ``--trials`` trials per run; its
estimate after every trial is compared with the observer's level at the probability that procedure targets
(1-up/N-down: 0.5^(1/N); weighted: its target; QUEST+: the threshold parameter, F = 1/2). Errors are in log10
units (0.06 ≈ 15 %, 0.1 ≈ 26 %). "Trials to RMSE ≤ x" is the first trial count from which the RMSE over all runs stays
at or below x. "QUEST+ (CI stop)" stops early when the 95 % credible interval of the threshold is narrower
than ``--ci-width``; its row reports the estimate at the stop and the mean number of trials used.

Speed: the time of QUEST+'s next-stimulus choice (the expected-entropy minimisation, after each update) on a
realistic grid, p50/p95 against the 50 ms target, and, when the reference ``questplus`` package (a dev
dependency) is installed, its ``next_stim`` on the same grid as a baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studyapp.design.adaptive import Observer, QuestPlus, Staircase  # noqa: E402

OBSERVER = Observer(threshold=12.0, slope=8.0, guess=0.02, lapse=0.02, axis="log", direction="increasing")
STAIRCASE = {"axis": "log", "start": 40.0, "min": 1.0, "max": 300.0, "estimate_reversals": 6}
QUEST = {
    "axis": "log",
    "stimuli": {"min": 1, "max": 300, "n": 50},
    "thresholds": {"min": 2, "max": 150, "n": 40},
    "slopes": {"min": 2, "max": 32, "n": 6},
    "guesses": [0.0, 0.02, 0.05],
    "lapses": [0.0, 0.02, 0.05],
}
TARGET_MS = 50.0


def procedures(trials: int, ci_width: float) -> list[tuple[str, dict, type]]:
    steps = [0.2, 0.1, 0.05]
    return [
        ("1up1down", {**STAIRCASE, "rule": "1up1down", "steps": steps, "max_trials": trials}, Staircase),
        ("1up2down", {**STAIRCASE, "rule": "1up2down", "steps": steps, "max_trials": trials}, Staircase),
        ("1up3down", {**STAIRCASE, "rule": "1up3down", "steps": steps, "max_trials": trials}, Staircase),
        (
            "weighted p=.75",
            {**STAIRCASE, "rule": "weighted", "target": 0.75, "steps": [0.1, 0.05, 0.025], "max_trials": trials},
            Staircase,
        ),
        ("QUEST+", {**QUEST, "max_trials": trials}, QuestPlus),
        (
            f"QUEST+ (CI stop {ci_width:g})",
            {**QUEST, "max_trials": trials, "ci_width": ci_width, "min_trials": 5},
            QuestPlus,
        ),
    ]


def truth_of(proc) -> float:
    """log10 of the observer's level at the probability the procedure's estimate refers to."""
    if isinstance(proc, Staircase):
        return math.log10(OBSERVER.level_at(proc.config.target_p))
    return math.log10(OBSERVER.threshold)


def running_estimate(proc) -> float:
    est = proc.estimate().threshold
    return math.log10(est if est is not None else proc.next_level())


def simulate(config: dict, cls: type, runs: int, trials: int) -> dict:
    """Estimates (log10) after every trial of every run; a run that stops early keeps its last estimate."""
    track = np.full((runs, trials), np.nan)
    used = np.zeros(runs, dtype=int)
    truth = math.nan
    for run in range(runs):
        rng = random.Random(1000 + run)
        proc = cls.from_config(config)
        truth = truth_of(proc)
        n = 0
        while not proc.done:
            level = proc.next_level()
            proc.update(level, OBSERVER.respond(level, rng))
            track[run, n] = running_estimate(proc)
            n += 1
        used[run] = n
        track[run, n:] = track[run, n - 1]
    return {"track": track, "used": used, "truth": truth}


def trials_to(rmse_n: np.ndarray, bound: float) -> int | None:
    """The first trial count from which the RMSE stays at or below ``bound`` (``None``: not within the run)."""
    ok = rmse_n <= bound
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    return int(bad[-1] + 2) if bad.size else 1


def summarise(name: str, sim: dict, precisions: list[float]) -> dict:
    err = sim["track"] - sim["truth"]
    final = err[:, -1]
    rmse_n = np.sqrt(np.mean(err**2, axis=0))
    return {
        "name": name,
        "true": 10 ** sim["truth"],
        "bias": float(final.mean()),
        "sd": float(final.std(ddof=1)),
        "rmse": float(np.sqrt(np.mean(final**2))),
        "reach": [trials_to(rmse_n, b) for b in precisions],
        "trials": float(sim["used"].mean()),
    }


def choice_times(grid: dict, runs: int, trials: int) -> tuple[np.ndarray, float, int, int]:
    """Milliseconds per next-stimulus choice (each after an update), table build time, grid sizes."""
    times = []
    t0 = time.perf_counter()
    QuestPlus.from_config({**grid, "max_trials": trials})
    build_ms = (time.perf_counter() - t0) * 1000
    q = None
    for run in range(runs):
        rng = random.Random(run)
        q = QuestPlus.from_config({**grid, "max_trials": trials})
        while not q.done:
            t = time.perf_counter()
            level = q.next_level()
            times.append((time.perf_counter() - t) * 1000)
            q.update(level, OBSERVER.respond(level, rng))
    return np.asarray(times), build_ms, len(q.stimuli), int(np.prod(q.shape))


def reference_times(grid: dict, calls: int) -> np.ndarray | None:
    """The reference ``questplus`` package's ``next_stim`` on the same grid, or ``None`` if not installed."""
    try:
        import questplus as qp_ref
    except ImportError:
        return None
    q = QuestPlus.from_config({**grid, "max_trials": calls, "function": "weibull"})
    ref = qp_ref.QuestPlus(
        stim_domain={"intensity": list(np.log10(q.config.stimuli))},
        param_domain={
            "threshold": list(np.log10(q.config.thresholds)),
            "slope": list(q.config.slopes),
            "lower_asymptote": list(q.config.guesses),
            "lapse_rate": list(q.config.lapses),
        },
        outcome_domain={"response": ["Yes", "No"]},
        func="weibull",
        stim_scale="log10",
    )
    rng = random.Random(0)
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        x = ref.next_stim["intensity"]
        times.append((time.perf_counter() - t) * 1000)
        ref.update(stim={"intensity": x}, outcome={"response": "Yes" if OBSERVER.respond(10**x, rng) else "No"})
    return np.asarray(times)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=500, help="simulated runs per procedure (default 500)")
    ap.add_argument("--trials", type=int, default=60, help="trials per run (default 60)")
    ap.add_argument("--precision", default="0.1,0.06", help="RMSE bounds, log10 units (default 0.1,0.06)")
    ap.add_argument("--ci-width", type=float, default=0.2, help="QUEST+ CI-width stop, log10 units (default 0.2)")
    ap.add_argument("--timing-runs", type=int, default=None, help="QUEST+ runs timed per grid (default runs/50)")
    args = ap.parse_args(argv)
    timing_runs = args.timing_runs or max(2, args.runs // 50)
    bounds = [float(b) for b in args.precision.split(",")]

    o = OBSERVER
    print(
        f"Observer: tokens/s acceptability, logistic on log10 axis, threshold {o.threshold:g} tok/s, "
        f"slope {o.slope:g}/log10, guess {o.guess:g}, lapse {o.lapse:g}; {args.runs} runs x {args.trials} trials"
    )
    print()
    reach_head = "".join(f"| trials to RMSE <= {b:g} " for b in bounds)
    print(f"| procedure | true level (tok/s) | bias (log10) | SD (log10) | RMSE (log10) {reach_head}| mean trials |")
    print("|" + "---|" * (6 + len(bounds)))
    rows = {}
    t_sim = time.perf_counter()
    for name, cfg, cls in procedures(args.trials, args.ci_width):
        row = summarise(name, simulate(cfg, cls, args.runs, args.trials), bounds)
        rows[name] = row
        reach = "".join(f"| {r if r is not None else f'> {args.trials}'} " for r in row["reach"])
        if "CI stop" in name:
            reach = "| (stops early) " * len(bounds)
        print(
            f"| {name} | {row['true']:.2f} | {row['bias']:+.3f} | {row['sd']:.3f} | {row['rmse']:.3f} "
            f"{reach}| {row['trials']:.1f} |"
        )
    sim_s = time.perf_counter() - t_sim
    print()
    for b, q, s2 in zip(bounds, rows["QUEST+"]["reach"], rows["1up2down"]["reach"]):
        verdict = "yes" if q is not None and (s2 is None or q < s2) else "NO"
        print(
            f"RMSE <= {b:g}: QUEST+ in {q if q is not None else '>' + str(args.trials)} trials, "
            f"1up2down in {s2 if s2 is not None else '>' + str(args.trials)}: QUEST+ faster: {verdict}"
        )
    print(f"(simulation {sim_s:.1f} s)")

    print()
    print(f"| QUEST+ grid (stimuli x thresholds x slopes x guesses x lapses) | table build (ms) | choice p50 (ms) "
          f"| choice p95 (ms) | max (ms) | p95 < {TARGET_MS:g} ms | reference questplus p50 (ms) |")  # fmt: skip
    print("|" + "---|" * 7)
    grids = [
        ("100 x 40 x 10 x 1 x 5", {"guesses": [0.02], "lapses": [0.0, 0.01, 0.02, 0.04, 0.06]}),
        ("100 x 40 x 10 x 5 x 5", {"guesses": [0.0, 0.01, 0.02, 0.04, 0.06], "lapses": [0.0, 0.01, 0.02, 0.04, 0.06]}),
    ]
    for label, extra in grids:
        grid = {
            "axis": "log",
            "stimuli": {"min": 1, "max": 300, "n": 100},
            "thresholds": {"min": 2, "max": 150, "n": 40},
            "slopes": {"min": 1, "max": 40, "n": 10},
            **extra,
        }
        times, build_ms, _, _ = choice_times(grid, timing_runs, args.trials)
        ref = reference_times(grid, 5 if args.runs < 500 else 20)
        p50, p95 = np.percentile(times, [50, 95])
        ref_txt = "not installed" if ref is None else f"{np.median(ref):.1f} ({np.median(ref) / p50:.0f}x)"
        print(
            f"| {label} | {build_ms:.1f} | {p50:.2f} | {p95:.2f} | {times.max():.2f} "
            f"| {'yes' if p95 < TARGET_MS else 'NO'} | {ref_txt} |"
        )


if __name__ == "__main__":
    main()
