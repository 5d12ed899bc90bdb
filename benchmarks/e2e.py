"""End-to-end validation: simulated studies with a known population, from the tidy trial frame to the headline.

    python benchmarks/e2e.py                                  # 500 studies per design (long: hours on 2 cores)
    python benchmarks/e2e.py --studies 20 --designs n40 edge  # a quick look at two designs
    python benchmarks/e2e.py --processes 2
    python benchmarks/e2e.py --results var/e2e.jsonl --budget 50   # keeps each study; a rerun adds to them

``--results FILE`` appends every finished study to FILE (one JSON line: design, index, seed, pipeline version,
seconds, headline numbers) and, on a rerun, reads back the studies of the same seed and pipeline version instead of
simulating them again: a run of 500 per design can be spread over several sittings (``--budget``) or machines, and
the table covers every study in the file. Lines of another pipeline version are left out (and counted).

Each study is a rate × TTFT acceptability study file (``analysis.stats.e2e_designs``) answered by bots with a known
population: each participant's journey is the server's, each bot answers with its own observer model
(``studyapp.bots.observers``) from the streams it would be played, and the answers go through
``analysis.tables.tidy.build`` into the same tidy frame ``analysis.selectors.study_frame`` gives
(``analysis.stats.simulate``; a test checks the answers equal a real ``run_bots`` run's). Then
``analysis.stats.pipeline.headline_run(trials, participants, spec=study)`` with the default options: the stages of
``pipeline.run`` whose numbers the headline reads (exclusions, the per-condition fits with their jackknife-widened
intervals, the population model with its intervals), through the same functions, so the numbers are the ones the
results page shows (a test checks they equal ``pipeline.run``'s exactly).

Per design and condition (TTFT 200 and 1500 ms), over the studies:

- coverage of the 95 % intervals of the population's P % point (``population_q``), of the population median
  (``population_mu``; "n/a" where the results carry no interval for it) and of the pooled curve's level at P %
  (``threshold_q``), against the truth (the pooled truth is the level where the population-averaged ψ reaches P,
  computed numerically). Target 93-97 %; "band" is the binomial 95 % band of a true 95 % rate for that many
  studies, and a coverage outside it is flagged ``*``;
- bias: mean (estimate − truth) / truth of each of the three, in % (target within ±2 %);
- the median width of the P % point's interval (level units) and seconds per study (simulation + analysis): the
  median wall time per study per process (``s/study``) and its CPU time (``cpu s``, what the study costs whatever
  else runs on the machine); ``fails`` counts studies whose headline for the condition was missing (a fit that failed).

Designs: n20/n40/n80 (base population: thresholds log-normal around 12 tokens/s, SD 0.10 log10, +0.12 log10 per
second of TTFT, lapse 0.03), lapse.02 and lapse.06, sd.05 and sd.20, edge (the 75 % point near the top level),
weibull (observers with a Weibull core, fitted with a logistic) and mixture (two populations).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats import e2e_designs, simulate  # noqa: E402
from analysis.stats.pipeline import PIPELINE_VERSION, Options, headline_run  # noqa: E402
from analysis.tables import headline
from studyapp.design.counterbalance import sub_seed  # noqa: E402

QUANTITIES = ("q", "median", "pooled")


def one_study(name: str, index: int, seed: int) -> dict:
    """Simulate and analyse one study of a design; the headline per condition and the time it took."""
    warnings.simplefilter("ignore")
    design = e2e_designs.designs()[name]
    t, cpu = time.perf_counter(), time.process_time()
    trials, participants = simulate.study_frame(design.study, design.population, design.participants,
                                                sub_seed(seed, name, index),
                                                streams=simulate.streams_for(design.study))
    results = headline_run(trials, participants, spec=design.study, options=Options())
    return {"design": name, "index": index, "seed": seed, "pipeline_version": PIPELINE_VERSION,
            "seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - cpu,
            "rows": headline.numbers(results)}


def read_results(path: Path, seed: int) -> tuple[list[dict], int]:
    """The studies a results file holds for this seed and pipeline version, and how many lines it left out (another
    version or seed, or a line cut short by a run that was killed)."""
    kept, skipped = [], 0
    if not path.exists():
        return kept, skipped
    seen = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            study = json.loads(line)
        except json.JSONDecodeError:
            skipped += 1
            continue
        key = (study.get("design"), study.get("index"))
        if study.get("pipeline_version") != PIPELINE_VERSION or study.get("seed") != seed or key in seen:
            skipped += 1
            continue
        seen.add(key)
        kept.append(study)
    return kept, skipped


def band(n: int, p: float = 0.95) -> tuple[float, float]:
    """The central 95 % binomial band of a coverage rate p over n intervals, in %."""
    if n == 0:
        return (math.nan, math.nan)
    lo, hi = stats.binom.ppf([0.025, 0.975], n, p)
    return (100 * lo / n, 100 * hi / n)


def summarise(name: str, studies: list[dict], truths: list[simulate.ConditionTruth]) -> list[dict]:
    out = []
    seconds = float(np.median([s["seconds"] for s in studies])) if studies else math.nan
    cpu = [s["cpu_seconds"] for s in studies if s.get("cpu_seconds") is not None]
    cpu_seconds = float(np.median(cpu)) if cpu else math.nan
    for truth in truths:
        true = {"q": truth.quantile_level, "median": truth.median_level, "pooled": truth.pooled_level}
        row: dict = {"design": name, "condition": truth.condition, "studies": len(studies), "seconds": seconds,
                     "cpu_seconds": cpu_seconds,
                     "truth_q": truth.quantile_level, "unit": truth.unit}
        fails = 0
        widths = []
        for quantity in QUANTITIES:
            hits, n, errors = 0, 0, []
            for s in studies:
                h = next((r for r in s["rows"] if r["condition"] == truth.condition), None)
                value = None if h is None else h.get(quantity)
                if value is None:
                    if quantity == "q":
                        fails += 1
                    continue
                errors.append((value - true[quantity]) / true[quantity])
                low, high = (None, None) if h is None else (h.get(f"{quantity}_low"), h.get(f"{quantity}_high"))
                if low is None or high is None:
                    continue
                n += 1
                hits += low <= true[quantity] <= high
                if quantity == "q":
                    widths.append(high - low)
            row[f"cov_{quantity}"] = 100 * hits / n if n else None
            row[f"n_{quantity}"] = n
            row[f"bias_{quantity}"] = 100 * float(np.mean(errors)) if errors else None
        row["width_q"] = float(np.median(widths)) if widths else None
        row["fails"] = fails
        out.append(row)
    return out


def _pct(value, n) -> str:
    if value is None:
        return "n/a"
    lo, hi = band(n)
    flag = "*" if not lo <= value <= hi else " "
    return f"{value:5.1f}{flag}"


def table(rows: list[dict]) -> str:
    head = (f"{'design':9} {'condition':10} {'N':>4} {'truth q':>8} {'cov q':>7} {'cov med':>7} {'cov pool':>8} "
            f"{'band':>11} {'bias q%':>7} {'bias med%':>9} {'bias pool%':>10} {'width q':>8} {'s/study':>7} "
            f"{'cpu s':>5} {'fails':>5}")
    lines = [head, "-" * len(head)]

    def b(v):
        return "n/a" if v is None else f"{v:+.1f}"

    for r in rows:
        lo, hi = band(r["n_q"])
        lines.append(
            f"{r['design']:9} {r['condition']:10} {r['studies']:4d} {r['truth_q']:8.2f} "
            f"{_pct(r['cov_q'], r['n_q']):>7} "
            f"{_pct(r['cov_median'], r['n_median']):>7} {_pct(r['cov_pooled'], r['n_pooled']):>8} "
            f"{lo:5.1f}-{hi:5.1f} {b(r['bias_q']):>7} {b(r['bias_median']):>9} {b(r['bias_pooled']):>10} "
            f"{(r['width_q'] if r['width_q'] is not None else math.nan):8.2f} {r['seconds']:7.1f} "
            f"{r['cpu_seconds']:5.1f} {r['fails']:5d}")
    return "\n".join(lines)


def outside(rows: list[dict]) -> list[str]:
    """Designs whose coverage falls outside the binomial band, and by how many studies."""
    notes = []
    for r in rows:
        for quantity in QUANTITIES:
            cov, n = r[f"cov_{quantity}"], r[f"n_{quantity}"]
            if cov is None or not n:
                continue
            lo, hi = band(n)
            if not lo <= cov <= hi:
                hits = round(cov * n / 100)
                edge = lo if cov < lo else hi
                short = math.ceil(edge * n / 100 - hits) if cov < lo else math.ceil(hits - edge * n / 100)
                notes.append(f"{r['design']} {r['condition']} {quantity}: {cov:.1f} % of {n}, "
                             f"{'below' if cov < lo else 'above'} the band by {short} studies")
    return notes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = list(e2e_designs.designs())
    ap.add_argument("--studies", type=int, default=500, help="simulated studies per design (default 500)")
    ap.add_argument("--designs", nargs="+", default=names, metavar="NAME", help=f"of {', '.join(names)}")
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1, help="worker processes (default: cores)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=float, default=None, metavar="MINUTES",
                    help="start no study after this many minutes; the table covers the studies finished (the "
                         "designs take turns, so each has about the same number)")
    ap.add_argument("--results", type=Path, default=None, metavar="FILE",
                    help="append each finished study to FILE (JSON lines) and reuse the studies it already holds "
                         "for this seed and pipeline version")
    args = ap.parse_args(argv)
    unknown = [d for d in args.designs if d not in names]
    if unknown:
        ap.error(f"--designs: unknown {', '.join(unknown)}; choose from {', '.join(names)}")
    if args.studies < 1 or args.processes < 1:
        ap.error("--studies and --processes must be at least 1")
    designs = e2e_designs.designs()
    truths = {name: simulate.truth(designs[name].study, designs[name].population) for name in args.designs}
    done: dict[str, list[dict]] = {name: [] for name in args.designs}
    reused, skipped = read_results(args.results, args.seed) if args.results else ([], 0)
    for study in reused:
        if study["design"] in done and study["index"] < args.studies:
            done[study["design"]].append(study)
    have = {(s["design"], s["index"]) for v in done.values() for s in v}
    jobs = [(name, i, args.seed) for i in range(args.studies) for name in args.designs if (name, i) not in have]
    if args.results:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        print(f"{len(have)} studies read from {args.results} (pipeline version {PIPELINE_VERSION}, seed {args.seed})"
              + (f"; {skipped} line(s) of another version or seed left out" if skipped else ""), file=sys.stderr)
    t0 = time.perf_counter()
    print(f"{len(jobs)} studies ({args.studies} per design) on {args.processes} processes", file=sys.stderr)
    stop = t0 + 60 * args.budget if args.budget else math.inf
    with ProcessPoolExecutor(max_workers=args.processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(one_study, *job) for job in jobs]
        for k, future in enumerate(as_completed(futures), 1):
            if future.cancelled():
                continue
            result = future.result()
            done[result["design"]].append(result)
            if args.results:
                with args.results.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(result) + "\n")
            if k % max(1, len(jobs) // 20) == 0 or k == len(jobs):
                print(f"  {k}/{len(jobs)} studies, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
            if time.perf_counter() > stop:
                for f in futures:
                    f.cancel()  # the ones not started yet
    finished = sum(len(v) for v in done.values())
    total = args.studies * len(args.designs)
    rows = [r for name in args.designs for r in summarise(name, done[name], truths[name])]
    per = f"{args.studies} studies per design" if finished == total else (
        f"{finished} studies ({', '.join(f'{n} {len(done[n])}' for n in args.designs)}; the {args.budget:g}-minute "
        f"budget stopped the run of {args.studies} per design)")
    earlier = f", {len(have)} of them from earlier runs in {args.results}" if have else ""
    print(f"end-to-end validation: {per}{earlier}, seed {args.seed}, pipeline version {PIPELINE_VERSION}, "
          f"{args.processes} processes, {time.perf_counter() - t0:.0f} s wall")
    print("coverage target 93-97 % (band: binomial 95 % band of a true 95 % for N studies; * outside it); "
          "bias target within ±2 % of the truth")
    print(table(rows))
    notes = outside(rows)
    print("outside the band: " + ("; ".join(notes) if notes else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
