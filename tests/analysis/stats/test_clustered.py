"""The participant jackknife of a pooled fit: it widens the interval when people differ, and only then."""

import numpy as np
import pytest

from analysis.stats import clustered
from analysis.stats.psychometric import FitOptions, blocks, fit, simulate

LEVELS = np.linspace(10, 70, 7)
OPTS = FitOptions(deviance_samples=0, lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2))


def _people(thresholds, n=6, seed=1, levels=LEVELS, **kw):
    rng = np.random.default_rng(seed)
    rows = {"level": [], "k": [], "n": [], "who": []}
    for i, m in enumerate(thresholds):
        d = simulate(rng, levels, n, m=m, w=20.0, guess=0.02, lapse=0.02, **kw)
        rows["level"] += list(d.levels)
        rows["k"] += list(d.n_positive)
        rows["n"] += list(d.n_total)
        rows["who"] += [f"p{i}"] * len(d.levels)
    return {k: np.asarray(v) for k, v in rows.items()}


def _fit(r, opts=OPTS):
    return fit(blocks(r["level"], r["k"], r["n"]), opts)


def test_groups_deal_sorted_participants_round_robin_and_repeat_for_their_rows():
    g = clustered.group_of(["b", "a", "c", "a", "d"], max_groups=2)
    assert g.tolist() == [1, 0, 0, 0, 1]  # a→0, b→1, c→0, d→1
    assert clustered.group_of([f"p{i}" for i in range(50)]).max() == clustered.MAX_GROUPS - 1


def test_fewer_than_five_participants_get_no_jackknife():
    r = _people([40.0] * 4)
    assert clustered.jackknife(r["level"], r["k"], r["n"], r["who"], OPTS, _fit(r)) is None


def test_participants_who_differ_widen_the_interval_beyond_the_models():
    rng = np.random.default_rng(3)
    r = _people(rng.normal(40.0, 12.0, 12))
    full = _fit(r)
    jk = clustered.jackknife(r["level"], r["k"], r["n"], r["who"], OPTS, full, q=0.75)
    assert jk.groups == 12
    lo, hi = full.threshold_ci_95
    jlo, jhi = jk.threshold_ci
    assert jlo < full.threshold < jhi
    assert (jhi - jlo) > 1.5 * (hi - lo)
    assert clustered.widest(full.threshold_ci_95, jk.threshold_ci) == (pytest.approx(jlo), pytest.approx(jhi))
    q_point = full.threshold_at(0.75)[0]
    assert jk.threshold_q_ci[0] < q_point < jk.threshold_q_ci[1]


def test_identical_participants_leave_the_models_interval_as_it_is():
    one = _people([40.0], n=10, seed=5)
    r = {k: np.concatenate([v] * 8) for k, v in one.items()}
    r["who"] = np.repeat([f"p{i}" for i in range(8)], len(LEVELS))
    full = _fit(r)
    jk = clustered.jackknife(r["level"], r["k"], r["n"], r["who"], OPTS, full)
    assert jk.threshold_ci[1] - jk.threshold_ci[0] < 0.05 * (full.threshold_ci_95[1] - full.threshold_ci_95[0])
    assert clustered.widest(full.threshold_ci_95, jk.threshold_ci) == pytest.approx(full.threshold_ci_95)


def test_a_log_axis_falling_curve_gets_an_ordered_interval_in_level_units_around_the_threshold():
    rng = np.random.default_rng(4)
    levels = np.geomspace(200, 4000, 6)  # TTFT in ms: acceptability falls as the wait grows
    rows = {"level": [], "k": [], "n": [], "who": []}
    for i in range(8):
        d = simulate(rng, levels, 6, m=-np.log(1000.0) + rng.normal(0, 0.4), w=2.0, guess=0.02, lapse=0.02,
                     log_axis=True, decreasing=True)
        rows["level"] += list(d.levels)
        rows["k"] += list(d.n_positive)
        rows["n"] += list(d.n_total)
        rows["who"] += [f"p{i}"] * len(d.levels)
    r = {k: np.asarray(v) for k, v in rows.items()}
    opts = FitOptions(deviance_samples=0, log_axis=True, decreasing=True)
    full = _fit(r, opts)
    jk = clustered.jackknife(r["level"], r["k"], r["n"], r["who"], opts, full)
    assert 0 < jk.threshold_ci[0] < full.threshold < jk.threshold_ci[1]


def test_the_model_interval_stands_alone_when_there_is_no_jackknife():
    assert clustered.widest((1.0, 2.0), None) == (1.0, 2.0)
    assert clustered.widest((1.0, 2.0), (1.5, 3.0)) == (1.0, 3.0)


def test_spread_keys_widen_both_the_threshold_and_the_q_point_and_keep_the_models():
    rng = np.random.default_rng(3)
    r = _people(rng.normal(40.0, 12.0, 12))
    full = _fit(r)
    keys = clustered.spread_keys(r["level"], r["k"], r["n"], r["who"], OPTS, full, q=0.75)
    assert keys["cluster"] == {"method": "participant jackknife", "groups": 12}
    assert keys["threshold_ci_95_model"] == pytest.approx(list(full.threshold_ci_95))
    assert keys["threshold_q_ci_95_model"] == pytest.approx(list(full.threshold_at(0.75)[1]))
    for name in ("threshold_ci_95", "threshold_q_ci_95"):
        lo, hi = keys[name]
        jlo, jhi = keys[f"{name}_jackknife"]
        mlo, mhi = keys[f"{name}_model"]
        assert (lo, hi) == (pytest.approx(min(mlo, jlo)), pytest.approx(max(mhi, jhi)))
        assert hi - lo > 1.5 * (mhi - mlo)  # people differ: the q point's interval widens too, not only the 50 %


def test_spread_keys_say_why_the_models_interval_stands():
    r = _people([40.0] * 6)
    full = _fit(r)
    model = pytest.approx(list(full.threshold_ci_95))
    reasons = {
        "no participant column": clustered.spread_keys(r["level"], r["k"], r["n"], None, OPTS, full),
        "off": clustered.spread_keys(r["level"], r["k"], r["n"], r["who"], OPTS, full, max_groups=0),
        "fewer than 5 participants": clustered.spread_keys(r["level"][:28], r["k"][:28], r["n"][:28],
                                                           r["who"][:28], OPTS, full),
    }
    for reason, keys in reasons.items():
        assert keys["cluster"] == {"method": None, "reason": reason}
        assert keys["threshold_ci_95"] == model and keys["threshold_ci_95_model"] == model
        assert "threshold_ci_95_jackknife" not in keys


def test_a_refit_that_fails_keeps_the_models_interval_and_names_the_failure():
    # five people at the middle level only, and one who alone was tested at the other levels:
    # without that person's group one level is left, and no curve can be fitted
    r = _people([40.0], n=10)
    mid = {"level": np.full(5, 40.0), "k": np.array([5, 4, 6, 5, 5]), "n": np.full(5, 10),
           "who": np.array([f"q{i}" for i in range(5)])}
    r = {k: np.concatenate([r[k], mid[k]]) for k in r}
    full = _fit(r)
    keys = clustered.spread_keys(r["level"], r["k"], r["n"], r["who"], OPTS, full, q=0.75)
    assert keys["cluster"]["method"] is None
    assert keys["cluster"]["reason"].startswith("a refit without one group failed: ")
    assert "two distinct levels" in keys["cluster"]["reason"]
    assert keys["threshold_ci_95"] == pytest.approx(list(full.threshold_ci_95))
    assert keys["threshold_q_ci_95"] == pytest.approx(list(full.threshold_at(0.75)[1]))
