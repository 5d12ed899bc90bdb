"""The study file: YAML in, every problem out with its path (``blocks[1].trials[3].rate: must be > 0``).

Validation has two passes. The JSON Schema (``studyapp/schema/study.schema.json``, published; see
docs/study-file.md) checks the structure, and every error it finds is turned into one readable line. Only a
structurally valid study gets the semantic pass, which checks what a schema cannot: names that must exist
(stimuli, factors, blocks, bundled texts, tokenizers, traces), timing parameters that combine into an invalid
``TimingSpec`` (reported where the offending value was written), quotas against groups, attention checks
against their block's scale, and whether ``max_repeats`` can be met. Translations are checked during the
first pass: every ``{en: ..., zh-hans: ...}`` mapping must cover exactly the study's ``languages``.
No Django import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema import ValidationError

from pacelab.jsonb import nul_paths
from studyapp.design import counterbalance
from studyapp.design import plan as design
from studyapp.design.scales import scale_range

SCHEMA_RESOURCE = ("schema", "study.schema.json")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
PATTERN_HINTS = {
    "^[a-z0-9][a-z0-9_-]{0,62}$": "must be a lowercase slug (a-z, 0-9, '-', '_'; at most 63 characters)",
    "^[A-Za-z_][A-Za-z0-9_]{0,62}$": "must be a name (letters, digits, '_'; not starting with a digit)",
    "^[^=,~;]+$": "must not contain '=', ',', '~' or ';'",
    "^https?://": "must be an http(s) URL",
    "^[a-z]{2,3}(-[a-z0-9]+)*$": "must be a language code such as 'en' or 'zh-hans'",
}


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a study file, at a JSON path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class StudyFileError(ValueError):
    """A study file with problems; ``problems`` lists them all, sorted by path."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(map(str, problems)))


# --- paths ----------------------------------------------------------------------------------------------------


def format_path(parts: Iterable[str | int]) -> str:
    """``["blocks", 1, "trials", 3, "rate"]`` → ``blocks[1].trials[3].rate``."""
    out = ""
    for part in parts:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
            continue
        part = str(part)
        if _IDENT.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _path_key(path: str) -> tuple:
    """Natural sort key: ``blocks[2]`` before ``blocks[10]``."""
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.findall(r"\d+|[^\[\].\d]+", path))


def sort_problems(problems: Iterable[Problem]) -> list[Problem]:
    return sorted(set(problems), key=lambda p: (_path_key(p.path), p.message))


# --- loading --------------------------------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """Safe YAML that refuses duplicate keys (PyYAML silently keeps the last one, hiding typos) and reads
    booleans as YAML 1.2 does: only true/false, so ``yes``, ``no``, ``on`` and ``off`` stay strings."""


_BOOL = "tag:yaml.org,2002:bool"
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != _BOOL]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))


def _mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    loader.flatten_mapping(node)
    seen: dict = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
            )
        seen[key] = True
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def parse_yaml(text: str, source: str = "<study>") -> Any:
    """Parse YAML text; a syntax error becomes ``StudyFileError`` with the line and column."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}: line {mark.line + 1}, column {mark.column + 1}" if mark else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise StudyFileError([Problem("", f"{where}: YAML error: {problem}")]) from None


# --- schema pass ----------------------------------------------------------------------------------------------


@cache
def schema() -> dict:
    """The published study-file JSON Schema."""
    return json.loads(resources.files("studyapp").joinpath(*SCHEMA_RESOURCE).read_text(encoding="utf-8"))


def _validator(languages: list[str] | None, definition: str | None = None) -> jsonschema.protocols.Validator:
    """A validator for the whole study, or for one ``$defs`` entry (``"params"``)."""
    def localized(validator, value, instance, _schema) -> Iterator[ValidationError]:
        if not value or not isinstance(instance, dict) or not languages:
            return
        missing = [lang for lang in languages if lang not in instance]
        if missing:
            yield ValidationError(f"missing translation for {', '.join(missing)}")
        for key in instance:
            if key not in languages:
                yield ValidationError(f"{key!r} is not one of the study's languages ({', '.join(languages)})",
                                      path=(key,))

    cls = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"x-localized": localized})
    root = schema()
    if definition is not None:
        root = {"$schema": root["$schema"], "$defs": root["$defs"], "$ref": f"#/$defs/{definition}"}
    return cls(root)


_TYPE_NAMES = {"object": "an object (mapping)", "array": "a list", "string": "a string", "number": "a number",
               "integer": "an integer", "boolean": "true or false", "null": "null"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    return "string"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _messages(error: ValidationError) -> Iterator[tuple[tuple, str]]:
    """(path parts, message) for one jsonschema error, descending into oneOf/anyOf to the branch that fits."""
    path = tuple(error.absolute_path)
    kind, value, inst, sch = error.validator, error.validator_value, error.instance, error.schema
    custom = sch.get("x-message") if isinstance(sch, dict) else None
    if kind in ("oneOf", "anyOf"):
        branches: dict[int, list[ValidationError]] = {}
        for sub in error.context or ():
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        fitting = [errs for i, errs in branches.items()
                   if not any(e.validator == "type" and not e.relative_path for e in errs)]
        if len(fitting) == 1 and len(branches) == len(value):
            for sub in fitting[0]:
                yield from _messages(sub)
            return
        yield path, custom or "does not match any of the allowed forms"
        return
    if custom and kind in ("not", "minProperties", "maxProperties"):
        yield path, custom
        return
    if kind == "required":
        match = re.match(r"^'(.+)' is a required property", error.message)
        yield (*path, match.group(1) if match else "?"), "required"
    elif kind == "additionalProperties":
        known = sorted((sch.get("properties") or {}).keys())
        for key in inst:
            if key not in (sch.get("properties") or {}):
                hint = f" (allowed: {', '.join(known)})" if known else ""
                yield (*path, key), f"unknown key{hint}"
    else:
        yield path, _message(kind, value, inst, error) or custom or error.message


_BOUNDS = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}


def _message(kind: str, value: Any, inst: Any, error: ValidationError) -> str | None:
    """The message for a jsonschema check on one value (None: the schema's own message)."""
    if kind == "type":
        wanted = value if isinstance(value, list) else [value]
        return f"must be {' or '.join(_TYPE_NAMES[w] for w in wanted)}, got {_TYPE_NAMES[_json_type(inst)]}"
    if kind == "enum":
        return f"must be one of {', '.join(_short(v) for v in value)}; got {_short(inst)}"
    if kind == "const":
        return f"must be {_short(value)}; got {_short(inst)}"
    if kind in _BOUNDS:
        return f"must be {_BOUNDS[kind]} {value:g}, got {_short(inst)}"
    if kind in ("minItems", "maxItems"):
        least = "at least" if kind == "minItems" else "at most"
        return f"must have {least} {value} item{'s' if value != 1 else ''}"
    if kind == "uniqueItems":
        return "items must be unique"
    if kind == "minLength":
        return "must not be empty" if value == 1 else f"must be at least {value} characters"
    if kind == "minProperties":
        return "must not be empty"
    if kind == "pattern":
        return PATTERN_HINTS.get(value, f"must match {value}") + f"; got {_short(inst)}"
    if kind == "x-localized":
        return error.message
    return None


def schema_problems(doc: Any) -> list[Problem]:
    """Every structural problem (JSON Schema and translations), sorted by path."""
    languages = None
    if isinstance(doc, dict) and isinstance(doc.get("languages"), list):
        languages = [lang for lang in doc["languages"] if isinstance(lang, str)]
    out = []
    for error in _validator(languages).iter_errors(doc):
        for parts, message in _messages(error):
            out.append(Problem(format_path(parts), message))
    return sort_problems(out)


# --- semantic pass --------------------------------------------------------------------------------------------


def semantic_problems(doc: dict, base_dir: str | Path | None = None) -> list[Problem]:
    """Problems a schema cannot express (see the module docstring), for a structurally valid study."""
    from playback.core import texts, tokenizers

    names = _Names(texts.bundled_texts(), tokenizers.names(), base_dir)
    out = _duplicate_ids(doc)
    for name, stim in doc["stimuli"].items():
        p = format_path(["stimuli", name])
        if "stimulus" in stim:
            out.append(Problem(f"{p}.stimulus", "a stimulus cannot start from another stimulus"))
        out.extend(names.problems(stim, p))
    for fi, factor in enumerate(doc.get("factors") or []):
        out.extend(_factor_problems(doc, factor, f"factors[{fi}]", names))
    for bi, block in enumerate(doc["blocks"]):
        out.extend(_block_problems(doc, block, f"blocks[{bi}]", names))
    if out:
        return sort_problems(out)

    expanded = None
    for language in doc["languages"]:
        try:
            expanded = design.expand(doc, language)
        except design.DesignError as exc:
            out.append(Problem(exc.path, exc.message))
            break
    if expanded is not None:
        out.extend(_plan_problems(doc, expanded))
    return sort_problems(out)


@dataclass(frozen=True)
class _Names:
    """What a parameter set may name: the bundled texts, the tokenizers, trace files under ``base_dir``."""

    known_texts: dict
    tokenizer_names: list[str]
    base_dir: str | Path | None

    def problems(self, params: dict, path: str, plain: bool = False) -> list[Problem]:
        return _param_names(params, path, self.known_texts, self.tokenizer_names, self.base_dir, plain=plain)


def _duplicate_ids(doc: dict) -> list[Problem]:
    """Factor names, block ids, questionnaire ids, attention-check ids and rejection reasons used twice."""
    out = []
    for key, items, field_name in (("factors", doc.get("factors") or [], "name"), ("blocks", doc["blocks"], "id"),
                                   ("questionnaire", doc.get("questionnaire") or [], "id"),
                                   ("attention_checks.items", (doc.get("attention_checks") or {}).get("items") or [],
                                    "id"),
                                   ("payments.rejection_reasons",
                                    (doc.get("payments") or {}).get("rejection_reasons") or [], "id")):
        seen: set = set()
        for i, item in enumerate(items):
            if item[field_name] in seen:
                out.append(Problem(f"{key}[{i}].{field_name}", f"duplicate {field_name} {item[field_name]!r}"))
            seen.add(item[field_name])
    return out


def _factor_problems(doc: dict, factor: dict, fp: str, names: _Names) -> list[Problem]:
    """One factor: what its plain levels set, their labels, the names in its levels, a log axis above 0."""
    out: list[Problem] = []
    add = lambda path, message: out.append(Problem(path, message))  # noqa: E731
    plain = [i for i, lv in enumerate(factor["levels"]) if not isinstance(lv, dict)]
    sets = factor.get("sets")
    if plain and sets is None:
        add(f"{fp}.sets", "required when levels are plain values")
    elif sets is not None and sets not in design.PARAM_KEYS:
        add(f"{fp}.sets", f"unknown parameter {sets!r}; one of {', '.join(design.PARAM_KEYS)}")
    elif sets is not None:
        validator = _validator(doc["languages"], "params")
        for li in plain:
            lv = factor["levels"][li]
            for e in validator.iter_errors({sets: lv}):
                for _, message in _messages(e):
                    add(f"{fp}.levels[{li}]", f"{sets}: {message}")
            out.extend(names.problems({sets: lv}, f"{fp}.levels[{li}]", plain=True))
    labels = [design.level_label(lv) for lv in factor["levels"]]
    for li, label in enumerate(labels):
        if labels.index(label) != li:
            add(f"{fp}.levels[{li}]", f"duplicate level label {label!r}")
        if re.search(r"[=,~;]", label):
            add(f"{fp}.levels[{li}]", "a plain level must not contain '=', ',', '~' or ';' (use {label, set})")
    for li, lv in enumerate(factor["levels"]):
        if isinstance(lv, dict):
            out.extend(names.problems(lv["set"], f"{fp}.levels[{li}].set"))
    if factor.get("axis") == "log":
        bad = [li for li, lv in enumerate(factor["levels"])
               if not isinstance(lv, dict) and not (isinstance(lv, int | float) and lv > 0)]
        for li in bad:
            add(f"{fp}.levels[{li}]", "a factor fitted on a log axis needs levels above 0 (or axis: linear)")
    return out


def _block_problems(doc: dict, block: dict, bp: str, names: _Names) -> list[Problem]:
    """One block: one way of giving trials, its stimulus, its task's analysis and scale, the names it sets."""
    out: list[Problem] = []
    add = lambda path, message: out.append(Problem(path, message))  # noqa: E731
    given = [k for k in ("design", "trials", "procedure") if k in block]
    if len(given) > 1:
        add(bp, f"give only one of `design`, `trials`, `procedure` (got {', '.join(given)})")
    if "stimulus" in block and block["stimulus"] not in doc["stimuli"]:
        add(f"{bp}.stimulus", f"unknown stimulus {block['stimulus']!r}")
    task = block["task"]
    if block.get("analysis") and task.get("type") != "acceptability":
        add(f"{bp}.analysis", "only an acceptability block is analysed with these settings (axis, "
            "population_share, lapse_max, guess_max)")
    out.extend(_scale_problems(task.get("scale"), f"{bp}.task.scale"))
    for ti, trial in enumerate(block.get("trials") or []):
        for side in ("a", "b"):
            if side in trial:
                out.extend(names.problems(trial[side], f"{bp}.trials[{ti}].{side}"))
        out.extend(names.problems({k: v for k, v in trial.items() if k not in ("a", "b", "label")},
                                  f"{bp}.trials[{ti}]"))
    if "set" in block:
        out.extend(names.problems(block["set"], f"{bp}.set"))
    if "procedure" in block:
        out.extend(_procedure_problems(block["procedure"], f"{bp}.procedure"))
    return out


def _scale_problems(scale: dict | None, path: str) -> list[Problem]:
    if not scale:
        return []
    if scale["type"] == "slider":
        low, high = scale_range(scale)
        if low >= high:
            return [Problem(path, "min must be below max")]
    if scale["type"] == "likert" and "labels" in scale and len(scale["labels"]) != scale["points"]:
        return [Problem(f"{path}.labels", f"needs one label per point ({scale['points']})")]
    return []


LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}


def language_warnings(doc: dict) -> list[Problem]:
    """Stimuli whose text is in another language than a participant language they are shown to (a valid study
    may want that, so these are warnings, not problems). One per block, participant language and text."""
    out: list[Problem] = []
    seen: set[tuple] = set()
    for language in doc["languages"]:
        expanded = design.expand(doc, language)
        for block in expanded.blocks:
            specs = [s for c in block.conditions for s in c.stimuli]
            if block.base is not None:
                specs.append(block.base)
            for spec in specs:
                content = spec.language
                key = (block.id, language, spec.text)
                if not content or language.split("-")[0] == content or key in seen:
                    continue
                seen.add(key)
                bi = next(i for i, b in enumerate(doc["blocks"]) if b["id"] == block.id)
                out.append(Problem(f"blocks[{bi}]", (
                    f"{language} participants are shown {LANGUAGE_NAMES.get(content, content)} text {spec.text!r} "
                    f"in block {block.id!r}; give one text per language (text: {{en: ..., zh-hans: ...}}) "
                    f"unless that is intended")))
    return sort_problems(out)


def _param_names(params: dict, path: str, known_texts: dict, tokenizer_names: list[str], base_dir,
                 plain: bool = False) -> list[Problem]:
    """Unknown stimulus, text, tokenizer or trace names in one parameter set."""
    out = []
    at = (lambda key: path) if plain else (lambda key: f"{path}.{key}")
    text = params.get("text")
    for lang, name in (text.items() if isinstance(text, dict) else [("", text)] if text else []):
        if name not in known_texts:
            where = f"{at('text')}.{lang}" if lang else at("text")
            out.append(Problem(where, f"unknown bundled text {name!r}; known: {', '.join(known_texts)}"))
    tok = params.get("tokenizer")
    if tok is not None and tok not in tokenizer_names:
        out.append(Problem(at("tokenizer"), f"unknown tokenizer {tok!r}; known: {', '.join(tokenizer_names)}"))
    trace = params.get("trace")
    if isinstance(trace, dict) and "id" in trace:
        if "file" in trace:
            file = Path(base_dir or ".") / trace["file"]
            if not file.is_file():
                out.append(Problem(f"{at('trace')}.file", f"no such file: {file}"))
        elif trace["id"] not in design.bundled_trace_ids():
            out.append(Problem(f"{at('trace')}.id", f"unknown bundled trace {trace['id']!r}; known: "
                                                    f"{', '.join(design.bundled_trace_ids())}"))
    return out


def _procedure_problems(procedure: dict, path: str) -> list[Problem]:
    """An adaptive ``procedure:`` is validated by ``studyapp.design.adaptive`` (which stops at its first problem)."""
    from studyapp.design.adaptive import ProcedureConfigError, parse_procedure

    try:
        parse_procedure(procedure, key=path)
    except ProcedureConfigError as exc:
        return [Problem(exc.key, exc.problem)]
    return []


def _plan_problems(doc: dict, expanded: design.Design) -> list[Problem]:
    """Problems of the expanded design: quotas per group, repeats the counterbalancing cannot order, attention
    checks that do not fit their block."""
    return _quota_problems(doc, [g.id for g in expanded.groups]) + _repeat_problems(doc, expanded) + \
        _attention_problems(doc, expanded)


def _quota_problems(doc: dict, group_ids: list[str]) -> list[Problem]:
    out: list[Problem] = []
    quotas = ((doc.get("limits") or {}).get("quotas") or {}).get("groups")
    if quotas is not None:
        for key in quotas:
            if key not in group_ids:
                out.append(Problem(format_path(["limits", "quotas", "groups", key]),
                                   f"no such group; groups: {', '.join(group_ids)}"))
        for g in group_ids:
            if g not in quotas:
                out.append(Problem("limits.quotas.groups", f"no quota for group {g!r}"))
    overall = ((doc.get("limits") or {}).get("quotas") or {}).get("overall")
    if quotas and overall is not None and overall > sum(quotas.values()):
        out.append(Problem("limits.quotas.overall", f"{overall} exceeds the sum of the group quotas "
                                                    f"({sum(quotas.values())})"))
    return out


def _repeat_problems(doc: dict, expanded: design.Design) -> list[Problem]:
    out: list[Problem] = []
    max_run = (doc.get("counterbalancing") or {}).get("max_repeats")
    for block in expanded.blocks:
        if max_run is None or block.order == "fixed" or block.procedure is not None:
            continue
        for g in expanded.groups:
            counts = {c.id: block.repeats for c in block.conditions if design._in_group(c, g)}
            if counts and not counterbalance.run_feasible(counts, max_run):
                out.append(Problem(f"blocks[{block.index}].repeats",
                                   f"{block.repeats} repeats of {len(counts)} condition(s) cannot keep "
                                   f"counterbalancing.max_repeats {max_run} (group {g.id})"))
                break
    return out


def _attention_problems(doc: dict, expanded: design.Design) -> list[Problem]:
    out: list[Problem] = []
    blocks = {b["id"]: (i, b) for i, b in enumerate(doc["blocks"])}
    for ci, item in enumerate((doc.get("attention_checks") or {}).get("items") or []):
        cp = f"attention_checks.items[{ci}]"
        if item["block"] not in blocks:
            out.append(Problem(f"{cp}.block", f"unknown block {item['block']!r}"))
            continue
        bi, block = blocks[item["block"]]
        if "procedure" in block:
            out.append(Problem(f"{cp}.block", "attention checks cannot go into an adaptive block"))
            continue
        bd = expanded.blocks[bi]
        if item["type"] == "catch":
            if "question" not in item and bd.task["type"] != "afc":
                out.append(Problem(f"{cp}.question", "required when the block's task is not a 2AFC"))
            continue
        out.extend(_expected_problems(item["expected"], bd.task, f"{cp}.expected"))
        if "a" in item or "b" in item:
            out.append(Problem(cp, "`a`/`b` are for catch trials"))
    return out


def _expected_problems(expected: Any, task: dict, path: str) -> list[Problem]:
    kind = task["type"]
    if kind == "reading":
        return [Problem(path, "a reading task has no answer to instruct")]
    if kind == "acceptability" and expected not in (True, False, "yes", "no"):
        return [Problem(path, f"must be yes or no for an acceptability task; got {_short(expected)}")]
    if kind == "afc" and expected not in ("a", "b", "first", "second"):
        return [Problem(path, f"must be a, b, first or second for a 2AFC task; got {_short(expected)}")]
    if kind == "rating":
        scale = task["scale"]
        lo, hi = scale_range(scale)
        if isinstance(expected, bool) or not isinstance(expected, int | float) or not lo <= expected <= hi:
            return [Problem(path, f"must be a number from {lo:g} to {hi:g} on this block's scale")]
    return []


# --- entry points ---------------------------------------------------------------------------------------------


def validate(doc: Any, base_dir: str | Path | None = None) -> list[Problem]:
    """All problems of a parsed study document, sorted by path (empty: valid)."""
    # NUL first: PostgreSQL could not store the document, whatever else is right with it
    problems = [Problem(path, "must not contain the NUL character (U+0000)") for path in nul_paths(doc)]
    problems += schema_problems(doc)
    if problems:
        return sort_problems(problems)
    return semantic_problems(doc, base_dir)


def load_text(text: str, source: str = "<study>", base_dir: str | Path | None = None) -> dict:
    """Parse and validate YAML text; ``StudyFileError`` lists every problem."""
    doc = parse_yaml(text, source)
    problems = validate(doc, base_dir)
    if problems:
        raise StudyFileError(problems)
    return doc


def load_study(path: str | Path) -> dict:
    """Read, parse and validate a study file (trace files resolve relative to it)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StudyFileError([Problem("", f"{path}: {exc.strerror or exc}")]) from None
    return load_text(text, str(path), path.parent)


def demo_study_path() -> Path:
    """The bundled demo study (``studyapp/data/demo-study.yaml``)."""
    return Path(str(resources.files("studyapp") / "data" / "demo-study.yaml"))
