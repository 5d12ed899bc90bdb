"""Fuzzing every participant endpoint through the whole Django stack (middleware, CSRF, views, services, the
database): random JSON and mutated valid payloads for every step kind, random query strings and tokens. Never a
500, never a malformed stored answer (every stored value re-validates with ``studyapp.journey.responses``), never a
change to another participant's session. Each example runs in a savepoint that is rolled back, so every example starts
from the same sessions, one waiting at each kind of step."""

import json
import logging
import secrets
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client
from fuzzing import count, fuzz_settings, json_values, mutated, nasty
from hypothesis import given
from hypothesis import strategies as st
from journey_driver import answer_for
from journey_driver import step as drive
from study_builders import trimmed_demo

from studyapp import selectors, services
from studyapp.journey import responses
from studyapp.models import Answer, Session, Trial

pytestmark = pytest.mark.integration


class _Rollback(Exception):
    pass


def _target_name(view: dict) -> str:
    return f"trial:{view['trial']['type']}" if view["kind"] == "trial" else view["kind"]


@pytest.fixture
def world(db, settings):
    """A study and one session waiting at each kind of step (and a finished and a timed-out one)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    owner = get_user_model().objects.create_user("fuzz-owner", password="x" * 12)
    doc = trimmed_demo()
    doc["id"] = "fuzz-study"
    study, _ = services.study_load(doc=doc, owner=owner)
    services.study_set_state(study=study, state="open")
    client = Client(enforce_csrf_checks=True)
    sessions: dict[str, Session] = {}
    wanted = {"consent", "environment", "instructions", "message", "break", "trial:acceptability", "trial:rating",
              "trial:afc", "questionnaire", "debrief"}
    kinds_seen: list[str] = []
    for i in range(len(wanted) + 1):
        session, _ = services.session_enter(study=study, panel={"participant": f"fuzz-{i}"})
        while session.state == Session.State.ACTIVE:
            view = selectors.step_view(session)
            name = _target_name(view)
            if name in wanted and name not in sessions:
                sessions[name] = session
                break
            kinds_seen.append(name)
            drive(session)
            session.refresh_from_db()
        else:
            sessions.setdefault("completed", session)
    assert wanted | {"completed"} <= set(sessions), (set(sessions), kinds_seen)
    assert set(kinds_seen) <= wanted, set(kinds_seen) - wanted  # every kind of step in the study is covered
    timed_out, _ = services.session_enter(study=study, panel={"participant": "fuzz-expired"})
    Session.objects.filter(pk=timed_out.pk).update(state=Session.State.TIMED_OUT)
    sessions["timed_out"] = timed_out
    valid: dict[str, dict] = {}
    for name, session in sessions.items():
        r = client.get(f"/p/{session.token}/step.json")  # shows a waiting trial (creates its playbacks)
        assert r.status_code == 200
        valid[name] = answer_for(r.json()) if r.json()["state"] == "active" else {}
    return {"study": study, "client": client, "sessions": sessions, "valid": valid,
            "csrf": client.cookies["csrftoken"].value, "baseline": _all_state()}


def _all_state() -> dict[int, tuple]:
    answers: dict[int, list] = {}
    for sid, aid, value in Answer.objects.order_by("id").values_list("session_id", "id", "value"):
        answers.setdefault(sid, []).append((aid, json.dumps(value, sort_keys=True)))
    trials: dict[int, list] = {}
    for sid, idx, status, plays in Trial.objects.order_by("session", "index").values_list(
            "session_id", "index", "status", "plays"):
        trials.setdefault(sid, []).append((idx, status, plays))
    return {s.pk: (s.step, s.state, tuple(s.flags), json.dumps(s.environment, sort_keys=True),
                   tuple(answers.get(s.pk, ())), tuple(trials.get(s.pk, ()))) for s in Session.objects.all()}


def revalidate(answer: Answer) -> None:
    """A stored answer is what the validators make of it: feeding it back gives the same value."""
    session, value = answer.session, answer.value
    if answer.key == "consent":
        assert value is True
    elif answer.key == "environment":
        assert responses.environment({"environment": value}) == value
        assert value == session.environment
    elif answer.key == "questionnaire":
        assert responses.questionnaire_answers(session.study.spec.get("questionnaire") or [], value) == value
    elif answer.key == "trial":
        spec = answer.trial.spec
        plain = {k: v for k, v in value.items() if k != "attention_passed"}
        assert responses.trial_value(spec, plain) == plain
        assert value.get("attention_passed") == responses.attention_passed(spec, plain)
        assert responses.comment(spec, {"comment": answer.comment}) == answer.comment
        if answer.response_ms is not None:
            assert responses.response_ms({"response_ms": answer.response_ms}) == answer.response_ms
    else:
        assert answer.key in ("instructions", "block_intro", "message", "break", "debrief") and value == {
            "continue": True}
    assert answer.step < len(session.plan["steps"]) and session.plan["steps"][answer.step]["kind"] == (
        "trial" if answer.key == "trial" else answer.key)


def _check_after(world, target: Session | None, status: int, body) -> None:
    base = world["baseline"]
    now = _all_state()
    for sid, state in base.items():
        if target is None or sid != target.pk:
            assert now.get(sid) == state, f"session {sid} changed"
    if target is None:
        return
    if status != 200 or not isinstance(body, dict) or body.get("duplicate"):
        assert now.get(target.pk) == base[target.pk], "a refused submission changed the session"
        return
    if target.pk not in now:  # declined consent: the session and what it recorded are gone
        assert not Session.objects.filter(pk=target.pk).exists()
        return
    new = [a for a in Answer.objects.filter(session_id=target.pk).select_related("session__study", "trial")
           if a.id not in {x[0] for x in base[target.pk][4]}]
    assert len(new) == 1 and new[0].client_id == body["ack"]
    for a in Answer.objects.filter(session_id=target.pk).select_related("session__study", "trial"):
        revalidate(a)


def _post(world, token: str, raw: bytes, *, csrf: bool = True):
    extra = {"HTTP_X_CSRFTOKEN": world["csrf"]} if csrf else {}
    return world["client"].post(f"/p/{token}/submit", data=raw, content_type="application/json", **extra)


def _in_rollback(fn):
    try:
        with transaction.atomic():
            fn()
            raise _Rollback
    except _Rollback:
        pass


@st.composite
def submissions(draw, world):
    name = draw(st.sampled_from(sorted(world["sessions"])))
    session = world["sessions"][name]
    how = draw(st.sampled_from(["mutated", "mutated", "random_payload", "random_body", "raw"]))
    valid_body = {"client_id": uuid.uuid4().hex, "step": session.step, "payload": world["valid"][name]}
    if how == "mutated":
        body = json.dumps(draw(mutated(valid_body))).encode()
    elif how == "random_payload":
        body = json.dumps(valid_body | {"payload": draw(json_values)}).encode()
    elif how == "random_body":
        body = json.dumps(draw(json_values)).encode()
    else:
        body = draw(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
    return name, how, body


def test_random_and_mutated_submissions_never_crash_store_garbage_or_touch_others(world):
    @fuzz_settings()
    @given(data=st.data())
    def prop(data):
        name, how, raw = data.draw(submissions(world))
        count(f"submit:{how}")
        target = world["sessions"][name]

        def example():
            r = _post(world, target.token, raw)
            assert r.status_code in (200, 400, 409), (r.status_code, r.content[:300])
            body = r.json()
            assert isinstance(body, dict) and body["ok"] is (r.status_code == 200)
            if r.status_code != 200:
                assert body["code"] in ("invalid", "stale_step", "not_active", "not_shown") and body["error"]
            _check_after(world, target, r.status_code, body)

        _in_rollback(example)

    prop()


def test_every_participant_url_answers_random_input_without_a_server_error(world):
    sessions = world["sessions"]
    tokens = st.sampled_from([s.token for s in sessions.values()]) | st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="/?#"), min_size=1, max_size=80)
    params = st.dictionaries(st.sampled_from(["PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "lang", "x"]) | st.text(
        max_size=10), st.text(max_size=60), max_size=4)

    @fuzz_settings(0.5)
    @given(kind=st.sampled_from(["enter", "page", "step", "withdraw", "declined"]), token=tokens, query=params,
           body=nasty)
    def prop(kind, token, query, body):
        count(f"url:{kind}")
        client = world["client"]
        slug = world["study"].slug

        def example():
            if kind == "enter":
                r = client.get(f"/s/{slug}/", query)
            elif kind == "declined":
                r = client.get(f"/s/{slug}/declined/", query)
            elif kind == "page":
                r = client.get(f"/p/{token}/", query)
            elif kind == "step":
                r = client.get(f"/p/{token}/step.json", query)
            else:
                r = client.post(f"/p/{token}/withdraw", data=json.dumps(body), content_type="application/json",
                                HTTP_X_CSRFTOKEN=world["csrf"])
            assert r.status_code in (200, 302, 404, 405), (kind, r.status_code)
            if kind == "enter" and r.status_code == 302:
                pid = responses.panel_value(query.get("PROLIFIC_PID"))
                if pid.startswith("fuzz-"):  # an existing panel id resumes its session, it is never reset
                    assert Session.objects.filter(panel_pid=pid).count() == 1
            own = next((x for x in sessions.values() if x.token == token), None)
            base, now = world["baseline"], _all_state()
            assert all(now.get(sid) == st for sid, st in base.items() if own is None or sid != own.pk)
            if own is not None and own.pk in now:  # its own session may move (a shown trial, a withdrawal)
                assert now[own.pk][4] == base[own.pk][4]  # but no answer appears or changes

        _in_rollback(example)

    prop()


def test_forged_guessed_expired_tokens_foreign_origins_and_missing_csrf_are_refused_and_logged(world, caplog):
    caplog.set_level(logging.INFO)
    s = world["sessions"]["environment"]
    body = json.dumps({"client_id": uuid.uuid4().hex, "step": s.step, "payload": world["valid"]["environment"]})
    client = world["client"]
    forged = [secrets.token_urlsafe(32), s.token[:-1] + ("A" if s.token[-1] != "A" else "B"), s.token.upper(),
              s.token + "x", "0" * 43]
    for token in forged:
        count("refusal:forged_token")
        assert _post(world, token, body.encode()).status_code == 404
        assert client.get(f"/p/{token}/step.json").status_code == 404
    refused_tokens = [r for r in caplog.records if r.getMessage() == "refused unknown participant token"]
    assert len(refused_tokens) == 2 * len(forged)

    expired = world["sessions"]["timed_out"]
    count("refusal:expired_session")
    r = _post(world, expired.token, json.dumps({"client_id": uuid.uuid4().hex, "step": 0,
                                                "payload": {"consent": True}}).encode())
    assert r.status_code == 409 and r.json()["code"] == "not_active"
    assert any("refused submission" in rec.getMessage() and "timed_out" in rec.getMessage()
               for rec in caplog.records)

    caplog.clear()
    count("refusal:missing_csrf")
    assert _post(world, s.token, body.encode(), csrf=False).status_code == 403
    for origin in ("http://evil.example", "null", "https://testserver"):
        count("refusal:wrong_origin")
        r = client.post(f"/p/{s.token}/submit", data=body, content_type="application/json",
                        HTTP_X_CSRFTOKEN=world["csrf"], HTTP_ORIGIN=origin)
        assert r.status_code == 403
    csrf_logs = [r for r in caplog.records if r.name == "django.security.csrf"]
    assert len(csrf_logs) == 4
    assert "CSRF token missing" in csrf_logs[0].getMessage()
    assert all("Origin checking failed" in r.getMessage() for r in csrf_logs[1:])
    assert _all_state() == world["baseline"]
