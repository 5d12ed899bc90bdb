"""Redis goes down during a study and comes back empty: participants carry on (answers go to PostgreSQL), the
dashboard's live view recovers by itself (reconnect, fresh snapshot, pushes again), and an analysis requested
during the outage runs once the broker is back (requeued by the beat job ``requeue_stale``)."""

import json
import time
from datetime import timedelta

import pytest
from django.test import Client
from fault_client import Person
from faults import redis_down
from procs import start_celery_worker, stop
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from analysis.models import AnalysisRun
from analysis.services import analysis_requeue_stale as requeue_stale
from studyapp.models import Answer, Session

pytestmark = [pytest.mark.integration, pytest.mark.serial_services]


class LiveView:
    """A dashboard live-view client that behaves like static/js/dashboard/live.js: reconnects when closed."""

    def __init__(self, base: str, slug: str, cookie: str) -> None:
        self.url = base.replace("http://", "ws://") + f"/ws/dashboard/{slug}/"
        self.base, self.cookie, self.ws, self.reconnects = base, cookie, None, 0

    def connect(self, until: float = 20.0) -> dict:
        t0 = time.monotonic()
        while True:
            try:
                self.ws = ws_connect(self.url, origin=self.base, additional_headers={"Cookie": self.cookie},
                                     open_timeout=5).__enter__()
                return self.next()
            except (OSError, InvalidStatus, ConnectionClosed, TimeoutError):
                assert time.monotonic() - t0 < until, "the live view did not come back"
                time.sleep(0.5)

    def next(self, timeout: float = 10.0) -> dict:
        msg = json.loads(self.ws.recv(timeout))
        assert msg["type"] == "snapshot", msg
        return msg

    def fresh(self, timeout: float = 20.0) -> dict:
        """A snapshot now: ask on the open socket, or reconnect if Redis's restart closed it."""
        try:
            self.ws.send(json.dumps({"type": "refresh"}))
            return self.next(timeout)
        except (ConnectionClosed, TimeoutError):
            self.ws.close()
            self.reconnects += 1
            return self.connect()


def _login_cookie(user) -> str:
    c = Client()
    c.force_login(user)
    return f"sessionid={c.cookies['sessionid'].value}"


def test_participants_and_the_live_view_ride_out_a_redis_restart(fault_env, request, live_study, tmp_path,
                                                                 settings):
    from analysis import services as analysis_services

    base = request.getfixturevalue("daphne_server")
    settings.PACELAB_TASK_QUEUE = queue = f"test-faults-{int(time.time() * 1000) % 10**8}"
    me = Person(base, live_study.slug, "redis-me")
    me.answer(me.view())  # consent
    live = LiveView(base, live_study.slug, _login_cookie(live_study.owner))
    assert live.connect()["counts"]["started"] == 1

    with redis_down():
        t_down = time.monotonic()
        during = [me.answer(me.view()) for _ in range(2)]  # environment, instructions
        other = Person(base, live_study.slug, "redis-other")  # a new participant enters
        other.answer(other.view())
        requested_error = ""
        try:
            run = analysis_services.analysis_request(study=live_study)
        except Exception as exc:  # noqa: BLE001 - recorded and asserted below
            requested_error = f"{type(exc).__name__}: {exc}"
            run = AnalysisRun.objects.filter(study=live_study).order_by("-id").first()
        queued_during = run.state if run else None
        outage_s = time.monotonic() - t_down

    assert outage_s < 10, f"requests during the outage took {outage_s:.1f}s"  # nothing waits on Redis
    # participants: everything submitted during the outage was acknowledged and stored once
    assert all(a["ok"] and not a["duplicate"] for a in during)
    for p in (me, other):
        s = Session.objects.get(token=p.token)
        stored = list(Answer.objects.filter(session=s).values_list("client_id", flat=True))
        assert sorted(stored) == sorted(p.acked) and s.step == len(stored)
    assert me.view()["kind"] == "trial"

    # the live view: a fresh snapshot showing the outage's changes, then pushes on new changes again
    snap = live.fresh()
    assert snap["counts"]["started"] == 2
    Person(base, live_study.slug, "redis-third")
    pushed = live.next(timeout=15)
    assert pushed["counts"]["started"] == 3

    # the analysis requested during the outage: the request did not fail, the run waited and now runs
    assert requested_error == "", requested_error
    assert queued_during == AnalysisRun.State.QUEUED
    run.refresh_from_db()
    assert run.state == AnalysisRun.State.QUEUED  # still waiting: its enqueue was lost with Redis
    assert requeue_stale(stale_after=timedelta(0)) >= 1  # what celery beat does every minute (after a grace period)
    worker = start_celery_worker(queue, fault_env, tmp_path / "celery.log")
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 90:
            run.refresh_from_db()
            if run.finished:
                break
            time.sleep(0.5)
    finally:
        stop(worker)
    assert run.finished and run.state != AnalysisRun.State.CANCELLED, (run.state, run.error)
    print(f"\nredis restart: {len(during)} submits during the outage acked and stored; live view reconnects "
          f"{live.reconnects}; outage {outage_s:.1f}s; analysis run {run.state} after {run.attempts} attempt(s)")
