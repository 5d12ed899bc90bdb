"""Shared pieces of the fuzz tests (not a test module): example budgets, JSON strategies, mutation of valid
messages, and counting the examples tried so the run can print them."""

from __future__ import annotations

import atexit
import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

EXAMPLES = int(os.environ.get("PACELAB_FUZZ_EXAMPLES", "150"))
TRIED: Counter[str] = Counter()


def fuzz_settings(share: float = 1.0) -> settings:
    """Modest in CI (``PACELAB_FUZZ_EXAMPLES`` raises it); no deadline (real services answer at their pace)."""
    return settings(max_examples=max(10, int(EXAMPLES * share)), deadline=None, derandomize=False,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large, HealthCheck.filter_too_much])


def count(name: str) -> None:
    TRIED[name] += 1


@atexit.register
def _report() -> None:  # pragma: no cover - printed at the end of the run for the issue note
    if TRIED:
        print("\nfuzz examples tried: " + ", ".join(f"{k} {v}" for k, v in sorted(TRIED.items()))
              + f"; total {sum(TRIED.values())}")


scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                           | st.dictionaries(st.text(max_size=12), inner, max_size=5), max_leaves=20)
# keys a participant endpoint or the protocol reads, so mutations hit the parsers, not only unknown keys
KEYS = ["client_id", "step", "payload", "consent", "environment", "viewport", "width", "height", "refresh_hz",
        "device", "dpr", "touch", "language", "user_agent", "response", "response_ms", "reading_ms", "comment",
        "answers", "type", "token", "batch", "entries", "seq", "t_ms", "recv_ms", "paint_ms", "chars", "hidden",
        "sent_ms", "frame_ms", "dropped", "clock", "offset_ms", "uncertainty_ms", "rtt_ms", "t0", "id", "protocol"]
nasty = (json_values | st.sampled_from(["", "yes", "no", "a", "b", "other:x", "desktop", "NaN", "\x00", "🙂" * 3,
                                        "x" * 3000, -1, 0, 1, 2, 5, 6, 1e308, -0.0, 2**63, [], {}, True, False]))


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _set(obj: Any, path: tuple, value: Any, *, delete: bool = False) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, dict):
        obj = dict(obj)
        if delete and not rest:
            obj.pop(head, None)
        elif not rest:
            obj[head] = value
        else:
            obj[head] = _set(obj[head], rest, value, delete=delete)
    else:
        obj = list(obj)
        if delete and not rest:
            del obj[head]
        else:
            obj[head] = _set(obj[head], rest, value, delete=delete)
    return obj


@st.composite
def mutated(draw, valid: Any, max_mutations: int = 3) -> Any:
    """``valid`` with 1..n mutations: a value replaced by something nasty, a key deleted, a key added."""
    obj = valid
    for _ in range(draw(st.integers(1, max_mutations))):
        paths = _paths(obj)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if op == "delete" and path:
            obj = _set(obj, path, None, delete=True)
        elif op == "add":
            target = path
            node = obj
            for p in target:
                node = node[p]
            if isinstance(node, dict):
                obj = _set(obj, (*target, draw(st.sampled_from(KEYS))), draw(nasty))
            elif isinstance(node, list):
                obj = _set(obj, target, [*node, draw(nasty)])
            else:
                obj = _set(obj, path, draw(nasty))
        else:
            obj = _set(obj, path, draw(nasty))
    return obj
