"""Log-space sums: the same numbers as scipy's logsumexp, on the shapes the grid likelihoods use."""

import numpy as np
import pytest
from scipy import special

from analysis.stats.logspace import logsumexp


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_agrees_with_scipy_along_any_axis(axis):
    a = np.random.default_rng(1).normal(size=(84, 241)) * 50
    assert np.allclose(logsumexp(a, axis=axis), special.logsumexp(a, axis=axis), rtol=0, atol=1e-12)


def test_large_and_minus_infinite_terms_neither_overflow_nor_poison_the_sum():
    a = np.array([[1000.0, 1000.0, -np.inf], [-1e308, 0.0, -np.inf]])
    assert logsumexp(a) == pytest.approx([1000.0 + np.log(2.0), 0.0])
    assert logsumexp(np.array([-745.0, -745.0])) == pytest.approx(-745.0 + np.log(2.0))
