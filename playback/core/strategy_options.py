"""The options each render strategy declares, read from the strategy's own module, and their validation.

Every ``static/js/playback/strategies/<name>.js`` declares ``export const OPTIONS = {...};`` in strict JSON:
per option its ``type`` (``number``, ``integer`` or ``choice``), ``default``, limits (``min``, ``max``,
``exclusiveMin``), ``choices``, a ``unit`` and ``atLeast`` (another option it may not fall below). The player
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

STRATEGY_DIR = Path(__file__).resolve().parents[2] / "static" / "js" / "playback" / "strategies"
DECLARATION = re.compile(r"^export const OPTIONS = (\{.*?\});$", re.M | re.S)
TYPES = ("number", "integer", "choice")


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

    def bounds(self) -> str:
        """The allowed values in words, as the error messages and the form's hints say them."""
        if self.type == "choice":
            return f"one of {', '.join(self.choices)}"
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
                      unit=raw.get("unit", ""), at_least=raw.get("atLeast", ""))
    if kind == "choice" and spec.default not in spec.choices:
        raise ValueError(f"{strategy}.js: option {name}: the default {spec.default!r} is not one of its choices")
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


def _value(spec: OptionSpec, raw: str) -> Any:
    """``raw`` as the option's type within its limits, or ``None``."""
    if spec.type == "choice":
        return raw if raw in spec.choices else None
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


def parse(strategy: str, given: Mapping[str, str], prefix: str = "") -> Parsed:
    """Read ``strategy``'s options out of ``given`` (option name -> text; empty text = the default).

    Unknown names and bad values each give a message naming ``prefix + name``; a bad value keeps the default.
    Values equal to the default are left out, so the result is canonical.
    """
    declared_here = specs(strategy)
    out = Parsed()
    for name, raw in given.items():
        raw = raw.strip() if isinstance(raw, str) else raw
        if raw in (None, ""):
            continue
        spec = declared_here.get(name)
        if spec is None:
            known = ", ".join(declared_here) or "none"
            out.errors.append(f"{prefix}{name}: not an option of {strategy} (its options: {known})")
            continue
        value = _value(spec, raw)
        if value is None:
            out.errors.append(f"{prefix}{name}: must be {spec.bounds()}, got {raw!r}")
            continue
        if value != spec.default:
            out.options[name] = value
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


def with_defaults(strategy: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared option of ``strategy``: the given value or its default."""
    return {name: options.get(name, spec.default) for name, spec in specs(strategy).items()}


def as_json(strategy: str) -> list[dict[str, Any]]:
    """The declaration in the form the playground's template and script use."""
    return [{"name": s.name, "type": s.type, "default": s.default, "min": s.min, "max": s.max,
             "exclusiveMin": s.exclusive_min, "choices": list(s.choices), "unit": s.unit, "atLeast": s.at_least,
             "bounds": s.bounds()} for s in specs(strategy).values()]
