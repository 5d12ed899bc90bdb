"""From an adaptive level to the stream a participant sees: which timing field a dimension sets.

A trial's stimulus is the study's text and base ``TimingSpec`` with one field replaced by the chosen level, cut
by the study's tokenizer and timed by ``playback.core.synth`` with a seed derived from the block seed and the trial
index. Everything is a pure function of stored values (spec, level, seed), so the stored spec reproduces the
stream exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from playback.core.stream import Stream
from playback.core.synth import synthesize
from playback.core.timing import TimingSpec
from studyapp.design.adaptive.seeding import derived_seed


@dataclass(frozen=True, slots=True)
class Dimension:
    """A stimulus dimension: the ``TimingSpec`` field it sets and the levels it allows."""

    name: str
    field: str
    unit: str
    direction: str  # the usual direction of "acceptable": faster rates up, longer waits down
    lower: float
    lower_inclusive: bool

    def check(self, level: float) -> str | None:
        """A problem with ``level`` for this dimension, or ``None``."""
        if self.lower_inclusive and level < self.lower:
            return f"must be >= {self.lower:g} for {self.name}, got {level:g}"
        if not self.lower_inclusive and level <= self.lower:
            return f"must be > {self.lower:g} for {self.name}, got {level:g}"
        return None


DIMENSIONS: dict[str, Dimension] = {
    d.name: d
    for d in (
        Dimension("tokens_per_s", "rate", "tokens/s", "increasing", 0.0, False),
        Dimension("chars_per_s", "rate", "characters/s", "increasing", 0.0, False),
        Dimension("ttft_ms", "ttft_ms", "ms", "decreasing", 0.0, True),
        Dimension("stall_ms", "stall_ms", "ms", "decreasing", 0.0, False),
        Dimension("stall_rate_per_s", "stall_rate_per_s", "stalls/s", "decreasing", 0.0, True),
        Dimension("jitter_cv", "jitter_cv", "CV", "decreasing", 0.0, True),
    )
}


def stimulus_spec(base: TimingSpec, dimension: str, level: float) -> TimingSpec:
    """``base`` with the field of ``dimension`` set to ``level`` (``ValueError`` naming the problem)."""
    dim = DIMENSIONS.get(dimension)
    if dim is None:
        raise ValueError(f"dimension: must be one of {', '.join(DIMENSIONS)}; got {dimension!r}")
    problem = dim.check(float(level))
    if problem:
        raise ValueError(f"level: {problem}")
    level = float(level)
    if dimension == "tokens_per_s":
        return replace(base, rate=level, rate_unit="tokens")
    if dimension == "chars_per_s":
        return replace(base, rate=level, rate_unit="chars")
    if dimension == "stall_ms":
        if base.stall_rate_per_s == 0:
            raise ValueError("dimension stall_ms: the base timing has no stalls (set stall_rate_per_s > 0)")
        return replace(base, stall_ms=level)
    if dimension == "stall_rate_per_s":
        if base.stall_ms == 0:
            raise ValueError("dimension stall_rate_per_s: the base timing has stall_ms = 0 (set a stall length)")
        return replace(base, stall_rate_per_s=level)
    if dimension == "jitter_cv":
        if level == 0:
            return replace(base, jitter="none", jitter_cv=0.0)
        return replace(base, jitter=base.jitter if base.jitter != "none" else "gamma", jitter_cv=level)
    return replace(base, **{dim.field: level})


def trial_seed(seed: int, index: int) -> int:
    """The synthesis seed of trial ``index`` of a block seeded with ``seed``."""
    return derived_seed(seed, index, "stimulus")


def synthesize_level(
    text: str, tokenizer: str, base: TimingSpec, dimension: str, level: float, seed: int
) -> tuple[TimingSpec, Stream]:
    """The timing spec for ``level`` and the stream it gives (``seed``: usually ``trial_seed``)."""
    spec = stimulus_spec(base, dimension, level)
    return spec, synthesize(text, tokenizer, spec, seed=seed)
