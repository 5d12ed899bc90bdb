"""The payment quality report on hand-made rows: each rule, and the suggestion it leads to (no Django)."""

import math
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.core import quality
from dashboard.core.quality import APPROVE, REJECT, Rules, assess, assess_all, rules_from_spec

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def person(state="completed", minutes=12.0, pid=1):
    return {"participant": pid, "state": state, "started_at": T0, "finished_at": T0 + timedelta(minutes=minutes)}


def trial(**kw):
    row = {"participant": 1, "trial_type": "acceptability", "condition": "a:rate=10", "response_value": 1.0,
           "response_ms": 1500.0, "practice": False, "attention_check": None, "attention_passed": None,
           "catch": None, "fidelity_violated": False, "tab_hidden": False}
    row.update(kw)
    return row


def ratings(values):
    return [trial(trial_type="rating", condition=f"r:rate={i % 3}", response_value=v) for i, v in enumerate(values)]


def codes(q):
    return [r.code for r in q.reasons]


def test_a_clean_completed_participant_is_approved_with_a_reason():
    q = assess(person(), [trial(), trial(condition="a:rate=20", response_value=0.0)])
    assert q.suggestion == APPROVE and q.reasons == () and "passed" in q.reason_text


def test_a_failed_attention_check_beyond_the_tolerance_suggests_reject():
    rows = [trial(), trial(attention_check="fast-vs-slow", attention_passed=False),
            trial(attention_check="second", attention_passed=True)]
    q = assess(person(), rows)
    assert (q.attention_answered, q.attention_failed) == (2, 1)
    assert q.suggestion == REJECT and codes(q) == ["attention"] and "failed 1 of 2" in q.reason_text
    assert assess(person(), rows, rules=Rules(max_attention_failures=1)).suggestion == APPROVE


def test_catch_trials_count_apart_from_attention_checks_and_need_enough_of_them():
    catch_rows = [trial(attention_check="adaptive-catch", catch=True, attention_passed=ok)
                  for ok in (True, False, False)]
    q = assess(person(), [trial(), *catch_rows])
    assert (q.catch_answered, q.catch_correct, q.attention_answered) == (3, 1, 0)
    assert codes(q) == ["catch"] and q.suggestion == REJECT
    one_wrong = assess(person(), [trial(attention_check="adaptive-catch", catch=True, attention_passed=False)])
    assert one_wrong.suggestion == APPROVE  # a single catch trial is too few to judge (min_catch_trials = 2)


def test_the_same_rating_everywhere_is_straight_lining():
    q = assess(person(), ratings([4, 4, 4, 4, 4, 4]))
    assert q.straight_lined and codes(q) == ["straight_lining"] and "same value (4)" in q.reason_text
    assert not assess(person(), ratings([4, 4, 4, 4, 3, 4])).straight_lined
    assert not assess(person(), ratings([4, 4, 4])).straight_lined  # too few ratings to tell


def test_straight_lining_needs_more_than_one_condition():
    rows = [trial(trial_type="rating", condition="r:rate=10", response_value=5) for _ in range(8)]
    assert not assess(person(), rows).straight_lined


def test_too_fast_uses_the_median_response_time_of_main_trials_only():
    rows = [trial(response_ms=120.0), trial(response_ms=150.0), trial(practice=True, response_ms=9000.0)]
    q = assess(person(), rows, rules=Rules(min_median_rt_ms=300))
    assert q.median_rt_ms == 135.0 and codes(q) == ["too_fast"]
    assert assess(person(), rows).suggestion == APPROVE  # no rule unless the study sets one


def test_a_short_session_is_rejected_only_when_a_minimum_is_set():
    q = assess(person(minutes=1.5), [trial()], rules=Rules(min_minutes=3))
    assert q.minutes_on_task == 1.5 and codes(q) == ["short_session"]
    assert assess(person(minutes=1.5), [trial()]).suggestion == APPROVE


def test_the_page_hidden_on_most_trials_suggests_reject_and_on_a_few_is_a_note():
    most = assess(person(), [trial(tab_hidden=True), trial(tab_hidden=True), trial()], visibility_changes=4)
    assert codes(most) == ["tab_hidden"] and most.hidden_trials == 2 and most.visibility_changes == 4
    few = assess(person(), [trial(tab_hidden=True), trial(), trial()])
    assert few.suggestion == APPROVE and [n.code for n in few.notes] == ["tab_hidden_some"]


def test_late_painting_is_never_the_participants_fault():
    q = assess(person(), [trial(fidelity_violated=True), trial(fidelity_violated=True), trial(fidelity_violated=None)])
    assert (q.fidelity_checked, q.fidelity_violated) == (2, 2)
    assert q.suggestion == APPROVE and [n.code for n in q.notes] == ["fidelity"]


def test_sessions_that_did_not_complete_get_no_suggestion():
    q = assess(person(state="returned"), [trial(attention_check="x", attention_passed=False)])
    assert q.suggestion is None and q.notes[0].code == "not_completed" and codes(q) == ["attention"]


def test_several_reasons_are_all_given():
    rows = [*ratings([2] * 6), trial(attention_check="x", attention_passed=False)]
    q = assess(person(), rows)
    assert codes(q) == ["attention", "straight_lining"] and q.reason_text.count(";") == 1


def test_missing_values_from_pandas_are_treated_as_missing():
    rows = [trial(response_ms=math.nan, attention_check=math.nan, fidelity_violated=math.nan, catch=math.nan)]
    q = assess({"participant": 1, "state": "completed", "started_at": None, "finished_at": None}, rows)
    assert q.median_rt_ms is None and q.minutes_on_task is None and q.attention_answered == 0
    assert q.fidelity_checked == 0 and q.suggestion == APPROVE


def test_assess_all_matches_trials_to_participants():
    people = [person(pid=1), person(pid=2)]
    rows = [trial(participant=1), trial(participant=2, attention_check="x", attention_passed=False)]
    out = assess_all(people, rows, visibility_changes={2: 3})
    assert [q.suggestion for q in out] == [APPROVE, REJECT] and out[1].visibility_changes == 3


@pytest.mark.parametrize(("spec", "expected"), [
    ({}, Rules()),
    ({"attention_checks": {"max_failures": 1}, "exclusions": [{"rule": "too_fast", "min_median_rt_ms": 400}]},
     Rules(max_attention_failures=1, min_median_rt_ms=400.0)),
])
def test_rules_follow_the_study_file(spec, expected):
    assert rules_from_spec(spec) == expected


def test_as_dict_is_plain_data():
    d = assess(person(), [trial()]).as_dict()
    assert d["suggestion"] == quality.APPROVE and d["reason_text"] and isinstance(d["reasons"], tuple)
