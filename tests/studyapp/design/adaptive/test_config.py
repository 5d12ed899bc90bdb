"""The ``procedure:`` block: defaults, inheritance, grids, and errors that name the offending key."""

import pytest

from studyapp.design.adaptive import ProcedureConfigError, QuestPlusConfig, StaircaseConfig, parse_procedure

STAIRCASE = {"method": "staircase", "rule": "1up2down", "start": 40, "steps": [0.2, 0.1], "max_trials": 40}
QUEST = {"method": "questplus", "stimuli": [1, 2], "slopes": 1, "max_trials": 5}
CATCH_ONE = {"rate": 0.1, "trials": [{"level": 5, "expect": 1}]}


def test_a_block_without_tracks_is_one_track_named_main():
    cfg = parse_procedure({"dimension": "tokens_per_s", "seed": 5, **STAIRCASE})
    assert cfg.seed == 5 and cfg.order == "random" and cfg.catch is None
    (track,) = cfg.tracks
    assert isinstance(track, StaircaseConfig)
    assert (track.name, track.rule, track.steps, track.target_p) == ("main", "1up2down", (0.2, 0.1), 0.5**0.5)


def test_tracks_inherit_dimension_direction_and_axis_and_may_override_them():
    cfg = parse_procedure(
        {
            "dimension": "tokens_per_s",
            "axis": "log",
            "tracks": [STAIRCASE, {**STAIRCASE, "name": "lin", "axis": "linear"}],
        }
    )
    a, b = cfg.tracks
    assert (a.name, a.axis, a.dimension, a.direction) == ("track1", "log", "tokens_per_s", "increasing")
    assert (b.name, b.axis) == ("lin", "linear")


def test_direction_defaults_to_the_dimension_s_usual_direction():
    cfg = parse_procedure({"dimension": "ttft_ms", **STAIRCASE, "start": 800})
    assert cfg.tracks[0].direction == "decreasing"


def test_questplus_grids_from_min_max_n_are_spaced_on_the_axis():
    cfg = parse_procedure(
        {
            "dimension": "tokens_per_s",
            "method": "questplus",
            "axis": "log",
            "stimuli": {"min": 1, "max": 100, "n": 3},
            "slopes": [2, 4],
            "max_trials": 30,
        }
    )
    (track,) = cfg.tracks
    assert isinstance(track, QuestPlusConfig)
    assert track.stimuli == pytest.approx((1, 10, 100))
    assert track.thresholds == track.stimuli  # default: the stimulus grid
    assert track.lapses == (0.0, 0.02, 0.05) and track.guesses == (0.0,)


def test_catch_trials_accept_yes_and_no():
    cfg = parse_procedure(
        {
            "dimension": "tokens_per_s",
            **STAIRCASE,
            "catch": {"rate": 0.1, "trials": [{"level": 200, "expect": "yes"}, {"level": 1, "expect": "no"}]},
        }
    )
    assert [(t.level, t.expect) for t in cfg.catch.trials] == [(200, True), (1, False)]


@pytest.mark.parametrize(
    ("block", "key", "fragment"),
    [
        ({**STAIRCASE, "rule": "2up1down"}, "procedure.rule", "must be one of 1up1down, 1up2down, 1up3down, weighted"),
        ({**STAIRCASE, "method": "quest"}, "procedure.method", "must be one of staircase, questplus"),
        ({**STAIRCASE, "stepz": 1}, "procedure.stepz", "unknown key"),
        ({**STAIRCASE, "max_trials": None}, "procedure.max_trials", "required"),
        ({**STAIRCASE, "max_trials": 0}, "procedure.max_trials", ">= 1"),
        ({**STAIRCASE, "steps": [0.1, -0.1]}, "procedure.steps", "> 0"),
        ({**STAIRCASE, "rule": "weighted"}, "procedure.target", "required for rule weighted"),
        ({**STAIRCASE, "rule": "weighted", "target": 1.2}, "procedure.target", "between 0 and 1"),
        ({**STAIRCASE, "target": 0.7}, "procedure.target", "only for rule weighted"),
        ({**STAIRCASE, "min": 50, "max": 10}, "procedure.max", "greater than min"),
        ({**STAIRCASE, "min": 50}, "procedure.start", "within [min, max]"),
        ({**STAIRCASE, "start": 0}, "procedure.start", "must be > 0 for tokens_per_s"),
        ({**STAIRCASE, "axis": "log", "dimension": "ttft_ms", "start": 0}, "procedure.start", "> 0 on a log axis"),
        ({**STAIRCASE, "dimension": "speed"}, "procedure.dimension", "must be one of tokens_per_s"),
        ({**STAIRCASE, "direction": "up"}, "procedure.direction", "must be one of increasing, decreasing"),
        ({**STAIRCASE, "seed": -1}, "procedure.seed", "non-negative integer"),
        ({**STAIRCASE, "order": "blocked"}, "procedure.order", "must be one of random, rounds"),
        ({**STAIRCASE, "catch": CATCH_ONE}, "procedure.catch.trials[0].expect", "yes or no"),
        ({**STAIRCASE, "catch": {"rate": 1.5, "trials": []}}, "procedure.catch.rate", "between 0 and 1"),
        ({"tracks": []}, "procedure.tracks", "non-empty list"),
        ({"tracks": [STAIRCASE, {**STAIRCASE, "name": "track1"}]}, "procedure.tracks[1].name", "duplicate"),
        ({"tracks": [STAIRCASE, {**STAIRCASE, "rule": "x"}]}, "procedure.tracks[1].rule", "must be one of"),
        ({"method": "questplus", "slopes": 1, "max_trials": 5}, "procedure.stimuli", "required"),
        ({**QUEST, "stimuli": [3, 2]}, "procedure.stimuli", "increasing"),
        ({"method": "questplus", "stimuli": [1, 2], "max_trials": 5}, "procedure.slopes", "required"),
        ({**QUEST, "lapses": 0.6}, "procedure.lapses", "[0, 0.5)"),
        ({**QUEST, "function": "probit"}, "procedure.function", "logistic, norm, weibull, normal"),
        ({**QUEST, "ci_width": 0}, "procedure.ci_width", "> 0"),
        ({**QUEST, "min_trials": 6}, "procedure.min_trials", "must not exceed max_trials"),
        ({**QUEST, "stimuli": {"min": 1, "max": 2}}, "procedure.stimuli.n", "required"),
        ({**QUEST, "stimuli": {"min": 0, "max": 2, "n": 3, "spacing": "log"}}, "procedure.stimuli.min", "log spacing"),
    ],
)
def test_invalid_blocks_name_the_key(block, key, fragment):
    block = {"dimension": "tokens_per_s", **block}
    with pytest.raises(ProcedureConfigError) as info:
        parse_procedure(block)
    assert info.value.key == key
    assert fragment in info.value.problem
    assert str(info.value).startswith(f"{key}: ")


def test_the_dimension_is_required_for_a_study_block():
    with pytest.raises(ProcedureConfigError, match=r"^procedure\.dimension: required"):
        parse_procedure(STAIRCASE)


def test_the_block_itself_must_be_a_mapping():
    with pytest.raises(ProcedureConfigError, match=r"^procedure: must be a mapping"):
        parse_procedure([STAIRCASE])
