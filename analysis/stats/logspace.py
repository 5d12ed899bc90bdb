"""Sums of probabilities kept in log space, for the grid likelihoods of the pairwise prior and the population fit.

``scipy.special.logsumexp`` checks and broadcasts its arguments (weights, signs, infinities), which on the small
arrays of a likelihood evaluated hundreds of times per fit costs as much as the sum itself.
"""

from __future__ import annotations

import numpy as np


def logsumexp(a: np.ndarray, axis: int = -1) -> np.ndarray:
    """log Σ exp(a) along ``axis``, for arrays with a finite maximum along it."""
    top = a.max(axis=axis, keepdims=True)
    return np.squeeze(top, axis=axis) + np.log(np.exp(a - top).sum(axis=axis))
