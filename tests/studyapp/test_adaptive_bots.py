"""Bots run an adaptive study through the real endpoints; the stored levels are what a replay chooses."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from studyapp import adaptive_trials, services
from studyapp.bots import runner as bots
from studyapp.design import studyfile
from studyapp.design.adaptive import replay
from studyapp.models import Session, Trial

pytestmark = [pytest.mark.integration]
STUDY = Path(__file__).resolve().parents[1] / "data" / "adaptive-study.yaml"


@pytest.fixture
def study(transactional_db):
    owner = get_user_model().objects.create_user("adaptive-owner", password="x" * 12)
    study, _ = services.study_load(doc=studyfile.load_study(STUDY), owner=owner)
    return services.study_set_state(study=study, state="open")


def test_bots_complete_an_adaptive_study_and_every_stored_level_replays(daphne_server, study):
    config = bots.RunConfig(url=daphne_server, study=study.slug, n=4, concurrency=4, seed=11, timeout_s=90)
    results, wall = bots.run_sync(config)
    summary = bots.summary(config, results, wall)
    assert summary["errors"] == 0, summary.get("error_messages")
    sessions = list(Session.objects.filter(study=study))
    assert len(sessions) == 4 and all(s.state == Session.State.COMPLETED for s in sessions)
    procedure = study.spec["blocks"][0]["procedure"]
    for s in sessions:
        trials = list(Trial.objects.filter(session=s).order_by("index"))
        answers = adaptive_trials.block_answers(s, "threshold")
        assert len(answers) == len(trials) > 0
        block = replay(procedure, answers, seed=adaptive_trials.block_seed(s, "threshold"))
        assert [t.level for t, _ in block.history] == [t.spec["level"] for t in trials]
        assert block.done  # every bot ran the procedure to its stopping rule
    # the bots saw the levels: their acceptability answers rise with the level they were shown
    levels = [(t.spec["level"], t.answer.value["accept"]) for t in Trial.objects.filter(session__study=study)
              if not t.spec["adaptive"]["catch"]]
    low = [a for lv, a in levels if lv < 10]
    high = [a for lv, a in levels if lv > 40]
    if low and high:
        assert sum(high) / len(high) > sum(low) / len(low)
