"""Simulated studies with a known population, through the real analysis path (pure Python, no Django).

A simulated study is what a real one would be from the tidy trial frame on: each participant's journey is the
server's (``studyapp.journey.steps.build_plan``: the same blocks, trials, orders, attention checks), each stream is the
one the server would play (``studyapp.design.plan.trial_streams``), the bot measures it as it would from the frames it
received (``bot_models.Perceived.from_frames``) and answers with its own observer (``bot_models.Bot``), the answers
are stored as the server stores them (``studyapp.journey.responses.trial_value``, attention verdicts, session flags),
and the frame is built by the same code as ``analysis.selectors.study_frame`` (``analysis.tables.tidy.build``). So
this fast path and a real ``run_bots`` run give the same answer columns for the same seed and stimuli
(tests/analysis/test_simulate_bots.py); what it leaves out is the network, the database and the paint logs.

Bots are drawn as ``run_bots`` draws them (``bot_models.population_bots(population, n, seed)``), and each answers
its journey's steps in order with its own generator, consuming it exactly as ``studyapp.bots.runner`` does (one draw per
submit for the duplicate decision, the questionnaire's draws), so bot ``i`` of a seed answers the same here and
there.

The truth (``truth``) is computed on the analysis's own level axis: the nominal level of the condition (the factor
the pipeline fits, e.g. rate), mapped from what the bots perceive (measured tokens/s and TTFT) by interpolation,
so a stream whose measured rate differs a little from its nominal one does not bias the check.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

from analysis.stats import pipeline
from analysis.tables import tidy
from playback.core import protocol
from studyapp.bots import observers as bot_models
from studyapp.design import counterbalance
from studyapp.design import plan as design_mod
from studyapp.design.adaptive.psychometric import cdf, cdf_inverse
from studyapp.journey import responses
from studyapp.journey import steps as journey

# studyapp.bots.runner draws ``bot.rng.random()`` once per submit (its duplicate decision). While answers came from that
# same generator this draw had to be mirrored; with answers drawn per stimulus from their own generators it is
# harmless (``bot.rng`` is then for behaviour only), so the fast path mirrors it either way.
SUBMIT_DUPLICATE_DRAW = True


# --- populations ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mixture:
    """Bots drawn from several populations: bot ``i`` belongs to component ``i mod len`` in proportion to the
    weights (a deterministic interleave, so every study has the mixture's shares to within one bot)."""

    components: tuple[bot_models.Population, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.components) != len(self.weights) or not self.components:
            raise ValueError("a mixture needs one weight per component")
        if any(w <= 0 for w in self.weights):
            raise ValueError("mixture weights must be > 0")

    def component_of(self, n: int) -> list[int]:
        """Each bot's component: the largest-remainder apportionment of ``n`` bots, interleaved."""
        w = np.asarray(self.weights, float) / sum(self.weights)
        out, counts = [], np.zeros(len(w))
        for i in range(n):
            target = w * (i + 1)
            c = int(np.argmax(target - counts))
            counts[c] += 1
            out.append(c)
        return out


PopulationLike = bot_models.Population | Mixture


def bots_for(population: PopulationLike, n: int, seed: int) -> list[bot_models.Bot]:
    """The ``n`` bots a ``run_bots --seed`` run would use (a mixture: bot ``i`` from its component's draw)."""
    if isinstance(population, bot_models.Population):
        return bot_models.population_bots(population, n, seed)
    drawn = [bot_models.population_bots(p, n, seed) for p in population.components]
    return [drawn[c][i] for i, c in enumerate(population.component_of(n))]


# --- one simulated study -------------------------------------------------------------------------------------


@dataclass
class _Streams:
    """Each trial's streams and what a bot perceives of them, computed once per distinct stimulus set."""

    streams: dict[str, tuple] = field(default_factory=dict)
    perceived: dict[str, list[bot_models.Perceived]] = field(default_factory=dict)
    stimuli: dict[str, tuple[tuple, list[dict]]] = field(default_factory=dict)

    @staticmethod
    def key(trial: design_mod.TrialSpec) -> str:
        """Within one study a condition id and its presentation order fix the streams."""
        return f"{trial.condition}|{trial.order}"

    def of(self, trial: design_mod.TrialSpec) -> tuple:
        key = self.key(trial)
        if key not in self.streams:
            self.streams[key] = tuple(design_mod.trial_streams(trial))
        return self.streams[key]

    def perceive(self, trial: design_mod.TrialSpec) -> list[bot_models.Perceived]:
        key = self.key(trial)
        if key not in self.perceived:
            self.perceived[key] = [
                bot_models.Perceived.from_frames([{"seq": f.seq, "t_ms": f.t_ms, "text": f.text,
                                                   "channel": f.channel, "tokens": f.tokens}
                                                  for f in protocol.frames_of(s)])
                for s in self.of(trial)]
        return self.perceived[key]

    def spec(self, trial: design_mod.TrialSpec) -> dict[str, Any]:
        """``trial.to_dict()``, its stimuli serialised once per stimulus set (most of ``to_dict``'s cost, and the
        same for every participant shown that condition in that order). The stimulus dicts are shared between
        the trials' specs, which are read, never changed; a stimulus set that differs from the remembered one
        under the same key is serialised afresh."""
        key = self.key(trial)
        known = self.stimuli.get(key)
        if known is None or not (known[0] is trial.stimuli or known[0] == trial.stimuli):
            known = self.stimuli[key] = (trial.stimuli, [s.to_dict() for s in trial.stimuli])
        out = replace(trial, stimuli=()).to_dict()
        out["stimuli"] = list(known[1])
        return out


_STREAMS: dict[str, _Streams] = {}


def streams_for(spec: Mapping[str, Any]) -> _Streams:
    """The stream cache of a study in this process (many simulated studies of one study file share it)."""
    key = json.dumps(spec, sort_keys=True, default=str)
    if key not in _STREAMS:
        if len(_STREAMS) > 16:
            _STREAMS.clear()
        _STREAMS[key] = _Streams()
    return _STREAMS[key]


def trial_view(trial: design_mod.TrialSpec, language: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``step.json`` shows a bot of a trial (``studyapp.selectors.step_view``), for the keys bots read.
    ``spec`` is ``trial.to_dict()`` where the caller has it already (it is most of the cost)."""
    spec = trial.to_dict() if spec is None else spec
    task = spec["task"] or {}
    return {"index": trial.index, "type": spec["type"], "block": spec["block"], "practice": spec["practice"],
            "question": journey.localize(spec["question"], language),
            "scale": journey.localize(spec["scale"], language),
            "labels": journey.localize(task.get("labels") or {}, language), "comment": task.get("comment", "none"),
            "controls": task.get("controls", "after_end"), "presentation": task.get("presentation", "sequential"),
            "gap_ms": task.get("gap_ms", 1000),
            "stimuli": [{"delivery": s["delivery"], "strategy": s["strategy"], "indicator": s["indicator"],
                         "language": s.get("language", "")} for s in spec["stimuli"]]}


@dataclass(frozen=True)
class Session:
    """One simulated participant's journey and answers, in ``analysis.tables.tidy.StudyRows`` form."""

    session: dict
    trials: list[dict]
    answers: list[dict]


def run_journey(spec: Mapping[str, Any], bot: bot_models.Bot, plan: journey.Plan, *, sid: int, language: str,
                streams: _Streams, first_trial_id: int = 1) -> Session:
    """One bot through its plan's steps in order, answering as ``studyapp.bots.runner.Participant`` does and stored as
    ``studyapp.services`` stores it (attention verdicts, flags, screen-out)."""
    by_index = {t.index: t for t in plan.trials}
    rules = spec.get("attention_checks") or {}
    flags: list[str] = []
    state = "completed"
    trials, answers = [], []
    tid = first_trial_id
    for step in plan.steps:
        kind = step["kind"]
        if kind == "complete":
            break
        if kind == "questionnaire":
            bot.questionnaire(journey.localize(spec.get("questionnaire") or [], language))
        if kind == "trial":
            if "adaptive" in step:
                raise ValueError("adaptive blocks are not simulated by the fast path")
            trial = by_index[step["trial"]]
            t = streams.spec(trial)
            decision = bot.trial(trial_view(trial, language, t), streams.perceive(trial))
            value = responses.trial_value(t, decision.payload)
            passed = responses.attention_passed(t, value)
            if passed is not None:
                value["attention_passed"] = passed
            trials.append({"id": tid, "session_id": sid, "index": trial.index, "block": trial.block,
                           "kind": trial.type, "condition": trial.condition, "spec": t, "practice": trial.practice,
                           "attention": bool(trial.attention_check), "status": "answered", "plays": 1,
                           "interruptions": [], "answered_at": None})
            answers.append({"trial_id": tid, "value": value, "response_ms": decision.payload.get("response_ms"),
                            "comment": decision.payload.get("comment", "")})
            tid += 1
        if SUBMIT_DUPLICATE_DRAW:
            bot.rng.random()  # the submit's duplicate decision (duplicate_rate 0: never sent twice)
        if kind == "trial" and passed is False:
            flags.append(f"failed attention check {t['attention_check']}")
            failures = sum(1 for f in flags if f.startswith("failed attention check"))
            if rules.get("on_fail") == "screen_out" and failures > int(rules.get("max_failures", 0)):
                state = "screened_out"
                break
    session = {"id": sid, "panel_pid": f"sim-{sid:04d}", "panel_study_id": "sim", "panel_session_id": str(sid),
               "state": state, "group": plan.group, "language": language, "environment": {}, "flags": flags,
               "excluded": False, "started_at": None, "finished_at": None}
    return Session(session, trials, answers)


def plans(spec: Mapping[str, Any], n: int, seed: int, language: str | None = None) -> list[journey.Plan]:
    """Each participant's journey: groups assigned as the server assigns them to arrivals (the least filled),
    the Latin-square row by arrival, and a per-participant counterbalancing seed from the run seed."""
    language = language or spec["languages"][0]
    groups = [g.id for g in design_mod.groups(dict(spec))]
    counts: dict[str, int] = {}
    out = []
    for i in range(n):
        group = counterbalance.assign_group(groups, counts, {})
        counts[group] = counts.get(group, 0) + 1
        out.append(journey.build_plan(dict(spec), seed=counterbalance.sub_seed(seed, "session", i), group=group,
                                      row=i, language=language))
    return out


def study_rows(spec: Mapping[str, Any], population: PopulationLike, n: int, seed: int, *,
               language: str | None = None, streams: _Streams | None = None) -> tidy.StudyRows:
    """``n`` bots through the study, as the rows ``analysis.selectors.study_rows`` would read back."""
    language = language or spec["languages"][0]
    streams = streams or _Streams()
    sessions, trials, answers = [], [], []
    for i, (bot, plan) in enumerate(zip(bots_for(population, n, seed), plans(spec, n, seed, language),
                                        strict=True)):
        s = run_journey(spec, bot, plan, sid=i + 1, language=language, streams=streams,
                        first_trial_id=len(trials) + 1)
        sessions.append(s.session)
        trials += s.trials
        answers += s.answers
    return tidy.StudyRows(slug=str(spec.get("id", "sim")), spec=dict(spec), sessions=sessions, trials=trials,
                          answers=answers)


def study_frame(spec: Mapping[str, Any], population: PopulationLike, n: int, seed: int, *,
                language: str | None = None, streams: _Streams | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, participants) as ``analysis.selectors.study_frame`` gives them for a bot run (no paint logs)."""
    streams = streams or _Streams()
    rows = study_rows(spec, population, n, seed, language=language, streams=streams)
    return tidy.build(rows, rebuild=lambda t: streams.streams[f"{t['spec']['condition']}|{t['spec'].get('order')}"])


# --- the truth -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConditionTruth:
    """The true values of one acceptability condition, on the analysis's level axis (nominal levels)."""

    block: str
    condition: str  # the pipeline's condition label ("ttft=1500")
    unit: str
    quantile_level: float  # the level at which ``quantile`` of the population accepts
    median_level: float  # the population's median threshold
    pooled_level: float  # the level where the population-averaged ψ reaches ``quantile``


def _level_maps(spec: Mapping[str, Any], streams: _Streams, language: str) -> dict[tuple[str, str], dict]:
    """Per (block, condition label): nominal levels, the perceived tokens/s and TTFT (s) of each, and whether the
    curve falls (from the pipeline's own choice of level and direction)."""
    n_groups = len(design_mod.groups(dict(spec)))
    rows = study_rows(spec, bot_models.Population(), max(n_groups, 1), 0, language=language, streams=streams)
    frame, _ = tidy.build(rows, rebuild=lambda t: streams.streams[f"{t['spec']['condition']}|{t['spec'].get('order')}"])
    data = pipeline.analysable(frame)
    out = {}
    for d in pipeline.yes_no_sets(data, spec):
        if "data" not in d:
            continue
        g = d["data"]
        for cond in d["order"]:
            idx = g.index[g["condition"] == cond]
            tr = data.loc[idx]
            levels = g.loc[idx, "level"].to_numpy(float)
            table = pd.DataFrame({"level": levels, "tps": pd.to_numeric(tr["tokens_per_s"]).to_numpy(float),
                                  "ttft": pd.to_numeric(tr["ttft_ms"]).to_numpy(float) / 1000.0})
            table = table.groupby("level", as_index=False).mean().sort_values("level")
            out[(d["block"], str(cond))] = {"table": table, "unit": d["unit"], "decreasing": d["decreasing"],
                                            "level_name": d["level_name"]}
    return out


def _components(population: PopulationLike) -> list[tuple[float, bot_models.Population]]:
    if isinstance(population, bot_models.Population):
        return [(1.0, population)]
    total = sum(population.weights)
    return [(w / total, p) for w, p in zip(population.weights, population.components, strict=True)]


def _slopes(pop: bot_models.Population, nodes: int = 15) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Hermite nodes of a bot's slope (log-normal around the population's) and their weights."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return pop.slope * np.exp(pop.slope_sd * x), w / w.sum()


def truth(spec: Mapping[str, Any], population: PopulationLike, *, quantile: float = 0.75,
          language: str | None = None, streams: _Streams | None = None) -> list[ConditionTruth]:
    """The true population values of every acceptability condition the pipeline fits over a rate level (the bots
    accept by the tokens/s they measure, their threshold raised by ``ttft_shift`` per second of TTFT).

    A bot's own threshold is the level where its core sigmoid rises through one half (the analysis's definition,
    ``pc`` 0.5: for a Weibull observer that is not its ``threshold`` parameter); the population's q point is the
    q quantile of those thresholds, and the pooled level the point where the population-averaged ψ reaches q."""
    language = language or spec["languages"][0]
    streams = streams or _Streams()
    comps = _components(population)
    out = []
    for (block, cond), info in _level_maps(spec, streams, language).items():
        if info["level_name"] not in ("rate", "tokens_per_s") or info["decreasing"]:
            raise ValueError(f"{block}: the truth is known for rate levels only, not {info['level_name']!r}")
        q_level, median, pooled = _condition_truth(comps, info["table"], quantile)
        out.append(ConditionTruth(block=block, condition=cond, unit=info["unit"], quantile_level=q_level,
                                  median_level=median, pooled_level=pooled))
    return out


def _condition_truth(comps: list[tuple[float, bot_models.Population]], table: pd.DataFrame,
                     quantile: float) -> tuple[float, float, float]:
    """(q point, median, pooled q level) of one condition, from its nominal levels and what bots perceive."""
    gx, gw = np.polynomial.hermite_e.hermegauss(81)
    gw = gw / gw.sum()
    ttft_s = float(table["ttft"].mean())
    lx, lm = np.log(table["level"].to_numpy(float)), np.log(table["tps"].to_numpy(float))

    def perceived_u(log_x: float, pop: bot_models.Population) -> float:
        """A nominal level (log) → the bot's axis value of the tokens/s it measures (log-linear interpolation
        between the tested levels, extrapolated along the end segments)."""
        i = int(np.clip(np.searchsorted(lx, log_x) - 1, 0, len(lx) - 2))
        log_tps = lm[i] + (log_x - lx[i]) * (lm[i + 1] - lm[i]) / (lx[i + 1] - lx[i])
        return log_tps / math.log(10) if pop.axis == "log" else math.exp(log_tps)

    def centre(pop: bot_models.Population) -> float:
        return (math.log10(pop.threshold) if pop.axis == "log" else pop.threshold) + pop.ttft_shift * ttft_s

    def share_accepting(log_x: float) -> float:
        """The share of the population whose own threshold lies at or below the level."""
        total = 0.0
        for weight, pop in comps:
            u = perceived_u(log_x, pop)
            slopes, sw = _slopes(pop)
            offset = float(cdf_inverse(pop.function, 0.5)) / slopes  # own threshold − threshold parameter
            sd = max(pop.threshold_sd, 1e-12)
            total += weight * float(np.sum(sw * special.ndtr((u - centre(pop) - offset) / sd)))
        return total

    def mean_psi(log_x: float) -> float:
        total = 0.0
        for weight, pop in comps:
            u = perceived_u(log_x, pop)
            slopes, sw = _slopes(pop)
            t = centre(pop) + pop.threshold_sd * gx
            core = cdf(pop.function, slopes[:, None] * (u - t[None, :]))
            total += weight * (pop.guess + (1 - pop.guess - pop.lapse) * float(sw @ core @ gw))
        return total

    def solve(f: Callable[[float], float], target: float) -> float:
        return math.exp(optimize.brentq(lambda v: f(v) - target, math.log(1e-3), math.log(1e6), xtol=1e-12))

    return solve(share_accepting, quantile), solve(share_accepting, 0.5), solve(mean_psi, quantile)
