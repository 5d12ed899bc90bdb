"""A block of adaptive trials: several tracks (staircases, QUEST+ runs) interleaved at random, catch trials mixed in.

The schedule is a pure function of (seed, trial index, which tracks are still running): trial i is a catch
trial when ``uniform(seed, i, "catch") < catch.rate`` (its level picked the same way) and the block's catch budget
(``round(sum of max_trials × rate)``) is not spent, so ``max_trials(config)`` is a hard cap the study layer can
reserve steps for; otherwise it goes to a
running track chosen uniformly at random (``order: random``) or, with ``order: rounds``, to the next track of
a round that visits every running track once in a shuffled order. Since the running tracks follow from the
answers, the whole block follows from the config, the seed and the answers, and nothing else is stored.
The block ends when every track is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from studyapp.design.adaptive.config import (
    ProcedureConfig,
    QuestPlusConfig,
    StaircaseConfig,
    TrackConfig,
    parse_procedure,
)
from studyapp.design.adaptive.procedure import Estimate, Procedure, ProcedureStateError, check_response, same_level
from studyapp.design.adaptive.questplus import QuestPlus
from studyapp.design.adaptive.seeding import pick, shuffled, uniform
from studyapp.design.adaptive.staircase import Staircase


def catch_budget(config: ProcedureConfig) -> int:
    """The most catch trials a block shows: its tracks' trial caps times the catch rate, rounded."""
    if config.catch is None:
        return 0
    return round(sum(t.max_trials for t in config.tracks) * config.catch.rate)


def max_trials(config: ProcedureConfig | Mapping[str, Any]) -> int:
    """The hard cap on a block's trials: every track's ``max_trials`` plus the catch budget."""
    config = parse_procedure(config)
    return sum(t.max_trials for t in config.tracks) + catch_budget(config)


def make_procedure(config: TrackConfig) -> Procedure:
    """The procedure object for a validated track config."""
    if isinstance(config, StaircaseConfig):
        return Staircase(config)
    if isinstance(config, QuestPlusConfig):
        return QuestPlus(config)
    raise TypeError(f"config: expected a track config, got {type(config).__name__}")


@dataclass(frozen=True)
class Trial:
    """One adaptive trial as the study layer stores it: an ordinary trial with its level.

    ``track`` is ``None`` for a catch trial, whose ``expect`` is the answer it should get. ``condition`` is
    the track's (or catch trial's) pass-through condition, e.g. ``{"render": "per_word"}``.
    """

    index: int
    level: float
    track: str | None
    dimension: str | None
    catch: bool = False
    expect: bool | None = None
    condition: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "level": self.level,
            "track": self.track,
            "dimension": self.dimension,
            "catch": self.catch,
            "expect": self.expect,
            "condition": dict(self.condition),
        }


class Block:
    """The state of one adaptive block; build it live or with ``replay`` from stored answers."""

    def __init__(self, config: ProcedureConfig | Mapping[str, Any], seed: int | None = None) -> None:
        self.config = parse_procedure(config)
        self.seed = self.config.seed if seed is None else int(seed)
        self.tracks: dict[str, Procedure] = {t.name: make_procedure(t) for t in self.config.tracks}
        self._track_configs = {t.name: t for t in self.config.tracks}
        self.history: list[tuple[Trial, bool]] = []
        self._round: list[str] = []
        self._next: Trial | None = None
        self._catch_left = catch_budget(self.config)

    # --- schedule --------------------------------------------------------------------------------------
    @property
    def index(self) -> int:
        """The index of the next trial (= the number of answers so far)."""
        return len(self.history)

    @property
    def running(self) -> list[str]:
        """Names of the tracks that are not done, in config order."""
        return [name for name, proc in self.tracks.items() if not proc.done]

    @property
    def done(self) -> bool:
        return not self.running

    def next_trial(self) -> Trial | None:
        """The trial to present next (the same until it is answered), or ``None`` when the block is over."""
        if self._next is None and not self.done:
            self._next = self._schedule()
        return self._next

    def _schedule(self) -> Trial:
        i, seed, catch = self.index, self.seed, self.config.catch
        if catch is not None and self._catch_left > 0 and uniform(seed, i, "catch") < catch.rate:
            item = pick(catch.trials, seed, i, "catch-trial")
            dims = {t.dimension for t in self.config.tracks}
            return Trial(
                index=i,
                level=item.level,
                track=None,
                dimension=next(iter(dims)) if len(dims) == 1 else None,
                catch=True,
                expect=item.expect,
                condition=dict(item.condition),
            )
        running = self.running
        if self.config.order == "rounds":
            self._round = [name for name in self._round if name in running]
            if not self._round:
                self._round = shuffled(running, seed, i, "round")
            name = self._round[0]
        else:
            name = pick(running, seed, i, "track")
        cfg = self._track_configs[name]
        return Trial(
            index=i,
            level=self.tracks[name].next_level(),
            track=name,
            dimension=cfg.dimension,
            condition=dict(cfg.condition),
        )

    # --- answers ---------------------------------------------------------------------------------------
    def record(self, level: float, response: bool) -> Trial:
        """Record the answer to the pending trial, whose level must be ``level``; returns that trial."""
        response = check_response(response)
        trial = self.next_trial()
        if trial is None:
            raise ProcedureStateError(f"the block is finished after {self.index} trials; no answer expected")
        if not same_level(level, trial.level):
            raise ProcedureStateError(f"level: trial {trial.index} is at {trial.level!r}, got {level!r}")
        if trial.track is not None:
            self.tracks[trial.track].update(trial.level, response)
            if self.config.order == "rounds":
                self._round.pop(0)
        else:
            self._catch_left -= 1
        self.history.append((trial, response))
        self._next = None
        return trial

    # --- results ---------------------------------------------------------------------------------------
    def estimates(self) -> dict[str, Estimate]:
        """Each track's current estimate, by track name."""
        return {name: proc.estimate() for name, proc in self.tracks.items()}

    def catch_summary(self) -> dict[str, int]:
        """How many catch trials were shown and how many got the expected answer."""
        shown = [(t, r) for t, r in self.history if t.catch]
        return {"trials": len(shown), "correct": sum(r == t.expect for t, r in shown)}
