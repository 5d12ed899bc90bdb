"""The options each render strategy declares, read from the strategy's own module, and their validation.

Every ``static/js/playback/strategies/<name>.js`` declares ``export const OPTIONS = {...};`` in strict JSON:
per option its ``type`` (``number``, ``integer``, ``choice`` or ``text``), ``default``, limits (``min``, ``max``,
``exclusiveMin``), ``choices``, a ``unit`` and ``atLeast`` (another option it may not fall below); a ``text`` option
has a ``maxLength``, an optional ``pattern`` (a regular expression the whole value must match, written in the
syntax Python's ``re`` and the browser's RegExp share) and an optional ``format``: ``regexp`` (a JavaScript
RegExp source, checked by ``playback.core.jsregexp``), ``flags`` (RegExp flags) or ``locale`` (a BCP 47 language tag, as
``Intl.getCanonicalLocales`` accepts it). A choice may say which options each of its values ``needs``. The player
uses the declaration as is; the playground builds its form from it and validates with ``parse`` here, so a new
option appears in the playground the moment a strategy declares it. No Django import.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from playback.core import jsregexp, locales

STRATEGY_DIR = Path(__file__).resolve().parents[2] / "static" / "js" / "playback" / "strategies"
DECLARATION = re.compile(r"^export const OPTIONS = (\{.*?\});$", re.M | re.S)
TYPES = ("number", "integer", "choice", "text")
FORMATS = ("", "regexp", "flags", "locale")


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One declared option of a strategy."""

    name: str
    type: str
    default: Any
    min: float | None = None
    max: float | None = None
    exclusive_min: bool = False
    choices: tuple[str, ...] = ()
    unit: str = ""
    at_least: str = ""
    max_length: int = 200
    pattern: str = ""
    format: str = ""
    needs: tuple[tuple[str, tuple[str, ...]], ...] = ()  # choice value -> options it needs

    def bounds(self) -> str:
        """The allowed values in words, as the error messages and the form's hints say them."""
        if self.type == "choice":
            return f"one of {', '.join(self.choices)}"
        if self.type == "text":
            kind = {"regexp": "a JavaScript regular expression", "flags": "RegExp flags",
                    "locale": "a language tag such as zh or ja"}
            return f"{kind.get(self.format, 'a text')} of at most {self.max_length} characters"
        kind = "a whole number" if self.type == "integer" else "a number"
        parts = []
        if self.min is not None:
            parts.append(f"{'>' if self.exclusive_min else '>='} {_num(self.min)}")
        if self.max is not None:
            parts.append(f"<= {_num(self.max)}")
        return f"{kind} {' and '.join(parts)}".strip()


@dataclass(frozen=True, slots=True)
class Parsed:
    """The options given (only those that differ from the default), and one message per bad value."""

    options: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _spec(strategy: str, name: str, raw: Mapping[str, Any]) -> OptionSpec:
    kind = raw.get("type")
    if kind not in TYPES:
        raise ValueError(f"{strategy}.js: option {name}: type must be one of {', '.join(TYPES)}, got {kind!r}")
    spec = OptionSpec(name=name, type=kind, default=raw.get("default"), min=raw.get("min"), max=raw.get("max"),
                      exclusive_min=bool(raw.get("exclusiveMin", False)), choices=tuple(raw.get("choices", ())),
                      unit=raw.get("unit", ""), at_least=raw.get("atLeast", ""),
                      max_length=int(raw.get("maxLength", 200)), pattern=raw.get("pattern", ""),
                      format=raw.get("format", ""),
                      needs=tuple((k, tuple(v)) for k, v in sorted(raw.get("needs", {}).items())))
    if kind == "choice" and spec.default not in spec.choices:
        raise ValueError(f"{strategy}.js: option {name}: the default {spec.default!r} is not one of its choices")
    if kind == "text" and (not isinstance(spec.default, str) or spec.format not in FORMATS):
        raise ValueError(f"{strategy}.js: option {name}: a text option needs a text default and a format in "
                         f"{FORMATS}")
    return spec


def read_declaration(source: str, strategy: str = "?") -> dict[str, OptionSpec]:
    """The options declared in one strategy module's source text (``{}`` when it declares none)."""
    m = DECLARATION.search(source)
    if m is None:
        return {}
    try:
        raw = json.loads(m.group(1))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{strategy}.js: OPTIONS must be strict JSON ({exc})") from None
    return {name: _spec(strategy, name, spec) for name, spec in raw.items()}


@cache
def declared(directory: Path = STRATEGY_DIR) -> dict[str, dict[str, OptionSpec]]:
    """``{strategy: {option: OptionSpec}}`` for every strategy module in ``directory``."""
    out = {}
    for path in sorted(directory.glob("*.js")):
        if path.stem in ("index", "boundary"):
            continue
        out[path.stem] = read_declaration(path.read_text(encoding="utf-8"), path.stem)
    return out


def specs(strategy: str) -> dict[str, OptionSpec]:
    """The declared options of ``strategy`` (``{}`` for one without options or an unknown one)."""
    return declared().get(strategy, {})


def _text_problem(spec: OptionSpec, raw: Any) -> str | None:
    """Why ``raw`` is not a valid value of the text option ``spec`` (None when it is)."""
    if not isinstance(raw, str):
        return f"must be a text, got {raw!r}"
    if len(raw) > spec.max_length:
        return f"must be at most {spec.max_length} characters, got {len(raw)}"
    if spec.pattern and not re.fullmatch(spec.pattern, raw):
        return f"must be {spec.bounds()} matching {spec.pattern}, got {raw!r}"
    if spec.format == "regexp":
        problem = jsregexp.problem(raw)
        return f"is not a valid regular expression ({problem}): {raw!r}" if problem else None
    if spec.format == "flags" and (problem := jsregexp.flags_problem(raw)):
        return f"{problem}"
    if spec.format == "locale" and not locales.well_formed(raw):
        return f"is not a language tag (such as en, zh, ja, zh-Hant), got {raw!r}"
    return None


def _value(spec: OptionSpec, raw: Any) -> Any:
    """``raw`` as the option's type within its limits, or ``None``."""
    if spec.type == "choice":
        return raw if raw in spec.choices else None
    if isinstance(raw, bool):
        return None
    if spec.type == "integer" and isinstance(raw, float) and not raw.is_integer():
        return None
    try:
        value: float = int(raw) if spec.type == "integer" else float(raw)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    if spec.min is not None and (value <= spec.min if spec.exclusive_min else value < spec.min):
        return None
    if spec.max is not None and value > spec.max:
        return None
    return value


def specs_type(declared_here: Mapping[str, OptionSpec], name: str) -> str:
    spec = declared_here.get(name)
    return spec.type if spec else ""


def parse(strategy: str, given: Mapping[str, str], prefix: str = "") -> Parsed:
    """Read ``strategy``'s options out of ``given`` (option name -> text; empty text = the default).

    Unknown names and bad values each give a message naming ``prefix + name``; a bad value keeps the default.
    Values equal to the default are left out, so the result is canonical.
    """
    declared_here = specs(strategy)
    out = Parsed()
    for name, raw in given.items():
        if isinstance(raw, str) and specs_type(declared_here, name) != "text":
            raw = raw.strip()
        if raw in (None, ""):
            continue
        spec = declared_here.get(name)
        if spec is None:
            known = ", ".join(declared_here) or "none"
            out.errors.append(f"{prefix}{name}: not an option of {strategy} (its options: {known})")
            continue
        if spec.type == "text":
            problem = _text_problem(spec, raw)
            if problem:
                out.errors.append(f"{prefix}{name}: {problem}")
                continue
            value = raw
        else:
            value = _value(spec, raw)
        if value is None:
            out.errors.append(f"{prefix}{name}: must be {spec.bounds()}, got {raw!r}")
            continue
        if value != spec.default:
            out.options[name] = value
    _needs(strategy, declared_here, out, prefix)
    for name, spec in declared_here.items():  # cross-option limits
        if not spec.at_least or (name not in out.options and spec.at_least not in out.options):
            continue
        low = out.options.get(spec.at_least, declared_here[spec.at_least].default)
        value = out.options.get(name, spec.default)
        if value < low:
            out.errors.append(f"{prefix}{name}: must be >= {spec.at_least} ({_num(low)}), got {_num(value)}")
            out.options.pop(name, None)
            out.options.pop(spec.at_least, None)
    return out


def _needs(strategy: str, declared_here: Mapping[str, OptionSpec], out: Parsed, prefix: str) -> None:
    """A choice whose value needs other options (``chunking: regexp`` needs ``regexp``): name the missing ones."""
    for name, spec in declared_here.items():
        value = out.options.get(name, spec.default)
        for needed in dict(spec.needs).get(value, ()):
            named = any(e.startswith(f"{prefix}{needed}:") for e in out.errors)
            if out.options.get(needed, declared_here[needed].default) in ("", None) and not named:
                out.errors.append(f"{prefix}{needed}: required when {name} is {value} ({strategy})")
                out.options.pop(name, None)


def with_defaults(strategy: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared option of ``strategy``: the given value or its default."""
    return {name: options.get(name, spec.default) for name, spec in specs(strategy).items()}


def as_json(strategy: str) -> list[dict[str, Any]]:
    """The declaration in the form the playground's template and script use."""
    return [{"name": s.name, "type": s.type, "default": s.default, "min": s.min, "max": s.max,
             "exclusiveMin": s.exclusive_min, "choices": list(s.choices), "unit": s.unit, "atLeast": s.at_least,
             "maxLength": s.max_length, "pattern": s.pattern, "format": s.format,
             "bounds": s.bounds()} for s in specs(strategy).values()]
