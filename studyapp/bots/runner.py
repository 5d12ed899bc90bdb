"""Bot participants: run simulated people through a study over the real HTTP and websocket endpoints.

Like oTree's bots, they are how tests and benchmarks drive the whole system: a bot enters through the panel
link, asks the server where it is (``step.json``) and answers that step, plays each trial's streams over
``/ws/playback/`` exactly as a browser would (hello, start, the schedule or every live frame until ``end``, one
paint batch), answers with its observer model (``studyapp.bots.observers``) and submits with an idempotency key. A
submit that fails on the way (connection error, 5xx) is retried with the SAME ``client_id``; with
``duplicate_rate`` some acknowledged submits are deliberately sent again (one after the other, or two at once)
to show that a retry is acknowledged and stored once.

Nothing here touches the database: counts come from the acknowledgements; ``manage.py run_bots`` adds counts
from the database when it runs against its own. See docs/bots.md.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import websockets

from studyapp.bots import observers as bot_models

MAX_PAINT_ENTRIES = 2000  # playback.core.protocol.MAX_ENTRIES_PER_BATCH
ENVIRONMENT = {"user_agent": "PaceLab-bot/1", "viewport": {"width": 1280, "height": 800}, "refresh_hz": 60,
               "device": "desktop", "dpr": 1, "touch": False, "language": "en"}
DEFAULT_PARAMS = {"participant": "PROLIFIC_PID", "study": "STUDY_ID", "session": "SESSION_ID"}


class BotError(Exception):
    """Why a bot stopped before the end of its session."""


@dataclass
class RunConfig:
    url: str  # the server's base URL, e.g. http://127.0.0.1:8000
    study: str  # the study's slug
    n: int = 10
    concurrency: int = 10
    seed: int = 0
    population: bot_models.Population = field(default_factory=bot_models.Population)
    duplicate_rate: float = 0.0
    paint: bool = True
    language: str | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    params: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_PARAMS))  # the study's panel parameters
    timeout_s: float = 60.0
    retries: int = 8
    max_steps: int = 5000

    def __post_init__(self) -> None:
        if self.n < 0 or self.concurrency < 1:
            raise ValueError("n must be >= 0 and concurrency >= 1")
        if not 0 <= self.duplicate_rate <= 1:
            raise ValueError(f"duplicate_rate: must be between 0 and 1, got {self.duplicate_rate}")
        self.url = self.url.rstrip("/")

    @property
    def origin(self) -> str:
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def ws_url(self) -> str:
        parts = urlsplit(self.url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        return f"{scheme}://{parts.netloc}{parts.path}/ws/playback/"


@dataclass
class TrialRecord:
    """What one bot did in one trial (its own view of the truth)."""

    index: int
    type: str
    response: Any
    instructed: Any = None
    followed: bool | None = None
    chose_faster: bool | None = None
    p: float | None = None
    modes: list[str] = field(default_factory=list)
    tokens_per_s: list[float | None] = field(default_factory=list)
    chars_per_s: list[float | None] = field(default_factory=list)
    ttft_ms: list[float | None] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class BotResult:
    pid: str
    params: bot_models.BotParams
    token: str = ""
    state: str = "not_started"
    steps: int = 0
    error: str = ""
    trials: list[TrialRecord] = field(default_factory=list)
    posts: int = 0  # submit requests sent, retries and resends included
    retries: int = 0  # submits sent again after a connection error or 5xx
    resent: int = 0  # acknowledged submits deliberately sent again
    refused: int = 0  # 409s (stale step): the bot asked the server again
    replays: int = 0  # trials started again after a websocket failure
    retry_reasons: dict[str, int] = field(default_factory=dict)
    sent: set[str] = field(default_factory=set)  # client_ids submitted
    acked: dict[str, int] = field(default_factory=dict)  # client_id -> how often acknowledged as new (stored)
    duplicate_acks: int = 0
    step_ms: list[float] = field(default_factory=list)
    submit_ms: list[float] = field(default_factory=list)
    play_ms: list[float] = field(default_factory=list)
    paint_batches: int = 0
    painted: list[str] = field(default_factory=list)  # playback token of each acknowledged paint batch
    started_at: float = 0.0
    duration_s: float = 0.0
    end: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_attention(self) -> int:
        """Attention items this bot knows it failed: instructions it did not follow."""
        return sum(1 for t in self.trials if t.followed is False)


UNAVAILABLE = {  # the participant page's data-reason (templates/studyapp/unavailable.html)
    "full": "the study is full: its participant quotas are reached (run bots on a copy, manage.py copy_study, or "
            "raise limits.quotas in the study file)",
    "paused": "the study is paused", "closed": "the study is closed", "not_open": "the study is not open",
    "missing_panel_id": "the study requires panel parameters the bot did not send",
}


def _refusal(response: httpx.Response) -> str:
    """Why the participant link gave no session, as the page says it."""
    if response.status_code == 404:
        return "HTTP 404: no such study on this server"
    match = re.search(r'data-reason="([a-z_]+)"', response.text or "")
    if match:
        return UNAVAILABLE.get(match.group(1), f"the study is unavailable ({match.group(1)})")
    return f"HTTP {response.status_code}, no participant session"


def _now_ms() -> float:
    return time.perf_counter() * 1000.0


class Participant:
    """One bot going through one session over HTTP and websockets."""

    def __init__(self, config: RunConfig, pid: str, bot: bot_models.Bot, panel_session: str = "") -> None:
        self.config = config
        self.bot = bot
        # The panel's per-attempt session id (Prolific's SESSION_ID): a participant re-entering from another
        # browser proves with it that the panel id is theirs; a bot gets one, as a real participant does.
        self.panel_session = panel_session or uuid.uuid4().hex[:12]
        self.result = BotResult(pid=pid, params=bot.params)
        self.client: httpx.AsyncClient | None = None

    # --- HTTP -------------------------------------------------------------------------------------------------

    async def _enter(self) -> None:
        names = self.config.params
        query = {names.get("participant", "PROLIFIC_PID"): self.result.pid,
                 names.get("study", "STUDY_ID"): f"bots-{self.config.run_id}",
                 names.get("session", "SESSION_ID"): self.panel_session}
        if self.config.language:
            query["lang"] = self.config.language
        response = await self._request("GET", f"/s/{self.config.study}/", params=query)
        location = response.headers.get("location", "")
        if response.status_code not in (301, 302) or "/p/" not in location:
            raise BotError(f"enter: no session: {_refusal(response)}")
        self.result.token = location.rstrip("/").rsplit("/", 1)[-1]
        self.result.state = "active"

    async def _request(self, method: str, path: str, **kw) -> httpx.Response:
        """A request retried on connection errors and 5xx (GETs are safe to repeat; submits carry their key)."""
        assert self.client is not None
        delay = 0.2
        for attempt in range(self.config.retries + 1):
            try:
                response = await self.client.request(method, path, **kw)
            except httpx.TransportError as exc:
                if attempt == self.config.retries:
                    raise BotError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
                reason = type(exc).__name__
            else:
                if response.status_code < 500 or attempt == self.config.retries:
                    return response
                reason = f"HTTP {response.status_code}"
            if method == "POST":
                self.result.retries += 1
            self._retried(f"{method} {path.rsplit('/', 1)[-1] or 'enter'}: {reason}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 3.0)
        raise AssertionError("unreachable")

    def _retried(self, reason: str) -> None:
        self.result.retry_reasons[reason] = self.result.retry_reasons.get(reason, 0) + 1

    async def _step(self) -> dict[str, Any]:
        t = _now_ms()
        response = await self._request("GET", f"/p/{self.result.token}/step.json")
        self.result.step_ms.append(_now_ms() - t)
        if response.status_code != 200:
            raise BotError(f"step.json: HTTP {response.status_code}")
        return response.json()

    async def _post(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        assert self.client is not None
        token = self.result.token
        headers = {"X-CSRFToken": self.client.cookies.get("csrftoken", ""), "Origin": self.config.origin,
                   "Referer": f"{self.config.url}/p/{token}/"}
        t = _now_ms()
        self.result.posts += 1
        self.result.sent.add(body["client_id"])
        response = await self._request("POST", f"/p/{token}/submit", content=json.dumps(body),
                                       headers=headers | {"Content-Type": "application/json"})
        self.result.submit_ms.append(_now_ms() - t)
        try:
            data = response.json()
        except ValueError:
            raise BotError(f"submit: HTTP {response.status_code}, not JSON: {response.text[:200]}") from None
        if response.status_code == 200:
            if data.get("ack") != body["client_id"]:
                raise BotError(f"submit: acknowledged {data.get('ack')!r}, not {body['client_id']!r}")
            cid = body["client_id"]
            self.result.acked[cid] = self.result.acked.get(cid, 0) + (not data["duplicate"])
            self.result.duplicate_acks += bool(data["duplicate"])
        return response.status_code, data

    async def _submit(self, step: int, payload: dict[str, Any]) -> dict[str, Any] | None:
        """Submit an answer; ``None`` when the server says the step is stale (ask again where we are)."""
        body = {"client_id": uuid.uuid4().hex, "step": step, "payload": payload}
        rng = self.bot.rng
        duplicate = rng.random() < self.config.duplicate_rate
        if duplicate and rng.random() < 0.5:  # two at once: one is stored, the other acknowledged as a duplicate
            replies = await asyncio.gather(self._post(body), self._post(body))
            self.result.resent += 1
        else:
            replies = [await self._post(body)]
            if duplicate and replies[0][0] == 200:
                replies.append(await self._post(body))
                self.result.resent += 1
        for status, data in replies:
            if status == 409:
                self.result.refused += 1
                if data.get("code") == "not_active":
                    return data
                return None
            if status != 200:
                raise BotError(f"submit step {step}: HTTP {status} {data.get('code')}: {data.get('error')}")
        return replies[0][1]

    # --- trials -----------------------------------------------------------------------------------------------

    async def _recv(self, ws) -> dict[str, Any]:
        msg = json.loads(await asyncio.wait_for(ws.recv(), self.config.timeout_s))
        if msg.get("type") == "error":
            raise BotError(f"playback: {msg.get('error')}")
        return msg

    async def _play(self, playback: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """Play one stream over the websocket; returns its frames and the delivery mode."""
        t_play = _now_ms()
        async with websockets.connect(self.config.ws_url, origin=self.config.origin, max_size=None,
                                      open_timeout=self.config.timeout_s) as ws:
            await ws.send(json.dumps({"type": "hello", "token": playback["token"]}))
            ready = await self._recv(ws)
            if ready.get("type") != "ready":
                raise BotError(f"playback: expected ready, got {ready.get('type')!r}")
            await ws.send(json.dumps({"type": "start"}))
            t0 = _now_ms()
            frames: list[dict[str, Any]] = []
            entries: list[dict[str, Any]] = []
            while True:
                msg = await self._recv(ws)
                kind = msg.get("type")
                if kind == "schedule":  # a long one comes in parts, in order
                    frames = [*frames, *msg["frames"]] if msg.get("part", 1) > 1 else list(msg["frames"])
                    # The bot paces the schedule perfectly: each frame is received and painted on time.
                    entries = [{"seq": f["seq"], "t_ms": f["t_ms"], "recv_ms": f["t_ms"], "paint_ms": f["t_ms"],
                                "chars": len(f["text"]), "hidden": False} for f in frames]
                elif kind == "frame":
                    recv = round(_now_ms() - t0, 3)
                    frames.append(msg)
                    entries.append({"seq": msg["seq"], "t_ms": msg["t_ms"], "recv_ms": recv, "paint_ms": recv,
                                    "chars": len(msg["text"]), "hidden": False, "sent_ms": msg["sent_ms"]})
                elif kind == "end":
                    break
            if self.config.paint and entries:
                for batch, start in enumerate(range(0, len(entries), MAX_PAINT_ENTRIES), 1):
                    await self._paint(ws, batch, entries[start:start + MAX_PAINT_ENTRIES])
                    self.result.painted.append(playback["token"])
        self.result.play_ms.append(_now_ms() - t_play)
        return frames, ready["mode"]

    async def _paint(self, ws, batch: int, entries: list[dict[str, Any]]) -> None:
        """Send one paint batch until it is acknowledged (the server asks for it again when it could not store
        it; a repeat of a stored batch is acknowledged without storing it twice)."""
        message = json.dumps({"type": "paint", "batch": batch, "entries": entries})
        delay = 0.2
        for attempt in range(self.config.retries + 1):
            await ws.send(message)
            reply = json.loads(await asyncio.wait_for(ws.recv(), self.config.timeout_s))
            if reply.get("type") == "ack" and reply.get("batch") == batch:
                self.result.paint_batches += 1
                return
            error = str(reply.get("error", reply))
            if "send it again" not in error or attempt == self.config.retries:
                raise BotError(f"paint: batch {batch}: {error}")
            self._retried(f"paint: {error}")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 3.0)

    async def _trial(self, view: dict[str, Any]) -> tuple[dict[str, Any], TrialRecord]:
        trial = view["trial"]
        perceived, modes = [], []
        for playback in trial.get("playbacks") or []:
            frames, mode = await self._play(playback)
            perceived.append(bot_models.Perceived.from_frames(frames))
            modes.append(mode)
        if not perceived:
            raise BotError(f"trial {trial['index']}: the server listed no playbacks")
        decision = self.bot.trial(trial, perceived)
        record = TrialRecord(index=trial["index"], type=trial["type"], response=decision.payload["response"],
                             instructed=decision.instructed, followed=decision.followed,
                             chose_faster=decision.chose_faster, p=decision.p, modes=modes,
                             tokens_per_s=[p.tokens_per_s for p in perceived],
                             chars_per_s=[p.chars_per_s for p in perceived], ttft_ms=[p.ttft_ms for p in perceived])
        return decision.payload, record

    # --- the journey ------------------------------------------------------------------------------------------

    async def _answer(self, view: dict[str, Any]) -> tuple[dict[str, Any], TrialRecord | None]:
        kind = view["kind"]
        if kind == "consent":
            return {"consent": True}, None
        if kind == "environment":
            return {"environment": ENVIRONMENT | {"language": view.get("language", "en")}}, None
        if kind == "questionnaire":
            return self.bot.questionnaire(view.get("items") or []), None
        if kind == "trial":
            return await self._trial(view)
        return {}, None

    async def run(self) -> BotResult:
        r = self.result
        r.started_at = time.perf_counter()
        timeout = httpx.Timeout(self.config.timeout_s)
        try:
            async with httpx.AsyncClient(base_url=self.config.url, timeout=timeout, follow_redirects=False) as client:
                self.client = client
                await self._enter()
                for _ in range(self.config.max_steps):
                    view = await self._step()
                    r.state = view["state"]
                    if view["state"] != "active":
                        r.end = {k: view.get(k) for k in ("code", "redirect_url")}
                        break
                    try:
                        payload, record = await self._answer(view)
                    except (OSError, websockets.WebSocketException) as exc:  # the trial starts again
                        r.replays += 1
                        if r.replays > self.config.retries:
                            raise BotError(f"playback failed {r.replays} times: {type(exc).__name__}: {exc}") from None
                        await asyncio.sleep(0.2)
                        continue
                    ack = await self._submit(view["step"], payload)
                    if ack is not None and ack.get("ok"):
                        r.steps += 1
                        if record is not None:
                            r.trials.append(record)
                else:
                    raise BotError(f"no end after {self.config.max_steps} steps")
        except BotError as exc:
            r.error = str(exc)
        except (OSError, websockets.WebSocketException, httpx.HTTPError, KeyError, ValueError) as exc:
            r.error = f"{type(exc).__name__}: {exc}"
        finally:
            r.duration_s = time.perf_counter() - r.started_at
        return r


# --- running many ---------------------------------------------------------------------------------------------


def bot_pid(run_id: str, i: int) -> str:
    return f"bot-{run_id}-{i:04d}"


async def run(config: RunConfig) -> list[BotResult]:
    """Run ``config.n`` bots, at most ``config.concurrency`` at a time; one result per bot, in bot order."""
    bots = bot_models.population_bots(config.population, config.n, config.seed)
    gate = asyncio.Semaphore(config.concurrency)

    async def one(i: int, bot: bot_models.Bot) -> BotResult:
        async with gate:
            return await Participant(config, bot_pid(config.run_id, i), bot).run()

    return list(await asyncio.gather(*(one(i, b) for i, b in enumerate(bots))))


def _merged(counts) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"n": 0, "p50": None, "p95": None, "max": None}
    s = sorted(values)

    def q(p: float) -> float:
        pos = (len(s) - 1) * p
        lo = math.floor(pos)
        hi = min(lo + 1, len(s) - 1)
        return round(s[lo] + (s[hi] - s[lo]) * (pos - lo), 2)

    return {"n": len(s), "p50": q(0.5), "p95": q(0.95), "max": round(s[-1], 2)}


def summary(config: RunConfig, results: list[BotResult], wall_s: float, *, truth: bool = False) -> dict[str, Any]:
    """The run in numbers, counted from the acknowledgements (``counted_from: "acks"``)."""
    states: dict[str, int] = {}
    for r in results:
        states[r.state] = states.get(r.state, 0) + 1
    acked = sum(len(r.acked) for r in results)
    out: dict[str, Any] = {
        "study": config.study, "url": config.url, "run_id": config.run_id, "seed": config.seed,
        "started": sum(1 for r in results if r.token),
        "completed": states.get("completed", 0),
        "responses_sent": sum(len(r.sent) for r in results),
        "responses_acked": acked,
        "responses_stored": acked,  # an acknowledged answer is stored
        "duplicates": sum(max(0, new - 1) for r in results for new in r.acked.values()),  # stored twice
        "duplicate_acks": sum(r.duplicate_acks for r in results),
        "resent": sum(r.resent for r in results),
        "submit_requests": sum(r.posts for r in results),
        "retries": sum(r.retries for r in results),
        "retry_reasons": _merged(r.retry_reasons for r in results),
        "stale_refusals": sum(r.refused for r in results),
        "trial_replays": sum(r.replays for r in results),
        "paint_batches": sum(r.paint_batches for r in results),
        "trials": sum(len(r.trials) for r in results),
        "failed_attention_known": sum(r.failed_attention for r in results),
        "errors": sum(1 for r in results if r.error),
        "error_messages": [{"pid": r.pid, "error": r.error} for r in results if r.error][:20],
        "states": states,
        "counted_from": "acks",
        "timing": {"wall_s": round(wall_s, 2), "bot_s": _stats([r.duration_s for r in results]),
                   "step_json_ms": _stats([x for r in results for x in r.step_ms]),
                   "submit_ms": _stats([x for r in results for x in r.submit_ms]),
                   "play_ms": _stats([x for r in results for x in r.play_ms])},
        "population": config.population.to_dict(),
    }
    if truth:
        out["bots"] = [{"pid": r.pid, **r.params.to_dict(), "state": r.state,
                        "failed_attention_known": r.failed_attention} for r in results]
    return out


def run_sync(config: RunConfig) -> tuple[list[BotResult], float]:
    """Run the bots from synchronous code (a command, a test); returns the results and the wall time."""
    t = time.perf_counter()
    results = asyncio.run(run(config))
    return results, time.perf_counter() - t
