"""Psychometric fits: sigmoid parameterisation, recovery on hand-checkable data, intervals, psignifit agreement."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from analysis.stats import psychometric as psy
from analysis.stats.psychometric import FitOptions, aggregate, blocks, fit, simulate
from analysis.stats.sigmoids import Sigmoid, psi

FAMILIES = ["logistic", "norm", "gumbel", "weibull"]


@pytest.mark.parametrize("name", FAMILIES)
def test_width_is_the_5_to_95_percent_rise_and_m_the_midpoint(name):
    s = Sigmoid(name)
    m, w = 3.0, 2.0
    assert s(m, m, w) == pytest.approx(0.5)
    assert s.inverse(0.95, m, w) - s.inverse(0.05, m, w) == pytest.approx(w)
    assert s(s.inverse(0.3, m, w), m, w) == pytest.approx(0.3)


def test_threshold_marks_the_chosen_proportion_of_the_rise():
    s = Sigmoid("norm", pc=0.75)
    assert s(1.0, 1.0, 4.0) == pytest.approx(0.75)


def test_psi_runs_from_guess_to_one_minus_lapse():
    s = Sigmoid("logistic")
    assert psi(s, -1e6, 0.0, 1.0, guess=0.5, lapse=0.03) == pytest.approx(0.5)
    assert psi(s, 1e6, 0.0, 1.0, guess=0.5, lapse=0.03) == pytest.approx(0.97)


def _exact(levels, n, m, w, name="logistic", guess=0.0, lapse=0.0):
    """Blocks whose proportions follow ψ as closely as integer counts allow."""
    z = np.log(levels) if name == "weibull" else np.asarray(levels, float)
    p = psi(Sigmoid(name), z, m, w, guess, lapse)
    return aggregate(levels, np.round(n * p), np.full(len(levels), n))


@pytest.mark.parametrize("name", ["logistic", "norm", "gumbel"])
def test_yes_no_fit_recovers_threshold_and_width_from_exact_proportions(name):
    levels = np.linspace(10, 70, 9)
    r = fit(_exact(levels, 2000, 40.0, 30.0, name, guess=0.02, lapse=0.02), FitOptions(sigmoid=name))
    assert r.threshold == pytest.approx(40.0, abs=0.6)
    assert r.width == pytest.approx(30.0, rel=0.08)
    assert r.threshold_ci_95[0] < 40.0 < r.threshold_ci_95[1]
    assert r.threshold_ci_95[1] - r.threshold_ci_95[0] < 5.0


def test_weibull_fits_on_log_levels_and_reports_threshold_in_levels():
    levels = np.geomspace(5, 80, 7)
    r = fit(_exact(levels, 2000, math.log(20.0), 1.5, "weibull", guess=0.5), FitOptions("weibull", "2AFC"))
    assert r.threshold == pytest.approx(20.0, rel=0.03)
    assert r.to_dict()["log_axis"] is True
    same = fit(_exact(levels, 2000, math.log(20.0), 1.5, "weibull", guess=0.5),
               FitOptions("gumbel", "2AFC", log_axis=True))
    assert same.threshold == pytest.approx(r.threshold, rel=1e-6)


def test_2afc_holds_guess_at_one_half():
    levels = np.linspace(1, 9, 6)
    r = fit(_exact(levels, 100, 5.0, 4.0, guess=0.5), FitOptions(experiment="2AFC"))
    assert r.guess == 0.5


def test_fixed_lapse_is_kept():
    levels = np.linspace(1, 9, 6)
    r = fit(_exact(levels, 100, 5.0, 4.0, lapse=0.1), FitOptions(lapse=0.1))
    assert r.lapse == pytest.approx(0.1)


def test_threshold_at_75_percent_of_psi_in_2afc_is_the_core_midpoint():
    levels = np.linspace(1, 9, 7)
    r = fit(_exact(levels, 3000, 5.0, 4.0, guess=0.5), FitOptions(experiment="2AFC", lapse=0.0))
    point, (lo, hi) = r.threshold_at(0.75)
    assert point == pytest.approx(r.threshold, abs=1e-6)
    assert lo < point < hi


def test_threshold_at_other_proportions_gets_its_own_interval():
    levels = np.linspace(10, 70, 7)
    r = fit(_exact(levels, 200, 40.0, 30.0, guess=0.02, lapse=0.02))
    p90, (lo90, hi90) = r.threshold_at(0.9)
    expected = Sigmoid("logistic").inverse((0.9 - r.guess) / (1 - r.guess - r.lapse), r.map_params["m"], r.width)
    assert p90 == pytest.approx(float(expected))
    assert lo90 < p90 < hi90
    assert p90 > r.threshold
    # a level further along the rise is less certain than the midpoint
    assert hi90 - lo90 > r.threshold_ci_95[1] - r.threshold_ci_95[0]


def test_falling_curve_mirrors_the_rising_one():
    levels = np.linspace(100, 1500, 8)  # TTFT in ms: acceptability falls
    rising = _exact(levels, 300, 800.0, 600.0, guess=0.02, lapse=0.02)
    falling = aggregate(levels[::-1], rising.n_positive, rising.n_total)
    up = fit(rising)
    down = fit(falling, FitOptions(decreasing=True))
    assert down.threshold == pytest.approx(levels[0] + levels[-1] - up.threshold, abs=1.0)
    assert down.psi([100.0])[0] > 0.9


def test_deviance_flags_data_the_model_cannot_fit():
    levels = np.linspace(1, 9, 7)
    good = fit(simulate(np.random.default_rng(1), levels, 40, m=5.0, w=4.0), FitOptions(overdispersion=False))
    zigzag = aggregate(levels, [0, 40, 0, 40, 0, 40, 40], [40] * 7)
    bad = fit(zigzag, FitOptions(overdispersion=False))
    assert bad.deviance > 50 > good.deviance
    assert bad.deviance_p < 0.01 < good.deviance_p


def test_overdispersed_data_widen_the_interval():
    levels = np.linspace(1, 9, 7)
    rng = np.random.default_rng(4)
    data = simulate(rng, levels, 60, m=5.0, w=4.0, eta=0.3)
    plain = fit(data, FitOptions(overdispersion=False))
    od = fit(data)
    assert od.eta > 0
    width = lambda r: r.threshold_ci_95[1] - r.threshold_ci_95[0]  # noqa: E731
    assert width(od) > width(plain)


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="n_positive <= n_total"):
        aggregate([1, 2], [3, 1], [2, 2])
    with pytest.raises(ValueError, match="two distinct levels"):
        fit(aggregate([1, 1], [1, 2], [5, 5]))


def test_levels_a_billionth_apart_still_get_a_grid_and_an_interval():
    for interval in ("hybrid", "posterior", "profile"):
        r = fit(aggregate([10, 10.000000001], [15, 30], [30, 30]),
                FitOptions(sigmoid="weibull", experiment="2AFC", interval=interval, deviance_samples=10))
        lo, hi = r.threshold_ci_95
        assert 9.99999999 < lo <= r.threshold <= hi < 10.00000001


def test_levels_beyond_what_the_grid_can_hold_are_refused_but_a_log_axis_takes_them():
    data = aggregate([0, 1e100, 1e200], [0, 3, 5], [5, 5, 5])
    with pytest.raises(ValueError, match="levels must lie within"):
        fit(data, FitOptions(interval="posterior", deviance_samples=0))
    r = fit(aggregate([1e150, 1e200, 1e250], [0, 3, 5], [5, 5, 5]), FitOptions(log_axis=True, deviance_samples=0))
    lo, hi = r.threshold_ci_95
    assert all(np.isfinite([r.threshold, lo, hi])) and lo <= r.threshold <= hi


def _psignifit(data, sigmoid, experiment, **kw):
    import psignifit as ps

    x = np.log(data.levels) if sigmoid == "weibull" else data.levels
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ps.psignifit(np.column_stack([x, data.n_positive, data.n_total]), sigmoid=sigmoid,
                            experiment_type=experiment, verbose=False, **kw)


@pytest.mark.parametrize(
    ("sigmoid", "experiment", "levels", "m", "w", "guess", "fixed"),
    [
        ("norm", "2AFC", np.linspace(1, 9, 7), 5.0, 4.0, 0.5, {}),
        ("weibull", "2AFC", np.geomspace(5, 80, 7), math.log(20.0), 2.0, 0.5, {}),
        ("logistic", "yes/no", np.linspace(10, 70, 7), 40.0, 40.0, 0.05, {"gamma": 0.05}),
    ],
)
def test_agrees_with_psignifit_on_the_same_data(sigmoid, experiment, levels, m, w, guess, fixed):
    data = simulate(np.random.default_rng(7), levels, 40, m=m, w=w, sigmoid=sigmoid, guess=guess, lapse=0.02)
    ref = _psignifit(data, sigmoid, experiment, fixed_parameters=fixed or None)
    # the posterior interval is psignifit's method; the default (hybrid) interval is checked against its definition
    ours = fit(data, FitOptions(sigmoid=sigmoid, experiment=experiment, guess=fixed.get("gamma"), interval="posterior"))
    lo, hi = ref.confidence_intervals["threshold"]["0.95"]
    ref_thr = ref.parameter_estimate["threshold"]
    ours_thr = math.log(ours.threshold) if sigmoid == "weibull" else ours.threshold
    ours_lo, ours_hi = (math.log(v) if sigmoid == "weibull" else v for v in ours.threshold_ci_95)
    assert abs(ours_thr - ref_thr) < 0.1 * (hi - lo)
    assert abs(ours_lo - lo) < 0.15 * (hi - lo) and abs(ours_hi - hi) < 0.15 * (hi - lo)
    wlo, whi = ref.confidence_intervals["width"]["0.95"]
    assert abs(ours.width - ref.parameter_estimate["width"]) < 0.15 * (whi - wlo)


def test_binomial_data_keep_close_to_binomial_intervals():
    # the η spike: binomial data may widen a little for possible overdispersion, not by the slab's full amount
    levels = np.linspace(10, 70, 7)
    data = simulate(np.random.default_rng(3), levels, 30, m=40.0, w=40.0, guess=0.02, lapse=0.02)
    width = lambda r: r.threshold_ci_95[1] - r.threshold_ci_95[0]  # noqa: E731
    plain = width(fit(data, FitOptions(overdispersion=False)))
    assert plain <= width(fit(data)) < 1.1 * plain


def test_2afc_threshold_intervals_cover_the_truth_about_95_percent_of_the_time():
    rng = np.random.default_rng(11)
    levels = np.linspace(10, 70, 7)
    opts = FitOptions(experiment="2AFC", deviance_samples=0)
    hits = []
    for _ in range(120):
        r = fit(simulate(rng, levels, 30, m=40.0, w=40.0, guess=0.5, lapse=0.01), opts)
        hits.append(r.threshold_ci_95[0] <= 40.0 <= r.threshold_ci_95[1])
    assert 0.89 <= np.mean(hits) < 1.0


# --- repeated rows per level (blocks), η identified by their spread, and the profile-likelihood interval ------


def test_blocks_keep_repeated_levels_and_the_binomial_fit_is_the_pooled_one():
    rows = blocks([20, 10, 20, 10, 30, 40], [3, 1, 4, 0, 9, 10], [10, 10, 10, 10, 10, 10])
    assert rows.levels.tolist() == [10, 10, 20, 20, 30, 40] and rows.n_levels == 4 and rows.n_trials == 60
    pooled = rows.pooled()
    assert pooled.levels.tolist() == [10, 20, 30, 40] and pooled.n_positive.tolist() == [1, 7, 9, 10]
    opts = FitOptions(overdispersion=False, deviance_samples=0)
    a, b = fit(rows, opts), fit(pooled, opts)
    assert a.threshold == pytest.approx(b.threshold) and a.threshold_ci_95 == pytest.approx(b.threshold_ci_95)
    assert a.n_levels == b.n_levels == 4


def test_simulate_splits_each_level_into_blocks():
    levels = np.linspace(10, 70, 7)
    data = simulate(np.random.default_rng(0), levels, 30, m=40.0, w=40.0, blocks_per_level=4, eta=0.2)
    assert len(data.levels) == 28 and data.n_levels == 7
    assert sorted(set(data.n_total.tolist())) == [7, 8] and data.n_trials == 7 * 30
    with pytest.raises(ValueError, match="blocks_per_level"):
        simulate(np.random.default_rng(0), levels, 3, m=40.0, w=40.0, blocks_per_level=4)


def _slab_mass(result):
    return float(result._mass.sum(axis=(0, 1, 2, 3))[1:].sum())


def test_repeated_rows_move_eta_to_the_slab_for_overdispersed_data_and_keep_it_on_the_spike_for_binomial():
    levels = np.linspace(10, 70, 7)
    opts = FitOptions(deviance_samples=0)
    kw = dict(m=40.0, w=40.0, guess=0.02, lapse=0.02, blocks_per_level=8)
    od = [_slab_mass(fit(simulate(np.random.default_rng(s), levels, 80, eta=0.3, **kw), opts)) for s in range(3)]
    binom = [_slab_mass(fit(simulate(np.random.default_rng(s), levels, 80, **kw), opts)) for s in range(3)]
    prior_slab = 1 - psy.ETA_SPIKE
    assert min(od) > 0.8 > prior_slab + 0.25
    assert max(binom) < prior_slab


def test_profile_interval_ends_where_the_profile_likelihood_drops_by_half_the_chi2_quantile():
    levels = np.linspace(10, 70, 7)
    data = simulate(np.random.default_rng(2), levels, 40, m=40.0, w=40.0, guess=0.02, lapse=0.02)
    r = fit(data, FitOptions(overdispersion=False, guess=0.02, lapse=0.02, deviance_samples=0, interval="profile"))
    s = Sigmoid("logistic")

    def loglik(m, w):
        p = np.clip(0.02 + 0.96 * s(data.levels, m, w), 1e-12, 1 - 1e-12)
        return float(data.n_positive @ np.log(p) + (data.n_total - data.n_positive) @ np.log1p(-p))

    def profile(m):
        return -optimize.minimize_scalar(lambda w: -loglik(m, w), bounds=(1.0, 200.0), method="bounded").fun

    best = -optimize.minimize(lambda t: -loglik(*t), [40.0, 40.0], method="Nelder-Mead").fun
    cut = best - stats.chi2.ppf(0.95, 1) / 2
    lo, hi = r.threshold_ci_95
    assert profile(lo) == pytest.approx(cut, abs=0.1) and profile(hi) == pytest.approx(cut, abs=0.1)
    assert r.threshold_at(0.5, of="core")[1] == pytest.approx(r.threshold_ci_95)
    q, (qlo, qhi) = r.threshold_at(0.75)
    assert qlo < q < qhi and qlo > lo


def test_hybrid_interval_is_the_profile_interval_when_the_guess_rate_is_fixed_and_uncorrected():
    levels = np.linspace(10, 70, 7)
    data = simulate(np.random.default_rng(4), levels, 30, m=40.0, w=40.0, guess=0.5, lapse=0.01, blocks_per_level=3)
    opts = dict(experiment="2AFC", deviance_samples=0, bartlett_samples=0)
    hybrid = fit(data, FitOptions(interval="hybrid", **opts))
    profile = fit(data, FitOptions(interval="profile", **opts))
    assert hybrid.bartlett == 1.0
    assert hybrid.threshold_ci_95 == pytest.approx(profile.threshold_ci_95, abs=1e-9)
    assert hybrid.threshold_at(0.5, of="core")[1] == pytest.approx(profile.threshold_at(0.5, of="core")[1], abs=1e-9)


def test_with_the_guess_rate_fixed_the_hybrid_cut_is_scaled_by_the_bootstrap_bartlett_factor():
    levels = np.linspace(10, 70, 7)
    data = simulate(np.random.default_rng(4), levels, 30, m=40.0, w=40.0, guess=0.5, lapse=0.01, blocks_per_level=3)
    r = fit(data, FitOptions(experiment="2AFC", deviance_samples=0))
    assert 1.0 < r.bartlett < 1.6  # 210 trials: the likelihood-ratio statistic runs above χ²₁'s mean of 1
    assert r.to_dict()["bartlett_factor"] == r.bartlett
    ax, ll = r._axes, r._loglik
    profile = ll.reshape(len(ax["m"]), -1).max(axis=1)
    cut = ll.max() - r.bartlett * stats.chi2.ppf(0.95, 1) / 2
    lo, hi = r.threshold_ci_95
    assert np.interp(lo, ax["m"], profile) == pytest.approx(cut, abs=0.05)  # the chord between m nodes
    assert np.interp(hi, ax["m"], profile) == pytest.approx(cut, abs=0.05)
    plain = fit(data, FitOptions(experiment="2AFC", deviance_samples=0, bartlett_samples=0))
    assert lo < plain.threshold_ci_95[0] and hi > plain.threshold_ci_95[1]
    q, (qlo, qhi) = r.threshold_at(0.75)
    pq, (pqlo, pqhi) = plain.threshold_at(0.75)
    assert q == pq and qlo < pqlo and qhi > pqhi  # every proportion's interval uses the same factor
    again = fit(data, FitOptions(experiment="2AFC", deviance_samples=0))
    assert again.bartlett == r.bartlett  # seeded: the same data give the same interval


def test_the_bartlett_correction_applies_only_where_the_guess_rate_is_fixed():
    levels = np.linspace(10, 70, 7)
    data = simulate(np.random.default_rng(4), levels, 30, m=40.0, w=40.0, guess=0.02, lapse=0.02, blocks_per_level=3)
    assert fit(data, FitOptions(deviance_samples=0)).bartlett == 1.0  # the guess rate integrated out instead
    assert fit(data, FitOptions(deviance_samples=0, interval="profile", guess=0.02)).bartlett == 1.0
    assert fit(data, FitOptions(deviance_samples=0, guess=0.02)).bartlett > 1.0
    with pytest.raises(ValueError, match="bartlett_samples"):
        FitOptions(bartlett_samples=-1)


@pytest.mark.parametrize("seed", [2, 4])
def test_hybrid_interval_ends_where_the_guess_integrated_profile_drops_by_half_the_chi2_quantile(seed):
    # levels above the threshold's lower reach: the guess rate is weakly identified, which is where it matters
    levels = np.linspace(30, 90, 7)
    data = simulate(np.random.default_rng(seed), levels, 40, m=40.0, w=40.0, guess=0.05, lapse=0.02)
    r = fit(data, FitOptions(overdispersion=False, lapse=0.02, deviance_samples=0, interval="hybrid"))
    s = Sigmoid("logistic")

    def loglik(m, w, g):
        p = np.clip(g + (0.98 - g) * s(data.levels, m, w), 1e-12, 1 - 1e-12)
        return float(data.n_positive @ np.log(p) + (data.n_total - data.n_positive) @ np.log1p(-p))

    ref = loglik(40.0, 40.0, 0.05)  # keeps the integrand near 1

    def integrated(m, w):  # the guess rate integrated under its Beta(1, 10) prior on [0, 0.5]
        val, _ = integrate.quad(lambda g: 10 * (1 - g) ** 9 * math.exp(loglik(m, w, g) - ref), 0, 0.5, limit=200)
        return math.log(val) + ref

    def profile(m):
        return -optimize.minimize_scalar(lambda w: -integrated(m, w), bounds=(2.0, 200.0), method="bounded").fun

    best = -optimize.minimize_scalar(lambda m: -profile(m), bounds=(20.0, 70.0), method="bounded").fun
    cut = best - stats.chi2.ppf(0.95, 1) / 2
    lo, hi = r.threshold_ci_95
    assert profile(lo) == pytest.approx(cut, abs=0.12) and profile(hi) == pytest.approx(cut, abs=0.12)
    q, (qlo, qhi) = r.threshold_at(0.75)
    assert qlo < q < qhi and qlo > lo


def test_a_shifted_reading_ends_where_the_guess_integrated_profile_along_it_drops_by_half_the_chi2_quantile():
    # the 75 % point of ψ is m plus a shift that depends on the guess rate, so the hybrid reads the likelihood
    # along q = m + shift(w, g) before integrating the guess rate out: the same definition, computed by quadrature
    levels = np.linspace(30, 90, 7)
    data = simulate(np.random.default_rng(3), levels, 40, m=40.0, w=40.0, guess=0.05, lapse=0.02)
    r = fit(data, FitOptions(overdispersion=False, lapse=0.02, deviance_samples=0, interval="hybrid"))
    s = Sigmoid("logistic")

    def loglik(m, w, g):
        p = np.clip(g + (0.98 - g) * s(data.levels, m, w), 1e-12, 1 - 1e-12)
        return float(data.n_positive @ np.log(p) + (data.n_total - data.n_positive) @ np.log1p(-p))

    ref = loglik(40.0, 40.0, 0.05)

    def integrated(q, w):  # ψ(q) = 0.75 at every guess rate: m = q − shift(w, g)
        def integrand(g):
            m = q - s.inverse((0.75 - g) / (0.98 - g), 0.0, w)
            return 10 * (1 - g) ** 9 * math.exp(loglik(m, w, g) - ref)
        val, _ = integrate.quad(integrand, 0, 0.5, limit=200)
        return math.log(val) + ref

    def profile(q):
        return -optimize.minimize_scalar(lambda w: -integrated(q, w), bounds=(2.0, 200.0), method="bounded").fun

    point, (lo, hi) = r.threshold_at(0.75)
    best = -optimize.minimize_scalar(lambda q: -profile(q), bounds=(lo, hi), method="bounded").fun
    cut = best - stats.chi2.ppf(0.95, 1) / 2
    assert lo < point < hi
    assert profile(lo) == pytest.approx(cut, abs=0.15) and profile(hi) == pytest.approx(cut, abs=0.15)


def test_a_point_past_every_level_lies_in_its_interval_which_is_open_on_that_side():
    # the 10 % point where the fitted guess rate is above 10 %: ψ starts above it, so the point is −∞ and the
    # interval cannot close below it, whatever the guess rates under 10 % would bound
    data = simulate(np.random.default_rng(0), np.linspace(30, 90, 7), 30, m=40.0, w=40.0, guess=0.02, lapse=0.02)
    r = fit(data, FitOptions(deviance_samples=0))
    point, (lo, hi) = r.threshold_at(0.1)
    assert r.guess > 0.1 and point == -math.inf
    assert lo == -math.inf and math.isfinite(hi)


def test_hybrid_interval_is_shorter_than_the_profile_where_the_guess_rate_is_not_identified():
    # the profile ranges over every guess rate the data allow; the hybrid weighs them by their prior
    levels = np.linspace(30, 90, 7)
    lengths = []
    for seed in range(6):
        data = simulate(np.random.default_rng(seed), levels, 40, m=40.0, w=40.0, guess=0.02, lapse=0.02)
        length = {}
        for interval in ("profile", "hybrid"):
            lo, hi = fit(data, FitOptions(overdispersion=False, deviance_samples=0, interval=interval)).threshold_ci_95
            length[interval] = hi - lo
        lengths.append(length["hybrid"] / length["profile"])
    assert np.mean(lengths) < 0.9 and max(lengths) < 1.05


def test_log_integral_is_exact_for_exponential_pieces_and_close_for_a_gaussian():
    x = np.array([0.0, 0.1, 0.3, 0.5])
    y = np.stack([-3.0 * x, np.full_like(x, 2.0)])
    got = np.exp(psy._log_integral(y, x, axis=1))
    assert got == pytest.approx([(1 - math.exp(-1.5)) / 3, 0.5 * math.exp(2.0)], rel=1e-9)
    # a peak between the nodes is cut by the chords (about 2 % at half a standard deviation apart)
    x = np.linspace(-4, 4, 17)
    gauss = float(np.exp(psy._log_integral(-x**2 / 2, x, axis=0)))
    assert 0.97 * math.sqrt(2 * math.pi) < gauss < math.sqrt(2 * math.pi)


def test_the_default_interval_is_the_hybrid_and_unknown_ones_are_refused():
    assert FitOptions().interval == "hybrid"
    with pytest.raises(ValueError, match="unknown interval"):
        FitOptions(interval="bootstrap")


def test_a_threshold_at_a_proportion_is_computed_once_per_fit_and_point():
    # the pipeline, the participant jackknife and the report all ask for the 75 % point of the same fit
    data = simulate(np.random.default_rng(1), np.linspace(10, 70, 7), 30, m=40.0, w=40.0, guess=0.02, lapse=0.02)
    r = fit(data, FitOptions(deviance_samples=0))
    first = r.threshold_at(0.75)
    assert r.threshold_at(0.75) is first
    assert r.threshold_at(0.75, of="core") != first and r.threshold_at(0.25)[0] < first[0]


LEVELS = [10, 15, 20, 25, 30, 40, 60]


@pytest.mark.parametrize("interval", ["hybrid", "profile"])
@pytest.mark.parametrize(("log_axis", "decreasing"), [(False, False), (True, False), (False, True), (True, True)])
def test_an_interval_the_answers_do_not_bound_is_open_on_that_side_not_the_grids_edge(interval, log_axis,
                                                                                        decreasing):
    yes = [20] * 7
    yes[-1 if decreasing else 0] = 19  # nearly every answer is "acceptable": the threshold lies past the levels
    r = fit(aggregate(LEVELS, yes, [20] * 7), FitOptions(interval=interval, log_axis=log_axis,
                                                          decreasing=decreasing, deviance_samples=0))
    side = "high" if decreasing else "low"
    assert r.threshold_ci_open == [side]
    lo, hi = r.threshold_ci_95
    assert (hi == math.inf and math.isfinite(lo)) if decreasing else (lo == -math.inf and math.isfinite(hi))
    assert r.to_dict()["threshold_ci_open"] == [side]
    assert any(f"open on the {side} side" in w for w in r.warnings())
    assert any("lies " + ("above" if decreasing else "below") + " the levels tested" in w for w in r.warnings())


def test_a_well_placed_design_has_a_closed_interval_and_no_warnings():
    r = fit(simulate(np.random.default_rng(1), LEVELS, 20, m=25, w=20, lapse=0.02), FitOptions(deviance_samples=0))
    assert r.threshold_ci_open == [] and r.warnings() == []
    assert all(map(math.isfinite, r.threshold_at(0.75)[1]))


def test_a_low_proportion_with_a_free_guess_rate_is_open_below_but_bounded_above():
    # guess rates at or above 5 % put ψ above 5 % everywhere, so nothing bounds the level from below; before, the
    # whole grid came back (the guess integral ran over nodes where no level reaches 5 %)
    r = fit(simulate(np.random.default_rng(1), LEVELS, 20, m=25, w=20, lapse=0.02), FitOptions(deviance_samples=0))
    point, (lo, hi) = r.threshold_at(0.05)
    assert lo == -math.inf and point < hi < r.threshold
    fixed = fit(simulate(np.random.default_rng(1), LEVELS, 20, m=25, w=20, lapse=0.02),
                FitOptions(deviance_samples=0, guess=0.0))
    assert all(map(math.isfinite, fixed.threshold_at(0.05)[1]))  # with the guess rate held at 0, it is bounded


def test_2afc_answers_below_chance_are_warned_about():
    r = fit(aggregate([1, 2, 3, 4, 5], [5, 4, 6, 5, 3], [20] * 5), FitOptions(experiment="2AFC", deviance_samples=0))
    assert any(w.startswith("the answers are below chance: 23.0 % correct where guessing gives 50 %")
               for w in r.warnings())
    chance = fit(aggregate([1, 2, 3, 4, 5], [10, 9, 11, 10, 12], [20] * 5),
                 FitOptions(experiment="2AFC", deviance_samples=0))
    assert not any("below chance" in w for w in chance.warnings())


def test_the_posterior_interval_of_the_fitted_proportion_is_the_reported_threshold_interval():
    r = fit(simulate(np.random.default_rng(2), LEVELS, 10, m=25, w=20, lapse=0.02),
            FitOptions(interval="posterior", deviance_samples=0, pc=0.5))
    point, ci = r.threshold_at(0.5, of="core")
    assert point == pytest.approx(r.threshold)
    assert ci == pytest.approx(r.threshold_ci_95, abs=1e-9)  # cell quantiles, not the nearest grid nodes


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"guess": -0.2}, "guess must lie in"), ({"lapse": 1.0}, "lapse must lie in"),
    ({"guess": 0.6, "lapse": 0.4}, "sum must stay below 1"),
    ({"experiment": "2AFC", "lapse": 0.5}, "guess .0.5. and lapse .0.5."),
])
def test_fixed_rates_outside_what_a_probability_allows_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FitOptions(**kwargs)
