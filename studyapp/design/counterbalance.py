"""Counterbalancing: seeded, constrained trial orders, Latin-square block orders, 2AFC order balance and
between-subjects group assignment.

Everything is deterministic given its seed, so a participant's plan can be rebuilt at any time from
(study, participant seed) instead of being stored, and tests can pin it. Pure Python, no Django.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


def sub_seed(seed: int, *labels: object) -> int:
    """An independent 63-bit seed for one use of a participant's seed (``sub_seed(s, "block", "rate")``)."""
    text = ":".join([str(seed), *map(str, labels)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


# --- runs of at most m equal keys ----------------------------------------------------------------------------


def run_feasible(counts: Mapping[Hashable, int], max_run: int, last: Hashable = None, run: int = 0) -> bool:
    """Can these counts be ordered with no more than ``max_run`` equal keys in a row?

    ``last``/``run`` describe what is already placed: the sequence so far ends with ``run`` copies of
    ``last``. Exact criterion: a key x with c copies needs the other n − c items to cut it into at most
    n − c + 1 runs of at most m, i.e. c <= m·(n − c + 1); for ``last`` the first run may hold only m − run.
    (Necessary by counting; sufficient because the constructive shuffle below never gets stuck while it holds,
    which the tests check exhaustively for small cases.)
    """
    n = sum(counts.values())
    for key, c in counts.items():
        if c <= 0:
            continue
        others = n - c
        capacity = max_run * (others + 1) if key != last else (max_run - run) + max_run * others
        if c > capacity:
            return False
    return True


def constrained_shuffle(
    items: Sequence[T], seed: int, max_run: int | None = None, key: Callable[[T], Hashable] = lambda x: x
) -> list[T]:
    """A seeded random order of ``items`` with no more than ``max_run`` items of equal ``key`` in a row.

    Constructive, so it always terminates in len(items) steps: at each step it draws a key, weighted by how
    many of its items remain, among the keys whose placement keeps the rest feasible (``run_feasible``);
    items of one key keep a seeded random order among themselves. ``ValueError`` if the constraint cannot
    be met at all (e.g. one condition repeated 5 times with ``max_run`` 2). Without ``max_run`` it is a
    plain seeded shuffle.
    """
    rng = random.Random(seed)
    if max_run is None:
        out = list(items)
        rng.shuffle(out)
        return out
    if max_run < 1:
        raise ValueError(f"max_run: must be >= 1, got {max_run}")
    pools: dict[Hashable, list[T]] = {}
    for item in items:
        pools.setdefault(key(item), []).append(item)
    for pool in pools.values():
        rng.shuffle(pool)
    counts = {k: len(v) for k, v in pools.items()}
    if not run_feasible(counts, max_run):
        worst = max(counts, key=counts.get)
        raise ValueError(
            f"cannot order {len(items)} items with at most {max_run} in a row: {counts[worst]} of {worst!r}"
        )
    order = list(pools)  # first-seen order: deterministic candidate order for the weighted draw
    out: list[T] = []
    last: Hashable = None
    run = 0
    for _ in range(len(items)):
        candidates = []
        for k in order:
            if counts[k] == 0 or (k == last and run >= max_run):
                continue
            counts[k] -= 1
            ok = run_feasible(counts, max_run, k, run + 1 if k == last else 1)
            counts[k] += 1
            if ok:
                candidates.append(k)
        if not candidates:  # unreachable while run_feasible is exact; kept so a bug cannot loop or mis-order
            raise AssertionError("constrained_shuffle: no feasible key (run_feasible is not exact)")
        chosen = rng.choices(candidates, weights=[counts[k] for k in candidates])[0]
        run = run + 1 if chosen == last else 1
        last = chosen
        counts[chosen] -= 1
        out.append(pools[chosen].pop())
    return out


def max_run_length(keys: Sequence[Hashable]) -> int:
    """The longest run of equal consecutive keys (0 for an empty sequence)."""
    best = run = 0
    for i, k in enumerate(keys):
        run = run + 1 if i and keys[i - 1] == k else 1
        best = max(best, run)
    return best


# --- block orders ---------------------------------------------------------------------------------------------


def williams_square(n: int) -> list[list[int]]:
    """A balanced Latin square (Williams design) over ``n`` conditions: each precedes every other equally often.

    For even n, n rows: the first row is 0, 1, n−1, 2, n−2, ... and row r adds r (mod n). For odd n no
    n-row square is balanced for first-order carry-over, so the n rows are followed by their reverses (2n rows).
    """
    if n < 1:
        raise ValueError(f"n: must be >= 1, got {n}")
    first = [0]
    lo, hi = 1, n - 1
    for j in range(1, n):
        if j % 2:
            first.append(lo)
            lo += 1
        else:
            first.append(hi)
            hi -= 1
    rows = [[(c + r) % n for c in first] for r in range(n)]
    if n % 2 and n > 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


def latin_square_order(n: int, row: int) -> list[int]:
    """The block order for participant ``row`` (e.g. their arrival index): row ``row mod len(square)``."""
    square = williams_square(n)
    return square[row % len(square)]


# --- 2AFC presentation order ----------------------------------------------------------------------------------


def afc_orders(keys: Sequence[Hashable], seed: int) -> list[str]:
    """``"AB"`` or ``"BA"`` for each 2AFC trial, balanced within each pair key and over the whole list.

    Each key's trials get ⌊c/2⌋ of each order; the odd ones left over alternate between AB and BA from a
    seeded start, so overall exactly half are A-first when the count is even (and one more of either
    otherwise). Which trial of a key gets which order is seeded.
    """
    rng = random.Random(seed)
    positions: dict[Hashable, list[int]] = {}
    for i, k in enumerate(keys):
        positions.setdefault(k, []).append(i)
    out = [""] * len(keys)
    odd_next = rng.choice(("AB", "BA"))
    for idxs in positions.values():
        c = len(idxs)
        orders = ["AB"] * (c // 2) + ["BA"] * (c // 2)
        if c % 2:
            orders.append(odd_next)
            odd_next = "BA" if odd_next == "AB" else "AB"
        rng.shuffle(orders)
        for i, o in zip(idxs, orders):
            out[i] = o
    return out


# --- between-subjects groups ----------------------------------------------------------------------------------


def assign_group(
    groups: Sequence[str],
    completed_counts: Mapping[str, int],
    live_counts: Mapping[str, int],
    quotas: Mapping[str, int] | None = None,
    overall_quota: int | None = None,
) -> str | None:
    """The group for a new participant: the least filled, counting completed *and* live sessions.

    Counting live sessions keeps groups balanced while people are still running; counting only completed
    ones (not dropped-out ones) keeps them balanced when people drop out. A group whose completed + live
    count has reached its quota is full; ``None`` when every group is full or ``overall_quota`` is reached.
    Ties go to the group with fewer completed sessions, then to the earlier group in ``groups``.
    """
    fill = {g: completed_counts.get(g, 0) + live_counts.get(g, 0) for g in groups}
    if overall_quota is not None and sum(fill.values()) >= overall_quota:
        return None
    open_groups = [g for g in groups if quotas is None or g not in quotas or fill[g] < quotas[g]]
    if not open_groups:
        return None
    index = {g: i for i, g in enumerate(groups)}
    return min(open_groups, key=lambda g: (fill[g], completed_counts.get(g, 0), index[g]))
