"""What every adaptive procedure offers the block and the study layer, and what it reports.

A procedure is a deterministic state machine over answers: ``next_level()`` is a pure function of the answers
so far, ``update(level, response)`` adds one, ``done`` says whether to stop. Nothing else is stored, so a state
rebuilt from the stored answers (``replay``) is the state the live session had.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


class ProcedureStateError(ValueError):
    """An answer that does not fit the procedure's state (wrong level, answer after the end)."""


@dataclass(frozen=True)
class Estimate:
    """A threshold estimate. Spreads (``sd``, ``ci_width``) are in axis units (log10 units on a log axis).

    ``threshold`` is in level units (``None`` before a staircase's first reversal). ``target_p`` is the
    p("yes") the estimate refers to: a staircase's convergence point; for QUEST+ the threshold parameter's own
    point, guess + (1 − guess − lapse)·F(0). ``ci`` is QUEST+'s central credible interval of the threshold.
    """

    threshold: float | None
    trials: int
    target_p: float | None = None
    sd: float | None = None
    ci: tuple[float, float] | None = None
    ci_width: float | None = None
    reversals: int | None = None
    params: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci) if self.ci is not None else None
        return out


class Procedure(Protocol):
    """The interface the block (``interleave.Block``) drives."""

    @property
    def done(self) -> bool: ...

    @property
    def trials(self) -> int: ...

    def next_level(self) -> float: ...

    def update(self, level: float, response: bool) -> None: ...

    def estimate(self) -> Estimate: ...


def same_level(a: float, b: float) -> bool:
    """Levels equal up to storage round-off (a JSON or database round trip of a float)."""
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def check_response(response: Any) -> bool:
    """A yes/no answer as ``bool``; anything else is an error (``1``, ``"yes"`` are not silently accepted)."""
    if isinstance(response, bool):
        return response
    if type(response).__name__ == "bool_":  # numpy.bool_
        return bool(response)
    raise ProcedureStateError(f"response: must be true or false, got {response!r}")
