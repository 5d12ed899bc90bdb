"""Counterbalancing: constrained seeded orders, Williams squares, balanced 2AFC sides, group assignment."""

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from studyapp.design import counterbalance as cb


def brute_force_feasible(counts, m):
    items = [k for k, c in counts.items() for _ in range(c)]
    return any(cb.max_run_length(p) <= m for p in set(itertools.permutations(items)))


@pytest.mark.parametrize("counts", [{"a": 3}, {"a": 3, "b": 1}, {"a": 4, "b": 1}, {"a": 5, "b": 2},
                                    {"a": 3, "b": 3, "c": 1}, {"a": 6, "b": 1, "c": 1}, {"a": 2, "b": 2}])
@pytest.mark.parametrize("m", [1, 2, 3])
def test_run_feasibility_matches_brute_force(counts, m):
    assert cb.run_feasible(counts, m) == brute_force_feasible(counts, m)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=5), st.integers(1, 3), st.integers(0, 2**31))
def test_constrained_shuffle_is_a_permutation_that_keeps_runs_short_whenever_possible(counts, m, seed):
    items = [(k, i) for k, c in enumerate(counts) for i in range(c)]
    key = lambda x: x[0]  # noqa: E731
    if not cb.run_feasible(Counter(map(key, items)), m):
        with pytest.raises(ValueError, match="cannot order"):
            cb.constrained_shuffle(items, seed, m, key=key)
        return
    out = cb.constrained_shuffle(items, seed, m, key=key)
    assert sorted(out) == sorted(items)
    assert cb.max_run_length([key(x) for x in out]) <= m


def test_constrained_shuffle_is_deterministic_per_seed_and_varies_across_seeds():
    items = [c for c in "abcde" for _ in range(3)]
    assert cb.constrained_shuffle(items, 5, 2) == cb.constrained_shuffle(items, 5, 2)
    assert len({tuple(cb.constrained_shuffle(items, s, 2)) for s in range(20)}) > 15


def test_constrained_shuffle_without_a_limit_is_a_plain_seeded_shuffle():
    assert sorted(cb.constrained_shuffle(list(range(10)), 1)) == list(range(10))


def test_sub_seeds_differ_by_label_and_repeat_for_the_same_label():
    assert cb.sub_seed(1, "order", "a") == cb.sub_seed(1, "order", "a") != cb.sub_seed(1, "order", "b")


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_williams_square_is_latin_and_balanced_for_carry_over(n):
    rows = cb.williams_square(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    assert all(sorted(r) == list(range(n)) for r in rows)
    for col in range(n):
        assert Counter(r[col] for r in rows) == Counter({c: len(rows) // n for c in range(n)})
    pairs = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
    assert set(pairs) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert len(set(pairs.values())) == 1


def test_latin_square_rows_cycle_with_the_participant_index():
    assert cb.latin_square_order(4, 1) == cb.latin_square_order(4, 5) != cb.latin_square_order(4, 2)


@given(st.lists(st.sampled_from("abcd"), min_size=0, max_size=30), st.integers(0, 10**6))
def test_afc_orders_are_balanced_within_each_pair_and_overall(keys, seed):
    orders = cb.afc_orders(keys, seed)
    assert set(orders) <= {"AB", "BA"}
    a_first = orders.count("AB")
    if len(keys) % 2 == 0:
        assert a_first == len(keys) // 2
    else:
        assert abs(2 * a_first - len(keys)) == 1
    for k in set(keys):
        mine = [o for o, kk in zip(orders, keys) if kk == k]
        assert abs(mine.count("AB") - mine.count("BA")) <= 1


def test_assign_group_picks_the_least_filled_counting_live_sessions():
    groups = ["g1", "g2", "g3"]
    assert cb.assign_group(groups, {"g1": 2, "g2": 1, "g3": 1}, {"g2": 1}) == "g3"
    assert cb.assign_group(groups, {"g1": 1, "g2": 1, "g3": 1}, {}) == "g1"  # tie: first listed


def test_assign_group_ties_prefer_fewer_completed_sessions():
    assert cb.assign_group(["g1", "g2"], {"g1": 2, "g2": 1}, {"g2": 1}) == "g2"


def test_assign_group_returns_none_when_quotas_are_full():
    assert cb.assign_group(["g1", "g2"], {"g1": 3}, {"g2": 3}, quotas={"g1": 3, "g2": 3}) is None
    assert cb.assign_group(["g1", "g2"], {"g1": 3}, {"g2": 1}, quotas={"g1": 3, "g2": 3}) == "g2"
    assert cb.assign_group(["g1", "g2"], {"g1": 1}, {"g2": 1}, overall_quota=2) is None


def test_groups_stay_balanced_when_participants_drop_out():
    groups = ["a", "b", "c"]
    completed: Counter = Counter()
    live: Counter = Counter()
    for i in range(60):
        g = cb.assign_group(groups, completed, live)
        live[g] += 1
        if i % 4 == 0 and g == "a":  # group a loses people: they drop out instead of completing
            live[g] -= 1
            continue
        live[g] -= 1
        completed[g] += 1
    assert max(completed.values()) - min(completed.values()) <= 1
