"""The simulated observer: a known psychometric function, in either direction, on a linear or log axis."""

import random

import numpy as np
import pytest

from studyapp.design.adaptive import Observer, ProcedureConfigError


def test_p_yes_at_threshold_is_halfway_between_guess_and_one_minus_lapse():
    obs = Observer(threshold=12, slope=5, guess=0.1, lapse=0.04, axis="log")
    assert obs.p_yes(12) == pytest.approx(0.1 + 0.86 / 2)


def test_increasing_observer_says_yes_more_often_at_higher_levels():
    obs = Observer(threshold=12, slope=5, axis="log")
    assert obs.p_yes(6) < obs.p_yes(12) < obs.p_yes(24)


def test_decreasing_observer_says_yes_more_often_at_lower_levels():
    obs = Observer(threshold=1000, slope=0.005, direction="decreasing")  # TTFT in ms
    assert obs.p_yes(300) > obs.p_yes(1000) > obs.p_yes(2500)


def test_log_axis_is_symmetric_in_ratios():
    obs = Observer(threshold=10, slope=4, axis="log")
    assert obs.p_yes(20) == pytest.approx(1 - obs.p_yes(5))


@pytest.mark.parametrize("function", ["logistic", "norm", "normal", "weibull"])
@pytest.mark.parametrize("direction", ["increasing", "decreasing"])
def test_level_at_inverts_p_yes(function, direction):
    obs = Observer(threshold=10, slope=4, guess=0.02, lapse=0.03, function=function, axis="log", direction=direction)
    for p in (0.2, 0.5, 0.707, 0.9):
        assert obs.p_yes(obs.level_at(p)) == pytest.approx(p)


def test_respond_is_seeded_and_matches_p_yes_on_average():
    obs = Observer(threshold=10, slope=1.0)
    a = [obs.respond(10.5, random.Random(3)) for _ in range(3)]
    assert len(set(a)) == 1
    rng = np.random.default_rng(1)
    share = np.mean([obs.respond(10.5, rng) for _ in range(4000)])
    assert share == pytest.approx(obs.p_yes(10.5), abs=0.03)


def test_from_config_round_trips_and_names_bad_keys():
    obs = Observer.from_config({"threshold": 12, "slope": 5, "axis": "log", "lapse": 0.02})
    assert Observer.from_config(obs.to_dict()) == obs
    with pytest.raises(ProcedureConfigError, match=r"^observer\.slope: required"):
        Observer.from_config({"threshold": 12})
    with pytest.raises(ProcedureConfigError, match=r"^observer\.width: unknown key"):
        Observer.from_config({"threshold": 12, "slope": 1, "width": 2})
    with pytest.raises(ProcedureConfigError, match=r"^observer\.lapse: must be in"):
        Observer(threshold=12, slope=1, lapse=0.7)
