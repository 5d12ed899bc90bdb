"""Randomness that depends only on (seed, trial index, purpose), so a replay draws exactly the same numbers.

A hash, not a generator: no state to store, no dependence on how many draws came before, and the same value on
every Python and numpy version (numpy does not promise its ``Generator`` streams across versions).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def _digest(seed: int, index: int, purpose: str) -> bytes:
    return hashlib.sha256(f"{int(seed)}:{int(index)}:{purpose}".encode()).digest()


def uniform(seed: int, index: int, purpose: str) -> float:
    """A number in [0, 1) fixed by its arguments."""
    return int.from_bytes(_digest(seed, index, purpose)[:8], "big") / 2.0**64


def pick(items: Sequence[T], seed: int, index: int, purpose: str) -> T:
    """One of ``items``, each equally likely, fixed by the arguments."""
    if not items:
        raise ValueError("pick: no items")
    return items[min(int(uniform(seed, index, purpose) * len(items)), len(items) - 1)]


def shuffled(items: Sequence[T], seed: int, index: int, purpose: str) -> list[T]:
    """A permutation of ``items`` (Fisher–Yates on hashed draws), fixed by the arguments."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = min(int(uniform(seed, index, f"{purpose}:{i}") * (i + 1)), i)
        out[i], out[j] = out[j], out[i]
    return out


def derived_seed(seed: int, index: int, purpose: str = "stimulus") -> int:
    """A non-negative integer seed (< 2**48, exact in JSON and JavaScript) for trial ``index``."""
    return int.from_bytes(_digest(seed, index, purpose)[:6], "big")
