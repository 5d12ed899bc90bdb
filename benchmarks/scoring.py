"""Speed and memory of ``score_traces``: scoring a 10,000-request vLLM file against ``json.load`` of the same file.

    python benchmarks/scoring.py                    # 10,000 requests (about a minute)
    python benchmarks/scoring.py --requests 500     # smoke test

The file is made from the vLLM sample (``tests/data/vllm-bench-detailed.json``) by replication with varied
timings: each of its successful requests is copied with its TTFT and inter-token gaps scaled by log-normal
factors (a run of the same prompts on a busier and a quieter server), so the file has the sample's texts and
realistic spreads of TTFT and decode rate.

Each measurement runs in a fresh subprocess (imports, the tokenizer and the model loaded before the clock starts), once
untraced for wall time and peak RSS and once under ``tracemalloc`` for the peak of Python allocations; the score is
``analysis.stats.score_input.load_requests`` (the importer, the stream core's metrics) plus
``analysis.stats.scoring.score`` (200 draws from the model), what ``manage.py score_traces --json`` does before
printing. Target: score ≤ 3× the time of json.load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "vllm-bench-detailed.json"
TARGET = 3.0


def write_file(path: Path, requests: int, seed: int = 0) -> int:
    """A vLLM ``--save-detailed`` result of ``requests`` requests replicated from the sample; returns bytes."""
    import numpy as np

    doc = json.loads(SAMPLE.read_text(encoding="utf-8"))
    ok = [i for i, e in enumerate(doc["errors"]) if not e and doc["generated_texts"][i]]
    rng = np.random.default_rng(seed)
    out = {k: v for k, v in doc.items() if not isinstance(v, list)}
    cols = {k: [] for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "queue_times",
                            "generated_texts", "errors")}
    for n in range(requests):
        i = ok[n % len(ok)]
        busy = float(rng.lognormal(0.0, 0.35))  # this copy's server load: TTFT and gaps move together a little
        ttft = round(doc["ttfts"][i] * busy * float(rng.lognormal(0.0, 0.3)), 6)
        gaps = (np.asarray(doc["itls"][i]) * busy * rng.lognormal(0.0, 0.15, len(doc["itls"][i]))).round(6)
        cols["input_lens"].append(doc["input_lens"][i])
        cols["output_lens"].append(doc["output_lens"][i])
        cols["ttfts"].append(ttft)
        cols["itls"].append(gaps.tolist())
        cols["latencies"].append(round(ttft + float(gaps.sum()), 6))
        cols["start_times"].append(round(0.01 * n, 3))
        cols["queue_times"].append(0.0)
        cols["generated_texts"].append(doc["generated_texts"][i])
        cols["errors"].append("")
    out.update(cols, num_prompts=requests, completed=requests, failed=0)
    path.write_text(json.dumps(out, ensure_ascii=False, indent=1), encoding="utf-8")
    return path.stat().st_size


def _work(kind: str, path: str, model: dict | None) -> str:
    if kind == "json_load":
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        return f"{len(doc['ttfts'])} requests"
    from analysis.stats import scoring
    from analysis.stats.score_input import load_requests

    loaded = load_requests([path], model)
    result = scoring.score(model, loaded.requests)
    return (f"{result['n_scored']} scored, {result['acceptable']['count']} acceptable, "
            f"{result['extrapolated']['count']} extrapolated")


def peak_rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def child(kind: str, path: str, traced: bool) -> None:
    import tracemalloc

    sys.path.insert(0, str(ROOT))
    model = None
    if kind == "score":
        import analysis.stats.scoring  # noqa: F401
        from analysis.stats import perception_model
        from analysis.stats.demo_model import DEMO_MODEL_PATH
        from playback.core import importers, tokenizers

        importers.available_formats()  # every importer module imported (detection asks each)
        model = perception_model.load(DEMO_MODEL_PATH)
        tokenizers.get(str(tokenizers.for_model("Qwen/Qwen3.6-27B"))).pieces("warm up")
    rss_before = peak_rss_kb()
    if traced:
        tracemalloc.start()
    t0 = time.perf_counter()
    what = _work(kind, path, model)
    wall = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] if traced else None
    print(json.dumps({"wall_s": wall, "traced_peak_b": peak, "rss_kb": peak_rss_kb(), "rss_before_kb": rss_before,
                      "what": what}))


def measure(kind: str, path: str) -> dict:
    """``kind`` run in fresh subprocesses of this script (``subprocess_measure``, shared with stream_core.py)."""
    from subprocess_measure import measure as run_measured

    return run_measured(__file__, kind, path)


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--arg", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.arg, args.traced)
        return 0
    if not SAMPLE.exists():
        raise SystemExit(f"{SAMPLE}: the shared vLLM sample is missing")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pacelab-bench-") as tmp:
        path = Path(tmp) / "vllm-10k.json"
        size = write_file(path, args.requests)
        base = measure("json_load", str(path))
        score = measure("score", str(path))
    ratio = score["wall_s"] / base["wall_s"]
    rows = [["measurement", "wall s", "x json.load", "traced MB", "x json.load", "RSS +MB", "output"],
            [f"json.load ({size / 2**20:.1f} MB, baseline)", f"{base['wall_s']:.3f}", "1.00x",
             f"{base['traced_peak_mb']:.1f}", "1.00x", f"{base['rss_delta_mb']:.1f}", base["what"]],
            [f"score_traces core, {args.requests:,} requests", f"{score['wall_s']:.3f}", f"{ratio:.2f}x",
             f"{score['traced_peak_mb']:.1f}", f"{score['traced_peak_mb'] / base['traced_peak_mb']:.2f}x",
             f"{score['rss_delta_mb']:.1f}", score["what"]]]
    print(table(rows))
    print()
    print(f"target: score <= {TARGET:g}x json.load time: {'met' if ratio <= TARGET else 'NOT met'} ({ratio:.2f}x)")
    print(f"machine: {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; total {time.perf_counter() - started:.1f} s")
    print("notes: each row in a fresh subprocess, after imports (and, for the score, the tokenizer and the model);")
    print("wall s and RSS from an untraced run, traced MB = tracemalloc peak of a second run. Shared machine:")
    print("compare the ratios, not the seconds.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
