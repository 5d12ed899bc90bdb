"""Speed and memory of the stream core: importing a large vLLM result file, synthesising a long stream.

    python benchmarks/stream_core.py                      # 10,000 requests, 1,000,000 tokens (~1-2 min)
    python benchmarks/stream_core.py --requests 200 --tokens 20000   # smoke test, a few seconds

Each measurement runs in a fresh Python subprocess (so peaks do not mix and imports are not shared), once
untraced for wall time and peak RSS (``ru_maxrss``) and once under ``tracemalloc`` for the peak of Python
allocations. Results are reported against baselines measured in the same run, as ratios:

- import: ``playback.core.importers.load(path, format="vllm")`` against a plain ``json.load`` of the same file
  (the import stream-parses the JSON, tokenises each distinct text once, in batches, and holds the streams in
  columns; pieces are counted from the columns). Target (issue 44): at most 3x the time and 2x the traced peak
  memory of json.load. An information row adds building every ``Stream`` (a ``Piece`` object per piece, one
  stream at a time), what a consumer that iterates all the streams pays on top;
- synthesis: ``playback.core.synth.synthesize`` of N tokens against the tokenizer's ``pieces`` of the same text
  alone (the unavoidable cost; the rest is timing and building the ``Piece`` objects).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from subprocess_measure import measure as run_measured

ROOT = Path(__file__).resolve().parents[1]
MODEL_ID = "Qwen/Qwen3.6-27B"
PARAGRAPH = (
    "A streamed answer can feel quick even when its total time is long, as long as text keeps arriving. "
    "Readers notice the first words, the rhythm of the stream and its pauses more than the average rate. "
    "只要文字持续出现，即使总耗时较长，流式回答也会让人觉得很快。 Emoji such as 🦜 split into several tokens. "
)
WORDS = PARAGRAPH.split()


# --- the vLLM result file ------------------------------------------------------------------------------


def write_vllm_file(path: Path, requests: int, seed: int = 0) -> int:
    """A ``vllm bench serve --save-detailed`` result with ``requests`` requests of ~200 tokens; returns bytes."""
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(seed))
    output_lens = rng.integers(150, 251, requests).tolist()
    ttfts = (rng.lognormal(np.log(0.35), 0.6, requests)).round(6).tolist()
    itls, texts, latencies = [], [], []
    for i, n in enumerate(output_lens):
        gaps = rng.gamma(4.0, 0.025 / 4.0, n - 1)
        stalls = rng.random(n - 1) < 0.004
        gaps[stalls] += rng.exponential(0.6, int(stalls.sum()))
        itls.append(gaps.round(6).tolist())
        latencies.append(round(ttfts[i] + float(gaps.sum()), 6))
        start = int(rng.integers(0, len(WORDS)))
        words = [WORDS[(start + j) % len(WORDS)] for j in range(int(n * 0.8))]  # ~1.25 tokens per word
        texts.append(" ".join(words))
    doc = {
        "date": "20260101-000000",
        "endpoint_type": "openai-chat",
        "backend": "openai-chat",
        "label": None,
        "model_id": MODEL_ID,
        "tokenizer_id": MODEL_ID,
        "num_prompts": requests,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": 64,
        "duration": 600.0,
        "completed": requests,
        "failed": 0,
        "total_input_tokens": 128 * requests,
        "total_output_tokens": int(sum(output_lens)),
        "input_lens": [128] * requests,
        "output_lens": output_lens,
        "ttfts": ttfts,
        "itls": itls,
        "latencies": latencies,
        "start_times": [1000.0 + 0.01 * i for i in range(requests)],
        "queue_times": [0.0] * requests,
        "generated_texts": texts,
        "errors": [""] * requests,
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
    return path.stat().st_size


# --- child processes: one measurement each ----------------------------------------------------------


def _work(kind: str, arg: str, tokenizer: str, text: str) -> tuple[str, int]:
    """Run one measured job in this process; returns what it produced (description, item count)."""
    if kind == "json_load":
        with open(arg, encoding="utf-8") as f:
            doc = json.load(f)
        return f"{len(doc['ttfts'])} requests", len(doc["ttfts"])
    if kind in ("vllm_import", "vllm_streams"):
        from playback.core.importers import load

        result = load(arg, format="vllm")
        if kind == "vllm_import":  # what the import holds: streams in columns, pieces counted from them
            pieces = result.streams.piece_count()
        else:  # and every Stream built from its columns, one at a time, as a consumer iterating them does
            pieces = sum(len(s.pieces) for s in result.streams)
        return f"{len(result.streams)} streams, {pieces} pieces", len(result.streams)
    from playback.core import tokenizers

    tok = tokenizers.get(tokenizer)
    if kind == "tokenize":
        n = len(tok.pieces(text))
        return f"{n} tokens", n
    if kind == "synth":
        from playback.core.synth import synthesize
        from playback.core.timing import TimingSpec

        spec = TimingSpec(ttft_ms=400, rate=40, jitter="gamma", jitter_cv=0.4, stall_rate_per_s=0.05, stall_ms=800)
        stream = synthesize(text, tokenizer, spec, seed=1)
        n = sum(p.tokens for p in stream.pieces)
        return f"{n} tokens, {len(stream.pieces)} pieces", n
    raise SystemExit(f"unknown job {kind!r}")


def _text_of(tokens: int, tokenizer: str) -> str:
    """A text of about ``tokens`` tokens (the paragraph repeated), built before the clock starts."""
    from playback.core import tokenizers

    per = tokenizers.get(tokenizer).count(PARAGRAPH * 10) / 10  # joins between repeats can merge tokens
    return PARAGRAPH * max(1, math.ceil(tokens / per))


def peak_rss_kb() -> int:
    """This process's peak resident set (VmHWM; ``ru_maxrss`` would include the parent's peak before exec)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def child(kind: str, arg: str, tokenizer: str, traced: bool) -> None:
    import tracemalloc

    sys.path.insert(0, str(ROOT))
    # warm-up that is not measured: imports, the tokenizer's vocabulary, the input text
    text = ""
    if kind in ("tokenize", "synth"):
        import playback.core.synth  # noqa: F401
        from playback.core import tokenizers

        tokenizers.get(tokenizer).pieces("warm up")
        text = _text_of(int(arg), tokenizer)
    elif kind in ("vllm_import", "vllm_streams"):
        import playback.core.importers.vllm  # noqa: F401
        from playback.core import tokenizers

        if hasattr(tokenizers, "for_model"):
            tokenizers.get(str(tokenizers.for_model(MODEL_ID))).pieces("warm up")
    rss_before = peak_rss_kb()
    if traced:
        tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    what, n = _work(kind, arg, tokenizer, text)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = tracemalloc.get_traced_memory()[1] if traced else None
    rss = peak_rss_kb()
    print(
        json.dumps(
            {"wall_s": wall, "cpu_s": cpu, "traced_peak_b": peak, "rss_kb": rss, "rss_before_kb": rss_before,
             "what": what, "n": n}
        )
    )


def measure(kind: str, arg: str, tokenizer: str = "") -> dict:
    """Run ``kind`` in two fresh subprocesses (untraced, traced) and merge their results (``subprocess_measure``)."""
    return run_measured(__file__, kind, arg, "--tokenizer", tokenizer)


# --- report ------------------------------------------------------------------------------------------


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        cells = [c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def row(name: str, m: dict, base: dict | None, rate: str = "") -> list[str]:
    ratio = lambda key: f"{m[key] / base[key]:.2f}x" if base and base[key] > 0 else "1.00x"  # noqa: E731
    return [
        name,
        f"{m['wall_s']:.3f}",
        ratio("wall_s"),
        f"{m['cpu_s']:.3f}",
        ratio("cpu_s"),
        rate,
        f"{m['traced_peak_mb']:.1f}",
        ratio("traced_peak_mb"),
        f"{m['rss_delta_mb']:.1f}",
        f"{m['rss_mb']:.1f}",
        m["what"],
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10_000, help="requests in the vLLM file (10,000)")
    parser.add_argument("--tokens", type=int, default=1_000_000, help="tokens to synthesise (1,000,000)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--arg", help=argparse.SUPPRESS)
    parser.add_argument("--tokenizer", default="", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.arg, args.tokenizer, args.traced)
        return

    sys.path.insert(0, str(ROOT))
    from playback.core import tokenizers

    try:
        tokenizers.get("cl100k_base")
        tokenizer = "cl100k_base"
    except LookupError:  # vocabulary not installed
        tokenizer = "word"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pacelab-bench-") as tmp:
        path = Path(tmp) / "vllm-detailed.json"
        size = write_vllm_file(path, args.requests)
        base_imp = measure("json_load", str(path))
        imp = measure("vllm_import", str(path))
        built = measure("vllm_streams", str(path))
    base_syn = measure("tokenize", str(args.tokens), tokenizer)
    syn = measure("synth", str(args.tokens), tokenizer)

    header = ["measurement", "wall s", "x base", "CPU s", "x base", "rate", "traced MB", "x base", "RSS +MB", "RSS MB",
              "output"]
    rows = [
        header,
        row(f"json.load ({size / 2**20:.1f} MB file, baseline)", base_imp, None),
        row(f"importers.load vllm, {imp['n']:,} requests", imp, base_imp, f"{imp['n'] / imp['wall_s']:,.0f} req/s"),
        row("  ... and every Stream built (info)", built, base_imp, f"{built['n'] / built['wall_s']:,.0f} req/s"),
        row(
            f"{tokenizer}.pieces, {base_syn['n']:,} tokens (baseline)",
            base_syn,
            None,
            f"{base_syn['n'] / base_syn['wall_s']:,.0f} tok/s",
        ),
        row(f"synthesize, {syn['n']:,} tokens", syn, base_syn, f"{syn['n'] / syn['wall_s']:,.0f} tok/s"),
    ]
    print(table(rows))
    print()
    t_ratio, m_ratio = imp["wall_s"] / base_imp["wall_s"], imp["traced_peak_mb"] / base_imp["traced_peak_mb"]
    met = t_ratio <= 3 and m_ratio <= 2
    print(f"import target (<= 3x json.load time, <= 2x its traced peak): {'met' if met else 'NOT met'} "
          f"({t_ratio:.2f}x time, {imp['cpu_s'] / base_imp['cpu_s']:.2f}x CPU time, {m_ratio:.2f}x memory); "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"machine: {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs; total {time.perf_counter() - started:.1f} s"
    )
    print("CPU s = the process's CPU time (all its threads): steadier than wall s when others load the machine.")
    print("notes: wall s and RSS from an untraced run, traced MB = tracemalloc peak of a second run; each run in")
    print("a fresh subprocess, measured after imports, tokenizer loading and building the input text. RSS +MB =")
    print("growth of the peak resident set during the job. 'x base' = ratio to the baseline row above it. Single")
    print("runs on a shared machine: expect +-20% noise on wall times; compare the ratios, not the seconds.")


if __name__ == "__main__":
    main()
