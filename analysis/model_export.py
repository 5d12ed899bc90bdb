"""Reads for ``export_model`` and the dashboard's "Download the perception model": a study's finished analysis run
as a perception model file (``analysis.stats.perception_model``). Whether the participants were bots is read from the
sessions (a bot's panel id is ``bot-<run>-<n>`` and its browser ``PaceLab-bot``): any bot marks the model
simulated, so a model is never labelled human data when some of it was not. The model's joint draws need the
answers the run analysed: they are read again from a snapshot, and used when its data version is the run's (when
answers came in since, the model carries the run's intervals only, and says so in ``population.uncertainty``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from analysis import snapshot
from analysis.models import AnalysisRun
from analysis.stats import perception_model, population_draws
from studyapp.models import Session, Study


class NoModel(ValueError):
    """The study has no finished analysis run a model can be exported from; ``str()`` says why."""


def finished_run(study: Study, run_id: int | None = None) -> AnalysisRun:
    runs = study.analysis_runs.filter(state=AnalysisRun.State.DONE)
    run = runs.filter(pk=run_id).first() if run_id is not None else runs.order_by("-finished_at", "-pk").first()
    if run is None:
        raise NoModel(f"study {study.slug!r} has no finished analysis run"
                      + (f" {run_id}" if run_id is not None else "") + ": run `manage.py analyze` first")
    return run


def had_bots(study: Study) -> bool:
    return Session.objects.filter(study=study, preview=False).filter(
        Q(panel_pid__startswith="bot-") | Q(environment__user_agent__startswith="PaceLab-bot")).exists()


def model_for(study: Study, run: AnalysisRun, block: str | None = None) -> dict[str, Any]:
    """The model file's content (raises ``perception_model.ModelFileError`` naming what is missing)."""
    provenance = {"study": study.slug, "data_version": run.data_version, "analysis_run": run.pk,
                  "bots": had_bots(study),
                  "created": (run.finished_at or run.created_at).replace(microsecond=0).isoformat()}
    results = run.results or {}
    entry = perception_model.pick_block(results, block)
    trials, participants, version = snapshot.read(study)
    answers = (population_draws.block_data(trials, participants, study.spec or {}, str(entry["block"]))
               if version == run.data_version else None)
    return perception_model.build(results, study.spec or {}, provenance, block=block, answers=answers)
