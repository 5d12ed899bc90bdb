"""The live dashboard end to end: a real Daphne on the test database with Redis as the channel layer, a websocket
client with a logged-in researcher's session cookie and an Origin header, sessions driven through the services."""

import json
import time

import pytest
from django.conf import settings
from journey_driver import run_to_end
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from dashboard.consumers.live import MIN_INTERVAL_S
from studyapp import services as study_services
from studyapp.models import Session

pytestmark = pytest.mark.integration


def open_socket(base_url: str, client, slug: str):
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    ws_url = base_url.replace("http://", "ws://") + f"/ws/dashboard/{slug}/"
    return connect(ws_url, origin=base_url, additional_headers={"Cookie": cookie}, open_timeout=10)


def snapshot_until(ws, predicate, timeout: float = 15.0) -> dict:
    """Read pushed snapshots until one satisfies ``predicate``; fail with the last one seen."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            msg = json.loads(ws.recv(timeout=max(0.05, deadline - time.monotonic())))
        except TimeoutError:
            break
        if msg.get("type") == "snapshot":
            last = msg
            if predicate(msg):
                return msg
    raise AssertionError(f"no matching snapshot within {timeout}s; last: {last and last['counts']}")


def test_pushed_counts_follow_sessions_as_they_start_and_complete(daphne_server, study, client_of):
    study_services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    with open_socket(daphne_server, client_of("vera"), study.slug) as ws:
        first = snapshot_until(ws, lambda s: True, timeout=10)  # sent at once on connect
        assert first["counts"]["started"] == 0 and first["study"]["state"] == "open"
        sessions = [study_services.session_enter(study=study, panel={"participant": f"L{i}"})[0] for i in range(3)]
        snap = snapshot_until(ws, lambda s: s["counts"]["started"] == 3)
        assert snap["counts"]["active"] == 3 and snap["counts"]["completed"] == 0
        run_to_end(sessions[0])
        snap = snapshot_until(ws, lambda s: s["counts"]["completed"] == 1)
        assert snap["counts"]["active"] == 2 and sum(c["answered"] for c in snap["conditions"]) > 0
        assert snap["median_trial_s"] is not None


def test_a_refresh_recovers_a_change_whose_notification_was_lost(daphne_server, study, client_of):
    with open_socket(daphne_server, client_of("alice"), study.slug) as ws:
        snapshot_until(ws, lambda s: True, timeout=10)
        session = study_services.session_enter(study=study, panel={}, preview=True)[0]
        # A change that sends no notification at all (as if the channel layer had dropped it):
        Session.objects.filter(pk=session.pk).update(preview=False)
        with pytest.raises(AssertionError):
            snapshot_until(ws, lambda s: s["counts"]["started"] == 1, timeout=1.0)
        ws.send(json.dumps({"type": "refresh"}))
        assert snapshot_until(ws, lambda s: s["counts"]["started"] == 1, timeout=5)["counts"]["active"] == 1


def test_notifications_are_coalesced_to_a_few_snapshots_per_second(daphne_server, study, client_of):
    study_services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    seen = []
    with open_socket(daphne_server, client_of("alice"), study.slug) as ws:
        snapshot_until(ws, lambda s: True, timeout=10)
        t0 = time.monotonic()
        for i in range(8):
            study_services.session_enter(study=study, panel={"participant": f"burst{i}"})
        final = snapshot_until(ws, lambda s: seen.append(s) or s["counts"]["started"] == 8)
        elapsed = time.monotonic() - t0
    assert final["counts"]["active"] == 8
    assert len(seen) <= elapsed / MIN_INTERVAL_S + 2, (len(seen), elapsed)  # 8 notifications, fewer snapshots


def test_another_researchers_socket_is_closed_with_4404(daphne_server, study, client_of):
    with open_socket(daphne_server, client_of("bob"), study.slug) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
    assert closed.value.rcvd.code == 4404


def test_a_socket_without_origin_is_refused(daphne_server, study, client_of):
    cookie = f"{settings.SESSION_COOKIE_NAME}={client_of('alice').cookies[settings.SESSION_COOKIE_NAME].value}"
    ws_url = daphne_server.replace("http://", "ws://") + f"/ws/dashboard/{study.slug}/"
    with pytest.raises(Exception) as refused:
        connect(ws_url, additional_headers={"Cookie": cookie}, open_timeout=10)
    assert "403" in str(refused.value)
