"""The study layer's writes: entering, answering once, refusing what is wrong, leaving."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from journey_driver import ENV, run_to_end, step

from studyapp import services
from studyapp.design import studyfile
from studyapp.models import Answer, Decline, Session, Study, Trial

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    owner = get_user_model().objects.create_user("owner", password="x" * 12)
    doc = studyfile.load_study(studyfile.demo_study_path())
    study, created = services.study_load(doc=doc, owner=owner)
    assert created
    return services.study_set_state(study=study, state="open")


def enter(study, pid=None, language="en"):
    return services.session_enter(study=study, panel={"participant": pid} if pid else {}, language=language)[0]


def test_loading_the_same_file_twice_updates_nothing(study):
    again, created = services.study_load(doc=study.spec, owner=study.owner)
    assert (created, again.version) == (False, 1)


def test_a_session_gets_a_plan_and_its_trials_up_front(study):
    s = enter(study)
    kinds = [st["kind"] for st in s.plan["steps"]]
    assert kinds[:3] == ["consent", "environment", "instructions"] and kinds[-2:] == ["debrief", "complete"]
    assert Trial.objects.filter(session=s).count() == kinds.count("trial") > 0
    assert len(s.token) >= 40


def test_the_same_panel_id_resumes_its_session_and_never_gets_a_second(study):
    a = enter(study, "P1")
    b = enter(study, "P1")
    assert a.pk == b.pk and Session.objects.count() == 1


def test_a_paused_study_refuses_new_entries_but_returning_participants_resume(study):
    s = enter(study, "P2")
    services.study_set_state(study=study, state="paused")
    study.refresh_from_db()
    assert services.session_enter(study=study, panel={"participant": "P2"})[0].pk == s.pk
    with pytest.raises(services.StudyUnavailable, match="paused"):
        enter(study, "P3")


def test_a_participant_completes_the_demo_study(study):
    s = run_to_end(enter(study))
    assert s.state == Session.State.COMPLETED
    n_trials = Trial.objects.filter(session=s).count()
    assert Answer.objects.filter(session=s, key="trial").count() == n_trials
    assert not Trial.objects.filter(session=s, status=Trial.Status.PENDING).exists()


def test_a_retried_answer_is_acknowledged_again_and_stored_once(study):
    s = enter(study)
    cid = uuid.uuid4().hex
    first = step(s, {"consent": True}, client_id=cid)
    again = services.session_submit(session_token=s.token, client_id=cid, step=0, payload={"consent": True})
    assert (first.duplicate, again.duplicate) == (False, True)
    assert again.client_id == cid and again.next_step == 1
    assert Answer.objects.filter(session=s).count() == 1


def test_an_answer_for_another_step_is_refused_and_changes_nothing(study):
    s = enter(study)
    with pytest.raises(services.SubmitRefused) as exc:
        services.session_submit(session_token=s.token, client_id=uuid.uuid4().hex, step=5, payload={})
    assert exc.value.code == "stale_step" and exc.value.current_step == 0
    s.refresh_from_db()
    assert s.step == 0 and not Answer.objects.exists()


def _to_first_trial(s):
    while True:
        s.refresh_from_db()
        if s.plan["steps"][s.step]["kind"] == "trial":
            return s
        step(s)


@pytest.mark.parametrize("payload", [{"response": "maybe"}, {"response": 7}, {}, {"response": ["yes"]}])
def test_an_out_of_range_trial_answer_is_refused_with_the_field_named(study, payload):
    s = _to_first_trial(enter(study))
    services.trial_show(session=s, trial=Trial.objects.get(session=s, index=0))
    with pytest.raises(services.SubmitRefused, match="response: must be") as exc:
        services.session_submit(session_token=s.token, client_id=uuid.uuid4().hex, step=s.step, payload=payload)
    assert exc.value.code == "invalid"
    assert not Answer.objects.filter(key="trial").exists()


def test_a_trial_cannot_be_answered_before_it_is_shown(study):
    s = _to_first_trial(enter(study))
    with pytest.raises(services.SubmitRefused, match="not been shown"):
        services.session_submit(session_token=s.token, client_id=uuid.uuid4().hex, step=s.step,
                                payload={"response": "yes"})


def test_showing_a_trial_again_before_its_answer_records_an_interruption(study):
    s = _to_first_trial(enter(study))
    trial = Trial.objects.get(session=s, index=0)
    first = services.trial_show(session=s, trial=trial)
    second = services.trial_show(session=s, trial=trial)
    trial.refresh_from_db()
    assert trial.plays == 2 and len(trial.interruptions) == 1
    assert first[0].token != second[0].token and first[0].stream == second[0].stream


def test_declining_consent_keeps_only_the_decline(study):
    s = enter(study, "P9")
    result = step(s, {"consent": False})
    assert result.state == Session.State.DECLINED
    assert not Session.objects.exists() and Decline.objects.filter(study=study).count() == 1


def test_a_phone_is_screened_out_when_the_study_refuses_phones(study):
    s = enter(study)
    step(s, {"consent": True})
    env = {"environment": ENV["environment"] | {"device": "phone"}}
    result = step(s, env)
    assert result.state == Session.State.SCREENED_OUT


def test_withdrawing_keeps_the_data_excluded_when_the_study_says_so(study):
    s = enter(study)
    step(s, {"consent": True})
    s = services.session_withdraw(session=s)
    assert s.state == Session.State.WITHDRAWN and s.excluded and Answer.objects.filter(session=s).exists()


def test_groups_stay_balanced_counting_live_sessions(study):
    sessions = [enter(study) for _ in range(6)]
    groups = [s.group for s in sessions]
    assert sorted(set(groups)) == ["delivery=live", "delivery=prefetch"]
    assert groups.count("delivery=live") == groups.count("delivery=prefetch") == 3


def test_a_failed_attention_check_flags_the_session(study):
    s = enter(study)
    for _ in range(500):
        s.refresh_from_db()
        if s.state != Session.State.ACTIVE:
            break
        step(s)  # the driver answers 2 on ratings and 'a' on 2AFC: passes the instructed item
    assert not any("failed" in f for f in s.flags)
    s2 = enter(study)
    for _ in range(500):
        s2.refresh_from_db()
        if s2.state != Session.State.ACTIVE:
            break
        cur = s2.plan["steps"][s2.step]
        if cur["kind"] == "trial":
            t = Trial.objects.get(session=s2, index=cur["trial"])
            if t.attention and t.kind == "rating":
                step(s2, {"response": 5})
                continue
        step(s2)
    assert any("failed attention check" in f for f in s2.flags)


def test_sessions_past_their_time_limit_are_timed_out(study):
    from datetime import timedelta

    from django.utils import timezone

    s = enter(study)
    Session.objects.filter(pk=s.pk).update(started_at=timezone.now() - timedelta(hours=2))
    assert services.sessions_expire() == 1
    s.refresh_from_db()
    assert s.state == Session.State.TIMED_OUT


def test_study_states_are_checked():
    with pytest.raises(ValueError, match="state: must be one of"):
        services.study_set_state(study=Study(), state="running")


def test_only_the_cookie_the_panel_session_id_or_the_resume_code_prove_a_returning_participant(study):
    s = services.session_enter(study=study, panel={"participant": "P-r", "session": "SE-1"})[0]
    code = services.resume_code(s)
    assert code == services.resume_code(s) and code != services.resume_code(enter(study, "P-other"))
    assert not services.session_may_resume(s)  # the panel id alone
    assert not services.session_may_resume(s, cookie_token="x" * 43, panel_session_id="SE-2", code="0000-0000")
    assert services.session_may_resume(s, cookie_token=s.token)
    assert services.session_may_resume(s, panel_session_id="SE-1")
    assert services.session_may_resume(s, code=code.lower().replace("-", ""))  # as a person might type it
    blank = services.session_enter(study=study, panel={"participant": "P-blank"})[0]
    assert not services.session_may_resume(blank, panel_session_id="")  # no session id stored: none matches
