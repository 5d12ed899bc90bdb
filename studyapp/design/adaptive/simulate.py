"""Run a block against a simulated observer: what the benchmarks do, and what the bots do through the endpoints."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from studyapp.design.adaptive.config import ProcedureConfig
from studyapp.design.adaptive.interleave import Block
from studyapp.design.adaptive.observer import Observer


def run_block(
    config: ProcedureConfig | Mapping[str, Any],
    observer: Observer | Mapping[str, Observer],
    answer_seed: int,
    seed: int | None = None,
) -> Block:
    """A finished block answered by ``observer``, or by one observer per track name (catch trials by the first).

    ``answer_seed`` seeds the answers (``random.Random``), ``seed`` overrides the block's schedule seed."""
    rng = random.Random(answer_seed)
    block = Block(config, seed=seed)
    while (trial := block.next_trial()) is not None:
        obs = observer if isinstance(observer, Observer) else observer[trial.track or next(iter(observer))]
        block.record(trial.level, obs.respond(trial.level, rng))
    return block
