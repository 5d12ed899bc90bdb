"""Population acceptability: quantile of the threshold distribution vs the mean of individual thresholds."""

import numpy as np
import pandas as pd
import pytest
from scipy import special

from analysis.stats import population
from analysis.stats.population import CensoredError, fit_by_condition, fit_by_participant, fit_population, shift_phrase
from analysis.stats.psychometric import FitOptions, blocks, fit
from analysis.stats.sigmoids import Sigmoid

OPTS = FitOptions(lapse=0.0, guess=0.0)


def _population(rng, mu, sd, people=30, levels=np.linspace(5, 65, 7), n=10, condition="plain", falling=False):
    s = Sigmoid("logistic")
    rows = []
    for p in range(people):
        m = rng.normal(mu, sd)
        for level in levels:
            pr = s(-level, -m, 10.0) if falling else s(level, m, 10.0)
            rows.append((condition, f"{condition}-{p}", level, int(rng.binomial(n, pr)), n))
    return pd.DataFrame(rows, columns=["condition", "participant", "level", "n_positive", "n_total"])


def test_recovers_the_75_percent_point_of_the_population():
    df = _population(np.random.default_rng(0), mu=35.0, sd=8.0, people=40)
    r = fit_population(df, OPTS, individual=False)
    truth = 35.0 + 0.6745 * 8.0
    lo, hi = r.quantile_ci_95
    assert lo < truth < hi
    assert r.sigma == pytest.approx(8.0, rel=0.35)
    assert r.quantile_level > r.mu_level  # rising acceptability: 75 % of people accept above the median


def test_people_who_agree_still_get_an_interval_from_the_profile_likelihood():
    # σ ≈ 0: the delta method has no interval (the information on log σ vanishes); the profile likelihood does
    df = _population(np.random.default_rng(5), mu=30.0, sd=0.0, people=30, n=2)
    r = fit_population(df, OPTS, individual=False)
    assert r.sigma < 2.0
    lo, hi = r.quantile_ci_95
    assert np.isfinite(lo) and np.isfinite(hi) and lo < r.quantile_level < hi and lo < 30.0 < hi
    mlo, mhi = r.mu_ci_95
    assert np.isfinite(mlo) and np.isfinite(mhi) and mlo < r.mu_level < mhi
    assert hi - lo < 20.0  # informative: the tested levels span 60
    assert r.interval_method == "profile-t"
    step = 3 * 60.0 / 240  # the threshold grid: one range either side of the levels, 241 nodes
    assert r.sigma >= step - 1e-9  # the σ reported is one the likelihood could resolve, and used


@pytest.mark.parametrize("accept, said", [(1, "'yes'"), (0, "'no'")])
def test_answers_all_one_way_leave_the_population_quantile_unestimated(accept, said):
    df = _population(np.random.default_rng(1), 30.0, 5.0, people=6)
    df["n_positive"] = df["n_total"] * accept
    with pytest.raises(CensoredError, match=f"nearly every answer was {said}.*tested levels \\(5-65\\)"):
        fit_population(df, OPTS, individual=False)


def test_few_participants_get_the_profile_interval_with_a_students_t_cut(monkeypatch):
    # 12 people: the Wald interval with a normal quantile covered 89 % of a 95 % target in simulation, missing
    # mostly above (σ estimated low); the profile likelihood cut at t²(11)/2 covered 95-97 % (docs/analysis.md)
    cuts = []
    profile = population._profile_interval
    monkeypatch.setattr(population, "_profile_interval", lambda *a: cuts.append(a[6]) or profile(*a))
    df = _population(np.random.default_rng(0), mu=35.0, sd=8.0, people=12, n=5)
    r = fit_population(df, OPTS, individual=False)
    t = 2.2010  # Student's t, 97.5 %, 11 degrees of freedom
    assert r.interval_method == "profile-t"
    assert cuts == [pytest.approx(t**2 / 2, rel=1e-4)]  # the quantile's only: μ's Wald interval stands
    lo, hi = r.quantile_ci_95
    assert lo < r.quantile_level < hi
    assert hi - r.quantile_level > 1.3 * (r.quantile_level - lo)  # follows σ's skewed likelihood; Wald would not
    narrow = fit_population(df, FitOptions(lapse=0.0, guess=0.0, ci=0.8), individual=False)
    mu_ratio = (narrow.mu_ci_95[1] - narrow.mu_ci_95[0]) / (r.mu_ci_95[1] - r.mu_ci_95[0])
    assert mu_ratio == pytest.approx(1.3634 / t, rel=1e-3)  # μ: Wald with t(11), not the normal's 1.2816 / 1.96


def test_the_point_is_restricted_maximum_likelihoods_and_the_interval_the_plain_likelihoods():
    # maximum likelihood puts σ, and so the 75 % point, low with few people (3 % of the width at 12); the
    # REML-type fit corrects the point. The interval is the plain likelihood's profile with the t cut either way
    # (it covered 95-96 %; the REML likelihood's own profile 94 % with the χ²₁ cut, 97 % with the t cut)
    df = _population(np.random.default_rng(0), mu=35.0, sd=8.0, people=12, n=5)
    reml = fit_population(df, OPTS, individual=False)
    ml = fit_population(df, OPTS, individual=False, reml=False)
    assert (reml.estimation, ml.estimation) == ("reml", "ml")
    assert ml.sigma < reml.sigma and ml.quantile_level < reml.quantile_level
    assert reml.quantile_ci_95 == ml.quantile_ci_95
    assert reml.mu_level == pytest.approx(ml.mu_level, abs=0.2)


def test_the_mu_information_is_the_normal_models_n_over_sigma2_plus_v():
    # each participant's likelihood for their threshold normal around x_i with variance v: integrating m_i out
    # leaves x_i ~ Normal(μ, σ² + v), whose information on μ is n / (σ² + v) at any μ
    grid = np.linspace(-60.0, 60.0, 2401)
    x, v, sigma, mu = np.array([-3.0, 0.5, 2.0, 7.0]), 4.0, 5.0, 1.5
    per = -0.5 * (grid[None, :] - x[:, None]) ** 2 / v
    log_prior = -0.5 * ((grid - mu) / sigma) ** 2
    log_prior -= special.logsumexp(log_prior)
    joint = per + log_prior[None, :]
    log_info = population._log_mu_information(joint, special.logsumexp(joint, axis=1), log_prior, grid, sigma)
    assert np.exp(log_info) == pytest.approx(len(x) / (sigma**2 + v), rel=1e-4)


def test_reml_divides_the_spread_by_n_minus_1_where_maximum_likelihood_divides_by_n():
    # thresholds measured almost exactly (400 trials at each of 25 levels): the fitted σ is the sample SD of the
    # thresholds, with the divisor n − 1 under REML and n under maximum likelihood, as for a normal sample
    rng = np.random.default_rng(3)
    s, levels, thresholds = Sigmoid("logistic"), np.linspace(5, 65, 25), rng.normal(35.0, 8.0, 6)
    rows = [(f"p{i}", level, int(rng.binomial(400, s(level, m, 4.0))), 400)
            for i, m in enumerate(thresholds) for level in levels]
    df = pd.DataFrame(rows, columns=["participant", "level", "n_positive", "n_total"])
    reml = fit_population(df, OPTS, individual=False)
    ml = fit_population(df, OPTS, individual=False, reml=False)
    assert reml.sigma == pytest.approx(np.std(thresholds, ddof=1), rel=0.03)
    assert ml.sigma == pytest.approx(np.std(thresholds, ddof=0), rel=0.03)
    assert reml.sigma / ml.sigma == pytest.approx(np.sqrt(6 / 5), rel=0.01)
    assert reml.mu_level == pytest.approx(ml.mu_level, abs=0.05)  # μ is the same mean either way


def test_the_interval_follows_the_confidence_level_asked_for():
    df = _population(np.random.default_rng(0), mu=35.0, sd=8.0, people=40)
    wide = fit_population(df, OPTS, individual=False).quantile_ci_95
    narrow = fit_population(df, FitOptions(lapse=0.0, guess=0.0, ci=0.8), individual=False).quantile_ci_95
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    ratio = (narrow[1] - narrow[0]) / (wide[1] - wide[0])
    assert ratio == pytest.approx(1.2816 / 1.96, rel=0.05)  # z(0.90) / z(0.975) on the fitting axis


def test_quantile_differs_from_the_mean_of_individual_thresholds_when_people_differ():
    df = _population(np.random.default_rng(1), mu=30.0, sd=10.0, people=12)
    r = fit_population(df, OPTS)
    assert r.mean_individual_threshold == pytest.approx(r.mu_level, abs=5.0)
    assert r.quantile_level - r.mean_individual_threshold > 3.0


def test_falling_curves_put_the_75_percent_point_below_the_median():
    df = _population(np.random.default_rng(2), mu=40.0, sd=8.0, people=30, falling=True)
    r = fit_population(df, FitOptions(lapse=0.0, guess=0.0, decreasing=True), individual=False)
    assert r.quantile_level < r.mu_level
    assert r.quantile_level == pytest.approx(40.0 - 0.6745 * 8.0, abs=4.0)


def test_trial_rows_and_block_rows_give_the_same_fit():
    blocks = _population(np.random.default_rng(3), mu=30.0, sd=6.0, people=8)
    trials = []
    for row in blocks.itertuples():
        trials += [(row.participant, row.level, 1)] * row.n_positive
        trials += [(row.participant, row.level, 0)] * (row.n_total - row.n_positive)
    trials = pd.DataFrame(trials, columns=["participant", "level", "response"])
    a = fit_population(blocks, OPTS, individual=False)
    b = fit_population(trials, OPTS, individual=False)
    assert a.quantile_level == pytest.approx(b.quantile_level, rel=1e-4)


def test_per_condition_table_and_sentence():
    rng = np.random.default_rng(4)
    df = pd.concat([_population(rng, 40.0, 5.0, people=15, condition="plain"),
                    _population(rng, 25.0, 5.0, people=15, condition="smooth")])
    table = fit_by_condition(df, OPTS, individual=False)
    assert list(table["condition"]) == ["plain", "smooth"]
    plain, smooth = table.set_index("condition").loc[["plain", "smooth"], "population_q"]
    assert smooth < plain
    text = shift_phrase(table, "plain", "smooth")
    assert text.startswith("condition smooth moves the 75 % point from ")
    assert f"{plain:.3g} to {smooth:.3g} tokens/s" in text


def test_per_participant_table_has_one_row_each():
    df = _population(np.random.default_rng(5), 30.0, 5.0, people=3)
    table = fit_by_participant(df, OPTS)
    assert len(table) == 3
    assert (table["ci_low"] < table["threshold"]).all() and (table["threshold"] < table["ci_high"]).all()


def test_needs_two_participants():
    df = _population(np.random.default_rng(6), 30.0, 5.0, people=1)
    with pytest.raises(ValueError, match="two participants"):
        fit_population(df, OPTS)


def test_the_pooled_interval_per_condition_reaches_as_far_as_the_participant_jackknife():
    rng = np.random.default_rng(8)
    df = _population(rng, 35.0, 12.0, people=12, n=4)  # people differ much more than the curve is wide
    row = fit_by_condition(df, OPTS, individual=False).iloc[0]
    assert row["pooled_ci_jackknife_groups"] == 12
    assert row["pooled_ci_low"] < row["pooled_threshold"] < row["pooled_ci_high"]
    model = fit(blocks(df["level"], df["n_positive"], df["n_total"]), OPTS).threshold_ci_95
    assert row["pooled_ci_high"] - row["pooled_ci_low"] > 1.3 * (model[1] - model[0])
    few = fit_by_condition(_population(rng, 35.0, 12.0, people=4, n=4), OPTS, individual=False).iloc[0]
    assert few["pooled_ci_jackknife_groups"] == 0


def test_a_failed_jackknife_refit_keeps_the_conditions_row_with_the_models_interval():
    # one person tested at every level and five at the middle one only: without that person no curve can be
    # fitted, so the jackknife cannot run; the condition keeps its pooled fit, as the pipeline does
    rng = np.random.default_rng(9)
    df = _population(rng, 35.0, 0.0, people=1, n=10)
    mid = pd.DataFrame([("plain", f"mid-{i}", 35.0, 5, 10) for i in range(5)], columns=df.columns)
    df = pd.concat([df, mid], ignore_index=True)
    row = fit_by_condition(df, OPTS, individual=False).iloc[0]
    assert row["pooled_ci_jackknife_groups"] == 0
    model = fit(blocks(df["level"], df["n_positive"], df["n_total"]), OPTS).threshold_ci_95
    assert (row["pooled_ci_low"], row["pooled_ci_high"]) == (pytest.approx(model[0]), pytest.approx(model[1]))


@pytest.mark.parametrize("sigmoid, log_axis, lapse, guess", [
    ("logistic", False, None, None),
    ("norm", True, None, 0.0),
    ("gumbel", False, 0.02, None),
    ("weibull", True, None, 0.0),
])
def test_the_exact_gradient_the_optimiser_follows_is_the_likelihoods_slope(sigmoid, log_axis, lapse, guess):
    # BFGS takes this gradient instead of finite differences: a wrong term would move every fit
    df = _population(np.random.default_rng(4), 30.0, 6.0, people=12)
    opts = FitOptions(sigmoid=sigmoid, log_axis=log_axis, lapse=lapse, guess=guess,
                      lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2))
    d = population._data(df, opts, 241)
    fixed_guess, _ = population._guess_lapse(opts)
    nll = population._negative_log_likelihood(d, opts, fixed_guess)
    rng = np.random.default_rng(1)
    start = np.asarray(population._start(d, opts, fixed_guess))
    for theta in (start, start + rng.normal(0, 0.3, len(start))):
        value, grad = nll.value_and_grad(theta)
        assert value == pytest.approx(nll(theta), rel=1e-12)
        h = 1e-5
        numeric = [(nll(theta + h * e) - nll(theta - h * e)) / (2 * h) for e in np.eye(len(theta))]
        np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-4 * max(1.0, abs(value)) / 100)
