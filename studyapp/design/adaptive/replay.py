"""State from stored answers: the only way a session's adaptive state is (re)built.

The study layer stores each answered trial with its level; ``replay`` feeds them, in order, to a fresh block and
checks that every stored level is the level the block would have chosen. Equal means the stored session and
the procedure agree, and the returned block continues exactly where the session was (``next_trial()``). A
mismatch means the config, the seed or the stored answers changed, and is an error naming the trial.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from studyapp.design.adaptive.config import ProcedureConfig
from studyapp.design.adaptive.interleave import Block
from studyapp.design.adaptive.procedure import ProcedureStateError, same_level


class ReplayError(ValueError):
    """Stored answers that the procedure would not have produced. ``index`` is the offending trial."""

    def __init__(self, index: int, problem: str) -> None:
        self.index = index
        self.problem = problem
        super().__init__(f"answers[{index}]: {problem}")


def replay(
    config: ProcedureConfig | Mapping[str, Any],
    answers: Iterable[Sequence[Any]],
    seed: int | None = None,
) -> Block:
    """The block after the stored ``answers`` ((level, response) pairs, in trial order)."""
    block = Block(config, seed=seed)
    for i, answer in enumerate(answers):
        try:
            level, response = answer
        except (TypeError, ValueError):
            raise ReplayError(i, f"expected a (level, response) pair, got {answer!r}") from None
        trial = block.next_trial()
        if trial is None:
            raise ReplayError(i, f"the procedure finished after {i} trials, but more answers are stored")
        if not same_level(level, trial.level):
            raise ReplayError(i, f"stored level {level!r}, but the procedure chooses {trial.level!r}")
        try:
            block.record(trial.level, response)
        except ProcedureStateError as exc:
            raise ReplayError(i, str(exc)) from None
    return block
