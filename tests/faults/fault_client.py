"""The scripted participant of the fault tests (not a test module): cookies, token, acknowledgements."""

import json
import uuid

import httpx
from websockets.sync.client import connect as ws_connect

from studyapp.bots import runner as bots


class Person:
    """One participant's browser, scripted: cookies, token, the acknowledgements it got. ``base`` may change
    (another server process); the cookie jar is kept, as a browser behind a load balancer keeps it."""

    def __init__(self, base: str, slug: str, pid: str) -> None:
        self.base = base
        self.client = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
        r = self.client.get(f"/s/{slug}/", params={"PROLIFIC_PID": pid})
        assert r.status_code == 302, r.text
        self.token = r.headers["location"].rstrip("/").rsplit("/", 1)[-1]
        self.acked: dict[str, dict] = {}  # client_id -> the acknowledgement (first time)
        self.bodies: dict[str, dict] = {}

    def switch(self, base: str) -> None:
        self.base = base
        self.client.base_url = base

    def step(self) -> httpx.Response:
        return self.client.get(f"/p/{self.token}/step.json")

    def view(self) -> dict:
        r = self.step()
        assert r.status_code == 200, r.text
        return r.json()

    def post(self, body: dict) -> httpx.Response:
        headers = {"Content-Type": "application/json", "Origin": self.base, "Referer": f"{self.base}/p/{self.token}/",
                   "X-CSRFToken": self.client.cookies.get("csrftoken", "")}
        r = self.client.post(f"/p/{self.token}/submit", headers=headers, content=json.dumps(body))
        if r.status_code == 200 and r.json().get("ok"):
            self.acked.setdefault(body["client_id"], r.json())
            self.bodies[body["client_id"]] = body
        return r

    def answer(self, view: dict, payload: dict | None = None) -> dict:
        if payload is None:
            payload = {"consent": True} if view["kind"] == "consent" else (
                {"environment": bots.ENVIRONMENT} if view["kind"] == "environment" else {})
        r = self.post({"client_id": uuid.uuid4().hex, "step": view["step"], "payload": payload})
        assert r.status_code == 200, r.text
        return r.json()

    def until_trial(self) -> dict:
        view = self.view()
        while view["kind"] != "trial":
            self.answer(view)
            view = self.view()
        return view

    def ws(self):
        return ws_connect(self.base.replace("http://", "ws://") + "/ws/playback/", origin=self.base, open_timeout=20)


def play_through(ws, token: str, timeout: float = 30.0) -> list[dict]:
    """hello, start, every live frame until ``end``; returns the frames."""
    ws.send(json.dumps({"type": "hello", "token": token}))
    ready = json.loads(ws.recv(timeout))
    assert ready["type"] == "ready", ready
    ws.send(json.dumps({"type": "start"}))
    frames = []
    while True:
        msg = json.loads(ws.recv(timeout))
        if msg["type"] == "end":
            return frames
        assert msg["type"] == "frame", msg
        frames.append(msg)
