"""How bot participants answer: a population of simulated observers with known parameters (pure, no Django).

A bot perceives only what a browser would: the frames it received over the playback websocket. From them it
measures the stream with ``playback.core.metrics`` (decode rate in tokens/s, characters/s, TTFT) and answers with
its own observer, whose parameters are drawn around population values. Because the truth is known, the
analysis can be checked against it (thresholds drawn from ``Normal(mu, sd)`` on the observer's axis, which is
what ``analysis.stats.population`` fits).

- acceptability: ``p(yes) = guess + (1 − guess − lapse)·F(slope·(u − t_u))`` on the observer's axis, where
  ``u`` is the decode rate and ``t_u`` the bot's threshold raised by ``ttft_shift`` axis units per second of
  TTFT (so every TTFT level has its own threshold, still Normal across bots with the same SD);
- rating: the share ``F(rating_gain·(log10 cps − log10 rating_mid) − rating_ttft·ttft_s) + offset + noise``
  of the scale, clipped to it (and rounded on a Likert scale);
- 2AFC: perceived speed ``v = log10 cps − afc_ttft·ttft_s`` per stream; the first is chosen with
  ``lapse/2 + (1 − lapse)·F(afc_slope·(v1 − v2))``;
- instructed items ("please choose 2") are followed with probability ``attentive`` (the instruction is
  read from the question text: a bot cannot see the expected value), otherwise answered as any trial;
- questionnaires get valid values.

Reproducibility: bot ``i`` of a run seeded ``s`` draws everything from ``np.random.SeedSequence(s,
spawn_key=(i, ...))`` (``bot_seeds``): its parameters from one child, and each answer from a child keyed by what
it was shown (``trial_key``: the trial's type, block, question, scale and each stream's render settings and
measured rate, TTFT and length) and how many times it has seen that before. So the same seed gives every bot the
same answer to the same stimulus whatever the order the server shows them in, the order bots arrive in, the
concurrency, or which between-subjects group a bot lands in (the delivery mode is not something a bot perceives).

See docs/bots.md for every parameter.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np

from playback.core import metrics
from playback.core.stream import Piece, Stream
from studyapp.design.adaptive.observer import Observer
from studyapp.design.adaptive.psychometric import from_axis, to_axis
from studyapp.design.scales import is_likert, scale_range

FAST_LEVEL = 1000.0  # tokens/s (or chars/s) of a stream that arrives all at once: perceived as instant
Rng = np.random.Generator | random.Random  # Population.draw takes either (random.Random: older callers)


class ModelError(ValueError):
    """A bad observer-model parameter; ``str()`` names it."""


@dataclass(frozen=True)
class Perceived:
    """What a bot measured from the frames it received (``None`` where a stream has a single content piece)."""

    tokens_per_s: float | None
    chars_per_s: float | None
    ttft_ms: float | None
    chars: int

    @classmethod
    def from_frames(cls, frames: Iterable[Mapping[str, Any]]) -> Perceived:
        """Measure a received schedule or list of live frames (``{seq, t_ms, text, channel, tokens}``)."""
        ordered = sorted(frames, key=lambda f: f["seq"])
        stream = Stream(tuple(Piece(text=f["text"], t_ms=float(f["t_ms"]), channel=f.get("channel", "content"),
                                    tokens=int(f.get("tokens", 1))) for f in ordered))
        m = metrics.compute(stream)
        return cls(tokens_per_s=m.tokens_per_s, chars_per_s=m.chars_per_s, ttft_ms=m.ttft_ms, chars=m.chars)

    @property
    def ttft_s(self) -> float:
        return (self.ttft_ms or 0.0) / 1000.0


@dataclass(frozen=True)
class Population:
    """Population values of the bots' observer model; each bot draws its own parameters around them."""

    # acceptability (decode rate in tokens/s)
    threshold: float = 20.0  # the population mean threshold, as a level (tokens/s) at zero TTFT
    threshold_sd: float = 0.15  # SD of bots' thresholds in axis units (log10 units on a log axis)
    slope: float = 5.0  # per axis unit
    slope_sd: float = 0.2  # SD of log(slope) across bots
    guess: float = 0.0
    lapse: float = 0.02
    function: str = "logistic"
    axis: str = "log"
    ttft_shift: float = 0.1  # axis units the threshold rises per second of TTFT
    # ratings (characters/s)
    rating_mid: float = 40.0  # chars/s rated mid-scale
    rating_mid_sd: float = 0.1  # SD of log10(rating_mid) across bots
    rating_gain: float = 3.0  # per log10 unit of chars/s
    rating_ttft: float = 0.5  # logit units lost per second of TTFT
    rating_offset_sd: float = 0.05  # SD of a bot's personal offset, as a share of the scale
    rating_noise: float = 0.1  # SD of trial-to-trial noise, as a share of the scale
    # 2AFC (perceived speed v = log10 chars/s − afc_ttft·TTFT s)
    afc_slope: float = 10.0  # per log10 unit of perceived-speed difference
    afc_slope_sd: float = 0.2  # SD of log(afc_slope) across bots
    afc_ttft: float = 0.2
    # attention and behaviour
    attentive: float = 0.97  # probability of following an instruction in a question
    rt_median_ms: float = 1200.0
    rt_sd_log: float = 0.4
    reading_cps: float = 15.0

    def __post_init__(self) -> None:
        Observer(threshold=self.threshold, slope=self.slope, guess=self.guess, lapse=self.lapse,
                 function=self.function, axis=self.axis)  # checks function, axis, guess and lapse
        positive = ("threshold", "slope", "rating_mid", "rating_gain", "afc_slope", "rt_median_ms", "reading_cps")
        for name in positive:
            if not getattr(self, name) > 0:
                raise ModelError(f"{name}: must be > 0, got {getattr(self, name)!r}")
        for name in ("threshold_sd", "slope_sd", "rating_mid_sd", "rating_offset_sd", "rating_noise",
                     "afc_slope_sd", "rt_sd_log", "ttft_shift", "rating_ttft", "afc_ttft"):
            if not getattr(self, name) >= 0:
                raise ModelError(f"{name}: must be >= 0, got {getattr(self, name)!r}")
        if not 0 <= self.attentive <= 1:
            raise ModelError(f"attentive: must be between 0 and 1, got {self.attentive!r}")

    @classmethod
    def from_config(cls, obj: Any) -> Population:
        """From a mapping of parameter names (a model file); unknown names and bad values are refused."""
        if not isinstance(obj, Mapping):
            raise ModelError("model: must be a mapping of parameter names to values")
        known = {f.name: f.type for f in fields(cls)}
        for key, value in obj.items():
            if key not in known:
                raise ModelError(f"{key}: not a model parameter; known: {', '.join(known)}")
            if key in ("function", "axis"):
                if not isinstance(value, str):
                    raise ModelError(f"{key}: must be text")
            elif isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ModelError(f"{key}: must be a number, got {value!r}")
        try:
            return cls(**{k: (v if k in ("function", "axis") else float(v)) for k, v in obj.items()})
        except ModelError:
            raise
        except ValueError as exc:
            raise ModelError(str(exc)) from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def draw(self, rng: Rng) -> BotParams:
        """One bot's parameters: threshold Normal on the axis, slopes log-normal, a personal rating offset."""
        gauss = _gauss(rng)
        t_u = float(to_axis(self.threshold, self.axis)) + gauss(0.0, self.threshold_sd)
        if self.axis == "linear":
            t_u = max(t_u, 1e-3)
        return BotParams(
            threshold=float(from_axis(t_u, self.axis)),
            slope=self.slope * math.exp(gauss(0.0, self.slope_sd)),
            guess=self.guess, lapse=self.lapse, function=self.function, axis=self.axis, ttft_shift=self.ttft_shift,
            rating_mid=self.rating_mid * 10 ** gauss(0.0, self.rating_mid_sd), rating_gain=self.rating_gain,
            rating_ttft=self.rating_ttft, rating_offset=gauss(0.0, self.rating_offset_sd),
            rating_noise=self.rating_noise,
            afc_slope=self.afc_slope * math.exp(gauss(0.0, self.afc_slope_sd)), afc_ttft=self.afc_ttft,
            attentive=self.attentive, rt_median_ms=self.rt_median_ms, rt_sd_log=self.rt_sd_log,
            reading_cps=self.reading_cps,
        )


@dataclass(frozen=True)
class BotParams:
    """One bot's true parameters (printed with ``run_bots --truth``)."""

    threshold: float
    slope: float
    guess: float
    lapse: float
    function: str
    axis: str
    ttft_shift: float
    rating_mid: float
    rating_gain: float
    rating_ttft: float
    rating_offset: float
    rating_noise: float
    afc_slope: float
    afc_ttft: float
    attentive: float
    rt_median_ms: float
    rt_sd_log: float
    reading_cps: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def observer(self, ttft_s: float = 0.0) -> Observer:
        """The acceptability observer at a given TTFT (its threshold raised by ``ttft_shift`` per second)."""
        t_u = float(to_axis(self.threshold, self.axis)) + self.ttft_shift * ttft_s
        return Observer(threshold=float(from_axis(t_u, self.axis)), slope=self.slope, guess=self.guess,
                        lapse=self.lapse, function=self.function, axis=self.axis)


def _gauss(rng: Rng):
    """``gauss(mu, sd)`` of either kind of generator."""
    if isinstance(rng, np.random.Generator):
        return lambda mu, sd: float(rng.normal(mu, sd))
    return rng.gauss


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0)))


def perceived_speed(p: Perceived, afc_ttft: float) -> float:
    """The 2AFC decision variable: log10 chars/s minus a TTFT penalty (log10 units per second)."""
    cps = p.chars_per_s if p.chars_per_s and p.chars_per_s > 0 else FAST_LEVEL
    return math.log10(cps) - afc_ttft * p.ttft_s


# --- instructions in the question text ------------------------------------------------------------------------

_INSTRUCTION = re.compile(
    r"(?:choose|select|pick|click|press|tap|answer|respond(?:\s+with)?|选择|选|点击|回答)\s*[:：]?\s*(?:the\s+)?"
    r"(?:[\"'“‘「(（]\s*([ab])\s*[\"'”’」)）]|[\"'“‘「(（]?\s*(\d+\b|yes\b|no\b|first\b|second\b|是|否|第一个|第二个))",
    re.IGNORECASE,
)
_WORDS = {"yes": "yes", "是": "yes", "no": "no", "否": "no", "first": "a", "第一个": "a", "a": "a",
          "second": "b", "第二个": "b", "b": "b"}


def instruction(question: Any, trial_type: str, scale: Mapping[str, Any] | None = None) -> Any:
    """The answer an instruction in the question asks for ("please choose 2" → 2), or ``None`` when the
    question instructs nothing this trial type can answer."""
    if not isinstance(question, str):
        return None
    match = _INSTRUCTION.search(question)
    if match is None:
        return None
    word = (match.group(1) or match.group(2)).lower()
    if trial_type == "rating":
        if not word.isdigit():
            return None
        value = int(word)
        low, high = scale_range(scale)
        return value if low <= value <= high else None
    wanted = _WORDS.get(word)
    if trial_type == "acceptability" and wanted in ("yes", "no"):
        return wanted
    if trial_type == "afc" and wanted in ("a", "b"):
        return wanted
    return None


# --- answers --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Decision:
    """A bot's answer to a trial and what it knows about it (for checking the server's verdicts)."""

    payload: dict[str, Any]
    instructed: Any = None  # the instruction the bot read in the question, if any
    followed: bool | None = None  # whether it followed it
    chose_faster: bool | None = None  # 2AFC: whether it chose the stream with the higher measured speed
    p: float | None = None  # the model's probability of the answer it could give ("yes", or the first stream)


_MASK64 = (1 << 64) - 1


def bot_seeds(seed: int, index: int) -> np.random.SeedSequence:
    """The seed sequence of bot ``index`` in a run seeded ``seed`` (``SeedSequence(seed).spawn(n)[index]``,
    without depending on ``n``); every draw of that bot comes from children of it."""
    return np.random.SeedSequence(int(seed) & _MASK64, spawn_key=(int(index),))


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> tuple[int, ...]:
    """A text as four 32-bit words (for a seed sequence's spawn key). Remembered: every bot hashes the same trial
    keys."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


def _measure(x: float | None) -> str:
    return "-" if x is None else format(float(x), ".9g")


def _streams(trial: Mapping[str, Any], perceived: Sequence[Perceived]) -> list[list[Any]]:
    settings = list(trial.get("stimuli") or [])
    return [[{k: (settings[i] if i < len(settings) else {}).get(k) for k in ("strategy", "indicator", "language")},
             _measure(p.tokens_per_s), _measure(p.chars_per_s), _measure(p.ttft_ms), p.chars]
            for i, p in enumerate(perceived)]


def _canonical(trial: Mapping[str, Any], perceived: Sequence[Perceived]) -> tuple[list[str], bool]:
    """The streams as text, a 2AFC pair in a fixed order (the same pair shown either way round is one stimulus
    to the bot), and whether that order is the reverse of the one shown."""
    streams = [json.dumps(x, sort_keys=True, ensure_ascii=False, default=str) for x in _streams(trial, perceived)]
    if trial.get("type") == "afc" and len(streams) == 2 and streams[1] < streams[0]:
        return [streams[1], streams[0]], True
    return streams, False


def trial_key(trial: Mapping[str, Any], perceived: Sequence[Perceived]) -> str:
    """What a bot can tell about a trial, as text: its type, block, question, scale and, per stream, the render
    settings it was told (``trial["stimuli"]``: strategy, indicator, language; not the delivery mode) and what
    it measured (a 2AFC pair in a fixed order). Two trials with the same key are the same stimulus to the bot;
    its answers are drawn per key."""
    streams, _ = _canonical(trial, perceived)
    return json.dumps([trial.get("type"), trial.get("block"), bool(trial.get("practice")), trial.get("question"),
                       trial.get("scale"), streams], sort_keys=True, ensure_ascii=False, default=str)


class Bot:
    """One simulated participant: its parameters and its random sources.

    Answers come from generators keyed by the stimulus (``trial_key``) and the how-many-th showing of it, all
    children of the bot's ``seeds``; so they are the same for the same seeds whatever order the trials come
    in. ``rng`` is for behaviour that never changes an answer (the runner's deliberate resends). A bot made
    from a bare generator (``Bot(params, rng)``) derives its seeds from one draw of it.
    """

    def __init__(self, params: BotParams, rng: Rng | None = None, *,
                 seeds: np.random.SeedSequence | None = None) -> None:
        if seeds is None:
            if rng is None:
                raise ValueError("Bot: give rng or seeds")
            entropy = int(rng.integers(0, 2**63)) if isinstance(rng, np.random.Generator) else rng.getrandbits(63)
            seeds = np.random.SeedSequence(entropy)
        self.params = params
        self.seeds = seeds
        self.rng = self.generator("behaviour")
        self._seen: Counter[str] = Counter()
        self._decisions: dict[Any, Decision] = {}
        self._questionnaires = 0
        self._observers: dict[float, Observer] = {}

    def generator(self, *labels: Any) -> np.random.Generator:
        """A generator for one use, keyed by ``labels`` under this bot's seeds (the same labels, the same draws)."""
        key = tuple(w for label in labels for w in _words(str(label)))
        return np.random.default_rng(np.random.SeedSequence(self.seeds.entropy,
                                                            spawn_key=(*self.seeds.spawn_key, *key)))

    @staticmethod
    def _response_ms(p: BotParams, z: float) -> float:
        return round(min(p.rt_median_ms * math.exp(z * p.rt_sd_log), 60_000.0), 1)

    def response_ms(self) -> float:
        """A response time drawn from the behaviour generator (answers draw their own per trial)."""
        return self._response_ms(self.params, float(self.rng.standard_normal()))

    def p_accept(self, p: Perceived) -> float:
        level = p.tokens_per_s if p.tokens_per_s and p.tokens_per_s > 0 else FAST_LEVEL
        ttft_s = p.ttft_s
        observer = self._observers.get(ttft_s)
        if observer is None:  # one per TTFT the bot meets (a handful), not one per trial
            observer = self._observers[ttft_s] = self.params.observer(ttft_s)
        return observer.p_yes(level)

    def rating_share(self, p: Perceived) -> float:
        """The noiseless share of the scale this bot gives a stream (before offset and noise)."""
        b = self.params
        cps = p.chars_per_s if p.chars_per_s and p.chars_per_s > 0 else FAST_LEVEL
        return _sigmoid(b.rating_gain * (math.log10(cps) - math.log10(b.rating_mid)) - b.rating_ttft * p.ttft_s)

    def rate(self, p: Perceived, scale: Mapping[str, Any] | None, noise: float | None = None) -> int | float:
        """The rating given a standard-normal ``noise`` draw (drawn from the behaviour generator when omitted)."""
        b = self.params
        z = float(self.rng.standard_normal()) if noise is None else noise
        share = min(max(self.rating_share(p) + b.rating_offset + z * b.rating_noise, 0.0), 1.0)
        low, high = scale_range(scale)
        if is_likert(scale):
            return 1 + round(share * (high - low))
        return round(low + share * (high - low), 2)

    def p_first(self, first: Perceived, second: Perceived) -> float:
        b = self.params
        diff = perceived_speed(first, b.afc_ttft) - perceived_speed(second, b.afc_ttft)
        return b.lapse / 2 + (1 - b.lapse) * _sigmoid(b.afc_slope * diff)

    def trial(self, trial: Mapping[str, Any], perceived: list[Perceived]) -> Decision:
        """The answer to a trial view (``step_view()['trial']``) given what was measured of each stream.

        Drawn from ``generator("trial", trial_key(...), k)`` for the k-th showing of that stimulus; a trial
        answered again (same ``index``, after a refused submit) gets the same answer.
        """
        index = trial.get("index")
        if index is not None and index in self._decisions:
            return self._decisions[index]
        key = trial_key(trial, perceived)
        rng = self.generator("trial", key, self._seen[key])
        self._seen[key] += 1
        # always the same four draws, in this order, whatever the trial type
        u_follow, z_rt, u_answer, z_rating = rng.random(), rng.standard_normal(), rng.random(), rng.standard_normal()
        kind, scale = trial["type"], trial.get("scale")
        instructed = instruction(trial.get("question"), kind, scale)
        follow = instructed is not None and u_follow < self.params.attentive
        extra: dict[str, Any] = {"response_ms": self._response_ms(self.params, float(z_rt))}
        if trial.get("comment") == "required":
            extra["comment"] = "bot comment"
        chose_faster = p = None
        if kind == "acceptability":
            p = self.p_accept(perceived[0])
            response: Any = "yes" if u_answer < p else "no"
        elif kind == "rating":
            response = self.rate(perceived[0], scale, noise=float(z_rating))
        elif kind == "afc":
            p = self.p_first(perceived[0], perceived[1])
            # the draw decides between the pair's streams in their fixed order, so the same pair shown the other
            # way round gets the same stream chosen (p_first is symmetric: p(x, y) = 1 − p(y, x))
            swapped = _canonical(trial, perceived)[1]
            first_of_pair = u_answer < (1.0 - p if swapped else p)
            response = "a" if first_of_pair != swapped else "b"
            v = [perceived_speed(x, self.params.afc_ttft) for x in perceived[:2]]
            chose_faster = (v[0] >= v[1]) == (response == "a") if v[0] != v[1] else None
        elif kind == "reading":
            chars = perceived[0].chars if perceived else 0
            response = "done"
            extra["reading_ms"] = round(1000.0 * chars / self.params.reading_cps, 1)
        else:
            raise ModelError(f"trial type {kind!r}: the bots cannot answer it")
        if follow:
            response = instructed
        payload = {"response": response, **extra}
        followed = None if instructed is None else response == instructed
        decision = Decision(payload=payload, instructed=instructed, followed=followed, chose_faster=chose_faster, p=p)
        if index is not None:
            self._decisions[index] = decision
        return decision

    def questionnaire(self, items: list[Mapping[str, Any]]) -> dict[str, Any]:
        """Valid answers to every item (optional ones sometimes left out)."""
        rng = self.generator("questionnaire", self._questionnaires)
        self._questionnaires += 1
        out: dict[str, Any] = {}
        for item in items:
            if not item.get("required", True) and rng.random() < 0.3:
                continue
            kind = item["type"]
            options = [o["value"] for o in item.get("options", [])]
            if kind == "likert":
                out[item["id"]] = int(rng.integers(1, int(item.get("points", 5)) + 1))
            elif kind == "single_choice":
                out[item["id"]] = options[int(rng.integers(len(options)))]
            elif kind == "multiple_choice":
                k = int(rng.integers(1, len(options) + 1))
                out[item["id"]] = [options[i] for i in rng.choice(len(options), size=k, replace=False)]
            elif kind == "number":
                low, high = item.get("min", 0), item.get("max", 100)
                value = float(rng.uniform(low, high))
                out[item["id"]] = round(value) if isinstance(low, int) and isinstance(high, int) else value
            else:
                out[item["id"]] = "bot"[: int(item.get("max_length", 2000))]
        return {"answers": out}


def make_bot(population: Population, seed: int, index: int) -> Bot:
    """Bot ``index`` of a run seeded ``seed``: the same whatever ``n``, order or concurrency."""
    seeds = bot_seeds(seed, index)
    params = population.draw(np.random.default_rng(np.random.SeedSequence(seeds.entropy,
                                                                          spawn_key=(*seeds.spawn_key, 0))))
    return Bot(params, seeds=seeds)


def population_bots(population: Population, n: int, seed: int) -> list[Bot]:
    """``n`` bots with parameters drawn from ``population``; the same seed gives the same bots and answers."""
    return [make_bot(population, seed, i) for i in range(n)]


def with_overrides(population: Population, **changes: Any) -> Population:
    """A copy with some parameters changed (command-line shortcuts)."""
    return replace(population, **{k: v for k, v in changes.items() if v is not None})
