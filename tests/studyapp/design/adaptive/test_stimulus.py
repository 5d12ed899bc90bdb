"""From a level to the timing spec and stream: one field set per dimension, deterministic synthesis."""

import pytest

from playback.core import metrics
from playback.core.timing import TimingSpec
from studyapp.design.adaptive import DIMENSIONS, stimulus_spec, synthesize_level, trial_seed

BASE = TimingSpec(ttft_ms=400, rate=20, stall_rate_per_s=0.2, stall_ms=600)


@pytest.mark.parametrize(
    ("dimension", "level", "field", "value"),
    [
        ("tokens_per_s", 35.0, "rate", 35.0),
        ("ttft_ms", 1200.0, "ttft_ms", 1200.0),
        ("stall_ms", 900.0, "stall_ms", 900.0),
        ("stall_rate_per_s", 0.5, "stall_rate_per_s", 0.5),
        ("jitter_cv", 0.4, "jitter_cv", 0.4),
    ],
)
def test_each_dimension_sets_its_timing_field(dimension, level, field, value):
    spec = stimulus_spec(BASE, dimension, level)
    assert getattr(spec, field) == value
    rest = {k: v for k, v in spec.to_dict().items() if k not in (field, "jitter")}
    assert rest == {k: v for k, v in BASE.to_dict().items() if k not in (field, "jitter")}


def test_chars_per_s_switches_the_rate_unit():
    spec = stimulus_spec(BASE, "chars_per_s", 80)
    assert (spec.rate, spec.rate_unit) == (80.0, "chars")


def test_jitter_gets_a_kind_when_the_base_has_none_and_zero_turns_it_off():
    assert stimulus_spec(BASE, "jitter_cv", 0.3).jitter == "gamma"
    assert stimulus_spec(BASE, "jitter_cv", 0.0).jitter == "none"


def test_stall_dimensions_need_stalls_in_the_base():
    with pytest.raises(ValueError, match="no stalls"):
        stimulus_spec(TimingSpec(), "stall_ms", 500)
    with pytest.raises(ValueError, match="stall_ms = 0"):
        stimulus_spec(TimingSpec(), "stall_rate_per_s", 0.5)


def test_levels_outside_the_dimension_are_refused():
    with pytest.raises(ValueError, match="must be > 0 for tokens_per_s"):
        stimulus_spec(BASE, "tokens_per_s", 0)
    with pytest.raises(ValueError, match="dimension: must be one of"):
        stimulus_spec(BASE, "speed", 3)


def test_every_dimension_has_a_usual_direction():
    assert DIMENSIONS["tokens_per_s"].direction == "increasing"
    assert DIMENSIONS["ttft_ms"].direction == "decreasing"


def test_the_stored_spec_and_seed_reproduce_the_stream_exactly():
    seed = trial_seed(7, 12)
    assert seed == trial_seed(7, 12) != trial_seed(7, 13)
    text = "Streaming text should feel quick. 流式文本应当显得很快。"
    spec, stream = synthesize_level(text, "o200k_base", BASE, "tokens_per_s", 31.0, seed)
    again = synthesize_level(text, "o200k_base", TimingSpec.from_json(spec.to_json()), "tokens_per_s", 31.0, seed)[1]
    assert stream == again
    assert metrics.compute(stream).ttft_ms == 400.0
