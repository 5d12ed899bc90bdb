"""Up-down staircases: step rules, reversals, shrinking steps, bounds, stopping, log axis, weighted targets."""

import math
import random

import numpy as np
import pytest

from studyapp.design.adaptive import Observer, ProcedureStateError, Staircase


def staircase(**overrides):
    cfg = {"rule": "1up1down", "start": 10.0, "steps": 1.0, "max_trials": 100}
    cfg.update(overrides)
    return Staircase.from_config(cfg)


def answer(sc, responses):
    levels = []
    for r in responses:
        levels.append(sc.next_level())
        sc.update(levels[-1], r)
    return levels


def test_1up1down_steps_down_after_each_yes_and_up_after_each_no():
    sc = staircase()
    assert answer(sc, [True, True, False, True]) == [10.0, 9.0, 8.0, 9.0]
    assert sc.next_level() == 8.0


def test_1up2down_needs_two_consecutive_yes_to_step_down():
    sc = staircase(rule="1up2down")
    assert answer(sc, [True, True, True, False, True, True]) == [10, 10, 9, 9, 10, 10]
    assert sc.next_level() == 9.0


def test_1up3down_needs_three_consecutive_yes_and_a_no_resets_the_count():
    sc = staircase(rule="1up3down")
    assert answer(sc, [True, True, False, True, True, True]) == [10, 10, 10, 11, 11, 11]
    assert sc.next_level() == 10.0


def test_a_reversal_is_a_step_against_the_previous_step_at_the_answered_level():
    sc = staircase()
    levels = answer(sc, [True, True, False, False, True])  # down, down, up (rev), up, down (rev)
    assert levels == [10, 9, 8, 9, 10]
    assert sc.reversals == 2
    assert sc.reversal_trials == [2, 4]
    assert sc.reversal_levels == [8.0, 10.0]


def test_1up2down_yes_without_a_step_is_not_a_reversal():
    sc = staircase(rule="1up2down")
    answer(sc, [False, True, False])  # up, (no step), up
    assert sc.reversals == 0


def test_step_size_shrinks_with_each_reversal_and_keeps_the_last_size():
    sc = staircase(steps=[4.0, 2.0, 1.0], start=20.0)
    levels = answer(sc, [True, False, True, False, True, True])
    # down 4; up (rev 1) uses 2; down (rev 2) uses 1; up (rev 3) stays 1; down (rev 4) 1; down 1
    assert levels == [20, 16, 18, 17, 18, 17]
    assert sc.next_level() == 16.0
    assert sc.reversals == 4 and sc.step == 1.0


def test_levels_are_clipped_to_the_bounds_and_the_step_still_counts_for_its_direction():
    sc = staircase(start=2.0, min=1.5, max=3.0)
    answer(sc, [True, True])
    assert sc.next_level() == 1.5
    answer(sc, [False])  # up from the floor: a reversal at 1.5
    assert sc.reversal_levels == [1.5] and sc.next_level() == 2.5
    answer(sc, [False, False, False])
    assert sc.next_level() == 3.0


def test_stops_after_max_trials():
    sc = staircase(max_trials=3)
    answer(sc, [True, True, True])
    assert sc.done
    with pytest.raises(ProcedureStateError, match="finished"):
        sc.update(sc.next_level(), True)


def test_stops_after_max_reversals():
    sc = staircase(max_reversals=3)
    answer(sc, [True, False, True])
    assert not sc.done
    answer(sc, [False])
    assert sc.done and sc.trials == 4


def test_an_answer_at_another_level_is_refused():
    sc = staircase()
    with pytest.raises(ProcedureStateError, match="expected 10.0"):
        sc.update(11.0, True)


def test_a_non_boolean_answer_is_refused():
    sc = staircase()
    with pytest.raises(ProcedureStateError, match="response"):
        sc.update(10.0, 1)


def test_log_axis_multiplies_the_level_by_ten_to_the_step():
    sc = staircase(axis="log", start=20.0, steps=math.log10(2))
    levels = answer(sc, [True, True, False])
    assert np.allclose(levels, [20, 10, 5])
    assert math.isclose(sc.next_level(), 10.0)


def test_decreasing_direction_moves_up_in_level_after_a_yes():
    sc = staircase(direction="decreasing", start=500.0, steps=100.0)  # e.g. TTFT: a yes makes it longer
    assert answer(sc, [True, True, False]) == [500, 600, 700]
    assert sc.next_level() == 600


def test_weighted_steps_up_by_p_over_1_minus_p_times_the_down_step():
    sc = staircase(rule="weighted", target=0.75, steps=1.0)
    answer(sc, [True, False])
    assert sc.next_level() == pytest.approx(10 - 1 + 3)
    assert sc.config.target_p == 0.75


def test_estimate_is_the_mean_of_the_last_k_reversal_levels_in_axis_units():
    sc = staircase(estimate_reversals=2, axis="log", steps=0.1)
    answer(sc, [True, False, True, False])
    last = sc.reversal_levels[-2:]
    est = sc.estimate()
    assert est.threshold == pytest.approx(10 ** np.mean(last))
    assert est.reversals == 3 and est.trials == 4


def test_estimate_has_no_threshold_before_the_first_reversal():
    sc = staircase()
    answer(sc, [True, True])
    assert sc.estimate().threshold is None


@pytest.mark.parametrize(("rule", "target"), [("1up2down", None), ("1up3down", None), ("weighted", 0.75)])
def test_staircases_converge_on_their_target_probability(rule, target):
    obs = Observer(threshold=15.0, slope=6.0, axis="log")
    extra = {"target": target} if target else {}
    rng = random.Random(11)
    estimates = []
    for _ in range(150):
        sc = staircase(rule=rule, axis="log", start=60.0, steps=[0.2, 0.1, 0.05], max_trials=80, **extra)
        while not sc.done:
            level = sc.next_level()
            sc.update(level, obs.respond(level, rng))
        estimates.append(math.log10(sc.estimate().threshold))
    truth = math.log10(obs.level_at(sc.config.target_p))
    assert abs(np.mean(estimates) - truth) < 0.04  # 10 % in level
