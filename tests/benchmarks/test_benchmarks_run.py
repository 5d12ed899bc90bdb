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


def test_analysis_benchmark_prints_coverage_rows_for_the_chosen_designs():
    out = subprocess.run(
        [sys.executable, "benchmarks/analysis.py", "--datasets", "4", "--psignifit-datasets", "0",
         "--design", "20/level", "--intervals", "hybrid"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "coverage target" in out and "rows per level: 4 (default)" in out
    rows = [line for line in out.splitlines() if line.startswith("yes/no 20/level")]
    assert len(rows) == 2 and all(" pacelab " in r and "     4 " in r for r in rows)  # the table, then the summary


def test_analysis_benchmark_sets_the_rows_per_level_and_refuses_more_rows_than_trials():
    ok = subprocess.run(
        [sys.executable, "benchmarks/analysis.py", "--datasets", "3", "--psignifit-datasets", "0",
         "--design", "overdispersed .3", "--intervals", "hybrid", "--blocks", "10"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "rows per level: 10," in ok and "yes/no overdispersed .3" in ok
    bad = subprocess.run([sys.executable, "benchmarks/analysis.py", "--blocks", "21"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--blocks must lie between 1 and 20" in bad.stderr


def test_analysis_benchmark_prints_the_population_quantiles_coverage_rows():
    out = subprocess.run(
        [sys.executable, "benchmarks/analysis.py", "--design", "population", "--population-runs", "2",
         "--psignifit-datasets", "0"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "population quantile: coverage target" in out
    rows = [line for line in out.splitlines() if line.startswith(("population 12 people", "population 30 people"))]
    assert len(rows) == 4 and all(" pacelab profile-t " in r and "     2 " in r for r in rows)  # table, summary
    assert not any(line.startswith("yes/no") for line in out.splitlines())


def test_pooled_benchmark_prints_model_and_reported_coverage_for_every_design():
    out = subprocess.run(
        [sys.executable, "benchmarks/pooled.py", "--datasets", "1"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "model cov" in out and "reported cov" in out
    assert sum(line.startswith(("12 people", "30 people")) for line in out.splitlines()) == 4


def test_analysis_benchmark_checks_the_interval_of_another_proportion_when_asked():
    out = subprocess.run(
        [sys.executable, "benchmarks/analysis.py", "--datasets", "30", "--psignifit-datasets", "5",
         "--design", "50/level", "--intervals", "hybrid", "--proportion", "0.75", "--population-runs", "0"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "checked: the level where ψ reaches 75 % (threshold_at)" in out
    rows = [line for line in out.splitlines() if line.startswith("yes/no 50/level")]
    assert len(rows) == 2 and not any("psignifit" in r for r in rows)  # its intervals there are bounds
    # the truth is the 75 % point (about 47.8), not the fitted 50 % threshold (40), which these intervals miss
    coverage = float(rows[0].split()[4].rstrip("%"))
    assert coverage >= 80
    # a 2AFC ψ runs from 50 % up: no level reaches 30 %, so those designs are named and left out, not scored 0 %
    below = subprocess.run(
        [sys.executable, "benchmarks/analysis.py", "--datasets", "2", "--psignifit-datasets", "0", "--design", "2AFC",
         "--intervals", "hybrid", "--proportion", "0.3", "--population-runs", "0"],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    assert "note: 2AFC 30/level left out: its ψ never reaches 30 %" in below
    assert not any(line.startswith("2AFC") for line in below.splitlines())
    bad = subprocess.run([sys.executable, "benchmarks/analysis.py", "--proportion", "1.5"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--proportion must lie strictly between 0 and 1" in bad.stderr
