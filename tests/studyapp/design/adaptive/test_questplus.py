"""QUEST+: the expected-entropy choice checked by hand on a tiny grid, Bayes updates, estimates, stopping."""

import math
import random

import numpy as np
import pytest

from studyapp.design.adaptive import Observer, ProcedureStateError, QuestPlus


def expit(z):
    return 1 / (1 + math.exp(-z))


def entropy(ps):
    return -sum(p * math.log(p) for p in ps if p > 0)


def tiny():
    # 2 stimuli, 2 thresholds, one slope, no guess or lapse: L(yes | x, t) = expit(2 (x - t))
    return QuestPlus.from_config(
        {"stimuli": [0.0, 1.0], "thresholds": [0.0, 2.0], "slopes": 2.0, "lapses": 0.0, "max_trials": 10}
    )


def hand_expected_entropy(prior, liks):
    """Σ_r P(r) H(posterior | r), computed the long way: one posterior per outcome."""
    total = 0.0
    for outcome in (True, False):
        joint = [p * (lik if outcome else 1 - lik) for p, lik in zip(prior, liks)]
        pr = sum(joint)
        total += pr * entropy([j / pr for j in joint])
    return total


def test_expected_entropy_on_a_tiny_grid_matches_the_hand_computation():
    q = tiny()
    prior = [0.5, 0.5]
    at0 = hand_expected_entropy(prior, [expit(0.0), expit(-4.0)])  # 0.5 and 0.018: little to learn
    at1 = hand_expected_entropy(prior, [expit(2.0), expit(-2.0)])  # 0.881 and 0.119: tells t apart
    assert np.allclose(q.expected_entropies(), [at0, at1])
    assert at1 < at0 and q.next_level() == 1.0


def test_the_posterior_follows_bayes_rule_and_the_next_choice_uses_it():
    q = tiny()
    q.update(1.0, False)  # "no" at x=1 favours the higher threshold
    like = [1 - expit(2.0), 1 - expit(-2.0)]
    post = [lk / sum(like) for lk in like]
    assert np.allclose(q.posterior_grid().ravel(), post)
    expected = [
        hand_expected_entropy(post, [expit(0.0), expit(-4.0)]),
        hand_expected_entropy(post, [expit(2.0), expit(-2.0)]),
    ]
    assert np.allclose(q.expected_entropies(), expected)
    assert q.next_level() == [0.0, 1.0][int(np.argmin(expected))]


def test_an_answer_off_the_stimulus_grid_is_refused():
    with pytest.raises(ProcedureStateError, match="not one of the QUEST\\+ stimuli"):
        tiny().update(0.5, True)


def test_stops_at_max_trials():
    q = QuestPlus.from_config({"stimuli": [0.0, 1.0], "thresholds": [0.0, 2.0], "slopes": 2.0, "max_trials": 2})
    for r in (True, False):
        q.update(q.next_level(), r)
    assert q.done
    with pytest.raises(ProcedureStateError, match="finished"):
        q.update(0.0, True)


def grid(**overrides):
    cfg = {
        "stimuli": {"min": 2, "max": 200, "n": 41},
        "slopes": {"min": 2, "max": 30, "n": 6},
        "lapses": [0.0, 0.02, 0.05],
        "axis": "log",
        "max_trials": 200,
    }
    cfg.update(overrides)
    return QuestPlus.from_config(cfg)


def run(q, obs, seed):
    rng = random.Random(seed)
    while not q.done:
        level = q.next_level()
        q.update(level, obs.respond(level, rng))
    return q


def test_stops_when_the_credible_interval_is_narrow_enough():
    q = run(grid(ci_width=0.3, min_trials=5), Observer(threshold=12, slope=8, lapse=0.02, axis="log"), 3)
    est = q.estimate()
    assert q.trials < 200 and q.trials >= 5
    assert est.ci_width <= 0.3
    assert math.log10(est.ci[1]) - math.log10(est.ci[0]) == pytest.approx(est.ci_width)


def test_estimate_finds_the_threshold_of_a_simulated_observer():
    obs = Observer(threshold=12, slope=8, lapse=0.02, axis="log")
    q = run(grid(max_trials=80), obs, 5)
    est = q.estimate()
    assert abs(math.log10(est.threshold) - math.log10(12)) < 0.1
    assert est.ci[0] <= 12 <= est.ci[1]


def test_decreasing_direction_finds_a_ttft_threshold():
    obs = Observer(threshold=1500, slope=0.004, lapse=0.02, direction="decreasing")  # per ms
    q = QuestPlus.from_config(
        {
            "stimuli": {"min": 0, "max": 5000, "n": 51},
            "thresholds": {"min": 200, "max": 4800, "n": 47},
            "slopes": [0.001, 0.002, 0.004, 0.008],
            "direction": "decreasing",
            "max_trials": 80,
        }
    )
    est = run(q, obs, 8).estimate()
    assert abs(est.threshold - 1500) < 300
    assert q.p_yes_mean(500) > 0.8 > 0.2 > q.p_yes_mean(3000)


def test_mode_estimate_is_a_grid_point():
    q = run(grid(max_trials=30, estimate="mode"), Observer(threshold=12, slope=8, axis="log"), 2)
    assert any(math.isclose(q.estimate().threshold, t) for t in q.config.thresholds)


def test_procedures_with_the_same_grid_share_the_precomputed_tables():
    a, b = grid(), grid()
    assert a._lik is b._lik
    with pytest.raises(ValueError):
        a._lik[0, 0] = 1.0
