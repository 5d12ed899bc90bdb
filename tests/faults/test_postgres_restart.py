"""PostgreSQL goes down during a study: the participant endpoints answer 503 "reconnecting" (JSON for submit and
step.json, a page that reloads itself for participant pages), never an HTML 500; the answer the client could not
get acknowledged is resent under the same client_id once the database is back, and stored once."""

import time
import uuid

import httpx
import pytest
from django.db import connections
from fault_client import Person
from faults import postgres_down

from pacelab.db_outage import DatabaseOutageMiddleware
from studyapp.bots import runner as bots
from studyapp.models import Answer, Session

pytestmark = [pytest.mark.integration, pytest.mark.serial_services]


def _retry(me: Person, body: dict, until: float = 30.0) -> tuple[httpx.Response, int]:
    """What static/js/study/submit.js does: resend the same body on 5xx or a connection error until answered."""
    t0, attempts = time.monotonic(), 0
    while True:
        attempts += 1
        try:
            r = me.post(body)
            if r.status_code < 500:
                return r, attempts
        except httpx.TransportError:
            pass
        assert time.monotonic() - t0 < until, "the server did not recover"
        time.sleep(0.3)


def test_a_database_restart_shows_reconnecting_and_loses_or_doubles_nothing(fault_env, request, live_study):
    # A request waits up to DB_POOL_TIMEOUT for a pooled connection, so during an outage it fails after that
    # long: a few seconds here, so the participant sees "reconnecting" soon and the outage stays short.
    fault_env["DB_POOL_TIMEOUT"] = "2"
    base = request.getfixturevalue("daphne_server")
    me = Person(base, live_study.slug, "pg-restart")
    me.answer(me.view())  # consent
    view = me.view()
    assert view["kind"] == "environment"
    body = {"client_id": uuid.uuid4().hex, "step": view["step"], "payload": {"environment": bots.ENVIRONMENT}}

    with postgres_down():
        t0 = time.monotonic()
        submit = me.post(body)
        step = me.step()
        page = me.client.get(f"/p/{me.token}/")
        health = me.client.get("/healthz")
        per_request_s = (time.monotonic() - t0) / 4
    connections.close_all()  # this test's own connection was cut too

    # during the outage: 503s the client understands, nothing that looks like a crash
    assert submit.status_code == 503 and submit.headers["content-type"] == "application/json"
    assert submit.json() == {"ok": False, "code": "unavailable",
                             "error": "the server cannot reach its database; retry"}
    assert submit.headers["retry-after"] == "2"
    assert step.status_code == 503 and step.json()["code"] == "unavailable"
    assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
    assert "Reconnecting" in page.text and 'http-equiv="refresh"' in page.text
    assert "Traceback" not in page.text and "Server Error" not in page.text
    assert health.status_code == 503
    assert per_request_s < 6, per_request_s  # a brief "reconnecting", not a hang

    # after: the same answer, resent, is stored once; a second resend is acknowledged as a duplicate
    r, attempts = _retry(me, body)
    assert r.status_code == 200 and r.json()["ack"] == body["client_id"] and r.json()["duplicate"] is False
    again = me.post(body)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    session = Session.objects.get(token=me.token)
    assert Answer.objects.filter(session=session, client_id=body["client_id"]).count() == 1
    assert session.step == view["step"] + 1
    assert set(Answer.objects.filter(session=session).values_list("client_id", flat=True)) == set(me.acked)
    assert me.view()["kind"] == "instructions"
    log = open(request.getfixturevalue("tmp_path") / "daphne.log").read()
    assert "database unavailable, asked the participant to retry" in log
    print(f"\npostgres restart: submit 503 JSON, page 503 reconnecting ({per_request_s:.1f}s per request during the "
          f"outage), resend stored once after {attempts} try")


def test_the_outage_middleware_leaves_other_errors_and_other_paths_alone(rf):
    from django.db import OperationalError

    mw = DatabaseOutageMiddleware(lambda r: None)
    assert mw.process_exception(rf.post("/p/abc/submit"), ValueError("x")) is None
    assert mw.process_exception(rf.get("/dashboard/"), OperationalError("down")) is None
    assert mw.process_exception(rf.get("/p/abc/"), OperationalError("down")).status_code == 503
    assert mw.process_exception(rf.get("/s/some-study/"), OperationalError("down")).status_code == 503
