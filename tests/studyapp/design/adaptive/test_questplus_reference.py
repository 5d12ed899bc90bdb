"""The project's QUEST+ against the reference ``questplus`` package (GPLv3: a test-time dependency only).

Both engines see the same answers; at every step they must hold the same posterior and choose the same
stimulus. The grids are irregular so that no two stimuli tie on expected entropy.
"""

import random

import numpy as np
import questplus as qp_ref

from studyapp.design.adaptive import Observer, QuestPlus

STIMULI = [-1.5, -1.3, -1.15, -1.0, -0.9, -0.7, -0.55, -0.4, -0.2, -0.05]
THRESHOLDS = [-1.4, -1.2, -1.0, -0.8, -0.6, -0.45, -0.3]


def _mine(slopes, guesses, lapses, function):
    """The project's QUEST+ on the shared stimulus and threshold grids, for 30 trials."""
    return QuestPlus.from_config({"stimuli": STIMULI, "thresholds": THRESHOLDS, "slopes": slopes, "guesses": guesses,
                                  "lapses": lapses, "function": function, "max_trials": 30})


def compare(mine, ref, observer, trials, seed):
    rng = random.Random(seed)
    for step in range(trials):
        chosen = mine.next_level()
        assert chosen == ref.next_stim["intensity"], f"step {step}"
        assert np.isclose(mine.expected_entropies().min(), ref.entropy), f"step {step}"
        response = observer.respond(chosen, rng)
        mine.update(chosen, response)
        ref.update(stim={"intensity": chosen}, outcome={"response": "Yes" if response else "No"})
        assert np.allclose(mine.posterior_grid(), ref.posterior.values, rtol=1e-9, atol=1e-15), f"step {step}"


def test_weibull_matches_the_reference_on_the_same_answers():
    slopes, guesses, lapses = [1.5, 3.0, 5.0], [0.0, 0.05], [0.01, 0.04]
    mine = _mine(slopes, guesses, lapses, "weibull")
    ref = qp_ref.QuestPlus(
        stim_domain={"intensity": STIMULI},
        param_domain={"threshold": THRESHOLDS, "slope": slopes, "lower_asymptote": guesses, "lapse_rate": lapses},
        outcome_domain={"response": ["Yes", "No"]},
        func="weibull",
        stim_scale="log10",
    )
    compare(mine, ref, Observer(threshold=-0.8, slope=3, guess=0.05, lapse=0.02, function="weibull"), 30, 4)


def test_cumulative_normal_matches_the_reference_on_the_same_answers():
    slopes, guesses, lapses = [2.0, 4.0, 9.0], [0.02], [0.0, 0.03]
    mine = _mine(slopes, guesses, lapses, "normal")
    ref = qp_ref.QuestPlus(
        stim_domain={"intensity": STIMULI},
        param_domain={
            "mean": THRESHOLDS,
            "sd": [1.0 / s for s in slopes],  # Φ(slope·(x − t)) is a normal CDF with sd 1/slope
            "lower_asymptote": guesses,
            "lapse_rate": lapses,
        },
        outcome_domain={"response": ["Yes", "No"]},
        func="norm_cdf",
        stim_scale="linear",
    )
    compare(mine, ref, Observer(threshold=-0.7, slope=4, guess=0.02, lapse=0.01, function="normal"), 30, 9)
