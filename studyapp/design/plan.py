"""The experimental design of a study file: parameters → conditions → groups → each participant's trial plan.

A *parameter set* (stimulus, text, trace, tokenizer, seed, max_chars, every ``TimingSpec`` field, an ``arrival``
pattern, strategy, indicator, delivery and their options) appears in stimuli, factor levels, conditions and
explicit trials. A condition's concrete ``StimulusSpec`` is built in layers: defaults, the study's ``render``, the
named stimulus (the last layer that names one), then each layer's own keys in order (block ``set``, factor levels,
trial). Every key remembers the path that set it, so an invalid combination is reported where it was written.
``arrival: <pattern>`` (``playback.core.arrivals``) stands for the pattern's whole timing model (and, for a text kind,
its text and tokenizer), set where it is written: keys beside it in the same layer and later layers override it.

``participant_plan(design, seed, group)`` is deterministic: the same study, seed, group and row give the same
blocks, trials, orders and A/B sides. ``trial_streams`` synthesises a trial's streams via ``playback.core.synth``
(or loads and re-times a trace). The document must already be schema-valid (``studyapp.design.studyfile``).
No Django import.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any

from playback.core import arrivals, strategy_options, synth, texts, transforms
from playback.core.stream import Stream, StreamMeta
from playback.core.timing import TimingSpec, TimingSpecError
from studyapp.design import counterbalance, textcut

TIMING_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(TimingSpec))
RENDER_KEYS = ("strategy", "strategy_options", "indicator", "indicator_options", "delivery")
SOURCE_KEYS = ("stimulus", "text", "trace", "tokenizer", "seed", "max_chars")
ARRIVAL_KEY = "arrival"
PARAM_KEYS: tuple[str, ...] = SOURCE_KEYS + TIMING_FIELDS + (ARRIVAL_KEY,) + RENDER_KEYS
TRACE_TIMING = ("ttft_ms", "rate")  # the timing fields a recorded trace can be re-timed to
DEFAULTS: dict[str, Any] = {"seed": 0, "strategy": "token", "strategy_options": {}, "indicator": "none",
                            "indicator_options": {}, "delivery": "prefetch"}
NO_GROUP = "all"

# Rough response times (s) per trial type, for the duration estimate only.
RESPONSE_S = {"rating": 5.0, "acceptability": 3.0, "afc": 4.0, "reading": 2.0}
FIXED_S = 90.0  # consent, environment check, instructions, debrief
QUESTION_S = 10.0


class DesignError(ValueError):
    """A problem found while expanding a study, at ``path`` (``factors[0].levels[2]``)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


# --- values ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StimulusSpec:
    """One concrete stream to show: its source, tokenizer, timing, seed and how it is rendered and delivered."""

    text: str | None
    trace: dict | None
    tokenizer: str | None
    timing: TimingSpec
    seed: int = 0
    max_chars: int | None = None
    strategy: str = "token"
    strategy_options: dict = field(default_factory=dict)
    indicator: str = "none"
    indicator_options: dict = field(default_factory=dict)
    delivery: str = "prefetch"
    language: str = ""
    timing_set: tuple[str, ...] = ()  # timing fields given explicitly (a trace is re-timed only for these)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "trace": self.trace, "tokenizer": self.tokenizer, "timing": self.timing.to_dict(),
                "seed": self.seed, "max_chars": self.max_chars, "strategy": self.strategy,
                "strategy_options": dict(self.strategy_options), "indicator": self.indicator,
                "indicator_options": dict(self.indicator_options), "delivery": self.delivery,
                "language": self.language, "timing_set": list(self.timing_set)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StimulusSpec:
        """The inverse of ``to_dict`` (a stored trial spec rebuilds its stimulus exactly)."""
        return cls(text=d["text"], trace=d["trace"], tokenizer=d["tokenizer"], timing=TimingSpec.from_dict(d["timing"]),
                   seed=d["seed"], max_chars=d["max_chars"], strategy=d["strategy"],
                   strategy_options=dict(d["strategy_options"]), indicator=d["indicator"],
                   indicator_options=dict(d["indicator_options"]), delivery=d["delivery"],
                   language=d["language"], timing_set=tuple(d["timing_set"]))

    def render_config(self) -> dict[str, Any]:
        """The playback config the player needs (strategy, indicator and their options)."""
        return {"strategy": self.strategy, "strategy_options": dict(self.strategy_options),
                "indicator": self.indicator, "indicator_options": dict(self.indicator_options)}


@dataclass(frozen=True)
class Condition:
    """A cell of a block's design: factor levels and its stimulus (two, A then B, for a 2AFC pair)."""

    id: str
    block: str
    levels: dict[str, str]
    stimuli: tuple[StimulusSpec, ...]


@dataclass(frozen=True)
class Group:
    """A between-subjects group: one level of every between-subjects factor."""

    id: str
    levels: dict[str, str]


@dataclass(frozen=True)
class TrialSpec:
    """One trial of a participant's plan. ``stimuli`` are in presentation order; ``order`` says which is A."""

    index: int
    block: str
    position: int
    type: str
    condition: str
    stimuli: tuple[StimulusSpec, ...]
    question: Any
    scale: dict | None
    task: dict
    practice: bool = False
    attention_check: str | None = None
    expected: Any = None
    order: str | None = None  # "AB" (A shown first / left) or "BA"; None for single-stream trials

    @property
    def ab(self) -> tuple[StimulusSpec, StimulusSpec]:
        """The (A, B) stimuli whatever the presentation order."""
        if self.order is None:
            raise ValueError("not a 2AFC trial")
        first, second = self.stimuli
        return (first, second) if self.order == "AB" else (second, first)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "block": self.block, "position": self.position, "type": self.type,
                "condition": self.condition, "stimuli": [s.to_dict() for s in self.stimuli], "order": self.order,
                "question": self.question, "scale": self.scale, "task": self.task, "practice": self.practice,
                "attention_check": self.attention_check, "expected": self.expected}


@dataclass(frozen=True)
class BlockDesign:
    """A block's expanded conditions (all groups); ``procedure`` blocks have a base stimulus instead."""

    id: str
    index: int
    practice: bool
    task: dict
    conditions: tuple[Condition, ...]
    repeats: int
    order: str
    break_after: bool
    procedure: dict | None = None
    base: StimulusSpec | None = None


@dataclass(frozen=True)
class BlockPlan:
    """A block as one participant sees it."""

    id: str
    practice: bool
    trials: tuple[TrialSpec, ...]
    break_after: bool
    procedure: dict | None = None
    base: StimulusSpec | None = None


@dataclass(frozen=True)
class Design:
    """A study expanded for one language: conditions by id, blocks in file order, between-subjects groups."""

    study: dict
    language: str
    blocks: tuple[BlockDesign, ...]
    groups: tuple[Group, ...]
    between: tuple[str, ...]

    @property
    def conditions(self) -> dict[str, Condition]:
        return {c.id: c for b in self.blocks for c in b.conditions}


# --- parameters -----------------------------------------------------------------------------------------------


def level_label(level: Any) -> str:
    """The label of a factor level: its ``label``, or the plain value as text (``10``, ``12.5``, ``true``)."""
    if isinstance(level, dict):
        return str(level["label"])
    if isinstance(level, bool):
        return "true" if level else "false"
    if isinstance(level, float) and level.is_integer():
        return str(int(level))
    return str(level)


Layer = tuple[Mapping[str, Any], str]  # (parameters, path prefix of where they were written)


def resolve(study: dict, layers: Sequence[Layer]) -> tuple[dict[str, Any], dict[str, str]]:
    """Merge parameter layers into one set, with the path that set each key (see the module docstring)."""
    params: dict[str, Any] = dict(DEFAULTS)
    where: dict[str, str] = {}
    for key, value in (study.get("render") or {}).items():
        params[key], where[key] = value, f"render.{key}"
    base: tuple[str, str] | None = None
    for values, prefix in layers:
        if "stimulus" in values:
            base = (values["stimulus"], f"{prefix}.stimulus" if prefix else "stimulus")
    if base is not None:
        name, path = base
        stimuli = study.get("stimuli") or {}
        if name not in stimuli:
            raise DesignError(path, f"unknown stimulus {name!r}; defined: {', '.join(stimuli) or 'none'}")
        stim = stimuli[name]
        if ARRIVAL_KEY in stim:
            _arrival(params, where, stim[ARRIVAL_KEY], f"stimuli.{name}.{ARRIVAL_KEY}")
        for key, value in stim.items():
            params[key], where[key] = value, f"stimuli.{name}.{key}"
        where["stimulus"] = path
    for values, prefix in layers:
        if ARRIVAL_KEY in values:
            at = prefix if _LEVEL_PATH.search(prefix) else f"{prefix}.{ARRIVAL_KEY}"
            _arrival(params, where, values[ARRIVAL_KEY], at)
        for key, value in values.items():
            if key == "stimulus":
                continue
            params[key] = value
            where[key] = prefix if _LEVEL_PATH.search(prefix) else f"{prefix}.{key}"
    return params, where


def _arrival(params: dict[str, Any], where: dict[str, str], name: Any, path: str) -> None:
    """Expand ``arrival: name`` into the pattern's parameters, each remembered as set at ``path``."""
    try:
        pattern = arrivals.get(name)
    except arrivals.UnknownPattern as exc:
        raise DesignError(path, str(exc)) from None
    for key, value in pattern.study_params().items():
        params[key], where[key] = value, path


_LEVEL_PATH = re.compile(r"\.levels\[\d+\]$")  # a plain level: the path names the level itself


def stimulus_spec(params: Mapping[str, Any], where: Mapping[str, str], language: str, origin: str) -> StimulusSpec:
    """Build the concrete stimulus; ``DesignError`` at the path that set the offending value."""
    from playback.core import tokenizers

    text = params.get("text")
    trace = params.get("trace")
    if (text is None) == (trace is None):
        key = "trace" if trace is not None else "text"
        raise DesignError(where.get(key, origin), "give exactly one of `text` (a bundled text) or `trace`")
    content_language = ""
    if text is not None:
        if isinstance(text, dict):
            if language not in text:
                raise DesignError(where["text"], f"no text for language {language!r}")
            text = text[language]
        known = texts.bundled_texts()
        if text not in known:
            raise DesignError(where["text"], f"unknown bundled text {text!r}; known: {', '.join(known)}")
        content_language = known[text][0]
        tokenizer = params.get("tokenizer")
        if tokenizer is None:
            raise DesignError(where.get("text", origin), "a text stimulus needs a `tokenizer`")
        if tokenizer not in tokenizers.names():
            raise DesignError(where["tokenizer"],
                              f"unknown tokenizer {tokenizer!r}; known: {', '.join(tokenizers.names())}")
    else:
        tokenizer = None
        if ARRIVAL_KEY in params:
            raise DesignError(where[ARRIVAL_KEY], "an arrival pattern times a text stimulus; a trace keeps its "
                              "recorded arrivals (only ttft_ms and rate re-time it)")
        for key in ("tokenizer", "max_chars", *(f for f in TIMING_FIELDS if f not in TRACE_TIMING)):
            if key in params:
                raise DesignError(where[key], f"does not apply to a trace stimulus (only {', '.join(TRACE_TIMING)})")
    timing_values = {k: params[k] for k in TIMING_FIELDS if k in params}
    try:
        timing = TimingSpec(**timing_values)
    except TimingSpecError as exc:
        path = where.get(exc.field)
        if path is None:
            path = next((where[k] for k in reversed(list(where)) if k in TIMING_FIELDS), origin)
            raise DesignError(path, str(exc)) from None
        message = exc.problem if path.endswith(f".{exc.field}") else str(exc)
        raise DesignError(path, message) from None
    if trace is not None and "rate" in timing_values and timing.rate_unit != "tokens":
        raise DesignError(where["rate"], "a trace can only be re-timed to a tokens rate")
    _check_strategy_options(params, where, origin)
    return StimulusSpec(
        text=text, trace=dict(trace) if trace is not None else None, tokenizer=tokenizer, timing=timing,
        seed=int(params.get("seed", 0)), max_chars=params.get("max_chars"), strategy=params["strategy"],
        strategy_options=dict(params["strategy_options"]), indicator=params["indicator"],
        indicator_options=dict(params["indicator_options"]), delivery=params["delivery"],
        language=content_language, timing_set=tuple(k for k in TIMING_FIELDS if k in timing_values),
    )


def _check_strategy_options(params: Mapping[str, Any], where: Mapping[str, str], origin: str) -> None:
    """The strategy options against the strategy's own declaration (as the playground checks them)."""
    given = params.get("strategy_options") or {}
    parsed = strategy_options.parse(params["strategy"], given)
    if parsed.errors:
        at = where.get("strategy_options", where.get("strategy", origin))
        raise DesignError(at, "; ".join(f"{params['strategy']} option {e}" for e in parsed.errors))


# --- expansion ------------------------------------------------------------------------------------------------


def factors_by_name(study: dict) -> dict[str, tuple[int, dict]]:
    return {f["name"]: (i, f) for i, f in enumerate(study.get("factors") or [])}


def between_factors(study: dict) -> list[str]:
    return [f["name"] for f in study.get("factors") or [] if f.get("assignment", "within") == "between"]


def groups(study: dict) -> tuple[Group, ...]:
    """The between-subjects groups: every combination of the between-subjects factors' levels (or one group)."""
    names = between_factors(study)
    if not names:
        return (Group(NO_GROUP, {}),)
    by_name = factors_by_name(study)
    label_lists = [[level_label(lv) for lv in by_name[n][1]["levels"]] for n in names]
    out = []
    for combo in itertools.product(*label_lists):
        levels = dict(zip(names, combo))
        out.append(Group(_levels_id(levels), levels))
    return tuple(out)


def _levels_id(levels: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in levels.items())


def _block_design(study: dict, block: dict) -> tuple[dict | None, str]:
    if "design" in block:
        return block["design"], f"{_block_path(study, block)}.design"
    if "trials" in block or "procedure" in block:
        return None, ""
    if "design" in study:
        return study["design"], "design"
    raise DesignError(_block_path(study, block), "give `design`, `trials` or `procedure` (the study has no `design`)")


def _block_path(study: dict, block: dict) -> str:
    return f"blocks[{next(i for i, b in enumerate(study['blocks']) if b is block)}]"


def _cells(study: dict, design: dict, path: str) -> list[tuple[dict[str, str], list[Layer]]]:
    """The design's cells: ({factor: label}, parameter layers of the levels)."""
    by_name = factors_by_name(study)
    cells = []
    if "factorial" in design:
        names = design["factorial"]
        for j, name in enumerate(names):
            if name not in by_name:
                raise DesignError(f"{path}.factorial[{j}]", f"unknown factor {name!r}")
        ranges = [range(len(by_name[n][1]["levels"])) for n in names]
        for combo in itertools.product(*ranges):
            levels, layers = {}, []
            for name, li in zip(names, combo):
                fi, factor = by_name[name]
                levels[name] = level_label(factor["levels"][li])
                layers.append(_level_layer(factor, fi, li))
            cells.append((levels, layers))
        return cells
    for ci, cond in enumerate(design["conditions"]):
        levels, layers = {}, []
        for name, label in cond.items():
            if name not in by_name:
                raise DesignError(f"{path}.conditions[{ci}].{name}", f"unknown factor {name!r}")
            fi, factor = by_name[name]
            labels = [level_label(lv) for lv in factor["levels"]]
            li = labels.index(level_label(label)) if level_label(label) in labels else -1
            if li < 0:
                raise DesignError(f"{path}.conditions[{ci}].{name}",
                                  f"{label!r} is not a level of {name} ({', '.join(labels)})")
            levels[name] = labels[li]
            layers.append(_level_layer(factor, fi, li))
        cells.append((levels, layers))
    return cells


def _level_layer(factor: dict, fi: int, li: int) -> Layer:
    level = factor["levels"][li]
    if isinstance(level, dict):
        return level["set"], f"factors[{fi}].levels[{li}].set"
    if "sets" not in factor:
        raise DesignError(f"factors[{fi}].sets", "required when levels are plain values")
    return {factor["sets"]: level}, f"factors[{fi}].levels[{li}]"


def _spec(study: dict, layers: Sequence[Layer], language: str, origin: str) -> StimulusSpec:
    params, where = resolve(study, layers)
    return stimulus_spec(params, where, language, origin)


def _base_layers(study: dict, block: dict, bpath: str) -> list[Layer]:
    layers: list[Layer] = []
    if "stimulus" in block:
        layers.append(({"stimulus": block["stimulus"]}, bpath))
    if "set" in block:
        layers.append((block["set"], f"{bpath}.set"))
    return layers


def expand(study: dict, language: str | None = None) -> Design:
    """Expand a schema-valid study for ``language`` (default: its first language). ``DesignError`` on the
    first semantic problem; ``studyapp.design.studyfile.validate`` collects them all."""
    language = language or study["languages"][0]
    blocks = []
    for bi, block in enumerate(study["blocks"]):
        bpath = f"blocks[{bi}]"
        base = _base_layers(study, block, bpath)
        task = block["task"]
        design, dpath = _block_design(study, block)
        conditions: list[Condition] = []
        base_spec = None
        if "procedure" in block:
            base_spec = _spec(study, base, language, bpath)
        elif design is not None:
            cells = _cells(study, design, dpath)
            compare = task.get("compare")
            if task["type"] == "afc":
                conditions = _afc_conditions(study, block, bpath, base, cells, compare, language)
            else:
                if compare is not None:
                    raise DesignError(f"{bpath}.task.compare", "only a 2AFC task compares levels")
                for levels, layers in cells:
                    spec = _spec(study, base + layers, language, bpath)
                    conditions.append(Condition(f"{block['id']}:{_levels_id(levels)}", block["id"], levels, (spec,)))
        else:
            for ti, trial in enumerate(block["trials"]):
                tpath = f"{bpath}.trials[{ti}]"
                cid = f"{block['id']}:{trial.get('label', f't{ti}')}"
                shared = {k: v for k, v in trial.items() if k not in ("a", "b", "label")}
                if task["type"] == "afc":
                    if "a" not in trial or "b" not in trial:
                        raise DesignError(tpath, "a 2AFC trial needs `a` and `b`")
                    pair = tuple(_spec(study, [*base, (shared, tpath), (trial[s], f"{tpath}.{s}")], language, tpath)
                                 for s in ("a", "b"))
                    conditions.append(Condition(cid, block["id"], {}, pair))
                else:
                    if "a" in trial or "b" in trial:
                        raise DesignError(tpath, f"`a`/`b` are for 2AFC trials, this block's task is {task['type']}")
                    spec = _spec(study, [*base, (shared, tpath)], language, tpath)
                    conditions.append(Condition(cid, block["id"], {}, (spec,)))
        ids = [c.id for c in conditions]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise DesignError(bpath, f"two conditions share the id {dup!r} (give trials distinct labels)")
        blocks.append(BlockDesign(
            id=block["id"], index=bi, practice=block["type"] == "practice", task=task, conditions=tuple(conditions),
            repeats=block.get("repeats", 1), order=block.get("order", "random"),
            break_after=block.get("break_after", True), procedure=block.get("procedure"), base=base_spec,
        ))
    return Design(study=study, language=language, blocks=tuple(blocks), groups=groups(study),
                  between=tuple(between_factors(study)))


def _afc_conditions(study, block, bpath, base, cells, compare, language) -> list[Condition]:
    if compare is None:
        raise DesignError(f"{bpath}.task.compare", "a 2AFC block with a design needs `compare: <factor>`")
    names = list(cells[0][0]) if cells else []
    if compare not in names:
        raise DesignError(f"{bpath}.task.compare", f"{compare!r} is not a factor of this block's design")
    by_name = factors_by_name(study)
    if by_name[compare][1].get("assignment", "within") == "between":
        raise DesignError(f"{bpath}.task.compare", f"{compare!r} is between-subjects; a 2AFC compares within")
    others: dict[tuple, list] = {}
    for levels, layers in cells:
        rest = tuple((k, v) for k, v in levels.items() if k != compare)
        others.setdefault(rest, []).append((levels, layers))
    out = []
    for rest, members in others.items():
        for (la, xa), (lb, xb) in itertools.combinations(members, 2):
            spec_a = _spec(study, base + xa, language, bpath)
            spec_b = _spec(study, base + xb, language, bpath)
            levels = dict(rest) | {compare: f"{la[compare]}~{lb[compare]}"}
            cid = f"{block['id']}:{_levels_id(levels)}"
            out.append(Condition(cid, block["id"], levels, (spec_a, spec_b)))
    if not out:
        raise DesignError(f"{bpath}.task.compare", f"{compare!r} needs at least two levels in this block")
    return out


# --- a participant's plan -------------------------------------------------------------------------------------


def block_order(design: Design, seed: int, row: int | None = None) -> list[BlockDesign]:
    """Blocks in presentation order: practice blocks keep their place; main blocks follow the policy."""
    policy = (design.study.get("counterbalancing") or {}).get("block_order", "fixed")
    blocks = list(design.blocks)
    main = [b for b in blocks if not b.practice]
    if policy == "fixed" or len(main) < 2:
        return blocks
    if policy == "latin_square":
        perm = counterbalance.latin_square_order(len(main), seed if row is None else row)
    else:
        perm = counterbalance.constrained_shuffle(list(range(len(main))), counterbalance.sub_seed(seed, "blocks"))
    ordered = iter([main[i] for i in perm])
    return [b if b.practice else next(ordered) for b in blocks]


def _in_group(condition: Condition, group: Group) -> bool:
    return all(condition.levels.get(k, v) == v for k, v in group.levels.items())


def participant_plan(design: Design, seed: int, group: str | None = None, row: int | None = None) -> list[BlockPlan]:
    """Every block a participant sees, in order, with their trials (deterministic in all arguments).

    ``seed`` drives every random choice (through per-block sub-seeds); ``group`` is a between-subjects group id
    (default: the only group); ``row`` picks the Latin-square row (default: the seed).
    """
    study = design.study
    cb = study.get("counterbalancing") or {}
    if cb.get("seed") == "fixed":
        seed = cb["fixed_seed"]
    groups_by_id = {g.id: g for g in design.groups}
    if group is None:
        if len(design.groups) != 1:
            raise ValueError(f"group: required, one of {', '.join(groups_by_id)}")
        group = design.groups[0].id
    if group not in groups_by_id:
        raise ValueError(f"group: unknown {group!r}; one of {', '.join(groups_by_id)}")
    g = groups_by_id[group]
    checks = (study.get("attention_checks") or {}).get("items") or []
    plans = []
    index = 0
    for block in block_order(design, seed, row):
        if block.procedure is not None:
            plans.append(BlockPlan(block.id, block.practice, (), block.break_after, block.procedure, block.base))
            continue
        trials = _block_trials(design, block, g, seed, cb)
        for item in sorted((c for c in checks if c["block"] == block.id), key=lambda c: _position_key(c)):
            pos = item.get("position", "random")
            if pos == "random":
                pos = random.Random(counterbalance.sub_seed(seed, "check", item["id"])).randint(0, len(trials))
            trials.insert(min(pos, len(trials)), _check_trial(design, block, item, seed))
        out = tuple(replace(t, index=index + i, position=i) for i, t in enumerate(trials))
        index += len(out)
        plans.append(BlockPlan(block.id, block.practice, out, block.break_after))
    return plans


def _position_key(item: dict) -> tuple[int, int]:
    pos = item.get("position", "random")
    return (1, 0) if pos == "random" else (0, pos)


def _trial(block: BlockDesign, cid: str, stimuli, order=None, **kw) -> TrialSpec:
    task = block.task
    meta = {k: task[k] for k in ("presentation", "gap_ms", "controls", "comment", "labels") if k in task}
    meta.setdefault("controls", "after_end")
    meta.setdefault("comment", "none")
    if task["type"] == "afc":
        meta.setdefault("presentation", "sequential")
        meta.setdefault("gap_ms", 1000)
    values = {"index": 0, "block": block.id, "position": 0, "type": task["type"], "condition": cid,
              "stimuli": stimuli, "question": task["question"], "scale": task.get("scale"), "task": meta,
              "practice": block.practice, "order": order}
    values.update(kw)
    return TrialSpec(**values)


def _block_trials(design: Design, block: BlockDesign, group: Group, seed: int, cb: dict) -> list[TrialSpec]:
    conds = [c for c in block.conditions if _in_group(c, group)]
    if block.order == "fixed":
        items = [c for _ in range(block.repeats) for c in conds]
    else:
        items = counterbalance.constrained_shuffle(
            [c for c in conds for _ in range(block.repeats)], counterbalance.sub_seed(seed, "order", block.id),
            cb.get("max_repeats"), key=lambda c: c.id,
        )
    if block.task["type"] != "afc":
        return [_trial(block, c.id, c.stimuli) for c in items]
    orders = _afc_orders([c.id for c in items], seed, block.id, cb.get("afc_order", "balanced"))
    return [_trial(block, c.id, c.stimuli if o == "AB" else c.stimuli[::-1], o) for c, o in zip(items, orders)]


def _afc_orders(keys: list[str], seed: int, label: str, policy: str) -> list[str]:
    if policy == "fixed":
        return ["AB"] * len(keys)
    if policy == "random":
        rng = random.Random(counterbalance.sub_seed(seed, "afc", label))
        return [rng.choice(("AB", "BA")) for _ in keys]
    return counterbalance.afc_orders(keys, counterbalance.sub_seed(seed, "afc", label))


def _check_trial(design: Design, block: BlockDesign, item: dict, seed: int) -> TrialSpec:
    study = design.study
    bi = block.index
    ci = study["attention_checks"]["items"].index(item)
    cpath = f"attention_checks.items[{ci}]"
    base = _base_layers(study, study["blocks"][bi], f"blocks[{bi}]")
    cid = f"attention:{item['id']}"
    if item["type"] == "catch":
        pair = tuple(_spec(study, [*base, (item[s], f"{cpath}.{s}")], design.language, cpath) for s in ("a", "b"))
        order = _afc_orders([cid], seed, f"check:{item['id']}", "random")[0]
        question = item.get("question") or block.task["question"]
        trial = _trial(block, cid, pair if order == "AB" else pair[::-1], order, question=question,
                       attention_check=item["id"], expected=item["expected"])
        task = dict(trial.task)
        task.setdefault("presentation", block.task.get("presentation", "sequential"))
        task.setdefault("gap_ms", block.task.get("gap_ms", 1000))
        return replace(trial, type="afc", scale=None, task=task)
    if "set" in item or "stimulus" in study["blocks"][bi] or not block.conditions:
        layers = [*base, (item["set"], f"{cpath}.set")] if "set" in item else base
        spec = _spec(study, layers, design.language, cpath)
    else:  # no stimulus of its own: looks like the block's first condition
        spec = block.conditions[0].stimuli[0]
    return _trial(block, cid, (spec,), question=item["question"], attention_check=item["id"],
                  expected=item["expected"])


# --- streams --------------------------------------------------------------------------------------------------


def cut_text(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters at a sentence end (else a space) in the second half,
    keeping its markdown well formed (``studyapp.design.textcut``)."""
    return textcut.cut_markdown(text, max_chars)


@cache
def _bundled_traces() -> dict[str, Stream]:
    from playback.core import demo, importers

    out: dict[str, Stream] = {}
    for path in demo.trace_files():
        for stream in importers.load(path).streams:
            out[stream.id] = stream
    return out


def bundled_trace_ids() -> list[str]:
    return list(_bundled_traces())


def stimulus_stream(
    spec: StimulusSpec, *, base_dir: str | Path | None = None, library: Callable[[str], Stream] | None = None
) -> Stream:
    """The stream of one stimulus: synthesised from a bundled text, or a trace re-timed to the spec.

    Deterministic. ``base_dir`` resolves a trace ``file``; ``library(name)`` returns a stored stimulus's stream
    (the study service passes a database lookup; without it a ``library`` trace raises ``LookupError``).
    """
    if spec.text is not None:
        text = texts.bundled_text(spec.text)
        if spec.max_chars is not None:
            text = cut_text(text, spec.max_chars)
        return synth.synthesize(text, spec.tokenizer, spec.timing, seed=spec.seed,
                                meta=StreamMeta(language=spec.language))
    trace = spec.trace or {}
    if "library" in trace:
        if library is None:
            raise LookupError(f"trace library {trace['library']!r}: no library lookup given")
        stream = library(trace["library"])
    elif "file" in trace:
        from playback.core import importers

        path = Path(base_dir or ".") / trace["file"]
        found = {s.id: s for s in importers.load(path).streams}
        if trace["id"] not in found:
            raise LookupError(f"trace {trace['id']!r} not in {path}")
        stream = found[trace["id"]]
    else:
        stream = _bundled_traces()[trace["id"]]
    if "ttft_ms" in spec.timing_set:
        stream = transforms.set_ttft(stream, spec.timing.ttft_ms, clamp=True)
    if "rate" in spec.timing_set:
        stream = transforms.rescale_rate(stream, spec.timing.rate)
    return stream


def trial_streams(trial: TrialSpec, **kw: Any) -> tuple[Stream, ...]:
    """The streams of a trial in presentation order (two for a 2AFC)."""
    return tuple(stimulus_stream(s, **kw) for s in trial.stimuli)


# --- summary --------------------------------------------------------------------------------------------------


def procedure_max_trials(procedure: dict) -> int:
    """The hard cap on an adaptive block's trials (every track's ``max_trials``, plus catch trials)."""
    from studyapp.design.adaptive.interleave import max_trials

    return max_trials(procedure)


def summary(design: Design, seed: int = 0, **stream_kw: Any) -> dict[str, Any]:
    """Counts and a duration estimate for a participant of each group (streams synthesised once each)."""
    durations: dict[str, float] = {}

    def stream_s(spec: StimulusSpec) -> float:
        key = repr(spec.to_dict())
        if key not in durations:
            stream = stimulus_stream(spec, **stream_kw)
            durations[key] = (stream.pieces[-1].t_ms / 1000.0) if stream.pieces else 0.0
        return durations[key]

    per_group = {}
    for g in design.groups:
        plan = participant_plan(design, seed, g.id)
        n_trials = 0
        seconds = FIXED_S + QUESTION_S * len(design.study.get("questionnaire") or [])
        for block in plan:
            if block.procedure is not None:
                n = procedure_max_trials(block.procedure)
                n_trials += n
                seconds += n * (stream_s(block.base) + RESPONSE_S["rating"]) if block.base else 0
                continue
            for t in block.trials:
                n_trials += 1
                streams = [stream_s(s) for s in t.stimuli]
                if t.type == "afc" and t.task.get("presentation") == "side_by_side":
                    seconds += max(streams)
                else:
                    seconds += sum(streams) + (t.task.get("gap_ms", 0) / 1000.0) * (len(streams) - 1)
                seconds += RESPONSE_S[t.type]
        per_group[g.id] = {"trials": n_trials, "estimated_s": round(seconds, 1)}
    return {"conditions": len(design.conditions), "groups": [g.id for g in design.groups],
            "blocks": [b.id for b in design.blocks], "per_group": per_group}
