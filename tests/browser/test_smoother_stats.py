"""The smoother numbers (static/js/playground/smoother_stats.js), the one implementation the playground's panels
and benchmarks/smoothers.py share (the benchmark's ``measure_one`` evaluates it in the page it drives), on a
play small enough to compute by hand. test_playground_lab.py checks that the panel and the benchmark agree on
a real play of four presets."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _benchmark():
    spec = importlib.util.spec_from_file_location("bench_smoothers_stats", ROOT / "benchmarks" / "smoothers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page(browser, static_server):
    p = browser.new_page()
    p.goto(f"{static_server}/player-test/")
    yield p
    p.close()


def test_the_numbers_by_hand(page):
    frames = [{"t_ms": 100.0, "text": "ab"}, {"t_ms": 200.0, "text": "c"}, {"t_ms": 300.0, "text": "中d"}]
    paints = [{"t_ms": 110.0, "dom_ms": 112.0, "text": "a"},  # the DOM write came after the frame start: it counts
              {"t_ms": 210.0, "dom_ms": 205.0, "text": "bc"},  # (a DOM time before the frame start does not)
              {"t_ms": 400.0, "text": "中d"}]  # a log without DOM times: the frame start
    row = _benchmark().measure_one(page, frames, paints, 16.7)
    # per character painted − arrived: a 12, b 110, c 10, 中 100, d 100
    assert (row["p50"], row["p95"], row["max"]) == (100.0, pytest.approx(108.0), 110.0)
    assert row["ttfp"] == 112.0 and row["last"] == 400.0 - 300.0
    assert row["paints"] == 3 and row["chars"] == pytest.approx(5 / 3) and row["frame"] == 16.7
    gaps = [210.0 - 112.0, 400.0 - 210.0]
    mean = sum(gaps) / 2
    assert row["cv"] == pytest.approx(math.sqrt(sum((g - mean) ** 2 for g in gaps) / 2) / mean)
    # still screens with arrived text held back: 100→112 (a), 112→210 (b), 300→400 (中): the longest is 100
    assert row["hold"] == pytest.approx(100.0)


def test_a_play_that_lost_characters_stops_the_benchmark(page):
    with pytest.raises(SystemExit, match="painted 1 of 2 characters"):
        _benchmark().measure_one(page, [{"t_ms": 0.0, "text": "ab"}], [{"t_ms": 5.0, "text": "a"}])
