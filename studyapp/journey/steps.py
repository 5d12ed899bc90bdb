"""A participant's journey as an ordered list of steps, built from the study design (pure, no Django).

The server keeps the index of the current step on the session and is the only one to move it: every request
for another step is redirected to the current one (oTree's rule), so refreshes, back buttons and reconnects
always land where the participant really is.

Steps: consent, environment check, instructions, then per block an optional intro, its trials and a break or
message, then the questionnaire, the debrief and completion.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from studyapp.design import plan as design_mod

STEP_KINDS = ("consent", "environment", "instructions", "block_intro", "trial", "message", "break",
              "questionnaire", "debrief", "complete")


def localize(value: Any, language: str) -> Any:
    """A study text in ``language``: strings pass through, ``{lang: text}`` mappings are resolved (falling back
    to English, then to any language)."""
    if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        if language in value:
            return value[language]
        if set(value) <= {"en", "zh-hans"}:
            return value.get("en", next(iter(value.values())))
        return {k: localize(v, language) for k, v in value.items()}
    if isinstance(value, list):
        return [localize(v, language) for v in value]
    return value


@dataclass(frozen=True)
class Plan:
    """The steps of a journey and the fixed trials they show.

    Trial indices are unique across the session. Adaptive blocks reserve one step (and one trial index) per
    possible trial, up to the procedure's hard cap; their trials are created when reached, and the steps a
    finished procedure does not need are skipped.
    """

    steps: list[dict[str, Any]]
    trials: list[design_mod.TrialSpec]
    group: str


def build_plan(study: dict, *, seed: int, group: str, row: int, language: str) -> Plan:
    """The full, deterministic journey of one participant."""
    d = design_mod.expand(study, language)
    blocks = design_mod.participant_plan(d, seed, group=group, row=row)
    texts = study.get("texts") or {}
    steps: list[dict[str, Any]] = [{"kind": "consent"}, {"kind": "environment"}, {"kind": "instructions"}]
    trials: list[design_mod.TrialSpec] = []
    index = 0
    for b_i, block in enumerate(blocks):
        source = next((blk for blk in study["blocks"] if blk["id"] == block.id), {})
        if source.get("intro") or source.get("title"):
            steps.append({"kind": "block_intro", "block": block.id})
        if block.procedure is not None:
            for n in range(design_mod.procedure_max_trials(block.procedure)):
                steps.append({"kind": "trial", "trial": index, "block": block.id, "adaptive": n})
                index += 1
        for trial in block.trials:
            steps.append({"kind": "trial", "trial": index, "block": block.id})
            trials.append(replace(trial, index=index))
            index += 1
        last = b_i == len(blocks) - 1
        if block.practice and "practice_done" in texts:
            steps.append({"kind": "message", "text": "practice_done"})
        elif block.break_after and not last:
            steps.append({"kind": "break", "block": block.id})
    if study.get("questionnaire"):
        steps.append({"kind": "questionnaire"})
    steps.append({"kind": "debrief"})
    steps.append({"kind": "complete"})
    return Plan(steps=steps, trials=trials, group=group)


def progress(steps: list[dict[str, Any]], current: int) -> tuple[int, int]:
    """(trials done, trials in all) at step ``current``: what the progress indicator shows."""
    total = sum(1 for s in steps if s["kind"] == "trial")
    done = sum(1 for s in steps[:current] if s["kind"] == "trial")
    return done, total
