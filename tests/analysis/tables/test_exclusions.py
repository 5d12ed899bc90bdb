"""The study file's exclusion rules on hand-checkable tables: who and what is excluded, and why."""

import pandas as pd
import pytest

from analysis.tables import exclusions


def frame(*participants):
    """Trials of participants given as (id, state, [(rt_ms, p95_ms, practice), ...], failed_attention)."""
    rows = []
    for pid, state, trials, failed in participants:
        for rt, p95, practice in trials:
            rows.append({"participant": pid, "session_state": state, "session_excluded": state == "withdrawn",
                         "practice": practice, "failed_attention": failed, "response_ms": rt,
                         "fidelity_p95_ms": p95, "excluded": False, "exclusion_reason": ""})
    return pd.DataFrame(rows)


def people(*rows):
    """Participants table rows (id, state, flags)."""
    return pd.DataFrame([{"participant": p, "state": s, "session_excluded": s == "withdrawn", "flags": f,
                          "excluded": False, "exclusion_reason": ""} for p, s, f in rows])


def reasons(marked):
    return marked.groupby("participant")["exclusion_reason"].agg(lambda r: sorted(set(r)))


OK = [(900, 10, False)] * 5


def test_failed_attention_excludes_every_trial_of_that_participant():
    f = frame((1, "completed", OK, False), (2, "completed", OK, True))
    marked, report = exclusions.apply(f, [{"rule": "failed_attention"}])
    assert list(marked.groupby("participant")["excluded"].all()) == [False, True]
    assert set(marked.loc[marked["participant"] == 2, "exclusion_reason"]) == {"failed_attention"}
    assert report.participants == {2: ["failed_attention"]} and report.rules[0].trials == 5


def test_a_flagged_attention_failure_counts_even_without_answered_trials():
    f = frame((1, "completed", OK, False))
    _, report = exclusions.apply(f, [{"rule": "failed_attention"}],
                                 participants=people((1, "completed", ""),
                                                     (2, "screened_out", "failed attention check catch-afc")))
    assert report.participants == {2: ["failed_attention"]} and report.rules[0].participants == [2]


def test_incomplete_excludes_every_session_that_did_not_complete():
    f = frame((1, "completed", OK, False), (2, "active", OK[:2], False))
    marked, report = exclusions.apply(f, [{"rule": "incomplete"}],
                                      participants=people((1, "completed", ""), (2, "active", ""),
                                                          (3, "timed_out", ""), (4, "screened_out", "")))
    assert report.rules[0].participants == [2, 3, 4] and report.rules[0].trials == 2
    assert report.n_participants == 4 and report.n_participants_excluded == 3
    assert marked["excluded"].sum() == 2 and report.n_trials_excluded == 2


def test_withdrawn_sessions_are_excluded_by_the_rule_and_by_their_own_mark():
    f = frame((1, "completed", OK, False), (2, "withdrawn", OK[:3], False))
    marked, report = exclusions.apply(f, [{"rule": "withdrawn"}])
    assert reasons(marked)[2] == ["withdrawn; session_excluded"]
    unmarked, report2 = exclusions.apply(f, [])  # no rule: the session's own mark still excludes it
    assert report2.participants == {2: ["session_excluded"]} and unmarked["excluded"].sum() == 3


def test_too_fast_compares_the_median_of_main_trials():
    fast = [(300, 10, False), (400, 10, False), (2000, 10, False), (5000, 10, True), (6000, 10, True)]
    slow = [(700, 10, False), (800, 10, False), (900, 10, False), (100, 10, True)]
    marked, report = exclusions.apply(frame((1, "completed", fast, False), (2, "completed", slow, False)),
                                      [{"rule": "too_fast", "min_median_rt_ms": 800}])
    assert report.participants == {1: ["too_fast"]}  # medians of main trials: 400 (< 800) and 800 (not <)
    assert report.rules[0].params == {"min_median_rt_ms": 800.0}
    with pytest.raises(exclusions.ExclusionError, match="min_median_rt_ms"):
        exclusions.apply(frame((1, "completed", fast, False)), [{"rule": "too_fast"}])


def test_fidelity_with_a_max_fraction_excludes_participants_over_it():
    two_of_five = [(900, 60, False)] * 2 + [(900, 10, False)] * 3 + [(900, 99, True)] * 3
    one_of_five = [(900, 60, False)] + [(900, 10, False)] * 4 + [(900, None, False)] * 3
    marked, report = exclusions.apply(
        frame((1, "completed", two_of_five, False), (2, "completed", one_of_five, False)),
        [{"rule": "fidelity_violated", "max_fraction": 0.2, "bound_ms": 50}])
    assert report.participants == {1: ["fidelity_violated"]}  # 0.4 > 0.2; 0.2 is not over it (unlogged ignored)
    assert marked.loc[marked["participant"] == 1, "excluded"].all() and report.rules[0].trials == 8
    assert not marked.loc[marked["participant"] == 2, "excluded"].any()


def test_fidelity_without_a_max_fraction_excludes_only_the_violating_trials():
    trials = [(900, 40, False), (900, 30, False), (900, None, False)]
    marked, report = exclusions.apply(frame((1, "completed", trials, False)), [{"rule": "fidelity_violated"}])
    assert list(marked["excluded"]) == [True, False, False]  # default bound 33.4 ms
    assert report.participants == {} and report.trial_only == {1: 1} and report.n_trials_excluded == 1
    assert any("1 trial excluded" in line for line in report.lines())


def test_every_reason_is_named_once_and_the_report_counts_per_rule():
    f = frame((1, "active", [(100, 90, False)] * 2, True), (2, "completed", OK, False))
    rules = [{"rule": "failed_attention"}, {"rule": "incomplete"},
             {"rule": "fidelity_violated", "max_fraction": 0.5, "bound_ms": 50}]
    marked, report = exclusions.apply(f, rules)
    assert set(marked.loc[marked["participant"] == 1, "exclusion_reason"]) == {
        "failed_attention; incomplete; fidelity_violated"}
    assert set(marked.loc[marked["participant"] == 2, "exclusion_reason"]) == {""}
    assert [(r.rule, r.participants, r.trials) for r in report.rules] == [
        ("failed_attention", [1], 2), ("incomplete", [1], 2), ("fidelity_violated", [1], 2)]
    d = report.to_dict()
    assert d["participants_excluded"] == 1 and d["excluded_participants"] == {
        "1": ["failed_attention", "incomplete", "fidelity_violated"]}


def test_participants_are_marked_from_the_report():
    f = frame((1, "completed", OK, True), (2, "completed", OK, False))
    who = people((1, "completed", ""), (2, "completed", ""))
    _, report = exclusions.apply(f, [{"rule": "failed_attention"}], participants=who)
    marked = exclusions.mark_participants(who, report)
    assert list(marked["excluded"]) == [True, False] and list(marked["exclusion_reason"]) == ["failed_attention", ""]


def test_an_unknown_rule_is_refused_by_name():
    with pytest.raises(exclusions.ExclusionError, match="'sleepy'"):
        exclusions.apply(frame((1, "completed", OK, False)), [{"rule": "sleepy"}])


def test_fidelity_reads_lateness_beyond_design_and_stalls_seen_where_the_tidy_data_has_them():
    trials = [(900, 150, False), (900, 150, False), (900, 10, False)]
    table = frame((1, "completed", trials, False))
    table["fidelity_late_p95_ms"] = [5.0, 60.0, 5.0]  # a smooth play 150 ms behind schedule, 5 ms beyond design
    table["fidelity_stalls_seen"] = [0, 0, 2]
    marked, _ = exclusions.apply(table, [{"rule": "fidelity_violated"}])
    assert list(marked["excluded"]) == [False, True, True]
