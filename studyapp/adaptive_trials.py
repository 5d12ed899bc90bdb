"""Adaptive blocks inside a session: the next trial is chosen from the stored answers, never from memory.

The procedure's state is derived by replaying the block's stored answers (``studyapp.design.adaptive.replay``), so a
resumed session, another server process or a replay for checking all choose exactly the same levels. A trial
row is created when its step is reached, with its level and the full stimulus spec that reproduces its stream.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from studyapp.design import counterbalance
from studyapp.design import plan as design
from studyapp.design.adaptive.replay import replay as replay_procedure
from studyapp.design.adaptive.stimulus import stimulus_spec, trial_seed
from studyapp.models import Answer, Session, Trial

RENDER_KEYS = ("strategy", "strategy_options", "indicator", "indicator_options", "delivery")


def block_seed(session: Session, block_id: str) -> int:
    return counterbalance.sub_seed(session.seed, "adaptive", block_id)


def _block_design(session: Session, block_id: str) -> design.BlockDesign:
    d = design.expand(session.study.spec, session.language)
    return next(b for b in d.blocks if b.id == block_id)


def block_answers(session: Session, block_id: str) -> list[tuple[float, bool]]:
    """The (level, response) pairs of a block's answered adaptive trials, in trial order."""
    rows = (Answer.objects.filter(session=session, trial__block=block_id, trial__spec__adaptive__isnull=False)
            .select_related("trial").order_by("trial__index"))
    return [(r.trial.spec["level"], bool(r.value["accept"])) for r in rows]


def block_state(session: Session, block_id: str):
    block = _block_design(session, block_id)
    return replay_procedure(block.procedure, block_answers(session, block_id), seed=block_seed(session, block_id))


def trial_spec(session: Session, step: dict[str, Any], chosen) -> dict[str, Any]:
    """An ordinary trial spec for the adaptive trial ``chosen`` (its level sets one timing field)."""
    block = _block_design(session, step["block"])
    base = block.base
    timing = stimulus_spec(base.timing, chosen.dimension, chosen.level)
    stim = replace(base, timing=timing, seed=trial_seed(block_seed(session, block.id), chosen.index))
    # a track's condition may set how the stream is shown (one staircase per render strategy, ...)
    shown = {k: v for k, v in dict(chosen.condition).items() if k in RENDER_KEYS}
    if shown:
        stim = replace(stim, **shown)
    t = design._trial(block, f"{block.id}:{chosen.track or 'catch'}", (stim,), index=step["trial"],
                      position=chosen.index)
    out = t.to_dict()
    out["level"] = chosen.level
    out["adaptive"] = chosen.to_dict()
    if chosen.catch:
        out["attention_check"] = "adaptive-catch"
        out["expected"] = "yes" if chosen.expect else "no"
    return out


def materialize(session: Session) -> None:
    """Make sure the current step's adaptive trial exists, or skip the steps a finished procedure leaves.

    Call with the session row locked (inside ``transaction.atomic`` after ``select_for_update``).
    """
    steps = session.plan["steps"]
    while session.state == Session.State.ACTIVE:
        step = steps[session.step]
        if step["kind"] != "trial" or "adaptive" not in step:
            return
        if Trial.objects.filter(session=session, index=step["trial"]).exists():
            return
        chosen = block_state(session, step["block"]).next_trial()
        if chosen is None:  # the procedure has stopped: skip the rest of this block's reserved steps
            while (session.step < len(steps) - 1 and steps[session.step]["kind"] == "trial"
                   and steps[session.step].get("block") == step["block"] and "adaptive" in steps[session.step]):
                session.step += 1
            if steps[session.step]["kind"] == "complete":
                from django.utils import timezone

                session.state, session.finished_at = Session.State.COMPLETED, timezone.now()
            session.save(update_fields=["step", "state", "finished_at"])
            continue
        spec = trial_spec(session, step, chosen)
        Trial.objects.create(session=session, index=step["trial"], step=session.step, block=step["block"],
                             kind=spec["type"], condition=spec["condition"], spec=spec,
                             practice=spec["practice"], attention=bool(spec.get("attention_check")))
        return
