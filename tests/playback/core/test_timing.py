"""The timing model spec: defaults, validation naming the field, exact dict/JSON round trip."""

import math

import pytest

from playback.core.importers.base import TimingSeed
from playback.core.timing import TimingSpec, TimingSpecError, spec_from_seed


def test_defaults_are_a_constant_rate():
    spec = TimingSpec()
    assert spec.is_constant
    assert (spec.jitter, spec.stall_rate_per_s, spec.burst_size, spec.ramp_ms) == ("none", 0.0, 1, 0.0)


@pytest.mark.parametrize(
    "changes",
    [
        {"jitter": "gamma", "jitter_cv": 0.3},
        {"stall_rate_per_s": 0.1, "stall_ms": 500},
        {"burst_size": 3},
        {"ramp_ms": 800},
    ],
)
def test_any_irregularity_makes_the_spec_not_constant(changes):
    assert not TimingSpec(**changes).is_constant


def test_dict_and_json_round_trip_exactly():
    spec = TimingSpec(
        ttft_ms=812.5,
        rate=33.3,
        rate_unit="chars",
        jitter="lognormal",
        jitter_cv=0.45,
        stall_rate_per_s=0.07,
        stall_ms=1200,
        stall_dist="lognormal",
        stall_cv=0.6,
        burst_size=4,
        ramp_ms=1500,
        ramp_start_fraction=0.25,
    )
    assert TimingSpec.from_dict(spec.to_dict()) == spec
    assert TimingSpec.from_json(spec.to_json()) == spec
    assert TimingSpec.from_json(spec.to_json()).to_json() == spec.to_json()


def test_integer_numbers_serialise_like_the_equal_floats():
    assert TimingSpec(rate=25, ttft_ms=500).to_json() == TimingSpec(rate=25.0, ttft_ms=500.0).to_json()
    assert isinstance(TimingSpec(rate=25).rate, float)


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"rate": 0}, "rate", "must be > 0"),
        ({"rate": -3}, "rate", "must be > 0"),
        ({"rate": math.nan}, "rate", "must be finite"),
        ({"rate": "fast"}, "rate", "must be a number"),
        ({"rate": True}, "rate", "must be a number"),
        ({"ttft_ms": -1}, "ttft_ms", "must be >= 0"),
        ({"rate_unit": "words"}, "rate_unit", "must be one of"),
        ({"jitter": "normal"}, "jitter", "must be one of"),
        ({"jitter_cv": 0.3}, "jitter_cv", "must be 0 when jitter is 'none'"),
        ({"jitter": "gamma", "jitter_cv": -0.1}, "jitter_cv", "must be >= 0"),
        ({"stall_rate_per_s": -1}, "stall_rate_per_s", "must be >= 0"),
        ({"stall_rate_per_s": 0.2}, "stall_ms", "must be > 0 when stall_rate_per_s > 0"),
        ({"stall_dist": "uniform"}, "stall_dist", "must be one of"),
        ({"stall_cv": 0.5}, "stall_cv", "only used with stall_dist 'lognormal'"),
        ({"stall_dist": "exponential", "stall_cv": 1.0}, "stall_cv", "only used with stall_dist 'lognormal'"),
        ({"burst_size": 0}, "burst_size", "must be >= 1"),
        ({"burst_size": 2.0}, "burst_size", "must be an integer"),
        ({"ramp_ms": -5}, "ramp_ms", "must be >= 0"),
        ({"ramp_start_fraction": 0}, "ramp_start_fraction", "must be in (0, 1]"),
        ({"ramp_start_fraction": 1.5}, "ramp_start_fraction", "must be in (0, 1]"),
    ],
)
def test_invalid_fields_are_rejected_with_a_message_naming_the_field(changes, field, fragment):
    with pytest.raises(TimingSpecError) as info:
        TimingSpec(**changes)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert fragment in str(info.value)


def test_rate_error_reads_field_colon_problem():
    with pytest.raises(TimingSpecError, match=r"^rate: must be > 0, got 0$"):
        TimingSpec(rate=0)


def test_unknown_keys_in_a_dict_are_an_error_not_a_silent_default():
    with pytest.raises(TimingSpecError, match=r"^jitter_CV: unknown field"):
        TimingSpec.from_dict({"rate": 30, "jitter_CV": 0.2})


def test_from_json_reports_invalid_json_and_invalid_values():
    with pytest.raises(TimingSpecError, match=r"^spec: not valid JSON"):
        TimingSpec.from_json("{rate: 3")
    with pytest.raises(TimingSpecError, match=r"^spec: must be an object"):
        TimingSpec.from_json("[1, 2]")
    with pytest.raises(TimingSpecError, match=r"^burst_size: must be >= 1"):
        TimingSpec.from_json('{"burst_size": 0}')


def test_spec_is_immutable():
    with pytest.raises(AttributeError):
        TimingSpec().rate = 10.0  # type: ignore[misc]


def test_spec_from_seed_takes_ttft_and_the_recorded_rate():
    spec = spec_from_seed(TimingSeed(id="run", ttft_ms=420.0, tokens_per_s=31.5))
    assert (spec.ttft_ms, spec.rate, spec.rate_unit) == (420.0, 31.5, "tokens")
    assert spec.is_constant


def test_spec_from_seed_derives_the_rate_from_itl_or_the_decode_span():
    assert spec_from_seed(TimingSeed(id="a", itl_mean_ms=25.0)).rate == 40.0
    # (101 - 1) tokens over 4000 - 500 ms = 3.5 s
    seed = TimingSeed(id="b", ttft_ms=500.0, e2e_ms=4000.0, output_tokens=101)
    assert spec_from_seed(seed).rate == pytest.approx(100 / 3.5)


def test_spec_from_seed_applies_overrides_and_refuses_a_seed_without_rate():
    spec = spec_from_seed(TimingSeed(id="c", tokens_per_s=20.0), jitter="gamma", jitter_cv=0.3)
    assert (spec.jitter, spec.jitter_cv, spec.ttft_ms) == ("gamma", 0.3, TimingSpec().ttft_ms)
    with pytest.raises(TimingSpecError, match=r"^rate: timing seed 'd' has no tokens_per_s"):
        spec_from_seed(TimingSeed(id="d", ttft_ms=300.0))
