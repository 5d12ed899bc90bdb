"""Scoring requests with a perception model: the share accepting is the model's Φ, its interval comes from the
model's draws, the summary counts requests above the population share, the worst requests say why, requests
outside the tested range are counted, and a comparison says which run feels faster and how sure."""

import math

import pytest
from model_results import DEMO, results
from scipy import stats

from analysis.reporting import score_text  # noqa: E402
from analysis.stats import perception_model, score_compare, scoring
from analysis.stats.scoring import Request  # noqa: E402

MODEL = perception_model.build(results(mu_300=20.0, mu_2000=30.0, sigma=0.35), DEMO,
                               {"study": "t", "data_version": "v", "created": "c", "bots": True})


def req(i, tps, ttft, prompt=""):
    return Request(id=f"r{i}", level=tps, second=ttft, ttft_ms=ttft, tokens_per_s=tps, chars_per_s=tps * 4,
                   stall_total_ms=0.0, prompt=prompt)


def test_a_request_at_the_median_threshold_is_accepted_by_half_the_population():
    out = scoring.score(MODEL, [req(0, 20.0, 300.0), req(1, 30.0, 2000.0)])
    assert [r["share"] for r in out["requests"]] == pytest.approx([0.5, 0.5], abs=1e-9)


def test_the_share_is_phi_of_the_log_rate_against_mu_interpolated_in_ttft():
    # halfway in TTFT: μ halfway between ln 20 and ln 30 on the log axis
    out = scoring.score(MODEL, [req(0, 30.0, 1150.0)])
    mu = (math.log(20) + math.log(30)) / 2
    assert out["requests"][0]["share"] == pytest.approx(stats.norm.cdf((math.log(30) - mu) / 0.35), abs=1e-9)


def test_every_interval_contains_its_point_and_faster_requests_are_accepted_by_more():
    out = scoring.score(MODEL, [req(i, tps, 800.0) for i, tps in enumerate([12, 18, 25, 35, 50])])
    shares = [r["share"] for r in out["requests"]]
    assert shares == sorted(shares) and shares[0] < 0.2 and shares[-1] > 0.9
    assert all(r["low"] <= r["share"] <= r["high"] for r in out["requests"])
    assert any(r["high"] - r["low"] > 0.05 for r in out["requests"])


def test_the_summary_counts_requests_acceptable_to_the_population_share_asked_for():
    rs = [req(i, tps, 300.0) for i, tps in enumerate([10, 15, 25, 40, 55])]
    at_75 = scoring.score(MODEL, rs)
    at_50 = scoring.score(MODEL, rs, population_share=0.5)
    shares = [r["share"] for r in at_75["requests"]]
    assert at_75["acceptable"]["count"] == sum(s >= 0.75 for s in shares)
    assert at_50["acceptable"]["count"] == sum(s >= 0.5 for s in shares) > at_75["acceptable"]["count"]
    lo, hi = at_75["acceptable"]["interval"]
    assert lo <= at_75["acceptable"]["share"] <= hi


def test_the_worst_requests_come_first_and_say_whether_ttft_or_rate_holds_them_back():
    out = scoring.score(MODEL, [req(0, 12.0, 400.0), req(1, 55.0, 1990.0), req(2, 50.0, 300.0)])
    worst = out["worst"]
    assert worst[0]["id"] == "r0" and worst[0]["cause"] == "rate"
    slow_start = next(w for w in worst if w["id"] == "r1")
    assert slow_start["share"] < next(w for w in worst if w["id"] == "r2")["share"]


def test_a_long_ttft_is_named_as_the_cause():
    out = scoring.score(MODEL, [req(0, 28.0, 2000.0)])
    assert out["worst"][0]["cause"] == "ttft"


def test_requests_outside_the_tested_range_are_counted_and_named_never_silently_scored():
    out = scoring.score(MODEL, [req(0, 25.0, 800.0), req(1, 150.0, 800.0), req(2, 25.0, 50.0)])
    ex = out["extrapolated"]
    assert ex["count"] == 2 and ex["by_predictor"] == {"tokens_per_s": 1, "ttft_ms": 1}
    assert ex["requests"] == ["r1", "r2"]
    assert [r["extrapolated"] for r in out["requests"]] == [False, True, True]
    text = "\n".join(score_text.summary(out))
    assert "EXTRAPOLATED: 2 of 3 requests" in text and "SIMULATED PARTICIPANTS" in text


def test_a_request_without_a_decode_rate_is_not_scored_but_counted():
    out = scoring.score(MODEL, [req(0, 25.0, 800.0), Request("one-piece", None, 500.0, 500.0, None, None, 0.0)])
    assert out["n_scored"] == 1 and out["n_unscored"] == 1 and out["unscored"] == ["one-piece"]


def test_a_population_share_outside_0_1_is_refused():
    with pytest.raises(ValueError, match="population-share"):
        scoring.score(MODEL, [req(0, 25.0, 800.0)], population_share=1.0)


def test_scores_are_reproducible_for_a_seed():
    rs = [req(i, 10 + 3 * i, 300 + 100 * i) for i in range(10)]
    assert scoring.score(MODEL, rs, seed=3)["requests"] == scoring.score(MODEL, rs, seed=3)["requests"]


def _scored(rs):
    return scoring.score(MODEL, rs, keep_draws=True)


def test_a_faster_run_is_named_faster_paired_by_prompt_when_prompts_match():
    a = _scored([req(i, 15.0 + i, 900.0, prompt=f"p{i}") for i in range(30)])
    b = _scored([req(i, 18.0 + i, 700.0, prompt=f"p{i}") for i in reversed(range(30))])
    cmp = score_compare.compare(a, b)
    assert cmp["method"] == "paired" and cmp["n_pairs"] == 30
    assert cmp["faster"] == "B" and cmp["mean_share"]["difference"] > 0 and cmp["mean_share"]["p_b_better"] > 0.95
    lo, hi = cmp["mean_share"]["interval"]
    assert 0 < lo <= cmp["mean_share"]["difference"] <= hi


def test_without_matching_prompts_the_runs_are_resampled_and_equal_runs_are_undecided():
    a = _scored([req(i, 15.0 + i, 900.0) for i in range(30)])
    b = _scored([req(i, 15.0 + i, 900.0) for i in range(30)])
    cmp = score_compare.compare(a, b)
    assert cmp["method"] == "resampled" and cmp["faster"] == "undecided"
    assert cmp["mean_share"]["difference"] == pytest.approx(0.0)
    assert "neither feels faster" in "\n".join(score_text.comparison(cmp, "a", "b"))
