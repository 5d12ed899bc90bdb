"""The demo perception model: fitted on a simulated bot run of the demo study, through the real analysis path.

``analysis.stats.simulate`` runs the bots through the demo study's journeys (the same answers ``manage.py run_bots``
gives for the same seed), ``analysis.stats.pipeline.run`` analyses them, and ``analysis.stats.perception_model.build``
turns the results into a model file labelled as simulated participants, its uncertainty joint draws from the
population model's likelihood of the same answers (``analysis.stats.population_draws``). The committed file
(``analysis/data/demo-model.json``) is written by ``manage.py export_model --demo``. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analysis.stats import perception_model, pipeline, population_draws, simulate
from studyapp.bots import observers as bot_models
from studyapp.design import studyfile

DEMO_MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "demo-model.json"
DEMO_BOTS = 60
DEMO_SEED = 45


def fit(spec: Mapping[str, Any] | None = None, *, population: bot_models.Population | None = None,
        n: int = DEMO_BOTS, seed: int = DEMO_SEED, options: pipeline.Options | None = None,
        created: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(model, results) of ``n`` bots through ``spec`` (the demo study by default)."""
    spec = dict(spec or studyfile.load_study(studyfile.demo_study_path()))
    population = population or bot_models.Population()
    trials, participants = simulate.study_frame(spec, population, n, seed)
    options = options or pipeline.Options(n_boot=200, deviance_samples=0, cluster_groups=0, individual_max=0)
    results = pipeline.run(trials, participants, spec=spec, options=options)
    provenance = {"study": spec.get("id"), "data_version": f"simulated:{n} bots:seed {seed}",
                  "analysis_run": None, "bots": True,
                  "created": created or datetime.now(UTC).replace(microsecond=0).isoformat()}
    entry = perception_model.pick_block(results)
    answers = population_draws.block_data(trials, participants, spec, str(entry["block"]))
    return perception_model.build(results, spec, provenance, answers=answers, seed=seed), results
