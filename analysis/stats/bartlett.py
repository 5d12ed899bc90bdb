"""Bartlett's small-sample correction of a likelihood-ratio cut, estimated by a parametric bootstrap.

Why: with the guess rate fixed (nAFC) the threshold's hybrid interval is the plain profile-likelihood interval,
{m : 2·(max ℓ − ℓ_profile(m)) ≤ χ²₁(95 %)}. With the few hundred trials of a 2AFC curve the likelihood-ratio
statistic runs larger than χ²₁ (its mean about 1.1 where χ²₁'s is 1), so the interval covers about 94 %, not 95 %
(docs/validation/coverage.md, "Ninth round"). Bartlett's remedy scales the statistic by its mean, here the mean of the
statistic over data resampled from the fit (the bootstrap Bartlett correction: Rocke 1989, Biometrika 76; Bickel
& Ghosh 1990), so the cut becomes c · χ²₁(95 %)/2. Each resample's profile is one matrix product over the fit's
own grid, as the deviance's bootstrap p is: no refits. Pure numpy, no Django.
"""

from __future__ import annotations

import numpy as np

_BATCH = 100  # resamples per matrix product (keeps the (grid × batch) block to tens of MB)


def bartlett_factor(psi: np.ndarray, n: np.ndarray, p0: np.ndarray, m: np.ndarray, m0: float, samples: int,
                    rng: np.random.Generator) -> float:
    """Mean of the profile likelihood-ratio statistic for the threshold over binomial resamples.

    ``psi`` is ψ on the grid at the distinct levels, shape (M, C, L): the threshold axis ``m`` first, every
    nuisance combination flattened into C columns, the L levels last. The resamples draw n[l] trials at level l
    with success probability p0[l] (the fitted ψ, whose threshold is ``m0``); for each, the statistic is
    2·(max over the grid − the profile at m0, read between m nodes linearly). Returns 1.0 without resamples.
    """
    if samples <= 0:
        return 1.0
    n = np.asarray(n, dtype=float)
    counts = rng.binomial(n.astype(int)[:, None], np.clip(p0, 0, 1)[:, None], size=(len(n), samples)).astype(float)
    log_p, log_q = np.log(psi), np.log1p(-psi)
    pos = float(np.clip((m0 - m[0]) / (m[1] - m[0]), 0, len(m) - 1)) if len(m) > 1 else 0.0
    i0 = min(int(pos), max(len(m) - 2, 0))
    t = pos - i0
    stats = []
    for start in range(0, samples, _BATCH):
        k = counts[:, start:start + _BATCH]
        ll = log_p @ k + log_q @ (n[:, None] - k)  # (M, C, b)
        profile = ll.max(axis=1)  # (M, b)
        at = profile[i0] if len(m) == 1 else (1 - t) * profile[i0] + t * profile[i0 + 1]
        stats.append(2 * (profile.max(axis=0) - at))
    return float(np.mean(np.concatenate(stats)))
