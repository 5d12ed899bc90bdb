"""State derived from stored answers: a replay chooses every stored level and continues where the session was."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studyapp.design.adaptive import Block, Observer, ReplayError, replay, run_block

BLOCK = {
    "dimension": "tokens_per_s",
    "axis": "log",
    "seed": 7,
    "tracks": [
        {"method": "staircase", "name": "sc", "rule": "weighted", "target": 0.75, "start": 50, "steps": [0.15, 0.05],
         "min": 1, "max": 300, "max_trials": 25},
        {"method": "questplus", "name": "qp", "stimuli": {"min": 1, "max": 300, "n": 40},
         "slopes": {"min": 2, "max": 20, "n": 5}, "lapses": [0, 0.03], "max_trials": 25, "ci_width": 0.4,
         "min_trials": 10},
    ],
    "catch": {"rate": 0.1, "trials": [{"level": 250, "expect": "yes"}]},
}  # fmt: skip
OBSERVER = Observer(threshold=15, slope=6, lapse=0.02, axis="log")


def stored(block):
    """What the study layer stores: (level, response) per answered trial, through JSON."""
    return json.loads(json.dumps([[t.level, r] for t, r in block.history]))


def test_replaying_the_stored_answers_reproduces_every_level_and_estimate():
    live = run_block(BLOCK, OBSERVER, answer_seed=2)
    again = replay(BLOCK, stored(live))
    assert [t for t, _ in again.history] == [t for t, _ in live.history]
    assert again.estimates() == live.estimates()
    assert again.done


def test_a_resumed_session_continues_exactly_where_it_was():
    live = run_block(BLOCK, OBSERVER, answer_seed=3)
    answers = stored(live)
    for cut in (0, 1, 17, len(answers) - 1):
        resumed = replay(BLOCK, answers[:cut])
        assert resumed.next_trial() == live.history[cut][0]
        for level, response in answers[cut:]:
            resumed.record(level, response)
        assert resumed.estimates() == live.estimates()


def test_a_stored_level_the_procedure_would_not_choose_is_an_error_naming_the_trial():
    answers = stored(run_block(BLOCK, OBSERVER, answer_seed=4))
    answers[5][0] *= 1.5
    with pytest.raises(ReplayError, match=r"^answers\[5\]: stored level") as info:
        replay(BLOCK, answers)
    assert info.value.index == 5


def test_a_different_seed_does_not_replay():
    answers = stored(run_block(BLOCK, OBSERVER, answer_seed=4))
    with pytest.raises(ReplayError):
        replay(BLOCK, answers, seed=8)


def test_answers_beyond_the_end_are_an_error():
    answers = stored(run_block(BLOCK, OBSERVER, answer_seed=5))
    with pytest.raises(ReplayError, match="finished after"):
        replay(BLOCK, [*answers, answers[-1]])


def test_malformed_answers_are_errors():
    with pytest.raises(ReplayError, match=r"answers\[0\]: expected a \(level, response\) pair"):
        replay(BLOCK, [50.0])
    first = Block(BLOCK).next_trial()
    with pytest.raises(ReplayError, match=r"answers\[0\]: response: must be true or false"):
        replay(BLOCK, [(first.level, "yes")])


@given(st.lists(st.booleans(), max_size=60), st.integers(min_value=0, max_value=2**32))
@settings(max_examples=25, deadline=None)
def test_any_answer_sequence_replays_to_the_same_state(responses, seed):
    live = Block(BLOCK, seed=seed)
    for r in responses:
        trial = live.next_trial()
        if trial is None:
            break
        live.record(trial.level, r)
    again = replay(BLOCK, stored(live), seed=seed)
    assert again.next_trial() == live.next_trial()
    assert again.estimates() == live.estimates()
