"""Hashed draws: fixed by (seed, index, purpose), independent of call order."""

from studyapp.design.adaptive.seeding import derived_seed, pick, shuffled, uniform


def test_draws_depend_only_on_their_arguments():
    a = [uniform(3, i, "track") for i in range(50)]
    b = [uniform(3, i, "track") for i in reversed(range(50))][::-1]
    assert a == b
    assert all(0 <= u < 1 for u in a)
    assert uniform(3, 0, "track") != uniform(4, 0, "track") != uniform(3, 0, "catch")


def test_pick_and_shuffle_cover_their_items():
    items = ["a", "b", "c"]
    assert {pick(items, 1, i, "p") for i in range(60)} == set(items)
    perms = {tuple(shuffled(items, 1, i, "s")) for i in range(60)}
    assert all(sorted(p) == items for p in perms) and len(perms) == 6


def test_derived_seeds_fit_in_a_javascript_number():
    seeds = [derived_seed(9, i) for i in range(100)]
    assert len(set(seeds)) == 100 and max(seeds) < 2**48
