"""Up-down staircases: transformed 1-up/N-down (Levitt 1971) and weighted up-down (Kaernbach 1991).

Rules, stated for a "yes/no, is this acceptable?" task (``direction`` says which way is "easier"):

- *down* makes a "yes" less likely (lower tokens/s, or higher TTFT), *up* makes it more likely;
- 1-up/N-down: N consecutive "yes" step down (and reset the count), any "no" steps up; it converges on
  p("yes") = 0.5^(1/N): 0.5, 0.707, 0.794 for N = 1, 2, 3;
- weighted: every "yes" steps down by s, every "no" up by s·p/(1 − p); it converges on p("yes") = p;
- a *reversal* is a step in the opposite direction to the previous step; its level is that of the trial whose
  answer caused it. The step size is ``steps[min(reversals, len(steps) − 1)]``, counted after the reversal,
  so the step that reverses already uses the smaller size;
- levels move in axis units (added on a linear axis, multiplied by 10^step on a log axis) and are clipped to
  [min, max]; a clipped step still counts for its direction;
- stop after ``max_trials`` trials or ``max_reversals`` reversals; the threshold is the mean, in axis units,
  of the levels at the last ``estimate_reversals`` reversals (a geometric mean on a log axis).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from studyapp.design.adaptive.config import StaircaseConfig, parse_track
from studyapp.design.adaptive.procedure import Estimate, ProcedureStateError, check_response, same_level
from studyapp.design.adaptive.psychometric import from_axis, sign_of, to_axis

UP, DOWN = 1, -1


class Staircase:
    """A staircase's state: the next level in axis units, the "yes" run, the last direction, the reversals."""

    def __init__(self, config: StaircaseConfig) -> None:
        if not isinstance(config, StaircaseConfig):
            raise TypeError(f"config: expected a StaircaseConfig, got {type(config).__name__}")
        self.config = config
        self._sign = sign_of(config.direction)
        self._u = float(to_axis(config.start, config.axis))
        self._lo = float(to_axis(config.min_level, config.axis)) if config.min_level is not None else -np.inf
        self._hi = float(to_axis(config.max_level, config.axis)) if config.max_level is not None else np.inf
        self._yes_run = 0
        self._last_move = 0
        self.levels: list[float] = []  # level of each trial
        self.responses: list[bool] = []
        self.reversal_trials: list[int] = []  # trial index of each reversal
        self.reversal_levels: list[float] = []  # axis units

    @classmethod
    def from_config(cls, obj: Mapping[str, Any]) -> Staircase:
        """Build from a config dict (``method: staircase`` may be omitted)."""
        config = parse_track({"method": "staircase", **obj})
        assert isinstance(config, StaircaseConfig)
        return cls(config)

    # --- state -----------------------------------------------------------------------------------------
    @property
    def trials(self) -> int:
        return len(self.responses)

    @property
    def reversals(self) -> int:
        return len(self.reversal_trials)

    @property
    def step(self) -> float:
        """The step size (axis units) for the current number of reversals."""
        steps = self.config.steps
        return steps[min(self.reversals, len(steps) - 1)]

    @property
    def done(self) -> bool:
        c = self.config
        return self.trials >= c.max_trials or (c.max_reversals is not None and self.reversals >= c.max_reversals)

    def next_level(self) -> float:
        """The level of the next trial."""
        return float(from_axis(self._u, self.config.axis))

    # --- answers ---------------------------------------------------------------------------------------
    def update(self, level: float, response: bool) -> None:
        """Record the answer to the trial at ``level`` (which must be ``next_level()``)."""
        response = check_response(response)
        if self.done:
            raise ProcedureStateError(f"staircase {self.config.name!r} is finished ({self.trials} trials)")
        expected = self.next_level()
        if not same_level(level, expected):
            raise ProcedureStateError(f"level: expected {expected!r} (the staircase's next level), got {level!r}")
        self.levels.append(expected)
        self.responses.append(response)
        move = self._move(response)
        if move:
            self._step(move)

    def _move(self, response: bool) -> int:
        if self.config.rule == "weighted":
            return DOWN if response else UP
        if not response:
            self._yes_run = 0
            return UP
        self._yes_run += 1
        if self._yes_run >= self.config.down_count:
            self._yes_run = 0
            return DOWN
        return 0

    def _step(self, move: int) -> None:
        if self._last_move and move != self._last_move:
            self.reversal_trials.append(self.trials - 1)
            self.reversal_levels.append(self._u)
        self._last_move = move
        size = self.step * (self.config.up_ratio if move == UP else 1.0)
        # "up" makes yes more likely: towards higher levels when yes grows with the level
        self._u = float(np.clip(self._u + move * self._sign * size, self._lo, self._hi))

    # --- estimate --------------------------------------------------------------------------------------
    def estimate(self) -> Estimate:
        """Mean of the last K reversal levels (axis units); ``threshold`` is ``None`` before any reversal."""
        last = self.reversal_levels[-self.config.estimate_reversals :]
        if not last:
            return Estimate(threshold=None, trials=self.trials, target_p=self.config.target_p, reversals=self.reversals)
        values = np.asarray(last)
        return Estimate(
            threshold=float(from_axis(values.mean(), self.config.axis)),
            trials=self.trials,
            target_p=self.config.target_p,
            sd=float(values.std(ddof=1)) if values.size > 1 else None,
            reversals=self.reversals,
        )
