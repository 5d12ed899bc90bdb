"""The shipped smoothers comparison study (studyapp/data/smoothers-study.yaml): it validates, its design is the
presets x three arrival patterns in 2AFC pairs and ratings in English and Chinese, bots complete it through a
real Daphne, and its analysis gives a JOD scale of the smoothers per arrival pattern."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from analysis.models import AnalysisRun
from studyapp import services
from studyapp.bots import observers as bot_models
from studyapp.bots import runner as bots
from studyapp.design import plan as design
from studyapp.design import studyfile

STUDY = Path(studyfile.demo_study_path()).parent / "smoothers-study.yaml"
SMOOTHERS = ["token", "smooth", "ai-sdk-smooth", "chat-ui-smooth", "accelerating", "typewriter"]
ARRIVALS = ["steady-api", "proxy-bursts", "long-stalls"]
N_BOTS = 6


def test_the_smoothers_study_validates_in_both_languages_without_language_warnings():
    doc = studyfile.load_study(STUDY)
    assert doc["languages"] == ["en", "zh-hans"]
    assert studyfile.language_warnings(doc) == []
    factors = {f["name"]: f["levels"] for f in doc["factors"]}
    assert factors == {"smoother": SMOOTHERS, "arrival": ARRIVALS}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_pair_of_smoothers_is_compared_on_the_same_stream_for_each_arrival_pattern(language):
    d = design.expand(studyfile.load_study(STUDY), language)
    pairs = next(b for b in d.blocks if b.id == "pairs")
    assert len(pairs.conditions) == 15 * 3
    for c in pairs.conditions:
        a, b = c.stimuli
        assert a.strategy != b.strategy and {a.strategy, b.strategy} <= set(SMOOTHERS)
        assert a.timing == b.timing and a.text == b.text  # only the smoother differs within a pair
    by_arrival = {c.levels["arrival"]: c.stimuli[0].timing for c in pairs.conditions}
    assert set(by_arrival) == set(ARRIVALS)
    assert by_arrival["proxy-bursts"].flush == "interval" and by_arrival["long-stalls"].stall_count == 2
    ratings = next(b for b in d.blocks if b.id == "smoothness")
    assert len(ratings.conditions) == 6 * 3
    assert {s.language for c in pairs.conditions for s in c.stimuli} == {language.split("-")[0]}


def test_the_smoothers_study_counterbalances_pair_sides_and_block_order():
    doc = studyfile.load_study(STUDY)
    d = design.expand(doc)
    firsts = [tuple(b.id for b in design.participant_plan(d, seed, row=row) if not b.practice)
              for seed, row in ((1, 0), (1, 1))]
    assert firsts[0] != firsts[1]  # Latin-square rows swap the two main blocks
    plan = design.participant_plan(d, 3)
    orders = [t.order for b in plan if b.id == "pairs" for t in b.trials if t.attention_check is None]
    assert abs(orders.count("AB") - orders.count("BA")) <= 1


@pytest.fixture
def study(transactional_db):
    owner = get_user_model().objects.create_user("smoothers-owner", password="x" * 12)
    study, _ = services.study_load(doc=studyfile.load_study(STUDY), owner=owner)
    return services.study_set_state(study=study, state="open")


@pytest.fixture
def server(service_env, request) -> str:
    service_env["CONN_MAX_AGE"] = "0"
    return request.getfixturevalue("daphne_server")


@pytest.mark.integration
def test_bots_complete_the_study_and_the_analysis_scales_the_smoothers_per_arrival_pattern(
        server, study, settings, tmp_path):
    config = bots.RunConfig(url=server, study=study.slug, n=N_BOTS, concurrency=3, seed=43,
                            population=bot_models.Population(attentive=1.0), timeout_s=120)
    results, wall = bots.run_sync(config)
    summary = bots.summary(config, results, wall)
    assert summary["errors"] == 0, summary["error_messages"]
    assert summary["completed"] == N_BOTS

    settings.VAR_DIR = tmp_path / "var"
    out = StringIO()
    call_command("analyze", study.slug, "--inline", stdout=out)
    run = AnalysisRun.objects.get(study=study)
    entry = next(e for e in run.results["pairwise"] if e["block"] == "pairs")
    assert entry["compare"] == "smoother"
    strata = {st["stratum"]: st for st in entry["by_stratum"]}
    assert set(strata) == {f"arrival={a}" for a in ARRIVALS}
    for st in strata.values():
        scale = {r["condition"]: r for r in st["thurstone"]}
        assert set(scale) == set(SMOOTHERS)
        assert st["n_trials"] == N_BOTS * 15
        assert all(isinstance(r["jod"], float) for r in scale.values())
        assert min(abs(r["jod"]) for r in scale.values()) == 0  # anchored: the first condition is 0 JOD
    report = Path(re.search(r"report: (\S+)", out.getvalue()).group(1)).read_text()
    assert "arrival=long-stalls" in report and "Pairwise scale per stratum" in report
