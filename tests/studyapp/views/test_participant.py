"""The participant endpoints through Django's test client on the real database: unknown tokens, refused
submissions that store nothing, replayed submissions stored once, CSRF, entry pages of unavailable studies,
and participant pages that are never cached."""

from __future__ import annotations

import json
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from journey_driver import ENV, enter, submit

from studyapp import services
from studyapp.design import studyfile
from studyapp.models import Answer, Decline, Session, Trial

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    owner = get_user_model().objects.create_user("owner", password="x" * 12)
    study, _ = services.study_load(doc=studyfile.load_study(studyfile.demo_study_path()), owner=owner)
    return services.study_set_state(study=study, state="open")


def snapshot(session: Session) -> tuple:
    session.refresh_from_db()
    return (session.step, session.state, Answer.objects.filter(session=session).count(),
            list(Trial.objects.filter(session=session).values_list("status", flat=True)))


def advance_to_trial(client: Client, session: Session) -> None:
    """Consent, environment and instructions answered; the first trial page shown (its playbacks made)."""
    assert submit(client, session, {"consent": True}).status_code == 200
    session.refresh_from_db()
    assert submit(client, session, ENV).status_code == 200
    session.refresh_from_db()
    assert submit(client, session, {}).status_code == 200
    session.refresh_from_db()
    assert client.get(f"/p/{session.token}/").status_code == 200


def test_the_entry_link_starts_a_session_and_the_page_shows_consent_in_the_session_language(study):
    client = Client()
    session = enter(client, study, lang="zh-hans", PROLIFIC_PID="p-zh")
    assert session.language == "zh-hans" and session.panel_pid == "p-zh"
    page = client.get(f"/p/{session.token}/")
    html = page.content.decode()
    assert 'data-kind="consent"' in html and '<html lang="zh-hans">' in html
    assert "我同意" in html and "退出本研究" in html  # the UI text is Chinese, not only the study's text
    data = json.loads(html.split('id="step-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert data["kind"] == "consent" and data["step"] == 0


def test_a_returning_browser_resumes_through_the_cookie_with_or_without_the_panel_parameters(study):
    client = Client()
    first = enter(client, study, PROLIFIC_PID="p-back", SESSION_ID="se-back")
    assert enter(client, study).pk == first.pk  # cookie
    assert enter(client, study, PROLIFIC_PID="p-back").pk == first.pk  # cookie, panel link without SESSION_ID
    assert Session.objects.count() == 1


def test_a_panel_id_alone_never_enters_someone_elses_session(study):
    victim = Client()
    session = enter(victim, study, PROLIFIC_PID="p-victim", SESSION_ID="se-victim-attempt-1")
    submit(victim, session, {"consent": True})
    before = snapshot(session)
    for params in ({"PROLIFIC_PID": "p-victim"}, {"PROLIFIC_PID": "p-victim", "SESSION_ID": "se-guess"},
                   {"PROLIFIC_PID": "p-victim", "SESSION_ID": ""}):
        attacker = Client()
        response = attacker.get(f"/s/{study.slug}/", params)
        html = response.content.decode()
        assert response.status_code == 200 and 'data-kind="resume"' in html
        cookie = response.cookies.get(f"pacelab_s_{study.pk}")
        assert session.token not in html and (cookie is None or session.token not in cookie.value)
        assert "resume code" in html.lower()
        wrong = attacker.post(f"/s/{study.slug}/resume", {"pid": "p-victim", "code": "AAAA-AAAA"})
        assert wrong.status_code == 200 and 'id="resume-error"' in wrong.content.decode()
        assert session.token not in wrong.content.decode()
    assert snapshot(session) == before and Session.objects.count() == 1


def test_another_browser_resumes_with_the_panel_session_id_or_the_resume_code_shown_on_the_pages(study):
    first = Client()
    session = enter(first, study, PROLIFIC_PID="p-move", SESSION_ID="se-move-1", lang="zh-hans")
    page = first.get(f"/p/{session.token}/").content.decode()
    code = services.resume_code(session)
    assert f'id="resume-code">{code}<' in page and len(code) == 9 and code[4] == "-"
    assert enter(Client(), study, PROLIFIC_PID="p-move", SESSION_ID="se-move-1").pk == session.pk  # Prolific's link
    other = Client()
    response = other.post(f"/s/{study.slug}/resume", {"pid": "p-move", "code": code.lower().replace("-", " ")})
    assert response.status_code == 302 and response["Location"] == f"/p/{session.token}/"
    assert enter(other, study).pk == session.pk  # and from now on this browser resumes through its cookie
    assert Session.objects.count() == 1


@pytest.mark.parametrize("path", ["/p/{t}/", "/p/{t}/step.json"])
def test_a_forged_or_unknown_token_is_not_found_and_changes_nothing(study, path):
    client = Client()
    session = enter(client, study)
    before = snapshot(session)
    forged = session.token[:-4] + ("AAAA" if not session.token.endswith("AAAA") else "BBBB")
    for token in (forged, "short", "x" * 64):
        assert client.get(path.format(t=token)).status_code == 404
        assert submit(client, Session(token=token, step=0), {"consent": True}).status_code == 404
        assert client.post(f"/p/{token}/withdraw").status_code == 404
    assert snapshot(session) == before


def test_malformed_json_is_refused_with_a_clear_error_and_nothing_is_stored(study):
    client = Client()
    session = enter(client, study)
    before = snapshot(session)
    for body in (b"{not json", b"[1, 2]"):
        response = client.post(f"/p/{session.token}/submit", body, content_type="application/json")
        assert response.status_code == 400
        data = response.json()
        assert data["ok"] is False and data["code"] == "invalid" and data["error"]
    assert "malformed JSON" in client.post(f"/p/{session.token}/submit", b"{", content_type="application/json"
                                           ).json()["error"]
    assert snapshot(session) == before


def test_a_missing_client_id_is_refused_and_nothing_is_stored(study):
    client = Client()
    session = enter(client, study)
    before = snapshot(session)
    response = client.post(f"/p/{session.token}/submit", json.dumps({"step": 0, "payload": {"consent": True}}),
                           content_type="application/json")
    assert response.status_code == 400 and response.json()["error"].startswith("client_id:")
    assert snapshot(session) == before


def test_an_out_of_range_trial_answer_is_refused_in_place_and_nothing_is_stored(study):
    client = Client()
    session = enter(client, study)
    advance_to_trial(client, session)
    before = snapshot(session)
    response = submit(client, session, {"response": "maybe", "response_ms": 500})
    assert response.status_code == 400
    assert response.json()["code"] == "invalid" and "response:" in response.json()["error"]
    response = submit(client, session, {"response": "yes", "response_ms": -3})
    assert response.status_code == 400 and "response_ms" in response.json()["error"]
    assert snapshot(session) == before


def test_an_answer_for_another_step_is_a_stale_step_conflict_naming_the_current_step(study):
    client = Client()
    session = enter(client, study)
    before = snapshot(session)
    response = submit(client, session, {"consent": True}, step=5)
    assert response.status_code == 409
    assert response.json()["code"] == "stale_step" and response.json()["step"] == 0
    assert snapshot(session) == before


def test_a_replayed_submission_is_acknowledged_again_and_stored_once(study):
    client = Client()
    session = enter(client, study)
    cid = uuid.uuid4().hex
    first = submit(client, session, {"consent": True}, step=0, client_id=cid)
    again = submit(client, session, {"consent": True}, step=0, client_id=cid)
    assert first.status_code == again.status_code == 200
    assert first.json()["ack"] == again.json()["ack"] == cid
    assert (first.json()["duplicate"], again.json()["duplicate"]) == (False, True)
    assert first.json()["next"] == again.json()["next"] == f"/p/{session.token}/"
    assert Answer.objects.filter(session=session).count() == 1
    session.refresh_from_db()
    assert session.step == 1


def test_declining_consent_deletes_the_session_and_points_to_the_declined_page(study):
    client = Client()
    session = enter(client, study, lang="zh-hans")
    response = submit(client, session, {"consent": False})
    assert response.status_code == 200 and response.json()["state"] == "declined"
    assert response.json()["next"] == f"/s/{study.slug}/declined/?lang=zh-hans&reason=declined"
    assert not Session.objects.filter(pk=session.pk).exists() and Decline.objects.count() == 1
    page = client.get(response.json()["next"])
    assert page.status_code == 200 and "我们没有记录任何关于您的信息" in page.content.decode()


def test_withdrawing_before_consent_keeps_nothing_identifying_like_declining(study):
    client = Client()
    session = enter(client, study, PROLIFIC_PID="p-early", SESSION_ID="se-early", lang="zh-hans")
    response = client.post(f"/p/{session.token}/withdraw")
    assert response.status_code == 302
    assert response["Location"] == f"/s/{study.slug}/declined/?lang=zh-hans&reason=withdrawn"
    assert not Session.objects.filter(panel_pid="p-early").exists() and not Answer.objects.exists()
    assert list(Decline.objects.values_list("reason", flat=True)) == ["withdrawn"]
    page = client.get(response["Location"]).content.decode()
    assert "您在研究开始前离开了" in page and "p-early" not in page
    assert client.get(f"/p/{session.token}/").status_code == 404  # nothing left to come back to


def test_a_device_the_study_refuses_is_found_on_the_consent_page_and_nothing_is_recorded(study):
    client = Client()
    session = enter(client, study, PROLIFIC_PID="p-phone", SESSION_ID="se-phone")
    html = client.get(f"/p/{session.token}/").content.decode()
    consent_at = html.index('data-kind="consent"')
    assert html.index('id="requirements"') > consent_at and "Phones cannot be used for this study." in html
    assert html.index('id="requirements"') < html.index('data-answer="accept"')  # stated before consent
    phone = {"environment": ENV["environment"] | {"device": "phone", "viewport": {"width": 390, "height": 844}}}
    response = submit(client, session, {"consent": True} | phone)  # even "I agree" from a phone records nothing
    assert response.status_code == 200 and response.json()["state"] == "declined"
    assert response.json()["next"].endswith("reason=device")
    assert not Session.objects.filter(panel_pid="p-phone").exists() and not Answer.objects.exists()
    assert list(Decline.objects.values_list("reason", flat=True)) == ["device"]
    page = client.get(response.json()["next"]).content.decode()
    assert "This study needs a computer or tablet" in page and "Phones cannot be used" in page


def test_csrf_is_enforced_on_submit_and_withdraw(study):
    client = Client(enforce_csrf_checks=True)
    session = enter(client, study)
    before = snapshot(session)
    assert submit(client, session, {"consent": True}).status_code == 403
    assert client.post(f"/p/{session.token}/withdraw").status_code == 403
    assert snapshot(session) == before
    # the page gives the token; echoed in the header (submit) or the form field (withdraw) it is accepted
    client.get(f"/p/{session.token}/")
    token = client.cookies["csrftoken"].value
    body = json.dumps({"client_id": uuid.uuid4().hex, "step": 0, "payload": {"consent": True}})
    ok = client.post(f"/p/{session.token}/submit", body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 200
    assert client.post(f"/p/{session.token}/withdraw", {"csrfmiddlewaretoken": token}).status_code == 302
    session.refresh_from_db()
    assert session.state == Session.State.WITHDRAWN


def test_after_withdrawing_the_page_says_so_and_further_answers_are_refused(study):
    client = Client()
    session = enter(client, study)
    submit(client, session, {"consent": True})
    session.refresh_from_db()
    client.post(f"/p/{session.token}/withdraw")
    html = client.get(f"/p/{session.token}/").content.decode()
    assert 'data-state="withdrawn"' in html and "Withdraw from the study" not in html
    response = submit(client, session, ENV)
    assert response.status_code == 409 and response.json()["code"] == "not_active"


@pytest.mark.parametrize(("state", "text"), [
    ("paused", "paused at the moment"), ("closed", "has closed"), ("draft", "not open")])
def test_entry_to_a_study_that_is_not_open_shows_why_and_creates_no_session(study, state, text):
    services.study_set_state(study=study, state=state)
    response = Client().get(f"/s/{study.slug}/")
    assert response.status_code == 200 and text in response.content.decode()
    assert Session.objects.count() == 0


def test_entry_to_a_full_study_says_so_in_chinese_when_asked(study):
    spec = dict(study.spec, limits={**study.spec["limits"], "quotas": {"overall": 1}})
    study.spec = spec
    study.save()
    enter(Client(), study)
    response = Client().get(f"/s/{study.slug}/", {"lang": "zh-hans"})
    assert response.status_code == 200 and "本研究已招满" in response.content.decode()
    assert Session.objects.count() == 1


def test_participant_pages_are_never_cached(study):
    client = Client()
    entry = client.get(f"/s/{study.slug}/")
    session = Session.objects.get()
    for response in (entry, client.get(f"/p/{session.token}/"), client.get(f"/p/{session.token}/step.json")):
        assert "no-store" in response["Cache-Control"]


def test_every_step_page_renders_through_a_whole_journey(study):
    client = Client()
    session = enter(client, study, lang="zh-hans")
    kinds = []
    for _ in range(200):
        page = client.get(f"/p/{session.token}/")
        assert page.status_code == 200 and "no-store" in page["Cache-Control"]
        view = json.loads(client.get(f"/p/{session.token}/step.json").content)
        session.refresh_from_db()
        if session.state != Session.State.ACTIVE:
            break
        kinds.append(view["kind"])
        html = page.content.decode()
        assert f'data-kind="{view["kind"]}"' in html
        if view["kind"] == "trial":
            assert f"第 {view['progress']['done'] + 1} / {view['progress']['total']} 题" in html
        from journey_driver import answer_for

        payload = answer_for(view)
        trial = view.get("trial")
        if trial and trial["type"] == "afc":
            t = Trial.objects.get(session=session, index=trial["index"])
            if t.attention:
                payload["response"] = "a" if t.spec["order"][0] == str(t.spec["expected"]).upper() else "b"
        assert submit(client, session, payload).status_code == 200
    assert session.state == Session.State.COMPLETED
    assert {"consent", "environment", "instructions", "trial", "questionnaire", "debrief"} <= set(kinds)
    html = client.get(f"/p/{session.token}/").content.decode()
    assert "C7PACE1" in html and "cc=C7PACE1" in html and "完成码" in html


def test_a_refused_device_ends_on_the_screen_out_page_with_the_studys_words_and_code(study):
    client = Client()
    session = enter(client, study)
    submit(client, session, {"consent": True})
    session.refresh_from_db()
    phone = {"environment": {**ENV["environment"], "device": "phone"}}
    response = submit(client, session, phone)
    assert response.status_code == 200 and response.json()["state"] == "screened_out"
    html = client.get(response.json()["next"]).content.decode()
    assert 'data-state="screened_out"' in html and "needs a computer or tablet" in html
    assert "C7SCRN0" in html and "cc=C7SCRN0" in html and "data-redirect=" not in html
