"""Which metric predicts the answers: rank correlation and grouped held-out log-likelihood."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.stats.predictors import CANDIDATES, PredictorError, candidate_metrics, grouped_folds, rank_predictors
from playback.core.stream import Piece, Stream


def simulated_study(kind: str, seed: int = 0, stimuli: int = 40, participants: int = 30):
    """Random candidate metrics; answers driven by TTFT alone (longer TTFT, fewer "felt fast")."""
    rng = np.random.default_rng(seed)
    metrics = pd.DataFrame({"stimulus": [f"s{i}" for i in range(stimuli)]})
    for name in CANDIDATES:
        metrics[name] = rng.normal(size=stimuli)
    metrics.loc[3, "tokens_per_s"] = math.nan  # undefined for one stimulus
    rows = []
    for p in range(participants):
        for s in range(stimuli):
            drive = -1.5 * metrics.loc[s, "ttft_ms"]
            if kind == "binary":
                answer = int(rng.random() < 1 / (1 + math.exp(-drive)))
            else:
                answer = float(np.clip(np.round(3 + drive + rng.normal(0, 1)), 1, 5))
            rows.append((f"p{p}", f"s{s}", answer))
    return metrics, pd.DataFrame(rows, columns=["participant", "stimulus", "response"])


def test_the_generating_metric_ranks_first_on_yes_no_answers():
    metrics, responses = simulated_study("binary")
    table = rank_predictors(metrics, responses, n_boot=200)
    assert table.attrs["kind"] == "binary"
    assert table.loc[0, "metric"] == "ttft_ms"
    assert table["rank"].tolist() == list(range(1, len(CANDIDATES) + 1))
    best = table.iloc[0]
    assert best["loglik_gain"] > 0.05
    assert best["spearman"] < -0.8 and best["spearman_ci_high"] < -0.6
    assert (table["loglik_gain"].iloc[1:] < 0.02).all()


def test_the_generating_metric_ranks_first_on_ratings():
    metrics, responses = simulated_study("rating", seed=1)
    table = rank_predictors(metrics, responses, n_boot=200)
    assert table.attrs["kind"] == "rating"
    assert table.loc[0, "metric"] == "ttft_ms"
    assert "loglik_gain" not in table.columns
    assert table.loc[0, "kendall"] < -0.6


def test_undefined_metric_values_drop_only_their_stimulus():
    metrics, responses = simulated_study("binary", seed=2)
    table = rank_predictors(metrics, responses, n_boot=50).set_index("metric")
    assert table.loc["tokens_per_s", "n_stimuli"] == 39
    assert table.loc["tokens_per_s", "n_trials"] == 39 * 30
    assert table.loc["ttft_ms", "n_stimuli"] == 40


def test_folds_never_split_a_participant():
    groups = np.repeat([f"p{i}" for i in range(7)], 5)
    folds = grouped_folds(groups, 5, np.random.default_rng(0))
    per_group = pd.Series(folds).groupby(groups).nunique()
    assert (per_group == 1).all()
    assert len(set(folds)) == 5


def test_responses_for_unknown_stimuli_are_rejected():
    metrics, responses = simulated_study("binary", stimuli=5, participants=2)
    responses.loc[0, "stimulus"] = "ghost"
    with pytest.raises(PredictorError, match="ghost"):
        rank_predictors(metrics, responses)


def test_candidate_metrics_of_real_streams():
    smooth = Stream(pieces=tuple(Piece("ab ", 1000.0 + 200.0 * i) for i in range(6)), id="smooth")
    stalled = Stream(pieces=(Piece("ab ", 300.0), Piece("cd ", 2300.0), Piece("ef ", 2400.0)), id="stalled")
    single = Stream(pieces=(Piece("all at once", 500.0, tokens=3),), id="single")
    table = candidate_metrics({"smooth": smooth, "stalled": stalled, "single": single}).set_index("stimulus")
    assert list(table.columns) == list(CANDIDATES)
    assert table.loc["smooth", "ttft_ms"] == 1000.0
    assert table.loc["smooth", "andes_qoe"] == pytest.approx(1.0)
    assert table.loc["smooth", "fluidity_index"] == 1.0
    assert table.loc["stalled", "stall_total_ms"] == 2000.0
    assert table.loc["stalled", "fluidity_index"] < 1.0
    assert math.isnan(table.loc["single", "tokens_per_s"])


def test_a_metric_constant_over_the_stimuli_is_listed_but_not_ranked():
    metrics = pd.DataFrame({"stimulus": list("abcd"), "ttft_ms": [1500.0] * 4, "tokens_per_s": [10.0, 20, 30, 40]})
    ratings = pd.DataFrame({"stimulus": list("abcd") * 3, "response": [1, 2, 4, 5] * 3,
                            "participant": [0] * 4 + [1] * 4 + [2] * 4})
    table = rank_predictors(metrics, ratings, n_boot=50).set_index("metric")
    assert table.loc["tokens_per_s", "rank"] == 1
    assert pd.isna(table.loc["ttft_ms", "rank"]) and np.isnan(table.loc["ttft_ms", "spearman"])


def test_yes_no_answers_that_never_vary_give_no_metric_a_gain():
    metrics = pd.DataFrame({"stimulus": list("abcde"), "ttft_ms": [300, 800, 1500, 2500, 4000.0],
                            "tokens_per_s": [5, 10, 20, 40, 80.0]})
    answers = pd.DataFrame([{"stimulus": s, "participant": p, "response": 1} for s in "abcde" for p in range(10)])
    table = rank_predictors(metrics, answers, n_boot=20)
    assert table["loglik_gain"].isna().all() and table["rank"].isna().all()
