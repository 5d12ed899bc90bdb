"""What each render strategy costs: every strategy × every arrival pattern in headless Chromium, one table.

    .venv/bin/python benchmarks/smoothers.py                              # every strategy, every pattern
    .venv/bin/python benchmarks/smoothers.py --patterns steady,cjk --strategies token,chat-ui-smooth

Per named arrival pattern (``playback.core.arrivals``, the patterns the playground, study files and
``synth_stream`` use: each with its own sample text, tokenizer and timing, synthesised with the seed) each strategy
plays alone in a page of the real player (``--together``: all side by side in one page; plain text, no
indicator), each with its default options (batch 20 ms), plus ``ai-sdk/segment``, the AI SDK preset chunking by
Intl.Segmenter words. The numbers come from the player's own paint log, per character (UTF-16 unit), computed
by the playground's ``static/js/playground/smoother_stats.js`` in the page the benchmark drives, so the table and
the playground's panels share one implementation:

- ``delay p50/p95/max``: painted − arrived (ms), painted being the moment the text entered the DOM (the later
  of the frame start and the DOM write, issue 43 item 4);
- ``ttfp``: time to first paint from the request (ms; the pattern's TTFT is in its header line);
- ``cv``: coefficient of variation of the intervals between paints (0 = a metronome), ``ch/paint``: mean
  characters per paint;
- ``hold``: the longest stretch the screen stood still while arrived text was held back (ms);
- ``last``: when the last character landed after the last arrival (ms); ``frame``: the median animation-frame
  interval of the run (a loaded machine draws fewer frames, and every number above carries that).

Debian's Chromium through Playwright; nothing is downloaded. Numbers on a shared machine carry its load
(printed with the table).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from engines import launch  # noqa: E402
from staticserver import StaticServer  # noqa: E402

from playback.core import arrivals, synth, texts  # noqa: E402

PATTERNS = arrivals.names()

# A row is a strategy with its default options, or a named variant: (strategy, options).
VARIANTS: dict[str, tuple[str, dict]] = {
    **{s: (s, {}) for s in ("token", "batch", "word", "line", "sentence", "smooth", "fade", "ai-sdk-smooth")},
    "ai-sdk/segment": ("ai-sdk-smooth", {"chunking": "segmenter"}),  # the AI SDK's advice for CJK
    **{s: (s, {}) for s in ("chat-ui-smooth", "accelerating", "typewriter")},
}
STRATEGIES = list(VARIANTS)


def build(pattern: str, seed: int) -> tuple[list[dict], str]:
    """The content frames of a named arrival pattern (its sample text, tokenizer and timing) and the language."""
    p = arrivals.get(pattern)
    language, text = texts.bundled_texts()[p.text]
    stream = synth.synthesize(text, p.tokenizer, p.timing, seed=seed)
    pieces = [x for x in stream.pieces if x.channel == "content" and x.text]
    return [{"seq": i, "t_ms": round(x.t_ms, 3), "text": x.text, "channel": "content", "tokens": 1}
            for i, x in enumerate(pieces)], language


STATS = """async ({frames, paints}) => {
  const { smootherStats } = await import("/static/js/playground/smoother_stats.js");
  return smootherStats(frames, paints);
}"""


def measure_one(page, frames: list[dict], paints: list[dict], frame_ms: float = math.nan) -> dict:
    """The row of one strategy from its schedule (``t_ms``, ``text``) and content paints (``t_ms``, ``dom_ms``,
    ``text``), computed by the playground's own ``static/js/playground/smoother_stats.js`` in ``page`` (any page
    of the site): one implementation of the numbers, so the table and the playground's panel cannot drift."""
    arrived = [{"t_ms": f["t_ms"], "chars": len(f["text"])} for f in frames]  # UTF-16 units in the browser
    shown = [{"t_ms": p["t_ms"], "dom_ms": p.get("dom_ms"), "text": p["text"]} for p in paints]
    stats = page.evaluate(STATS, {"frames": arrived, "paints": shown})
    if stats is None or not stats["complete"]:
        painted = sum(len(p["text"]) for p in paints)
        raise SystemExit(f"painted {painted} of {sum(f['chars'] for f in arrived)} characters")
    out = {k: stats[k] for k in ("p50", "p95", "max", "ttfp", "cv", "chars", "hold", "last", "paints")}
    out["cv"] = math.nan if out["cv"] is None else out["cv"]
    return {**out, "frame": frame_ms}


def run_pattern(browser, base_url: str, pattern: str, strategies: list[str], seed: int, together: bool
                ) -> dict[str, dict]:
    """One page per strategy (or, ``together``, one page for all: faster, but each player's DOM write then waits
    for the players before it in the same animation frame, which favours the first)."""
    if not together and len(strategies) > 1:
        out = {}
        for s in strategies:
            out.update(run_pattern(browser, base_url, pattern, [s], seed, True))
        return out
    frames, language = build(pattern, seed)
    lang = "zh-hans" if language == "zh" else "en"
    players = [{"id": s, "mode": "prefetch", "schedule": frames,
                "options": {"strategy": VARIANTS[s][0], "strategyOptions": VARIANTS[s][1], "indicator": "none",
                            "lang": lang, "format": "plain"}}
               for s in strategies]
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    try:
        page.goto(f"{base_url}/player-test/")
        page.wait_for_function("window.__pacelab && window.__pacelab.ready", timeout=30_000)
        page.evaluate("config => window.__pacelab.run(config)", {"players": players})
        page.wait_for_function("window.__pacelab.done", timeout=300_000, polling=250)
        results = page.evaluate("window.__pacelab.results()")
        source = "".join(f["text"] for f in frames)
        out = {}
        for s in strategies:
            r = results[s]
            if r["textContent"] != source:
                raise SystemExit(f"{pattern}/{s}: the page does not show the source text")
            paints = [p for p in r["paints"] if p["channel"] == "content"]
            out[s] = measure_one(page, frames, paints, r["summary"]["frame_interval_ms"])
    finally:
        page.close()
    return out


def table(rows: dict[tuple[str, str], dict], patterns: list[str], strategies: list[str]) -> str:
    head = (f"{'pattern':<14} {'strategy':<15}{'delay p50':>10}{'p95':>8}{'max':>8}{'ttfp':>8}{'cv':>7}"
            f"{'ch/paint':>9}{'hold':>8}{'last':>8}{'paints':>7}{'frame':>7}")
    lines = [head, "-" * len(head)]
    for pat in patterns:
        for s in strategies:
            r = rows[(pat, s)]
            lines.append(f"{pat:<14} {s:<15}{r['p50']:>10.0f}{r['p95']:>8.0f}{r['max']:>8.0f}{r['ttfp']:>8.0f}"
                         f"{r['cv']:>7.2f}{r['chars']:>9.1f}{r['hold']:>8.0f}{r['last']:>8.0f}{r['paints']:>7}"
                         f"{r['frame']:>7.1f}")
        lines.append("")
    return "\n".join(lines).rstrip()


def _names(value: str, known: list[str], flag: str, parser: argparse.ArgumentParser) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    if unknown := [n for n in names if n not in known]:
        parser.error(f"{flag}: unknown {', '.join(unknown)}; choose from {', '.join(known)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patterns", default=",".join(PATTERNS), help="comma-separated arrival patterns")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated render strategies")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--together", action="store_true",
                        help="all strategies of a pattern in one page (faster; later players' paints wait longer)")
    args = parser.parse_args(argv)
    patterns = _names(args.patterns, list(PATTERNS), "--patterns", parser)
    strategies = _names(args.strategies, STRATEGIES, "--strategies", parser)
    load_before = os.getloadavg()[0]
    t0 = time.monotonic()
    rows: dict[tuple[str, str], dict] = {}
    headers = []
    with StaticServer() as base_url:
        browser = launch("chromium")
        try:
            for pat in patterns:
                frames, _ = build(pat, args.seed)
                chars = sum(len(f["text"]) for f in frames)
                headers.append(f"  {pat:<14} {arrivals.get(pat).summary} ({chars} chars, first at "
                               f"{frames[0]['t_ms']:.0f} ms, last at {frames[-1]['t_ms']:.0f} ms)")
                for s, r in run_pattern(browser, base_url, pat, strategies, args.seed, args.together).items():
                    rows[(pat, s)] = r
            version = browser.version
        finally:
            browser.close()
    print(f"smoothers: {len(strategies)} strategies x {len(patterns)} arrival patterns in Chromium {version}, "
          f"{'all in one page' if args.together else 'one page each'}, default options; ms (frame: the median "
          f"animation-frame interval); load average {load_before:.1f} on {os.cpu_count()} cores; "
          f"{time.monotonic() - t0:.0f} s")
    print("\n".join(headers))
    print()
    print(table(rows, patterns, strategies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
