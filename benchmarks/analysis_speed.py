"""Seconds per simulated study, the analysis before it was made faster against the analysis now, in one run.

    python benchmarks/analysis_speed.py                        # n40, studies 0 and 1, baseline 8644a35
    python benchmarks/analysis_speed.py --designs n20 edge --studies 3 --baseline <commit>

The baseline is the tree of a commit (``git archive``, unpacked into a temporary directory, so nothing in this
checkout changes); each tree runs ``benchmarks/e2e.py``'s ``one_study`` on the same studies in its own process, one
after the other, after one warm-up study (the stream cache). Times are CPU seconds of that process (on a shared
machine wall time mostly measures the neighbours), split into the simulation
(``analysis.stats.simulate.study_frame``) and the analysis (``analysis.stats.pipeline.run``); wall seconds follow.
"head new" is the reduced path the validation and the planner analyse with (``pipeline.headline_run``: only the
stages the headline reads) on the same frames, and "ratio head" the old total against simulation + reduced path
("same": its headline numbers equal the full pipeline's). The last columns compare the headline numbers
(``analysis.tables.headline.numbers``) of the two trees: the largest relative difference over every number of the
study.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "8644a35"  # the last commit before the analysis was made faster (issue 40)

WORKER = r"""
import json, sys, time, warnings
root, designs, studies = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
sys.path.insert(0, root)
warnings.simplefilter("ignore")
try:  # the layout of issue 42
    from analysis.stats import e2e_designs, simulate
    from analysis.stats.pipeline import Options, run
    from analysis.tables import headline
    from studyapp.design.counterbalance import sub_seed
    try:
        from analysis.stats.pipeline import headline_run
    except ImportError:
        headline_run = None
except ImportError:
    headline_run = None  # the baseline tree's flat layout
    from analysis import e2e_designs, headline, simulate
    from analysis.pipeline import Options, run
    from studyapp.counterbalance import sub_seed
out = []
for name in designs:
    design = e2e_designs.designs()[name]
    streams = simulate.streams_for(design.study)
    def one(index):
        c0, w0 = time.process_time(), time.perf_counter()
        trials, participants = simulate.study_frame(design.study, design.population, design.participants,
                                                    sub_seed(0, name, index), streams=streams)
        c1 = time.process_time()
        results = run(trials, participants, spec=design.study, options=Options())
        c2, w2 = time.process_time(), time.perf_counter()
        out = {"design": name, "index": index, "simulate": c1 - c0, "analysis": c2 - c1, "wall": w2 - w0,
               "rows": headline.numbers(results)}
        if headline_run is not None:  # the reduced path of the validation and the planner, on the same frames
            reduced = headline_run(trials, participants, spec=design.study, options=Options())
            out["headline"] = time.process_time() - c2
            out["headline_same"] = headline.numbers(reduced) == out["rows"]
        return out
    one(10_000)  # warm-up: the stream cache
    out += [one(i) for i in range(studies)]
print(json.dumps(out))
"""


def _tree(commit: str, into: Path) -> Path:
    archive = into / "baseline.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit], stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def _run(root: Path, designs: list[str], studies: int) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", WORKER, str(root), ",".join(designs), str(studies)],
                          capture_output=True, text=True, cwd=str(root))
    if done.returncode:
        raise SystemExit(f"the studies failed in {root}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _largest_difference(a: list[dict], b: list[dict]) -> tuple[float, str]:
    worst, where = 0.0, ""
    for ra, rb in zip(a, b, strict=True):
        for key, va in ra.items():
            vb = rb.get(key)
            if not isinstance(va, (int, float)) or not isinstance(vb, (int, float)) or isinstance(va, bool):
                continue
            if math.isinf(va) or math.isinf(vb):
                diff = 0.0 if va == vb else math.inf
            else:
                diff = abs(va - vb) / max(abs(va), 1e-12)
            if diff > worst:
                worst, where = diff, f"{ra['condition']} {key}"
    return worst, where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=["n40"])
    ap.add_argument("--studies", type=int, default=2, help="studies per design (default 2)")
    ap.add_argument("--baseline", default=BASELINE, help=f"the commit to compare with (default {BASELINE})")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = _run(_tree(args.baseline, Path(tmp)), args.designs, args.studies)
    new = _run(ROOT, args.designs, args.studies)
    print(f"seconds per simulated study (CPU of the process), baseline {args.baseline} against this checkout")
    head = (f"{'design':8} {'study':>5} {'sim old':>8} {'sim new':>8} {'ana old':>8} {'ana new':>8} {'total old':>9} "
            f"{'total new':>9} {'ratio':>6} {'head new':>8} {'ratio head':>10} {'same':>4} "
            f"{'wall old':>8} {'wall new':>8}  largest headline difference")
    print(head)
    print("-" * len(head))
    totals = [0.0, 0.0, 0.0]
    for o, n in zip(base, new, strict=True):
        to, tn = o["simulate"] + o["analysis"], n["simulate"] + n["analysis"]
        th = n["simulate"] + n.get("headline", math.nan)
        totals[0] += to
        totals[1] += tn
        totals[2] += th
        diff, where = _largest_difference(o["rows"], n["rows"])
        print(f"{o['design']:8} {o['index']:5d} {o['simulate']:8.2f} {n['simulate']:8.2f} {o['analysis']:8.2f} "
              f"{n['analysis']:8.2f} {to:9.2f} {tn:9.2f} {to / tn:6.1f} {n.get('headline', math.nan):8.2f} "
              f"{to / th:10.1f} {'yes' if n.get('headline_same') else 'NO':>4} {o['wall']:8.1f} {n['wall']:8.1f}  "
              + (f"{diff:.1e} ({where})" if where else f"{diff:.1e}"))
    print(f"all studies: {totals[0]:.1f} s against {totals[1]:.1f} s, {totals[0] / totals[1]:.1f} times faster; "
          f"simulation + reduced path {totals[2]:.1f} s, {totals[0] / totals[2]:.1f} times faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
