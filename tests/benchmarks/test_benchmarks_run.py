"""The stream-core benchmark runs end to end (small sizes) and prints its table."""

import subprocess
import sys

from procs import ROOT


def test_stream_core_benchmark_prints_a_table_with_both_baselines():
    out = subprocess.run(
        [sys.executable, "benchmarks/stream_core.py", "--requests", "100", "--tokens", "10000"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "json.load" in out and "importers.load vllm" in out and "synthesize" in out
    assert "x base" in out


def test_pairwise_benchmark_runs_and_prints_its_timings():
    out = subprocess.run(
        [sys.executable, "benchmarks/pairwise.py", "--conditions", "6", "--boot", "100"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "thurstone" in out and "bradley_terry" in out and "bootstrap (s)" in out


def test_adaptive_benchmark_runs_in_quick_mode_and_reports_every_procedure():
    out = subprocess.run(
        [sys.executable, "benchmarks/adaptive.py", "--runs", "10", "--timing-runs", "20"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    for name in ("1up1down", "1up2down", "1up3down", "weighted", "QUEST+"):
        assert name in out
    assert "p95" in out
