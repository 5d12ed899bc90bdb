"""Drive a session through its steps with the services (what a participant's browser does), for tests."""

from __future__ import annotations

import json
import uuid

from django.test import Client

from studyapp import selectors, services
from studyapp.models import Session, Trial

ENV = {"environment": {"user_agent": "test", "viewport": {"width": 1280, "height": 800}, "refresh_hz": 60,
                       "device": "desktop", "dpr": 1}}


def answer_for(view: dict) -> dict:
    kind = view["kind"]
    if kind == "consent":
        return {"consent": True}
    if kind == "environment":
        return ENV
    if kind == "questionnaire":
        out = {}
        for item in view["items"]:
            if item["type"] == "likert":
                out[item["id"]] = 3
            elif item["type"] == "single_choice":
                out[item["id"]] = item["options"][0]["value"]
            elif item["type"] == "multiple_choice":
                out[item["id"]] = [item["options"][0]["value"]]
            elif item["type"] == "number":
                out[item["id"]] = item.get("min", 1)
            else:
                out[item["id"]] = "ok"
        return {"answers": out}
    if kind == "trial":
        t = view["trial"]
        response = {"acceptability": "yes", "rating": 2, "afc": "a", "reading": "done"}[t["type"]]
        return {"response": response, "response_ms": 900.0, "reading_ms": 3000.0}
    return {}


def step(session: Session, payload: dict | None = None, client_id: str | None = None):
    session.refresh_from_db()
    view = selectors.step_view(session)
    if view["kind"] == "trial":
        trial = Trial.objects.get(session=session, index=view["trial"]["index"])
        services.trial_show(session=session, trial=trial)
        if payload is None and trial.kind == "afc" and trial.spec["attention_check"]:
            # an attentive participant picks the obviously faster stream, wherever it was shown
            first = trial.spec["order"][0]
            payload = answer_for(view) | {"response": "a" if first == str(trial.spec["expected"]).upper() else "b"}
    return services.session_submit(session_token=session.token, client_id=client_id or uuid.uuid4().hex,
                                   step=session.step, payload=payload if payload is not None else answer_for(view))


def run_to_end(session: Session, limit: int = 500) -> Session:
    for _ in range(limit):
        session.refresh_from_db()
        if session.state != Session.State.ACTIVE:
            return session
        step(session)
    raise AssertionError("session did not finish")


def enter(client: Client, study, **params) -> Session:
    response = client.get(f"/s/{study.slug}/", params)
    assert response.status_code == 302, response.content[:300]
    token = response["Location"].rstrip("/").rsplit("/", 1)[-1]
    return Session.objects.get(token=token)


def submit(client: Client, session: Session, payload: dict, *, step: int | None = None, client_id: str | None = None):
    body = {"client_id": client_id or uuid.uuid4().hex, "step": session.step if step is None else step,
            "payload": payload}
    return client.post(f"/p/{session.token}/submit", json.dumps(body), content_type="application/json")
