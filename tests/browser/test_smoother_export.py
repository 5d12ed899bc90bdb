"""pacelab-smoother.js outside PaceLab: a plain HTML page that imports only that file and smooths a stream.

The page has no PaceLab code but the module; a fake network (setTimeout) delivers text chunks, and the page
records what the smoother revealed and when. Also: the shipped file is what scripts/build_smoother.py builds
from the player's own strategies, and it imports nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "static" / "js" / "pacelab-smoother.js"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>chat</title></head>
<body><p class="question">How do I brew coffee?</p><div id="answer"></div>
<script type="module">
  import { createSmoother, smooth, STRATEGY_NAMES } from "/static/js/pacelab-smoother.js";
  const el = document.getElementById("answer");
  window.names = STRATEGY_NAMES;
  async function* network(chunks, gapMs) {
    for (const c of chunks) { await new Promise((r) => setTimeout(r, gapMs)); yield c; }
  }
  window.runOne = async (strategy, options, chunks, gapMs) => {
    const arrivals = [];
    const reveals = [];
    el.textContent = "";
    const s = createSmoother({ strategy, options, onText: (d, text, { at }) => {
      el.textContent = text; reveals.push([at, d]); } });
    for await (const c of network(chunks, gapMs)) { arrivals.push([performance.now(), c]); s.push(c); }
    s.end();
    const text = await s.done;
    return { text, shown: el.textContent, arrivals, reveals };
  };
  window.runIterable = async (strategy, chunks, gapMs) => {
    let text = "";
    for await (const d of smooth(network(chunks, gapMs), { strategy })) text += d;
    return text;
  };
  window.ready = true;
</script></body></html>"""

WORDS = ("Pour water just off the boil over medium ground coffee, wait thirty seconds for the bloom, then "
         "pour the rest slowly in circles. ").split(" ")
CHUNKS = [w + " " for w in WORDS if w] * 3


def test_the_shipped_module_is_built_from_the_players_strategies_and_imports_nothing():
    done = subprocess.run([sys.executable, "scripts/build_smoother.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert not re.search(r"^\s*import\b", MODULE.read_text(), re.M)


@pytest.fixture(scope="module")
def page(browser, static_server):
    p = browser.new_page()
    p.goto(f"{static_server}/static/js/pacelab-smoother.md")  # any same-origin URL; the page is replaced
    p.set_content(PAGE)
    p.wait_for_function("window.ready === true")
    yield p
    p.close()


def test_every_strategy_is_exported(page):
    names = page.evaluate("window.names")
    assert {"token", "smooth", "ai-sdk-smooth", "chat-ui-smooth", "accelerating", "typewriter"} <= set(names)


@pytest.mark.parametrize("strategy,options", [
    ("smooth", {"drainMs": 120}),
    ("ai-sdk-smooth", {"delayInMs": 10}),
    ("chat-ui-smooth", {"maxBufferedMs": 400}),
    ("accelerating", {}),
    ("typewriter", {"charsPerSec": 300}),
])
def test_a_plain_page_smooths_a_stream_of_chunks_with_the_exported_module(page, strategy, options):
    out = page.evaluate("([s, o, c, g]) => window.runOne(s, o, c, g)", [strategy, options, CHUNKS, 25])
    source = "".join(CHUNKS)
    assert out["text"] == source and out["shown"] == source
    assert len(out["reveals"]) > 10  # streamed, not dumped at the end
    # nothing is revealed before it arrived
    arrived_by = []
    total = 0
    for t, c in out["arrivals"]:
        total += len(c)
        arrived_by.append((t, total))
    shown = 0
    for t, d in out["reveals"]:
        shown += len(d)
        assert shown <= max((n for at, n in arrived_by if at <= t + 0.5), default=0)
    if strategy == "chat-ui-smooth":  # its promise holds outside PaceLab too (plus a loaded machine's frames)
        first_shown = {}
        pos = 0
        for t, d in out["reveals"]:
            for _ in d:
                first_shown[pos] = t
                pos += 1
        pos, worst = 0, 0.0
        for at, c in out["arrivals"]:
            for _ in c:
                worst = max(worst, first_shown[pos] - at)
                pos += 1
        assert worst <= 400 + 100


def test_the_async_iterable_form_yields_the_whole_text(page):
    assert page.evaluate("([c, g]) => window.runIterable('word', c, g)", [CHUNKS, 10]) == "".join(CHUNKS)
