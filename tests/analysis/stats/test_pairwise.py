"""Pairwise scaling: Thurstone Case V in JOD, Bradley–Terry, observer bootstrap, 2AFC PSE/JND."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr
from scipy.stats import spearmanr

from analysis.stats.pairwise import (
    SIGMA,
    Comparisons,
    PairwiseError,
    bootstrap_counts,
    bradley_terry_scale,
    comparisons_from_frame,
    preference,
    pse_jnd,
    scale,
    thurstone_scale,
)


def simulate(scores, participants=20, reps=2, seed=1) -> Comparisons:
    rng = np.random.default_rng(seed)
    n = len(scores)
    counts = np.zeros((participants, n, n))
    for p in range(participants):
        for i in range(n):
            for j in range(i + 1, n):
                w = rng.binomial(reps, ndtr((scores[i] - scores[j]) / SIGMA))
                counts[p, i, j] += w
                counts[p, j, i] += reps - w
    return Comparisons(tuple(f"c{i}" for i in range(n)), tuple(f"p{i}" for i in range(participants)), counts)


def test_one_jod_is_75_percent_preference():
    assert preference(1.0) == pytest.approx(0.75)
    counts = np.array([[0, 25], [75, 0]], float)  # condition 1 preferred in 75 % of 100 trials
    assert thurstone_scale(counts, prior=False) == pytest.approx([0.0, 1.0], abs=1e-6)
    assert bradley_terry_scale(counts, alpha=0.0) == pytest.approx([0.0, 1.0], abs=1e-6)


def test_three_conditions_one_jod_apart_scale_to_0_1_2():
    far = round(10000 * float(ndtr(2 / SIGMA)))  # A vs C: the Case V share for a 2-JOD gap
    counts = np.array([[0, 2500, 10000 - far], [7500, 0, 2500], [far, 7500, 0]], float)
    assert thurstone_scale(counts) == pytest.approx([0.0, 1.0, 2.0], abs=0.01)


def test_scores_are_anchored_at_the_first_condition():
    data = simulate([0.5, 0.0, 2.0, 1.0])
    q = thurstone_scale(data.total)
    assert q[0] == 0.0
    assert np.argsort(q).tolist() == [1, 0, 3, 2]


def test_unanimous_pairs_get_finite_scores_shrunk_by_the_prior():
    counts = np.array([[0, 0, 3], [5, 0, 4], [1, 0, 0]], float)  # condition 1 always beat 0 and 2
    with_prior = thurstone_scale(counts)
    without = thurstone_scale(counts, prior=False)
    assert np.all(np.isfinite(with_prior))
    assert with_prior[1] > 0.5
    assert with_prior[1] < without[1]
    assert np.all(np.isfinite(bradley_terry_scale(counts)))


def test_a_single_unanimous_vote_still_scales():
    q = thurstone_scale(np.array([[0, 0], [1, 0]], float))
    assert 0 < q[1] < 3


def test_bradley_terry_agrees_in_order_with_thurstone():
    data = simulate([0.0, 1.5, 0.4, 2.4, 0.9, 3.1], participants=15)
    th = thurstone_scale(data.total)
    bt = bradley_terry_scale(data.total)
    assert spearmanr(th, bt).statistic == pytest.approx(1.0)
    assert np.max(np.abs(th - bt)) < 0.35  # same 75 % unit, so the scales nearly coincide


def test_frame_counts_winners_ties_and_observers():
    df = pd.DataFrame({
        "participant": ["p1", "p1", "p2", "p2"],
        "a": ["slow", "fast", "slow", "slow"],
        "b": ["fast", "slow", "fast", "fast"],
        "winner": ["fast", "fast", "slow", "tie"],
    })
    data = comparisons_from_frame(df)
    assert data.conditions == ("slow", "fast")
    assert data.participants == ("p1", "p2")
    assert data.counts[0].tolist() == [[0, 0], [2, 0]]
    assert data.counts[1].tolist() == [[0, 1.5], [0.5, 0]]


def test_frame_with_unknown_winner_is_rejected():
    df = pd.DataFrame({"a": ["x"], "b": ["y"], "winner": ["z"]})
    with pytest.raises(PairwiseError, match="winner 'z'"):
        comparisons_from_frame(df)


def test_disconnected_design_is_rejected():
    counts = np.array([[0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 2, 0]], float)
    with pytest.raises(PairwiseError, match="disconnected"):
        thurstone_scale(counts)


def test_bootstrap_resamples_whole_observers():
    data = simulate([0.0, 1.0, 2.0], participants=5, reps=1)
    boots = bootstrap_counts(data, 50, np.random.default_rng(0))
    per_observer = data.counts.sum(axis=(1, 2))[0]
    assert boots.shape == (50, 3, 3)
    assert np.all(boots.sum(axis=(1, 2)) == per_observer * 5)  # five whole observers each time


def test_scale_gives_bootstrap_cis_around_the_estimate():
    data = simulate([0.0, 1.0, 2.0, 0.5], participants=12)
    out = scale(data, n_boot=200)
    assert out["condition"].tolist() == ["c0", "c1", "c2", "c3"]
    assert out.attrs["n_boot"] == 200
    assert (out["ci_low"] <= out["jod"] + 1e-9).all() and (out["jod"] <= out["ci_high"] + 1e-9).all()
    assert out.loc[0, ["ci_low", "ci_high"]].tolist() == [0.0, 0.0]
    assert (out.loc[1:, "ci_high"] - out.loc[1:, "ci_low"] > 0.05).all()
    assert out.sort_values("jod")["condition"].tolist() == ["c0", "c3", "c1", "c2"]


def test_scale_of_a_bare_matrix_resamples_trials():
    counts = np.array([[0, 10, 4], [20, 0, 9], [26, 21, 0]], float)
    out = scale(counts, conditions=["a", "b", "c"], method="bradley_terry", n_boot=100)
    assert out["condition"].tolist() == ["a", "b", "c"]
    assert out.attrs["n_boot"] == 100
    assert (out["jod"].diff().dropna() > 0).all()


def test_pse_and_jnd_of_a_logistic_observer():
    rng = np.random.default_rng(3)
    levels = np.repeat(np.linspace(20, 60, 9), 40)
    pse, s = 40.0, 5.0
    p = 1 / (1 + np.exp(-(levels - pse) / s))
    df = pd.DataFrame({
        "level": levels, "response": (rng.random(len(levels)) < p).astype(int),
        "participant": np.tile(np.arange(20), len(levels) // 20),
    })
    res = pse_jnd(df, n_boot=200)
    assert res.pse == pytest.approx(pse, abs=1.5)
    assert res.jnd == pytest.approx(s * np.log(3), rel=0.2)
    assert res.pse_ci[0] < res.pse < res.pse_ci[1]
    assert res.jnd_ci[0] < res.jnd < res.jnd_ci[1]


def test_pse_jnd_rejects_non_binary_answers():
    df = pd.DataFrame({"level": [1, 2, 3], "response": [0, 2, 1]})
    with pytest.raises(PairwiseError, match="0 or 1"):
        pse_jnd(df)


def test_scale_accepts_a_tidy_frame_with_the_reference_first():
    rows = [(f"p{p}", "ref", "fast", "fast" if k < 3 else "ref") for p in range(6) for k in range(4)]
    df = pd.DataFrame(rows, columns=["participant", "a", "b", "winner"])
    out = scale(df, conditions=["ref", "fast"], n_boot=50)
    assert out["condition"].tolist() == ["ref", "fast"]
    assert out.loc[1, "jod"] == pytest.approx(1.0, abs=0.15)  # 75 % chose "fast"


@pytest.mark.parametrize("method", ["thurstone", "bradley_terry"])
def test_a_unanimous_pair_gets_an_interval_that_narrows_with_more_answers(method):
    def interval(observers):
        df = pd.DataFrame({"participant": [f"p{i}" for i in range(observers)], "a": "fast", "b": "slow",
                           "winner": "fast"})
        row = scale(df, method=method, n_boot=400).set_index("condition").loc["slow"]
        return row["jod"], row["ci_low"], row["ci_high"]

    jod3, lo3, hi3 = interval(3)
    jod40, lo40, hi40 = interval(40)
    assert lo3 <= jod3 < hi3 and hi3 - lo3 > 0.5  # three answers cannot pin the difference down
    assert 0 < hi40 - lo40 < hi3 - lo3
    matrix = scale(np.array([[0.0, 3.0], [0.0, 0.0]]), method=method, n_boot=400)
    assert matrix["ci_high"].iloc[1] - matrix["ci_low"].iloc[1] > 0.5


def test_bradley_terry_refuses_a_disconnected_design_whatever_its_regularisation():
    two_islands = np.array([[0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 2, 0]], dtype=float)
    for alpha in (0.0, 0.1, 1.0):
        with pytest.raises(PairwiseError, match="disconnected"):
            bradley_terry_scale(two_islands, alpha=alpha)


def test_a_missing_winner_counts_half_each_way_with_numeric_labels():
    df = pd.DataFrame({"participant": ["p1", "p2", "p3"], "a": [10, 10, 20], "b": [20, 40, 40],
                       "winner": [10, None, 40]})
    c = comparisons_from_frame(df).total
    assert (c[0, 1], c[1, 0], c[0, 2], c[2, 0], c[2, 1]) == (1, 0, 0.5, 0.5, 1)
    nullable = pd.DataFrame({"a": pd.array([1, 1], dtype="Int64"), "b": pd.array([3, 3], dtype="Int64"),
                             "winner": pd.array([1, pd.NA], dtype="Int64")})
    assert comparisons_from_frame(nullable, participant=None).total[0, 1] == 1.5


@pytest.mark.parametrize("responses, message", [
    (lambda lv: (lv > 0).astype(int), "between 0 and 1"),  # complete separation
    (lambda lv: (lv >= 0).astype(int), "between -1 and 0"),  # falls the other side of 0
    (lambda lv: np.ones_like(lv, dtype=int), "every answer is 1"),
])
def test_pse_jnd_says_what_the_data_show_when_the_levels_split_the_answers(responses, message):
    levels = np.repeat(np.array([-2.0, -1.0, 0.0, 1.0, 2.0]), 20)
    df = pd.DataFrame({"level": levels, "response": responses(levels), "participant": np.tile(np.arange(10), 10)})
    with pytest.raises(PairwiseError, match=message):
        pse_jnd(df, n_boot=50)
    if "between" in message:  # one answer in ten the other way at every level: the fit is back
        mixed = df.assign(response=np.where(df.index % 10 == 0, 1 - df["response"], df["response"]))
        assert np.isfinite(pse_jnd(mixed, n_boot=50).jnd)
