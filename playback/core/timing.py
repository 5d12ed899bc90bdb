"""The timing model of a synthetic stream: one frozen, validated, JSON-round-tripping value.

A ``TimingSpec`` says *when* tokens appear; ``playback.core.synth`` applies it to a tokenised text. It is kept
apart from the synthesiser so that studies, importers (``TimingSeed``) and the UI can build, store and
validate timing conditions without touching numpy. The precise meaning of every field is in
``playback.core.synth``'s module docstring; in short:

- ``ttft_ms``: time of the first visible token (the metric's TTFT);
- ``rate`` in ``rate_unit`` ("tokens" or "chars") per second: the steady generation rate;
- ``jitter`` ("none" | "gamma" | "lognormal") with ``jitter_cv``: the coefficient of variation of the
  inter-piece intervals, whose mean stays exactly the constant-rate interval;
- stalls: a Poisson process of ``stall_rate_per_s`` per second of generation time, each lasting a draw from
  ``stall_dist`` ("fixed" | "exponential" | "lognormal") with mean ``stall_ms`` (and ``stall_cv`` for
  lognormal);
- ``burst_size``: k tokens released together in one piece (speculative decoding, network coalescing);
- ``ramp_ms`` / ``ramp_start_fraction``: the rate ramps linearly from ``ramp_start_fraction × rate`` to
  ``rate`` over the first ``ramp_ms`` after TTFT;
- ``stall_count``: exactly that many stalls (positions uniform, durations as above), for a stream that must
  stall however short it is (instead of the Poisson ``stall_rate_per_s``);
- ``pause_every_ms`` / ``pause_ms``: a regular pause of ``pause_ms`` after every ``pause_every_ms`` of
  generation (an upstream that goes quiet while a proxy keeps the connection alive: keep-alive gaps);
- ``flush`` ("none" | "interval" | "end") with ``flush_ms``: what a buffering proxy delivers, the pieces
  released in bursts at ticks ``flush_ms`` apart, or all at once when the answer is complete.

Named, realistic combinations of these (steady API, fast dump, proxy bursts, ...) are in
``playback.core.arrivals``.

Defaults are a constant rate: no jitter, no stalls, no bursts, no ramp. ``spec_from_seed`` turns an importer's
summary ``TimingSeed`` into a spec. No numpy, no Django.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from playback.core.importers.base import TimingSeed

RateUnit = Literal["tokens", "chars"]
Jitter = Literal["none", "gamma", "lognormal"]
StallDist = Literal["fixed", "exponential", "lognormal"]
Flush = Literal["none", "interval", "end"]

RATE_UNITS: tuple[str, ...] = ("tokens", "chars")
JITTERS: tuple[str, ...] = ("none", "gamma", "lognormal")
STALL_DISTS: tuple[str, ...] = ("fixed", "exponential", "lognormal")
FLUSHES: tuple[str, ...] = ("none", "interval", "end")
_FLOAT_FIELDS = (
    "ttft_ms",
    "rate",
    "jitter_cv",
    "stall_rate_per_s",
    "stall_ms",
    "stall_cv",
    "ramp_ms",
    "ramp_start_fraction",
    "pause_every_ms",
    "pause_ms",
    "flush_ms",
)


class TimingSpecError(ValueError):
    """An invalid timing spec. ``str()`` reads ``field: problem``; ``field`` names the offending field."""

    def __init__(self, field_name: str, problem: str) -> None:
        self.field = field_name
        self.problem = problem
        super().__init__(f"{field_name}: {problem}")


@dataclass(frozen=True, slots=True)
class TimingSpec:
    """When the tokens of a synthetic stream appear (see the module docstring and ``playback.core.synth``)."""

    ttft_ms: float = 500.0
    rate: float = 25.0
    rate_unit: RateUnit = "tokens"
    jitter: Jitter = "none"
    jitter_cv: float = 0.0
    stall_rate_per_s: float = 0.0
    stall_ms: float = 0.0
    stall_dist: StallDist = "fixed"
    stall_cv: float = 0.0
    burst_size: int = 1
    ramp_ms: float = 0.0
    ramp_start_fraction: float = 0.5
    stall_count: int = 0
    pause_every_ms: float = 0.0
    pause_ms: float = 0.0
    flush: Flush = "none"
    flush_ms: float = 0.0

    def __post_init__(self) -> None:
        self.validate()
        for name in _FLOAT_FIELDS:  # canonical floats, so equal specs serialise identically
            object.__setattr__(self, name, float(getattr(self, name)))

    # --- validation --------------------------------------------------------------------------------
    def validate(self) -> None:  # noqa: C901 (one check per TimingSpec field)
        """Raise ``TimingSpecError`` naming the first field that is wrong."""
        for name in _FLOAT_FIELDS:
            _finite_number(name, getattr(self, name))
        _choice("rate_unit", self.rate_unit, RATE_UNITS)
        _choice("jitter", self.jitter, JITTERS)
        _choice("stall_dist", self.stall_dist, STALL_DISTS)
        _choice("flush", self.flush, FLUSHES)
        for name in ("burst_size", "stall_count"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TimingSpecError(name, f"must be an integer, got {value!r}")

        if self.ttft_ms < 0:
            raise TimingSpecError("ttft_ms", f"must be >= 0, got {self.ttft_ms}")
        if self.rate <= 0:
            raise TimingSpecError("rate", f"must be > 0, got {self.rate}")
        if self.jitter_cv < 0:
            raise TimingSpecError("jitter_cv", f"must be >= 0, got {self.jitter_cv}")
        if self.jitter == "none" and self.jitter_cv != 0:
            raise TimingSpecError("jitter_cv", "must be 0 when jitter is 'none' (choose 'gamma' or 'lognormal')")
        if self.stall_rate_per_s < 0:
            raise TimingSpecError("stall_rate_per_s", f"must be >= 0, got {self.stall_rate_per_s}")
        if self.stall_ms < 0:
            raise TimingSpecError("stall_ms", f"must be >= 0, got {self.stall_ms}")
        if self.stall_rate_per_s > 0 and self.stall_ms == 0:
            raise TimingSpecError("stall_ms", "must be > 0 when stall_rate_per_s > 0")
        if self.stall_cv < 0:
            raise TimingSpecError("stall_cv", f"must be >= 0, got {self.stall_cv}")
        if self.stall_dist != "lognormal" and self.stall_cv != 0:
            raise TimingSpecError(
                "stall_cv", f"is only used with stall_dist 'lognormal'; must be 0 for {self.stall_dist!r}"
            )
        if self.burst_size < 1:
            raise TimingSpecError("burst_size", f"must be >= 1, got {self.burst_size}")
        if self.ramp_ms < 0:
            raise TimingSpecError("ramp_ms", f"must be >= 0, got {self.ramp_ms}")
        if not 0 < self.ramp_start_fraction <= 1:
            raise TimingSpecError("ramp_start_fraction", f"must be in (0, 1], got {self.ramp_start_fraction}")
        if self.stall_count < 0:
            raise TimingSpecError("stall_count", f"must be >= 0, got {self.stall_count}")
        if self.stall_count > 0 and self.stall_rate_per_s > 0:
            raise TimingSpecError("stall_count", "give either stall_count (exact) or stall_rate_per_s (Poisson)")
        if self.stall_count > 0 and self.stall_ms == 0:
            raise TimingSpecError("stall_ms", "must be > 0 when stall_count > 0")
        for name in ("pause_every_ms", "pause_ms", "flush_ms"):
            if getattr(self, name) < 0:
                raise TimingSpecError(name, f"must be >= 0, got {getattr(self, name)}")
        if (self.pause_every_ms > 0) != (self.pause_ms > 0):
            raise TimingSpecError("pause_ms" if self.pause_every_ms > 0 else "pause_every_ms",
                                  "pause_every_ms and pause_ms are given together (both > 0) or not at all")
        if self.flush == "interval" and self.flush_ms <= 0:
            raise TimingSpecError("flush_ms", "must be > 0 when flush is 'interval'")
        if self.flush != "interval" and self.flush_ms != 0:
            raise TimingSpecError("flush_ms", f"is only used with flush 'interval'; must be 0 for {self.flush!r}")

    # --- derived -----------------------------------------------------------------------------------
    @property
    def is_constant(self) -> bool:
        """True when tokens come at exactly the constant rate (no jitter, stalls, bursts, ramp, pauses or flush)."""
        return (self.jitter_cv == 0 and self.stall_rate_per_s == 0 and self.burst_size == 1 and self.ramp_ms == 0
                and self.stall_count == 0 and self.pause_every_ms == 0 and self.flush == "none")

    # --- serialisation -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, obj: dict[str, Any]) -> TimingSpec:
        """Build from a dict; unknown keys are an error (a typo must not silently fall back to a default)."""
        if not isinstance(obj, dict):
            raise TimingSpecError("spec", f"must be an object, got {type(obj).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise TimingSpecError(unknown[0], f"unknown field (known: {', '.join(sorted(known))})")
        return cls(**obj)

    def to_json(self) -> str:
        """Compact JSON (floats written exactly, so ``from_json(to_json())`` is equal)."""
        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TimingSpec:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise TimingSpecError("spec", f"not valid JSON ({exc})") from None
        return cls.from_dict(obj)


def _finite_number(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TimingSpecError(name, f"must be a number, got {value!r}")
    if not math.isfinite(value):
        raise TimingSpecError(name, f"must be finite, got {value}")


def _choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise TimingSpecError(name, f"must be one of {', '.join(repr(c) for c in choices)}; got {value!r}")


def spec_from_seed(seed: TimingSeed, **overrides: Any) -> TimingSpec:
    """A constant-rate spec from an importer's summary timing (guidellm, LLMPerf, vLLM without details).

    TTFT is the seed's; the rate is its ``tokens_per_s``, else ``1000 / itl_mean_ms``, else derived from
    ``(output_tokens - 1) / (e2e_ms - ttft_ms)`` as the decode-rate metric defines it. ``overrides`` set any
    other field (jitter, stalls, ...). A seed with no usable rate raises ``TimingSpecError`` on ``rate``.
    """
    rate = seed.tokens_per_s
    if rate is None and seed.itl_mean_ms:
        rate = 1000.0 / seed.itl_mean_ms
    if (
        rate is None
        and seed.output_tokens is not None
        and seed.output_tokens > 1
        and seed.e2e_ms is not None
        and seed.ttft_ms is not None
        and seed.e2e_ms > seed.ttft_ms
    ):
        rate = (seed.output_tokens - 1) / ((seed.e2e_ms - seed.ttft_ms) / 1000.0)
    if rate is None:
        raise TimingSpecError("rate", f"timing seed {seed.id!r} has no tokens_per_s, itl_mean_ms or e2e span")
    values: dict[str, Any] = {"rate": rate}
    if seed.ttft_ms is not None:
        values["ttft_ms"] = seed.ttft_ms
    values.update(overrides)
    return TimingSpec(**values)
