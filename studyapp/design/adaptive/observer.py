"""A simulated participant: a psychometric function with known threshold, slope, guess and lapse.

The benchmarks and the bots answer with this model, so the truth a procedure should find is known:
``p_yes(level)`` is ``guess + (1 − guess − lapse)·F(slope·sign·(u − threshold_u))`` as in
``psychometric`` (u the level on the axis; sign −1 when "yes" is more likely at lower levels, as for TTFT).
``respond(level, rng)`` draws one answer from any generator with ``.random()`` (``random.Random`` or
``numpy.random.Generator``), so the same seed gives the same answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from studyapp.design.adaptive.config import ProcedureConfigError, check_choice, check_known, check_mapping, check_number
from studyapp.design.adaptive.psychometric import (
    ALIASES,
    AXES,
    DIRECTIONS,
    FUNCTIONS,
    cdf_inverse,
    from_axis,
    p_yes,
    sign_of,
    to_axis,
)


@dataclass(frozen=True)
class Observer:
    """A known psychometric function (threshold in level units, slope per axis unit)."""

    threshold: float
    slope: float
    guess: float = 0.0
    lapse: float = 0.0
    function: str = "logistic"
    axis: str = "linear"
    direction: str = "increasing"

    def __post_init__(self) -> None:
        key = "observer"
        check_choice(self.function, FUNCTIONS + tuple(ALIASES), f"{key}.function")
        check_choice(self.axis, AXES, f"{key}.axis")
        check_choice(self.direction, DIRECTIONS, f"{key}.direction")
        if self.slope <= 0:
            raise ProcedureConfigError(f"{key}.slope", f"must be > 0 (the direction sets the sign), got {self.slope}")
        if self.axis == "log" and self.threshold <= 0:
            raise ProcedureConfigError(f"{key}.threshold", f"must be > 0 on a log axis, got {self.threshold}")
        for name in ("guess", "lapse"):
            if not 0 <= getattr(self, name) < 0.5:
                raise ProcedureConfigError(f"{key}.{name}", f"must be in [0, 0.5), got {getattr(self, name)}")

    @classmethod
    def from_config(cls, obj: Mapping[str, Any]) -> Observer:
        """Build from a dict with the field names as keys (threshold and slope required)."""
        check_mapping(obj, "observer")
        check_known(obj, tuple(cls.__dataclass_fields__), "observer")
        values = dict(obj)
        for name in ("threshold", "slope", "guess", "lapse"):
            if name in values or name in ("threshold", "slope"):
                values[name] = check_number(values.get(name), f"observer.{name}", "required")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def p_yes(self, level: float) -> float:
        """Probability of answering "yes" (acceptable) at ``level``."""
        u = to_axis(float(level), self.axis)
        t = to_axis(self.threshold, self.axis)
        return float(p_yes(u, t, self.slope, self.guess, self.lapse, self.function, sign_of(self.direction)))

    def respond(self, level: float, rng: Any) -> bool:
        """One simulated answer at ``level``; ``rng`` is any object with ``.random()`` in [0, 1)."""
        return bool(rng.random() < self.p_yes(level))

    def level_at(self, p: float) -> float:
        """The level where p("yes") equals ``p`` (which must lie strictly between guess and 1 − lapse)."""
        if not self.guess < p < 1.0 - self.lapse:
            raise ValueError(f"p: must lie in ({self.guess}, {1 - self.lapse}), got {p}")
        f = (p - self.guess) / (1.0 - self.guess - self.lapse)
        z = float(cdf_inverse(self.function, f))
        u = to_axis(self.threshold, self.axis) + z / (self.slope * sign_of(self.direction))
        return float(from_axis(u, self.axis))
