"""QUEST+ (Watson 2017) for yes/no answers: a posterior over a parameter grid, the next stimulus chosen by minimum
expected entropy.

Parameters θ = (threshold, slope, guess, lapse) on the grid given by the config (threshold in level units,
converted to axis units; slope per axis unit); the prior is uniform. With L(s, θ) = p("yes" | stimulus s, θ)
and posterior p(θ), the expected entropy after presenting s is

    EH(s) = Σ_r P(r | s) · H(p(θ | r, s)),   P(yes | s) = Σ_θ p(θ) L(s, θ)

which, since L(yes) + L(no) = 1, equals H(p) − Σ_θ p(θ) h(s, θ) + Σ_r P(r|s) log P(r|s), with
h = L log L + (1 − L) log(1 − L) precomputed per (s, θ). Choosing the next stimulus is then two matrix-vector
products over the grid, not a posterior per candidate (well under a millisecond for 100 stimuli × 2,000
parameter sets; benchmarks/adaptive.py). Natural logs; ties go to the lowest stimulus.

The tables depend only on the grid, so they are built once per grid and shared (read-only) between sessions.
The threshold estimate is the posterior mean (or the joint mode, ``estimate: mode``) in axis units; its
credible interval is central, ``ci_level``, read off the discrete marginal CDF of the threshold grid (the
smallest grid value whose cumulative mass reaches each tail).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import xlogy

from studyapp.design.adaptive.config import QuestPlusConfig, parse_track
from studyapp.design.adaptive.procedure import Estimate, ProcedureStateError, check_response, same_level
from studyapp.design.adaptive.psychometric import cdf, from_axis, p_yes, sign_of, to_axis


@lru_cache(maxsize=16)
def _tables(
    stimuli: tuple[float, ...],
    thresholds: tuple[float, ...],
    slopes: tuple[float, ...],
    guesses: tuple[float, ...],
    lapses: tuple[float, ...],
    function: str,
    axis: str,
    direction: str,
) -> tuple[np.ndarray, np.ndarray]:
    """L(yes) and h = Σ_r L log L, each of shape (stimuli, θ) with θ in C order (threshold, slope, guess, lapse)."""
    u = np.asarray(to_axis(np.asarray(stimuli), axis), dtype=float)
    t = np.asarray(to_axis(np.asarray(thresholds), axis), dtype=float)
    b, g, lam = (np.asarray(x, dtype=float) for x in (slopes, guesses, lapses))
    z = b[None, None, :] * sign_of(direction) * (u[:, None, None] - t[None, :, None])  # (S, T, B)
    f = cdf(function, z)[..., None, None]
    lik = g[None, None, None, :, None] + (1.0 - g[None, None, None, :, None] - lam) * f  # (S, T, B, G, L)
    lik = np.ascontiguousarray(lik.reshape(len(stimuli), -1))
    h = xlogy(lik, lik) + xlogy(1.0 - lik, 1.0 - lik)
    lik.setflags(write=False)
    h.setflags(write=False)
    return lik, h


class QuestPlus:
    """QUEST+ state: the posterior over the parameter grid (all else is derived from it and the config)."""

    def __init__(self, config: QuestPlusConfig) -> None:
        if not isinstance(config, QuestPlusConfig):
            raise TypeError(f"config: expected a QuestPlusConfig, got {type(config).__name__}")
        c = self.config = config
        self._lik, self._h = _tables(
            c.stimuli, c.thresholds, c.slopes, c.guesses, c.lapses, c.function, c.axis, c.direction
        )
        self.shape = (len(c.thresholds), len(c.slopes), len(c.guesses), len(c.lapses))
        self.stimuli = np.asarray(c.stimuli, dtype=float)
        self._t_axis = np.asarray(to_axis(np.asarray(c.thresholds), c.axis), dtype=float)
        self.posterior = np.full(self._lik.shape[1], 1.0 / self._lik.shape[1])
        self.levels: list[float] = []
        self.responses: list[bool] = []
        self._choice: int | None = None

    @classmethod
    def from_config(cls, obj: Mapping[str, Any]) -> QuestPlus:
        """Build from a config dict (``method: questplus`` may be omitted)."""
        config = parse_track({"method": "questplus", **obj})
        assert isinstance(config, QuestPlusConfig)
        return cls(config)

    # --- state -----------------------------------------------------------------------------------------
    @property
    def trials(self) -> int:
        return len(self.responses)

    @property
    def done(self) -> bool:
        c = self.config
        if self.trials >= c.max_trials:
            return True
        if c.ci_width is None or self.trials < c.min_trials or self.trials == 0:
            return False
        return self._ci()[2] <= c.ci_width

    def expected_entropies(self) -> np.ndarray:
        """EH(s) for every stimulus (nats), as in the module docstring."""
        p = self.posterior
        # einsum, not BLAS: single-threaded, so a loaded server gets no thread-contention spikes (10-50x at p95)
        yes = np.einsum("st,t->s", self._lik, p)
        h_now = -float(xlogy(p, p).sum())
        return h_now - np.einsum("st,t->s", self._h, p) + xlogy(yes, yes) + xlogy(1.0 - yes, 1.0 - yes)

    def next_index(self) -> int:
        """Index (into ``config.stimuli``) of the stimulus with the least expected entropy."""
        if self._choice is None:
            self._choice = int(np.argmin(self.expected_entropies()))
        return self._choice

    def next_level(self) -> float:
        return float(self.stimuli[self.next_index()])

    def posterior_grid(self) -> np.ndarray:
        """The posterior as an array of shape (thresholds, slopes, guesses, lapses)."""
        return self.posterior.reshape(self.shape)

    # --- answers ---------------------------------------------------------------------------------------
    def index_of(self, level: float) -> int:
        """The grid index of ``level`` (``ProcedureStateError`` if it is not a grid stimulus)."""
        i = int(np.argmin(np.abs(self.stimuli - float(level))))
        if not same_level(self.stimuli[i], level):
            raise ProcedureStateError(f"level: {level!r} is not one of the QUEST+ stimuli")
        return i

    def update(self, level: float, response: bool) -> None:
        """Bayes' rule with the answer ``response`` to the stimulus ``level`` (any grid stimulus)."""
        response = check_response(response)
        if self.trials >= self.config.max_trials:
            raise ProcedureStateError(f"QUEST+ {self.config.name!r} is finished ({self.trials} trials)")
        i = self.index_of(level)
        lik = self._lik[i] if response else 1.0 - self._lik[i]
        post = self.posterior * lik
        total = post.sum()
        if not total > 0:
            raise ProcedureStateError("response: impossible under every parameter on the grid (add lapses)")
        self.posterior = post / total
        self.levels.append(float(self.stimuli[i]))
        self.responses.append(response)
        self._choice = None

    # --- estimate --------------------------------------------------------------------------------------
    def marginal(self, name: str) -> np.ndarray:
        """The marginal posterior of ``threshold``, ``slope``, ``guess`` or ``lapse``."""
        axes = {"threshold": 0, "slope": 1, "guess": 2, "lapse": 3}
        keep = axes[name]
        return self.posterior_grid().sum(axis=tuple(a for a in range(4) if a != keep))

    def _ci(self) -> tuple[float, float, float]:
        """(low, high, width) of the central credible interval of the threshold, in axis units."""
        cum = np.cumsum(self.marginal("threshold"))
        tail = (1.0 - self.config.ci_level) / 2.0
        last = len(cum) - 1
        lo = self._t_axis[min(int(np.searchsorted(cum, tail, side="left")), last)]
        hi = self._t_axis[min(int(np.searchsorted(cum, 1.0 - tail, side="left")), last)]
        return float(lo), float(hi), float(hi - lo)

    def estimate(self) -> Estimate:
        c = self.config
        m = self.marginal("threshold")
        mean_t = float(m @ self._t_axis)
        params = {
            name: float(self.marginal(name) @ np.asarray(values))
            for name, values in (("slope", c.slopes), ("guess", c.guesses), ("lapse", c.lapses))
        }
        if c.estimate == "mode":
            ti, bi, gi, li = np.unravel_index(int(np.argmax(self.posterior)), self.shape)
            point = float(self._t_axis[ti])
            params = {"slope": c.slopes[bi], "guess": c.guesses[gi], "lapse": c.lapses[li]}
        else:
            point = mean_t
        lo, hi, width = self._ci()
        f0 = float(cdf(c.function, 0.0))
        target = params["guess"] + (1.0 - params["guess"] - params["lapse"]) * f0
        return Estimate(
            threshold=float(from_axis(point, c.axis)),
            trials=self.trials,
            target_p=target,
            sd=float(np.sqrt(max(m @ (self._t_axis - mean_t) ** 2, 0.0))),
            ci=(float(from_axis(lo, c.axis)), float(from_axis(hi, c.axis))),
            ci_width=width,
            params=params,
        )

    def p_yes_mean(self, level: float) -> float:
        """Posterior-predictive p("yes") at ``level`` (any level, not only grid stimuli)."""
        c = self.config
        t = self._t_axis[:, None, None, None]
        b = np.asarray(c.slopes)[None, :, None, None]
        g = np.asarray(c.guesses)[None, None, :, None]
        lam = np.asarray(c.lapses)[None, None, None, :]
        u = float(to_axis(float(level), c.axis))
        p = p_yes(u, t, b, g, lam, c.function, sign_of(c.direction))
        return float((np.broadcast_to(p, self.shape) * self.posterior_grid()).sum())
