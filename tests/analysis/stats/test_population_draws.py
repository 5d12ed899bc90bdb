"""Joint draws of the population model's parameters come from each condition's likelihood: they hold the truth,
stay inside the σ range the design can measure, and move together for conditions the same people answered."""

import numpy as np
import pandas as pd
import pytest

from analysis.stats import population_draws
from analysis.stats.sigmoids import Sigmoid

MU, SIGMA, WIDTH = np.log(20.0), 0.3, 0.6
LEVELS = np.geomspace(10, 60, 6)


def answers(people: list[str], condition: str, rng: np.random.Generator, repeats: int = 3) -> pd.DataFrame:
    sig = Sigmoid("logistic")
    rows = []
    for who in people:
        m = rng.normal(MU, SIGMA)
        for level in LEVELS:
            p = 0.01 + 0.98 * float(sig(np.log(level), m, WIDTH))
            rows += [{"participant": who, "level": level, "y": float(rng.random() < p), "condition": condition}
                     for _ in range(repeats)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def drawn():
    rng = np.random.default_rng(4)
    shared = [f"p{i}" for i in range(40)]
    others = [f"q{i}" for i in range(40)]
    data = pd.concat([answers(shared, "a", rng), answers(shared, "b", rng), answers(others, "c", rng)])
    rows = [{"condition": c, "lapse": 0.01, "guess": 0.01, "population_mu": 20.0} for c in "abc"]
    return population_draws.likelihood_draws(data, rows, log_axis=True, decreasing=False, draws=300, seed=1)


def test_the_draws_hold_the_true_parameters(drawn):
    """Within three of the draws' SDs (40 people: the sample's own mean threshold is off the population's by about
    one SE, and conditions a and b share it), and a μ known to a few tenths of a log unit."""
    assert drawn.conditions == ["a", "b", "c"] and drawn.mu.shape == drawn.sigma.shape == (300, 3)
    for j in range(3):
        mu, sigma = drawn.mu[:, j], drawn.sigma[:, j]
        assert abs(np.median(mu) - MU) < 3 * mu.std() and mu.std() < 0.15
        assert abs(np.median(sigma) - SIGMA) < 3 * sigma.std()


def test_sigma_stays_within_what_the_design_can_measure(drawn):
    spread = np.log(LEVELS[-1] / LEVELS[0])
    assert (drawn.sigma > 0).all() and (drawn.sigma <= spread + 1e-9).all()


def test_conditions_answered_by_the_same_people_move_together_and_others_do_not(drawn):
    r = np.corrcoef(drawn.mu.T)
    assert r[0, 1] > 0.8
    assert abs(r[0, 2]) < 0.25 and abs(r[1, 2]) < 0.25
