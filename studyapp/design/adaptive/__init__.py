"""Adaptive procedures for threshold studies: staircases, QUEST+, interleaving and replay. Pure Python, no Django.

The study layer builds a ``Block`` from the study file's ``procedure:`` block, asks it for ``next_trial()``,
records answers with ``record(level, response)``, and rebuilds it after a restart with ``replay(config,
answers)``. See docs/adaptive.md.
"""

from studyapp.design.adaptive.config import (
    CatchConfig,
    CatchTrial,
    ProcedureConfig,
    ProcedureConfigError,
    QuestPlusConfig,
    StaircaseConfig,
    parse_procedure,
    parse_track,
)
from studyapp.design.adaptive.interleave import Block, Trial, catch_budget, make_procedure, max_trials
from studyapp.design.adaptive.observer import Observer
from studyapp.design.adaptive.procedure import Estimate, Procedure, ProcedureStateError
from studyapp.design.adaptive.questplus import QuestPlus
from studyapp.design.adaptive.replay import ReplayError, replay
from studyapp.design.adaptive.simulate import run_block
from studyapp.design.adaptive.staircase import Staircase
from studyapp.design.adaptive.stimulus import DIMENSIONS, stimulus_spec, synthesize_level, trial_seed

__all__ = [
    "DIMENSIONS",
    "Block",
    "CatchConfig",
    "CatchTrial",
    "Estimate",
    "Observer",
    "Procedure",
    "ProcedureConfig",
    "ProcedureConfigError",
    "ProcedureStateError",
    "QuestPlus",
    "QuestPlusConfig",
    "ReplayError",
    "Staircase",
    "StaircaseConfig",
    "Trial",
    "catch_budget",
    "make_procedure",
    "max_trials",
    "parse_procedure",
    "parse_track",
    "replay",
    "run_block",
    "stimulus_spec",
    "synthesize_level",
    "trial_seed",
]
