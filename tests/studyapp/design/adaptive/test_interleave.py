"""Interleaved tracks and catch trials: a schedule fixed by the seed and the answers."""

import collections

import pytest

from studyapp.design.adaptive import (
    Block,
    Observer,
    ProcedureStateError,
    catch_budget,
    max_trials,
    parse_procedure,
    run_block,
)

TRACK = {"method": "staircase", "rule": "1up2down", "steps": [0.2, 0.1, 0.05], "max_trials": 20}
BLOCK = {
    "dimension": "tokens_per_s",
    "axis": "log",
    "seed": 42,
    "tracks": [
        {**TRACK, "name": "from-above", "start": 60, "condition": {"render": "per_token"}},
        {**TRACK, "name": "from-below", "start": 4, "condition": {"render": "per_token"}},
        {**TRACK, "name": "per-word", "start": 30, "condition": {"render": "per_word"}},
    ],
    "catch": {"rate": 0.15, "trials": [{"level": 200, "expect": "yes"}, {"level": 1, "expect": "no"}]},
}
OBSERVER = Observer(threshold=12, slope=8, lapse=0.02, axis="log")


def schedule(block):
    return [(t.track, t.level, t.catch) for t, _ in block.history]


def test_the_same_seed_and_answers_give_the_same_schedule():
    assert schedule(run_block(BLOCK, OBSERVER, answer_seed=1)) == schedule(run_block(BLOCK, OBSERVER, answer_seed=1))


def test_another_seed_gives_another_order():
    a = [t for t, _, _ in schedule(run_block(BLOCK, OBSERVER, answer_seed=1, seed=1))]
    b = [t for t, _, _ in schedule(run_block(BLOCK, OBSERVER, answer_seed=1, seed=2))]
    assert a != b


def test_every_track_runs_to_its_end_and_catch_trials_are_mixed_in():
    block = run_block(BLOCK, OBSERVER, answer_seed=3)
    counts = collections.Counter(t.track for t, _ in block.history)
    assert counts["from-above"] == counts["from-below"] == counts["per-word"] == 20
    catch = [t for t, _ in block.history if t.catch]
    assert 0 < len(catch) < 30
    assert all(t.expect is (t.level == 200) for t in catch)
    assert block.catch_summary()["trials"] == len(catch)
    assert block.done and block.next_trial() is None


ADAPTIVE_STUDY = {  # tests/data/adaptive-study.yaml's procedure, whose block once outran its reserved steps
    "dimension": "tokens_per_s", "axis": "log", "seed": 3,
    "catch": {"rate": 0.1, "trials": [{"level": 200, "expect": "yes"}]},
    "tracks": [
        {"name": "token", "method": "staircase", "rule": "1up2down", "start": 40, "steps": [0.2, 0.1, 0.05],
         "min": 2, "max": 200, "max_trials": 14, "max_reversals": 3},
        {"name": "smooth", "method": "staircase", "rule": "1up1down", "start": 8, "steps": 0.1, "min": 2,
         "max": 200, "max_trials": 10, "max_reversals": 3},
    ],
}


@pytest.mark.parametrize("config", [BLOCK, ADAPTIVE_STUDY], ids=["three-tracks", "adaptive-study"])
def test_catch_trials_never_exceed_their_budget_so_max_trials_is_a_hard_cap(config):
    """The study layer reserves ``max_trials`` steps; a block must finish within them for any seed and answers
    (catch trials are drawn at random, so without a budget a run of them could push the tracks past the end)."""
    budget, cap = catch_budget(parse_procedure(config)), max_trials(config)
    assert cap == sum(t["max_trials"] for t in config["tracks"]) + budget
    over_rate = 0
    for seed in range(300):
        block = run_block(config, OBSERVER, answer_seed=seed, seed=seed)
        n_catch = block.catch_summary()["trials"]
        assert block.done and len(block.history) <= cap and n_catch <= budget
        # the budget only trims the unlucky seeds: the rate itself would give more catch trials here
        over_rate += sum(uniform_hits(config, seed, len(block.history))) > budget
    assert over_rate > 0  # the budget was needed for some seeds (this test would catch its removal)


def uniform_hits(config, seed, n):
    from studyapp.design.adaptive.seeding import uniform

    return [uniform(seed, i, "catch") < config["catch"]["rate"] for i in range(n)]


def test_tracks_are_interleaved_not_run_one_after_another():
    tracks = [t for t, _, c in schedule(run_block(BLOCK, OBSERVER, answer_seed=4)) if not c]
    switches = sum(a != b for a, b in zip(tracks, tracks[1:]))
    assert switches > 20


def test_trials_carry_their_track_condition_and_dimension():
    block = Block(BLOCK)
    trial = block.next_trial()
    while trial.catch:
        block.record(trial.level, trial.expect)
        trial = block.next_trial()
    assert trial.dimension == "tokens_per_s"
    assert trial.condition == {"render": "per_word" if trial.track == "per-word" else "per_token"}
    assert trial.to_dict()["level"] == trial.level


def test_rounds_order_visits_every_running_track_once_per_round():
    block = run_block({**BLOCK, "order": "rounds", "catch": None}, OBSERVER, answer_seed=5)
    tracks = [t for t, _, _ in schedule(block)]
    for r in range(20):
        assert sorted(tracks[3 * r : 3 * r + 3]) == ["from-above", "from-below", "per-word"]


def test_the_pending_trial_stays_the_same_until_answered():
    block = Block(BLOCK)
    assert block.next_trial() == block.next_trial()


def test_an_answer_at_the_wrong_level_or_after_the_end_is_refused():
    block = Block(BLOCK)
    with pytest.raises(ProcedureStateError, match="trial 0 is at"):
        block.record(block.next_trial().level * 2, True)
    done = run_block(BLOCK, OBSERVER, answer_seed=6)
    with pytest.raises(ProcedureStateError, match="finished"):
        done.record(10, True)


def test_a_questplus_track_and_a_staircase_interleave():
    block_cfg = {
        "dimension": "ttft_ms",
        "seed": 9,
        "tracks": [
            {"method": "staircase", "name": "sc", "rule": "1up1down", "start": 500, "steps": 200, "min": 0,
             "max": 5000, "max_trials": 15},
            {"method": "questplus", "name": "qp", "stimuli": {"min": 0, "max": 5000, "n": 26},
             "thresholds": {"min": 200, "max": 4800, "n": 24}, "slopes": [0.002, 0.004], "max_trials": 15},
        ],
    }  # fmt: skip
    block = run_block(block_cfg, Observer(threshold=1500, slope=0.003, direction="decreasing"), answer_seed=1)
    assert collections.Counter(t.track for t, _ in block.history) == {"sc": 15, "qp": 15}
    assert set(block.estimates()) == {"sc", "qp"}
