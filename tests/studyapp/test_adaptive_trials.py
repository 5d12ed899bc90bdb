"""Adaptive blocks in a session: levels chosen from stored answers, reproducible by replay, early stop."""

import uuid
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from journey_driver import answer_for

from playback.core import metrics
from studyapp import adaptive_trials, selectors, services, stimuli
from studyapp.design import studyfile
from studyapp.design.adaptive import Observer, replay
from studyapp.models import Answer, Session, Trial

pytestmark = pytest.mark.django_db
STUDY = Path(__file__).resolve().parents[1] / "data" / "adaptive-study.yaml"


@pytest.fixture
def study():
    owner = get_user_model().objects.create_user("owner", password="x" * 12)
    study, _ = services.study_load(doc=studyfile.load_study(STUDY), owner=owner)
    return services.study_set_state(study=study, state="open")


def run(study, observer: Observer, seed: int = 0) -> Session:
    rng = np.random.default_rng(seed)
    s = services.session_enter(study=study, panel={})[0]
    for _ in range(200):
        s = services.session_touch(session=Session.objects.get(pk=s.pk))
        if s.state != Session.State.ACTIVE:
            return s
        view = selectors.step_view(s)
        payload = answer_for(view)
        if view["kind"] == "trial":
            trial = Trial.objects.get(session=s, index=view["trial"]["index"])
            services.trial_show(session=s, trial=trial)
            payload["response"] = "yes" if observer.respond(trial.spec["level"], rng) else "no"
        services.session_submit(session_token=s.token, client_id=uuid.uuid4().hex, step=s.step, payload=payload)
    raise AssertionError("did not finish")


def test_an_adaptive_session_completes_and_its_levels_replay_exactly(study):
    s = run(study, Observer(threshold=15, slope=6, guess=0.02, lapse=0.02, axis="log"))
    assert s.state == Session.State.COMPLETED
    trials = list(Trial.objects.filter(session=s).order_by("index"))
    assert trials and all("level" in t.spec for t in trials)
    answers = adaptive_trials.block_answers(s, "threshold")
    assert len(answers) == len(trials) == Answer.objects.filter(session=s, key="trial").count()
    block = replay(study.spec["blocks"][0]["procedure"], answers, seed=adaptive_trials.block_seed(s, "threshold"))
    assert [t.level for t, _ in block.history] == [t.spec["level"] for t in trials]
    assert block.done


def test_the_smooth_track_is_shown_smooth_and_the_level_sets_the_stream_rate(study):
    s = run(study, Observer(threshold=15, slope=6, axis="log"), seed=1)
    for trial in Trial.objects.filter(session=s)[:6]:
        (spec, stream), = stimuli.trial_streams(study, trial)
        track = trial.spec["adaptive"]["track"]
        if track is not None:
            assert spec.strategy == track
        assert metrics.compute(stream).tokens_per_s == pytest.approx(trial.spec["level"], rel=1e-6)


def test_a_finished_procedure_skips_its_remaining_reserved_steps(study):
    s = run(study, Observer(threshold=15, slope=6, axis="log"), seed=2)
    reserved = sum(1 for st in s.plan["steps"] if "adaptive" in st)
    assert Trial.objects.filter(session=s).count() < reserved


def test_resuming_continues_at_the_same_level(study):
    s = services.session_enter(study=study, panel={"participant": "R1"})[0]
    for _ in range(6):
        s = services.session_touch(session=Session.objects.get(pk=s.pk))
        view = selectors.step_view(s)
        if view["kind"] == "trial":
            trial = Trial.objects.get(session=s, index=view["trial"]["index"])
            services.trial_show(session=s, trial=trial)
        services.session_submit(session_token=s.token, client_id=uuid.uuid4().hex, step=s.step,
                                payload=answer_for(view))
    s = services.session_touch(session=Session.objects.get(pk=s.pk))
    pending = Trial.objects.get(session=s, index=s.plan["steps"][s.step]["trial"])
    again = services.session_enter(study=study, panel={"participant": "R1"})[0]
    again = services.session_touch(session=again)
    assert again.step == s.step
    assert Trial.objects.get(session=again, index=pending.index).spec["level"] == pending.spec["level"]
    expected = adaptive_trials.block_state(again, "threshold").next_trial()
    assert expected.level == pending.spec["level"]
