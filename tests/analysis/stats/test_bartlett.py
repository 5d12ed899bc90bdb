"""The bootstrap Bartlett factor: the mean of the likelihood-ratio statistic over resamples from the fit."""

import numpy as np
import pytest

from analysis.stats.bartlett import bartlett_factor


def _one_rate_grid(m):
    """One level whose success probability is the parameter itself: ψ = m, no nuisance."""
    return m[:, None, None]


def test_with_many_trials_the_factor_is_chi2_mean_of_one():
    m = np.linspace(0.3, 0.7, 401)
    c = bartlett_factor(_one_rate_grid(m), np.array([4000]), np.array([0.5]), m, 0.5, 4000,
                        np.random.default_rng(1))
    assert c == pytest.approx(1.0, abs=0.07)  # Wilks: the statistic is χ²₁, mean 1 (SE of the mean ≈ 0.022)


def test_a_nuisance_that_changes_nothing_leaves_the_factor_alone():
    m = np.linspace(0.3, 0.7, 201)
    grid = _one_rate_grid(m)
    twice = np.concatenate([grid, grid], axis=1)
    a = bartlett_factor(grid, np.array([300]), np.array([0.5]), m, 0.5, 500, np.random.default_rng(2))
    b = bartlett_factor(twice, np.array([300]), np.array([0.5]), m, 0.5, 500, np.random.default_rng(2))
    assert a == pytest.approx(b)


def test_a_free_nuisance_rate_profiled_out_still_gives_about_one_with_many_trials():
    # two levels: ψ = m at the first, a free rate r at the second; the statistic for m is χ²₁ whatever r is
    m, r = np.linspace(0.3, 0.7, 201), np.linspace(0.1, 0.9, 161)
    psi = np.stack(np.broadcast_arrays(m[:, None], r[None, :]), axis=-1)  # (M, R, 2)
    c = bartlett_factor(psi, np.array([3000, 3000]), np.array([0.5, 0.4]), m, 0.5, 3000, np.random.default_rng(3))
    assert c == pytest.approx(1.0, abs=0.08)


def test_no_resamples_means_no_correction_and_the_same_seed_the_same_factor():
    m = np.linspace(0.3, 0.7, 41)
    assert bartlett_factor(_one_rate_grid(m), np.array([20]), np.array([0.5]), m, 0.5, 0,
                           np.random.default_rng(0)) == 1.0
    one = bartlett_factor(_one_rate_grid(m), np.array([20]), np.array([0.5]), m, 0.5, 300, np.random.default_rng(9))
    two = bartlett_factor(_one_rate_grid(m), np.array([20]), np.array([0.5]), m, 0.5, 300, np.random.default_rng(9))
    assert one == two
