"""The ``procedure:`` block of a study file: its schema, validated into frozen dataclasses.

Every error names the offending key as a path (``procedure.tracks[1].rule: must be one of ...``) so a
researcher can find it in the study file. Unknown keys are errors: a typo must not fall back to a default.
A block holds one or more *tracks* (staircases or QUEST+ runs) and optional catch trials; a block without
``tracks`` is itself the single track. ``dimension``, ``direction`` and ``axis`` set at block level are
defaults for every track. The full schema is in docs/adaptive.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from studyapp.design.adaptive.psychometric import ALIASES, AXES, DIRECTIONS, FUNCTIONS, function_name
from studyapp.design.adaptive.stimulus import DIMENSIONS

RULES: dict[str, int] = {"1up1down": 1, "1up2down": 2, "1up3down": 3, "weighted": 1}
METHODS: tuple[str, ...] = ("staircase", "questplus")
ORDERS: tuple[str, ...] = ("random", "rounds")
ESTIMATES: tuple[str, ...] = ("mean", "mode")

_COMMON = ("name", "method", "dimension", "direction", "axis", "condition", "max_trials")
_STAIRCASE_KEYS = (*_COMMON, "rule", "target", "start", "steps", "min", "max", "max_reversals", "estimate_reversals")
_QUEST_KEYS = (
    *_COMMON,
    "function",
    "stimuli",
    "thresholds",
    "slopes",
    "guesses",
    "lapses",
    "min_trials",
    "ci_width",
    "ci_level",
    "estimate",
)
_BLOCK_KEYS = ("seed", "order", "catch", "tracks", "dimension", "direction", "axis")
_INHERITED = ("dimension", "direction", "axis")


class ProcedureConfigError(ValueError):
    """An invalid ``procedure:`` block. ``str()`` reads ``key: problem``; ``key`` is the full key path."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        self.problem = problem
        super().__init__(f"{key}: {problem}")


@dataclass(frozen=True)
class StaircaseConfig:
    """A transformed (1-up/N-down) or weighted (Kaernbach) up-down staircase."""

    name: str
    rule: str
    start: float
    steps: tuple[float, ...]
    max_trials: int
    min_level: float | None = None
    max_level: float | None = None
    max_reversals: int | None = None
    estimate_reversals: int = 6
    target: float | None = None
    axis: str = "linear"
    direction: str = "increasing"
    dimension: str | None = None
    condition: Mapping[str, Any] = field(default_factory=dict)
    method: str = "staircase"

    @property
    def down_count(self) -> int:
        """Consecutive "yes" answers that make the level harder (N of 1-up/N-down)."""
        return RULES[self.rule]

    @property
    def target_p(self) -> float:
        """The p("yes") the staircase converges to: 0.5^(1/N), or the weighted rule's target."""
        if self.rule == "weighted":
            return float(self.target)
        return 0.5 ** (1.0 / self.down_count)

    @property
    def up_ratio(self) -> float:
        """Step up over step down: p/(1 − p) for the weighted rule (Kaernbach 1991), else 1."""
        if self.rule == "weighted":
            return self.target / (1.0 - self.target)
        return 1.0


@dataclass(frozen=True)
class QuestPlusConfig:
    """QUEST+ (Watson 2017) over a (threshold, slope, guess, lapse) grid, yes/no answers."""

    name: str
    stimuli: tuple[float, ...]
    thresholds: tuple[float, ...]
    slopes: tuple[float, ...]
    max_trials: int
    guesses: tuple[float, ...] = (0.0,)
    lapses: tuple[float, ...] = (0.0, 0.02, 0.05)
    function: str = "logistic"
    min_trials: int = 0
    ci_width: float | None = None
    ci_level: float = 0.95
    estimate: str = "mean"
    axis: str = "linear"
    direction: str = "increasing"
    dimension: str | None = None
    condition: Mapping[str, Any] = field(default_factory=dict)
    method: str = "questplus"


TrackConfig = StaircaseConfig | QuestPlusConfig


@dataclass(frozen=True)
class CatchTrial:
    """A trial at a fixed, obvious level whose answer is known (an attention check inside the block)."""

    level: float
    expect: bool
    condition: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CatchConfig:
    rate: float
    trials: tuple[CatchTrial, ...]


@dataclass(frozen=True)
class ProcedureConfig:
    """A validated ``procedure:`` block."""

    tracks: tuple[TrackConfig, ...]
    seed: int = 0
    order: str = "random"
    catch: CatchConfig | None = None


# --- parsing ---------------------------------------------------------------------------------------------


def parse_procedure(obj: Any, key: str = "procedure") -> ProcedureConfig:
    """Validate a ``procedure:`` block (a dict from YAML/JSON) into a ``ProcedureConfig``."""
    if isinstance(obj, ProcedureConfig):
        return obj
    check_mapping(obj, key)
    if "tracks" not in obj:  # the block is itself the one track
        blockish = {k: obj[k] for k in ("seed", "order", "catch") if k in obj}
        track = {k: v for k, v in obj.items() if k not in blockish}
        tracks = (parse_track(track, key, require_dimension=True),)
        obj = blockish
    else:
        check_known(obj, _BLOCK_KEYS, key)
        raw = obj["tracks"]
        if not isinstance(raw, list) or not raw:
            raise ProcedureConfigError(f"{key}.tracks", "must be a non-empty list of tracks")
        defaults = {k: obj[k] for k in _INHERITED if k in obj}
        tracks = tuple(
            parse_track(t, f"{key}.tracks[{i}]", defaults, default_name=f"track{i + 1}", require_dimension=True)
            for i, t in enumerate(raw)
        )
        names = [t.name for t in tracks]
        for i, name in enumerate(names):
            if name in names[:i]:
                raise ProcedureConfigError(f"{key}.tracks[{i}].name", f"duplicate track name {name!r}")
    seed = obj.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ProcedureConfigError(f"{key}.seed", f"must be a non-negative integer, got {seed!r}")
    order = check_choice(obj.get("order", "random"), ORDERS, f"{key}.order")
    catch = _catch(obj["catch"], f"{key}.catch", tracks) if obj.get("catch") is not None else None
    return ProcedureConfig(tracks=tracks, seed=seed, order=order, catch=catch)


def parse_track(
    obj: Any,
    key: str = "procedure",
    defaults: Mapping[str, Any] | None = None,
    default_name: str = "main",
    require_dimension: bool = False,
) -> TrackConfig:
    """Validate one track (a staircase or a QUEST+ run); ``defaults`` fill inherited keys."""
    check_mapping(obj, key)
    obj = {**(defaults or {}), **obj}
    method = check_choice(obj.get("method"), METHODS, f"{key}.method") if "method" in obj else None
    if method is None:
        raise ProcedureConfigError(f"{key}.method", f"required, one of {', '.join(METHODS)}")
    check_known(obj, _STAIRCASE_KEYS if method == "staircase" else _QUEST_KEYS, key)

    name = obj.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ProcedureConfigError(f"{key}.name", f"must be a non-empty string, got {name!r}")
    dimension = obj.get("dimension")
    if dimension is None and require_dimension:
        raise ProcedureConfigError(f"{key}.dimension", f"required, one of {', '.join(DIMENSIONS)}")
    if dimension is not None:
        check_choice(dimension, tuple(DIMENSIONS), f"{key}.dimension")
    default_direction = DIMENSIONS[dimension].direction if dimension else "increasing"
    direction = check_choice(obj.get("direction", default_direction), DIRECTIONS, f"{key}.direction")
    axis = check_choice(obj.get("axis", "linear"), AXES, f"{key}.axis")
    condition = obj.get("condition", {})
    if not isinstance(condition, Mapping):
        raise ProcedureConfigError(f"{key}.condition", f"must be a mapping, got {type(condition).__name__}")
    max_trials = _int(obj.get("max_trials"), f"{key}.max_trials", 1, "required (a hard cap on the trials)")
    common = dict(
        name=name, axis=axis, direction=direction, dimension=dimension, condition=dict(condition), max_trials=max_trials
    )
    if method == "staircase":
        return _staircase(obj, key, common)
    return _questplus(obj, key, common)


def _staircase(obj: Mapping[str, Any], key: str, common: dict[str, Any]) -> StaircaseConfig:
    rule = obj.get("rule")
    if rule is None:
        raise ProcedureConfigError(f"{key}.rule", f"required, one of {', '.join(RULES)}")
    check_choice(rule, tuple(RULES), f"{key}.rule")
    axis, dim = common["axis"], common["dimension"]
    target = None
    if rule == "weighted":
        target = check_number(obj.get("target"), f"{key}.target", "required for rule weighted (the p('yes') to track)")
        if not 0 < target < 1:
            raise ProcedureConfigError(f"{key}.target", f"must be between 0 and 1, got {target:g}")
    elif "target" in obj:
        raise ProcedureConfigError(f"{key}.target", f"only for rule weighted (rule {rule} targets its own p)")

    start = _level(obj.get("start"), f"{key}.start", axis, dim, "required (the first level)")
    lo = _level(obj["min"], f"{key}.min", axis, dim) if obj.get("min") is not None else None
    hi = _level(obj["max"], f"{key}.max", axis, dim) if obj.get("max") is not None else None
    if lo is not None and hi is not None and lo >= hi:
        raise ProcedureConfigError(f"{key}.max", f"must be greater than min ({lo:g}), got {hi:g}")
    if lo is not None and start < lo or hi is not None and start > hi:
        raise ProcedureConfigError(f"{key}.start", f"must lie within [min, max], got {start:g}")

    raw_steps = obj.get("steps")
    if raw_steps is None:
        raise ProcedureConfigError(f"{key}.steps", "required: a step size, or sizes after 0, 1, 2... reversals")
    steps_list = raw_steps if isinstance(raw_steps, list) else [raw_steps]
    if not steps_list:
        raise ProcedureConfigError(f"{key}.steps", "must not be empty")
    steps = tuple(check_number(s, f"{key}.steps", "") for s in steps_list)
    if any(s <= 0 for s in steps):
        raise ProcedureConfigError(f"{key}.steps", f"must all be > 0 (axis units), got {list(steps)}")

    max_reversals = None
    if obj.get("max_reversals") is not None:
        max_reversals = _int(obj["max_reversals"], f"{key}.max_reversals", 1)
    estimate_reversals = _int(obj.get("estimate_reversals", 6), f"{key}.estimate_reversals", 1)
    return StaircaseConfig(
        rule=rule,
        target=target,
        start=start,
        steps=steps,
        min_level=lo,
        max_level=hi,
        max_reversals=max_reversals,
        estimate_reversals=estimate_reversals,
        **common,
    )


def _questplus(obj: Mapping[str, Any], key: str, common: dict[str, Any]) -> QuestPlusConfig:
    axis, dim = common["axis"], common["dimension"]
    if "stimuli" not in obj:
        raise ProcedureConfigError(f"{key}.stimuli", "required: a list of levels or {min, max, n}")
    stimuli = _grid(obj["stimuli"], f"{key}.stimuli", axis)
    for s in stimuli:
        _level(s, f"{key}.stimuli", axis, dim)
    thresholds = _grid(obj.get("thresholds", list(stimuli)), f"{key}.thresholds", axis)
    for t in thresholds:
        _level(t, f"{key}.thresholds", axis, dim)
    if "slopes" not in obj:
        raise ProcedureConfigError(f"{key}.slopes", "required: slope(s) per axis unit (per log10 unit on a log axis)")
    slopes = _grid(obj["slopes"], f"{key}.slopes", "log")
    if any(s <= 0 for s in slopes):
        raise ProcedureConfigError(f"{key}.slopes", "must all be > 0 (the direction sets the sign)")
    guesses = _grid(obj.get("guesses", [0.0]), f"{key}.guesses", "linear")
    lapses = _grid(obj.get("lapses", [0.0, 0.02, 0.05]), f"{key}.lapses", "linear")
    for name, values in (("guesses", guesses), ("lapses", lapses)):
        if any(not 0 <= v < 0.5 for v in values):
            raise ProcedureConfigError(f"{key}.{name}", f"must all be in [0, 0.5), got {list(values)}")
    function = function_name(check_choice(obj.get("function", "logistic"), FUNCTIONS + tuple(ALIASES),
                                          f"{key}.function"))
    min_trials = _int(obj.get("min_trials", 0), f"{key}.min_trials", 0)
    if min_trials > common["max_trials"]:
        raise ProcedureConfigError(f"{key}.min_trials", f"must not exceed max_trials ({common['max_trials']})")
    ci_width = None
    if obj.get("ci_width") is not None:
        ci_width = check_number(obj["ci_width"], f"{key}.ci_width", "")
        if ci_width <= 0:
            raise ProcedureConfigError(f"{key}.ci_width", f"must be > 0 (axis units), got {ci_width:g}")
    ci_level = check_number(obj.get("ci_level", 0.95), f"{key}.ci_level", "")
    if not 0 < ci_level < 1:
        raise ProcedureConfigError(f"{key}.ci_level", f"must be between 0 and 1, got {ci_level:g}")
    estimate = check_choice(obj.get("estimate", "mean"), ESTIMATES, f"{key}.estimate")
    return QuestPlusConfig(
        stimuli=stimuli,
        thresholds=thresholds,
        slopes=slopes,
        guesses=guesses,
        lapses=lapses,
        function=function,
        min_trials=min_trials,
        ci_width=ci_width,
        ci_level=ci_level,
        estimate=estimate,
        **common,
    )


def _catch(obj: Any, key: str, tracks: tuple[TrackConfig, ...]) -> CatchConfig:
    check_mapping(obj, key)
    check_known(obj, ("rate", "trials"), key)
    rate = check_number(obj.get("rate"), f"{key}.rate", "required (the probability a trial is a catch trial)")
    if not 0 < rate < 1:
        raise ProcedureConfigError(f"{key}.rate", f"must be between 0 and 1, got {rate:g}")
    raw = obj.get("trials")
    if not isinstance(raw, list) or not raw:
        raise ProcedureConfigError(f"{key}.trials", "required: a non-empty list of {level, expect}")
    dims = {t.dimension for t in tracks}
    dim = next(iter(dims)) if len(dims) == 1 else None
    trials = []
    for i, item in enumerate(raw):
        k = f"{key}.trials[{i}]"
        check_mapping(item, k)
        check_known(item, ("level", "expect", "condition"), k)
        level = check_number(item.get("level"), f"{k}.level", "required")
        if dim is not None and (problem := DIMENSIONS[dim].check(level)):
            raise ProcedureConfigError(f"{k}.level", problem)
        expect = item.get("expect")
        if expect is True or expect == "yes":
            expect = True
        elif expect is False or expect == "no":
            expect = False
        else:
            raise ProcedureConfigError(f"{k}.expect", f"must be yes or no, got {expect!r}")
        condition = item.get("condition", {})
        if not isinstance(condition, Mapping):
            raise ProcedureConfigError(f"{k}.condition", "must be a mapping")
        trials.append(CatchTrial(level=level, expect=expect, condition=dict(condition)))
    return CatchConfig(rate=rate, trials=tuple(trials))


# --- small validators ------------------------------------------------------------------------------------


def check_mapping(obj: Any, key: str) -> None:
    if not isinstance(obj, Mapping):
        raise ProcedureConfigError(key, f"must be a mapping, got {type(obj).__name__}")


def check_known(obj: Mapping[str, Any], known: tuple[str, ...], key: str) -> None:
    for k in obj:
        if k not in known:
            raise ProcedureConfigError(f"{key}.{k}", f"unknown key (known: {', '.join(sorted(known))})")


def check_choice(value: Any, choices: tuple[str, ...], key: str) -> str:
    if value not in choices:
        raise ProcedureConfigError(key, f"must be one of {', '.join(choices)}; got {value!r}")
    return value


def check_number(value: Any, key: str, missing: str) -> float:
    if value is None:
        raise ProcedureConfigError(key, missing or "required")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ProcedureConfigError(key, f"must be a finite number, got {value!r}")
    return float(value)


def _int(value: Any, key: str, minimum: int, missing: str = "") -> int:
    if value is None:
        raise ProcedureConfigError(key, missing or "required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProcedureConfigError(key, f"must be an integer, got {value!r}")
    if value < minimum:
        raise ProcedureConfigError(key, f"must be >= {minimum}, got {value}")
    return value


def _level(value: Any, key: str, axis: str, dimension: str | None, missing: str = "") -> float:
    level = check_number(value, key, missing)
    if axis == "log" and level <= 0:
        raise ProcedureConfigError(key, f"must be > 0 on a log axis, got {level:g}")
    if dimension is not None and (problem := DIMENSIONS[dimension].check(level)):
        raise ProcedureConfigError(key, problem)
    return level


def _grid(value: Any, key: str, spacing: str) -> tuple[float, ...]:
    """A number, a strictly increasing list, or ``{min, max, n[, spacing]}`` (evenly spaced on the axis)."""
    if isinstance(value, Mapping):
        check_known(value, ("min", "max", "n", "spacing"), key)
        lo = check_number(value.get("min"), f"{key}.min", "required")
        hi = check_number(value.get("max"), f"{key}.max", "required")
        n = _int(value.get("n"), f"{key}.n", 1, "required")
        spacing = check_choice(value.get("spacing", spacing), AXES, f"{key}.spacing")
        if n > 1 and hi <= lo:
            raise ProcedureConfigError(f"{key}.max", f"must be greater than min ({lo:g}), got {hi:g}")
        if spacing == "log":
            if lo <= 0:
                raise ProcedureConfigError(f"{key}.min", f"must be > 0 for log spacing, got {lo:g}")
            values = np.geomspace(lo, hi, n) if n > 1 else np.array([lo])
        else:
            values = np.linspace(lo, hi, n)
        return tuple(float(v) for v in values)
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ProcedureConfigError(key, "must not be empty")
    out = tuple(check_number(v, key, "") for v in items)
    if any(b <= a for a, b in zip(out, out[1:])):
        raise ProcedureConfigError(key, f"must be strictly increasing, got {list(out)}")
    return out
