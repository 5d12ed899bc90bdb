"""Bad input on every participant endpoint and websocket message, against a real Daphne: each gets a clear error,
nothing is stored, nothing is lost, and the participant carries on to the end afterwards."""

import asyncio
import json
import secrets
import uuid

import httpx
import pytest
import websockets
from django.contrib.auth import get_user_model
from study_builders import trimmed_demo

from playback.core.stream import Piece, Stream
from playback.models.delivery import PaintReport, Playback
from playback.services.delivery import playback_create
from studyapp import services
from studyapp.bots import observers as bot_models
from studyapp.bots import runner as bots
from studyapp.models import Answer, PageVisit, Session, Study, Trial

pytestmark = pytest.mark.integration


@pytest.fixture
def server(service_env, request) -> str:
    service_env["CONN_MAX_AGE"] = "0"  # see tests/studyapp/bots/test_runner.py
    return request.getfixturevalue("daphne_server")


@pytest.fixture
def study(transactional_db) -> Study:
    owner = get_user_model().objects.create_user("bad-input-owner", password="x" * 12)
    study, _ = services.study_load(doc=trimmed_demo(), owner=owner)
    return services.study_set_state(study=study, state="open")


class Browser:
    """One participant's browser: its cookies, its token, and submits with the CSRF header."""

    def __init__(self, base: str, slug: str, pid: str) -> None:
        self.base = base
        self.pid = pid
        self.client = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
        r = self.client.get(f"/s/{slug}/", params={"PROLIFIC_PID": pid, "SESSION_ID": f"se-{pid}"})
        assert r.status_code == 302, r.text
        self.token = r.headers["location"].rstrip("/").rsplit("/", 1)[-1]

    def step(self) -> dict:
        r = self.client.get(f"/p/{self.token}/step.json")
        assert r.status_code == 200
        return r.json()

    def post(self, body, *, token: str | None = None, raw: bytes | None = None, csrf: bool = True) -> httpx.Response:
        headers = {"Content-Type": "application/json", "Origin": self.base,
                   "Referer": f"{self.base}/p/{self.token}/"}
        if csrf:
            headers["X-CSRFToken"] = self.client.cookies.get("csrftoken", "")
        return self.client.post(f"/p/{token or self.token}/submit", headers=headers,
                                content=raw if raw is not None else json.dumps(body))

    def answer(self, payload: dict) -> dict:
        view = self.step()
        r = self.post({"client_id": uuid.uuid4().hex, "step": view["step"], "payload": payload})
        assert r.status_code == 200, r.text
        return r.json()


def _snapshot(token: str) -> tuple:
    s = Session.objects.get(token=token)
    answers = list(Answer.objects.filter(session=s).order_by("id").values_list("id", "step", "key", "client_id"))
    trials = list(Trial.objects.filter(session=s).order_by("index").values_list("status", flat=True))
    return s.step, s.state, answers, trials, s.flags


def _finish(base: str, slug: str, pid: str) -> bots.BotResult:
    """Carry on as the same participant (the panel link, with its per-attempt SESSION_ID, resumes the session)
    to the end."""
    config = bots.RunConfig(url=base, study=slug, n=1, seed=1)
    bot = bot_models.population_bots(bot_models.Population(attentive=1.0), 1, seed=1)[0]
    return asyncio.run(bots.Participant(config, pid, bot, panel_session=f"se-{pid}").run())


def _refused(r: httpx.Response, status: int, code: str, words: str) -> None:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["ok"] is False and body["code"] == code and words in body["error"], body


def test_bad_submissions_are_refused_clearly_and_change_nothing(server, study):
    me = Browser(server, study.slug, "bad-input-me")
    other = Browser(server, study.slug, "bad-input-other")
    me.answer({"consent": True})
    view = me.step()
    assert view["kind"] == "environment"
    before = _snapshot(me.token)
    step = view["step"]
    ok_env = {"environment": bots.ENVIRONMENT}

    cases = [
        (me.post(None, raw=b"{not json"), 400, "invalid", "malformed JSON"),
        (me.post([1, 2, 3]), 400, "invalid", "body must be a JSON object"),
        (me.post({"client_id": 12345678, "step": step, "payload": ok_env}), 400, "invalid", "client_id"),
        (me.post({"client_id": "short", "step": step, "payload": ok_env}), 400, "invalid", "client_id"),
        # NUL (PostgreSQL stores it in neither text nor jsonb) is refused, never a server error
        (me.post({"client_id": "nul\x00" + "c" * 20, "step": step, "payload": ok_env}), 400, "invalid",
         "client_id"),
        (me.post({"client_id": uuid.uuid4().hex, "step": step, "payload": {"environment": {
            **bots.ENVIRONMENT, "device": "desk\x00top"}}}), 400, "invalid",
         "payload.environment.device: text must not contain the NUL character"),
        (me.post({"client_id": uuid.uuid4().hex, "step": step, "payload": {"environment": {
            **bots.ENVIRONMENT, "\x00": 1}}}), 400, "invalid", "NUL character"),
        (me.post({"client_id": uuid.uuid4().hex, "step": step, "payload": "env"}), 400, "invalid",
         "payload: must be an object"),
        (me.post({"client_id": uuid.uuid4().hex, "step": step, "payload": {"environment": {
            "viewport": {"width": "wide", "height": 800}, "refresh_hz": 60, "device": "desktop"}}}),
         400, "invalid", "environment.viewport.width"),
        (me.post({"client_id": uuid.uuid4().hex, "step": step, "payload": {"environment": {
            **bots.ENVIRONMENT, "device": "toaster"}}}), 400, "invalid", "environment.device"),
        (me.post({"client_id": uuid.uuid4().hex, "step": step + 1, "payload": ok_env}), 409, "stale_step",
         "not the current step"),
        (me.post({"client_id": uuid.uuid4().hex, "step": "1", "payload": ok_env}), 400, "invalid",
         "must be an integer"),
    ]
    for response, status, code, words in cases:
        _refused(response, status, code, words)
    assert me.post({"client_id": uuid.uuid4().hex, "step": step, "payload": ok_env}, csrf=False).status_code == 403
    assert me.client.get(f"/p/{me.token}/submit").status_code == 405
    assert _snapshot(me.token) == before

    # a replayed submit is acknowledged again and stored once, also after the participant moved on
    body = {"client_id": uuid.uuid4().hex, "step": step, "payload": ok_env}
    first = me.post(body).json()
    assert (first["ok"], first["duplicate"], first["next_step"]) == (True, False, step + 1)
    after = _snapshot(me.token)
    me.answer({})  # instructions
    moved = _snapshot(me.token)
    replay = me.post(body).json()
    assert (replay["ok"], replay["duplicate"], replay["ack"]) == (True, True, body["client_id"])
    assert _snapshot(me.token) == moved and len(moved[2]) == len(after[2]) + 1

    # an answer on a trial: out-of-range values name the field and store nothing
    view = me.step()
    while view["kind"] != "trial":
        me.answer({})
        view = me.step()
    before = _snapshot(me.token)
    bad = [({"response": "maybe"}, "response"), ({"response": "yes", "response_ms": -5}, "response_ms"),
           ({"response": "yes", "response_ms": "fast"}, "response_ms"),
           ({"response": "yes", "comment": "nice"}, "comment"), ({"response": True}, "response")]
    for payload, field in bad:
        r = me.post({"client_id": uuid.uuid4().hex, "step": view["step"], "payload": payload})
        _refused(r, 400, "invalid", field)
    assert _snapshot(me.token) == before

    # another participant's client_id, step number or token gives nothing of theirs
    other.step()  # its browser gets its own CSRF cookie
    other_before = _snapshot(other.token)
    r = other.post({"client_id": body["client_id"], "step": 0, "payload": {"consent": True}})
    assert r.status_code == 200 and r.json()["duplicate"] is False  # idempotency keys are per participant
    assert _snapshot(me.token) == before
    assert len(_snapshot(other.token)[2]) == len(other_before[2]) + 1
    r = me.post({"client_id": uuid.uuid4().hex, "step": view["step"], "payload": {"response": "yes"}},
                token=other.token)
    _refused(r, 409, "stale_step", "not the current step")  # my step is not theirs
    assert _snapshot(me.token) == before

    # forged tokens: the same 404 for every endpoint, and nothing is created
    n_sessions, n_answers, n_visits = Session.objects.count(), Answer.objects.count(), PageVisit.objects.count()
    near = me.token[:-1] + ("A" if me.token[-1] != "A" else "B")
    for forged in [secrets.token_urlsafe(32), "x" * 43, "a" * 65, near, "%00" + near[3:], near[:-3] + "%2A"]:
        assert me.client.get(f"/p/{forged}/step.json").status_code == 404
        assert me.client.get(f"/p/{forged}/").status_code == 404
        assert me.post({"client_id": uuid.uuid4().hex, "step": 0, "payload": {}}, token=forged).status_code == 404
    assert me.client.get("/s/no-such-study/", params={"PROLIFIC_PID": "x"}).status_code == 404
    assert (Session.objects.count(), Answer.objects.count(), PageVisit.objects.count()) == (
        n_sessions, n_answers, n_visits)

    # control characters in a panel link's parameters are dropped, not stored (PostgreSQL refuses NUL)
    r = httpx.get(f"{server}/s/{study.slug}/", params={"PROLIFIC_PID": "nul\x00pid\x07", "STUDY_ID": "s\x00",
                                                        "SESSION_ID": "\x00"})
    assert r.status_code == 302
    s = Session.objects.get(panel_pid="nulpid")
    assert (s.panel_study_id, s.panel_session_id) == ("s", "")
    again = httpx.get(f"{server}/s/{study.slug}/", params={"PROLIFIC_PID": "nulpid"}, cookies=r.cookies)
    assert again.headers["location"] == r.headers["location"]  # the cleaned id resumes the same session

    # nothing lost: the participant carries on from where they were to the end
    result = _finish(server, study.slug, me.pid)
    assert (result.error, result.state) == ("", "completed")
    s = Session.objects.get(token=me.token)
    assert s.state == Session.State.COMPLETED and Answer.objects.filter(session=s).count() == s.step
    assert set(before[2]) <= set(Answer.objects.filter(session=s).values_list("id", "step", "key", "client_id"))


def _ws(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws/playback/"


async def _ask(ws, text: str | bytes) -> dict:
    await ws.send(text)
    return json.loads(await asyncio.wait_for(ws.recv(), 10))


async def _bad_messages(base: str, token: str, foreign: str) -> dict:
    out: dict = {}
    for origin in ("http://evil.example", None):
        try:
            async with websockets.connect(_ws(base), origin=origin) as ws:
                await ws.recv()
            out[origin] = "accepted"
        except websockets.InvalidStatus as exc:
            out[origin] = exc.response.status_code
    async with websockets.connect(_ws(base), origin=base) as ws:
        out["errors"] = [
            await _ask(ws, "{not json"),
            await _ask(ws, b"\x00\x01binary"),
            await _ask(ws, "[1, 2]"),
            await _ask(ws, json.dumps({"type": "launch"})),
            await _ask(ws, json.dumps({"type": "hello", "token": 42})),
            await _ask(ws, json.dumps({"type": "hello", "token": "t" * 500})),
            await _ask(ws, json.dumps({"type": "start"})),
            await _ask(ws, json.dumps({"type": "paint", "batch": 1, "entries": []})),
            await _ask(ws, json.dumps({"type": "hello", "token": secrets.token_urlsafe(32)})),
            await _ask(ws, json.dumps({"type": "hello", "token": foreign})),
            await _ask(ws, json.dumps({"type": "hello", "token": "\x00" + foreign[1:]})),
            await _ask(ws, json.dumps({"type": "ping", "t0": "now"})),
        ]
        # the same socket still works with the participant's own playback
        out["ready"] = await _ask(ws, json.dumps({"type": "hello", "token": token}))
        out["after_hello"] = [
            await _ask(ws, json.dumps({"type": "stop"})),
            await _ask(ws, json.dumps({"type": "paint", "batch": 0, "entries": []})),
            await _ask(ws, json.dumps({"type": "paint", "batch": 1, "entries": [{"seq": -1}]})),
            await _ask(ws, json.dumps({"type": "paint", "batch": 1, "entries": [
                {"seq": 0, "t_ms": 0, "recv_ms": 0, "paint_ms": "soon", "chars": 1}]})),
            await _ask(ws, json.dumps({"type": "paint", "batch": 1, "entries": [
                {"seq": 0, "t_ms": 0, "recv_ms": 5.1e16, "paint_ms": 1, "chars": 1}]})),
            await _ask(ws, json.dumps({"type": "paint", "batch": 2**31, "entries": []})),
        ]
        await ws.send(json.dumps({"type": "start"}))
        first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        out["delivered"] = first["type"]
        while first["type"] != "end":
            first = json.loads(await asyncio.wait_for(ws.recv(), 30))
        out["start_again"] = await _ask(ws, json.dumps({"type": "start"}))
    return out


def test_bad_websocket_messages_get_an_error_and_the_socket_and_trial_carry_on(server, study):
    me = Browser(server, study.slug, "bad-ws-me")
    view = me.step()
    while view["kind"] != "trial":
        me.answer({"consent": True} if view["kind"] == "consent" else
                  {"environment": bots.ENVIRONMENT} if view["kind"] == "environment" else {})
        view = me.step()
    token = view["trial"]["playbacks"][0]["token"]
    owner = get_user_model().objects.create_user("someone-else", password="x" * 12)
    foreign = playback_create(stream=Stream((Piece("hi", 100.0),)), owner=owner).token  # someone else's playback
    keyed = playback_create(stream=Stream((Piece("hi", 100.0),)), session_key="another-browser").token
    before = _snapshot(me.token)
    out = asyncio.run(_bad_messages(server, token, foreign))
    keyed_out = asyncio.run(_bad_messages(server, token, keyed))["errors"][9]

    assert out["http://evil.example"] == 403 and out[None] == 403
    errors = [e["error"] for e in out["errors"]]
    assert all(e["type"] == "error" for e in out["errors"])
    expected = ["malformed JSON", "binary frames are not accepted", "message must be a JSON object",
                "unknown message type 'launch'", "hello.token: must be a non-empty string",
                "hello.token: longer than", "start: send hello with the playback token first",
                "paint: send hello with the playback token first", "hello: unknown playback",
                "hello: unknown playback", "hello: unknown playback", "ping.t0: must be a number"]
    for error, words in zip(errors, expected, strict=True):
        assert error.startswith(words), (error, words)
    assert keyed_out == {"type": "error", "error": "hello: unknown playback"}  # same answer as a forged token
    assert out["ready"]["type"] == "ready"
    after = [e["error"] for e in out["after_hello"]]
    assert after[0] == "stop: no trial is running"
    assert after[1].startswith("paint.batch: must be an integer >= 1")
    assert after[2].startswith("paint.entries[0].seq: must be an integer >= 0")
    assert after[3].startswith("paint.entries[0].paint_ms: must be a number")
    assert after[4].startswith("paint.entries[0].recv_ms: must be within")
    assert after[5].startswith("paint.batch: must be at most 2147483647")
    assert out["delivered"] in ("schedule", "frame")
    assert out["start_again"]["error"].startswith("start: the trial has already")
    assert PaintReport.objects.count() == 0  # no bad batch was stored
    assert Playback.objects.get(token=foreign).started_at is None
    assert _snapshot(me.token) == before

    result = _finish(server, study.slug, me.pid)
    assert (result.error, result.state) == ("", "completed")
