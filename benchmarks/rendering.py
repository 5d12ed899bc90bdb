"""Rendering fidelity per browser engine × render strategy, from the paint log and from an independent DOM check.

    .venv/bin/python benchmarks/rendering.py                                  # chromium, firefox, webkit
    .venv/bin/python benchmarks/rendering.py --engines firefox --tokens 80    # smoke test

Every engine plays the same seven players side by side in one page (token, batch 20 ms, word, line, sentence,
smooth, fade; 300 English word pieces at 40 tokens/s after a 300 ms TTFT; plain text, no waiting indicator), in
Debian's Chromium (Playwright), Firefox ESR (WebDriver BiDi) and WebKitGTK (WebKitWebDriver under Xvfb); see
docs/browsers.md. Nothing is downloaded.

Lateness is measured against each strategy's design (tests/browser/strategy_model.py): the time its rule lets a
frame out if everything arrived on time (smooth: twice its drain time). Two clocks are read:

- ``log``: the paint log's painted time (the animation frame's timestamp when the frame's last character was
  rendered), what PaceLab stores and the analysis' fidelity stage reports;
- ``dom``: an independent observer, a MutationObserver on the page that notes ``performance.now()`` when each
  frame's last character is first in the player's text, without the player's bookkeeping.

``dom - log`` is how much later the DOM held the text than the paint log says (the script time inside the
frame): never negative, or the log claims a paint before it happened. ``frame`` is the engine's median
animation-frame interval in the run. Numbers on a shared machine carry its load (printed with the table).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from browser_schedules import english_pieces, schedule  # noqa: E402
from engines import ENGINES, launch, missing  # noqa: E402
from staticserver import StaticServer  # noqa: E402
from strategy_model import release_ms  # noqa: E402

from playback.core.metrics import percentile  # noqa: E402

STRATEGIES = ["token", "batch", "word", "line", "sentence", "smooth", "fade"]
BATCH_MS = 20.0
DRAIN_MS = 120.0

# Installed before the players start: per player, when its text reached each length (performance.now()).
DOM_OBSERVER = """() => {
  window.__domTimes = {};
  const host = document.getElementById("players");
  new MutationObserver((records) => {
    const now = performance.now();
    const seen = new Set();
    for (const r of records) {
      const cell = (r.target.nodeType === 1 ? r.target : r.target.parentElement)?.closest(".pl-host");
      if (!cell || seen.has(cell)) continue;
      seen.add(cell);
      const out = cell.querySelector(".pl-output");
      const len = out ? out.textContent.length : 0;
      const id = cell.id.replace(/^player-/, "");
      const list = (window.__domTimes[id] ||= []);
      if (!list.length || list[list.length - 1][1] !== len) list.push([now, len]);
    }
  }).observe(host, { subtree: true, childList: true, characterData: true });
  window.__frameTimes = [];
  const f = (t) => { window.__frameTimes.push(t); requestAnimationFrame(f); };
  requestAnimationFrame(f);
}"""


def players(n_tokens: int) -> list[dict]:
    out = []
    for strategy in STRATEGIES:
        options = {"strategy": strategy, "indicator": "none", "lang": "en", "format": "plain"}
        if strategy == "batch":
            options["strategyOptions"] = {"intervalMs": BATCH_MS}
        if strategy == "smooth":
            options["strategyOptions"] = {"drainMs": DRAIN_MS, "minChars": 1, "maxChars": 24}
        out.append({"id": strategy, "mode": "prefetch", "options": options,
                    "schedule": schedule(english_pieces(n_tokens))})
    return out


def measure(engine: str, base_url: str, n_tokens: int) -> tuple[str, list[dict]]:
    """One run in ``engine``: (engine version, one row per strategy)."""
    browser = launch(engine)
    try:
        page = browser.new_page({"width": 1600, "height": 1000})
        page.goto(f"{base_url}/player-test/")
        page.wait_for_function("window.__pacelab && window.__pacelab.ready", timeout=30_000)
        config = players(n_tokens)
        page.evaluate(DOM_OBSERVER)
        page.evaluate("config => window.__pacelab.run(config)", {"players": config})
        page.wait_for_function("window.__pacelab.done", timeout=180_000, polling=200)
        results = page.evaluate("window.__pacelab.results()")
        starts = page.evaluate("() => Object.fromEntries(Object.entries(window.__pacelab.players)"
                               ".map(([k, v]) => [k, v.player.startTime]))")
        dom = page.evaluate("window.__domTimes")
        frames = page.evaluate("window.__frameTimes")
        errors = list(page.js_errors)
        version = browser.version or page.evaluate("navigator.userAgent")
        page.close()
    finally:
        browser.close()
    if errors:
        raise SystemExit(f"{engine}: errors in the page: {errors}")
    gaps = sorted(b - a for a, b in zip(frames, frames[1:]))
    frame_ms = statistics.median(gaps) if gaps else float("nan")
    rows = []
    for spec in config:
        pid = spec["id"]
        content = [f for f in spec["schedule"] if f["channel"] == "content" and f["text"]]
        due = release_ms(spec["options"]["strategy"], content, batch_ms=BATCH_MS, drain_ms=DRAIN_MS)
        logged = {f["seq"]: f for f in results[pid]["frames"] if f["channel"] == "content"}
        ends, total = [], 0
        for f in content:
            total += len(f["text"])
            ends.append(total)
        observed = dom.get(pid, [])
        start = starts[pid]
        log_late, dom_late, dom_minus_log, unpainted, missing_dom = [], [], [], 0, 0
        painted_order = []
        for f, d, end in zip(content, due, ends):
            painted = logged.get(f["seq"], {}).get("painted_ms")
            if painted is None:
                unpainted += 1
                continue
            painted_order.append(painted)
            log_late.append(painted - d)
            seen = next((t for t, length in observed if length >= end), None)
            if seen is None:
                missing_dom += 1
                continue
            dom_late.append(seen - start - d)
            dom_minus_log.append(seen - start - painted)
        rows.append({
            "engine": engine, "strategy": pid, "frame_ms": frame_ms, "frames": len(content), "unpainted": unpainted,
            "out_of_order": sum(1 for a, b in zip(painted_order, painted_order[1:]) if b < a),
            "missing_dom": missing_dom, "text_ok": results[pid]["textContent"] == "".join(f["text"] for f in content),
            "log_p50": _p(log_late, 50), "log_p95": _p(log_late, 95), "log_max": max(log_late, default=float("nan")),
            "dom_p50": _p(dom_late, 50), "dom_p95": _p(dom_late, 95),
            "dom_minus_log_min": min(dom_minus_log, default=float("nan")),
            "dom_minus_log_p95": _p(dom_minus_log, 95),
        })
    return version, rows


def _p(values: list[float], q: float) -> float:
    return percentile(sorted(values), q) if values else float("nan")


def side_by_side(rows: list[dict], engines: list[str]) -> str:
    """Strategies down, engines across: lateness beyond the strategy's design, p95, by the log and by the DOM."""
    by = {(r["engine"], r["strategy"]): r for r in rows}
    head = f"{'strategy':<10}" + "".join(f"| {e + ' log p50/p95':>22} {'dom p95':>8} " for e in engines)
    lines = [head, "-" * len(head)]
    for s in STRATEGIES:
        cells = ""
        for e in engines:
            r = by[(e, s)]
            cells += f"| {r['log_p50']:>12.1f} /{r['log_p95']:>7.1f}  {r['dom_p95']:>8.1f} "
        lines.append(f"{s:<10}" + cells)
    lines.append(f"{'frame ms':<10}" + "".join(f"| {by[(e, STRATEGIES[0])]['frame_ms']:>22.1f} {'':>8} "
                                               for e in engines))
    return "\n".join(lines)


def details(rows: list[dict]) -> str:
    head = (f"{'engine':<9}{'strategy':<10}{'frames':>7}{'unpainted':>10}{'order':>6}{'text':>5}{'log max':>9}"
            f"{'dom-log min':>12}{'dom-log p95':>12}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['engine']:<9}{r['strategy']:<10}{r['frames']:>7}{r['unpainted']:>10}{r['out_of_order']:>6}"
                     f"{'ok' if r['text_ok'] else 'BAD':>5}{r['log_max']:>9.1f}{r['dom_minus_log_min']:>12.2f}"
                     f"{r['dom_minus_log_p95']:>12.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: chromium,firefox,webkit")
    parser.add_argument("--tokens", type=int, default=300, help="word pieces per player (40 tokens/s)")
    args = parser.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in ENGINES:
            parser.error(f"--engines: unknown engine {e!r}; choose from {', '.join(ENGINES)}")
        if gone := missing(e):
            parser.error(f"--engines: {e} needs {gone} (scripts/lib/setup.sh installs it)")
    rows, versions = [], {}
    load_before = os.getloadavg()[0]
    t0 = time.monotonic()
    with StaticServer() as base_url:
        for e in engines:
            versions[e], engine_rows = measure(e, base_url, args.tokens)
            rows += engine_rows
    print(f"rendering: {args.tokens} tokens at 40 tokens/s, 7 players per page; lateness in ms beyond each "
          f"strategy's design (smooth: 2 x {DRAIN_MS:g} ms); load average {load_before:.1f} on "
          f"{os.cpu_count()} cores; {time.monotonic() - t0:.0f} s")
    for e in engines:
        print(f"  {e}: {versions[e]}")
    print()
    print(side_by_side(rows, engines))
    print()
    print(details(rows))
    bad = [r for r in rows if r["unpainted"] or r["out_of_order"] or r["missing_dom"] or not r["text_ok"]
           or r["dom_minus_log_min"] < -1.0]
    if bad:
        print(f"\nFAILED checks (unpainted, out of order, not in the DOM, or painted before the DOM had it): "
              f"{', '.join(r['engine'] + '/' + r['strategy'] for r in bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
