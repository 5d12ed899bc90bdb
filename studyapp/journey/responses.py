"""Checking what a participant submits for a step (pure, no Django).

Each check returns the value to store or raises ``ResponseError`` naming the field, so a malformed or out-of-range
answer is refused with a clear message and changes nothing.
"""

from __future__ import annotations

import math
from typing import Any

from pacelab import browsers
from pacelab.jsonb import MAX_EXACT_NUMBER, nul_paths
from studyapp.design.scales import is_likert, scale_range

# What a browser can report (environment.js measures refresh from rAF gaps of at least 1 ms). The bounds also keep
# every stored number within what jsonb gives back unchanged.
MAX_PIXELS = 100_000
MAX_REFRESH_HZ = 1000.0
MAX_DPR = 100.0
MAX_MS = 24 * 3600 * 1000  # a response or reading time: one day at most


class ResponseError(ValueError):
    """A submission that cannot be stored; ``str()`` reads ``field: problem``."""


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ResponseError(f"{name}: must be a number, got {value!r}")
    return float(value)


def _within(name: str, value: Any, low: float, high: float) -> float:
    number = _number(name, value)
    if not low <= number <= high:
        raise ResponseError(f"{name}: must be between {low:g} and {high:g}, got {value!r}")
    return number


def no_nul(value: Any, name: str = "payload") -> None:
    """Refuse the NUL character anywhere in a submission (keys and text): PostgreSQL cannot store it in text or
    jsonb, and no participant types it."""
    found = nul_paths(value, name)
    if found:
        raise ResponseError(f"{found[0]}: text must not contain the NUL character (U+0000)")


def panel_value(value: Any) -> str:
    """A recruitment-link parameter as stored: text, control characters (NUL among them) removed, 128 at most."""
    text = value if isinstance(value, str) else ""
    return "".join(ch for ch in text if ch.isprintable() or ch == " ").strip()[:128]


def response_ms(payload: dict) -> float | None:
    value = payload.get("response_ms")
    if value is None:
        return None
    return _within("response_ms", value, 0, MAX_MS)


def trial_value(trial: dict, payload: dict) -> dict[str, Any]:
    """The stored value of a trial answer (``trial`` is a ``TrialSpec.to_dict()``)."""
    kind = trial["type"]
    response = payload.get("response")
    if kind == "acceptability":
        if response not in ("yes", "no"):
            raise ResponseError(f"response: must be 'yes' or 'no', got {response!r}")
        return {"response": response, "accept": response == "yes"}
    if kind == "rating":
        scale = trial.get("scale")
        low, high = scale_range(scale)
        if is_likert(scale):
            points = int(high)
            if isinstance(response, bool) or not isinstance(response, int) or not 1 <= response <= points:
                raise ResponseError(f"response: must be an integer from 1 to {points}, got {response!r}")
            return {"response": response}
        value = _number("response", response)
        if not low <= value <= high:
            raise ResponseError(f"response: must be between {low:g} and {high:g}, got {response!r}")
        return {"response": value}
    if kind == "afc":
        if response not in ("a", "b"):
            raise ResponseError(f"response: must be 'a' (the first shown) or 'b' (the second), got {response!r}")
        order = trial.get("order") or "AB"
        chosen = order[0] if response == "a" else order[1]
        return {"response": response, "chosen": chosen}
    if kind == "reading":
        if response != "done":
            raise ResponseError(f"response: must be 'done', got {response!r}")
        reading = _within("reading_ms", payload.get("reading_ms"), 0, MAX_MS)
        return {"response": "done", "reading_ms": reading}
    raise ResponseError(f"trial type {kind!r} cannot be answered")


def attention_passed(trial: dict, value: dict[str, Any]) -> bool | None:
    """Whether an attention-check trial was passed (``None`` for an ordinary trial)."""
    if not trial.get("attention_check"):
        return None
    expected = trial.get("expected")
    if trial["type"] == "afc":
        return value["chosen"].lower() == str(expected).lower()
    if trial["type"] == "acceptability":
        return value["response"] == expected or value["accept"] == expected
    scale = trial.get("scale") or {}
    if scale.get("type") == "slider" and isinstance(expected, int | float) and not isinstance(expected, bool):
        return abs(value["response"] - expected) <= slider_tolerance(scale)
    return value["response"] == expected


def slider_tolerance(scale: dict) -> float:
    """How far from an instructed value a slider answer may land and still pass: 5 % of the scale (at least one
    step). Dragging a thumb to an exact value is unreliable on a touchpad or phone, so exact equality would fail
    attentive participants."""
    lo, hi = scale_range(scale)
    return max(float(scale.get("step", 1)), 0.05 * (hi - lo))


def comment(trial: dict, payload: dict) -> str:
    text = payload.get("comment") or ""
    if not isinstance(text, str):
        raise ResponseError("comment: must be text")
    if text and (trial.get("task") or {}).get("comment") not in ("optional", "required"):
        raise ResponseError("comment: this trial takes no comment")
    if not text and (trial.get("task") or {}).get("comment") == "required":
        raise ResponseError("comment: required")
    if len(text) > 2000:
        raise ResponseError("comment: at most 2000 characters")
    return text


def questionnaire_answers(items: list[dict], answers: Any) -> dict[str, Any]:
    """Check every item; unknown items are refused, required ones must be there."""
    if not isinstance(answers, dict):
        raise ResponseError("answers: must be an object {item id: value}")
    known = {item["id"]: item for item in items}
    for key in answers:
        if key not in known:
            raise ResponseError(f"answers.{key}: not an item of this questionnaire")
    out: dict[str, Any] = {}
    for item in items:
        iid = item["id"]
        value = answers.get(iid)
        if value in (None, "", []):
            if item.get("required", True):
                raise ResponseError(f"answers.{iid}: required")
            continue
        out[iid] = _item_value(item, value)
    return out


def _item_value(item: dict, value: Any) -> Any:
    """One answered questionnaire item's value, checked against its type (a number comes back as a number)."""
    iid, kind = item["id"], item["type"]
    options = [o["value"] for o in item.get("options", [])]
    if kind == "likert":
        points = int(item.get("points", 5))
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= points:
            raise ResponseError(f"answers.{iid}: must be an integer from 1 to {points}")
    elif kind == "single_choice":
        other = item.get("other") and isinstance(value, str) and value.startswith("other:")
        if value not in options and not other:
            raise ResponseError(f"answers.{iid}: must be one of {', '.join(map(str, options))}")
    elif kind == "multiple_choice":
        if not isinstance(value, list) or any(
            v not in options and not (item.get("other") and isinstance(v, str) and v.startswith("other:"))
            for v in value
        ):
            raise ResponseError(f"answers.{iid}: must be a list of {', '.join(map(str, options))}")
    elif kind == "number":
        number = _number(f"answers.{iid}", value)
        if abs(number) > MAX_EXACT_NUMBER:  # what jsonb gives back unchanged (pacelab/jsonb.py)
            raise ResponseError(f"answers.{iid}: must be within ±{MAX_EXACT_NUMBER:g}")
        if "min" in item and number < item["min"] or "max" in item and number > item["max"]:
            raise ResponseError(f"answers.{iid}: must be between {item.get('min')} and {item.get('max')}")
        value = number
    elif kind == "text":
        if not isinstance(value, str) or len(value) > int(item.get("max_length", 2000)):
            raise ResponseError(f"answers.{iid}: must be text of at most {item.get('max_length', 2000)} characters")
    return value


def environment(payload: dict) -> dict[str, Any]:
    """The browser's report: viewport, refresh rate, device class, user agent; the engine and its version are
    read from the user agent here (pacelab.browsers), and the timer resolution the page measured is kept."""
    env = payload.get("environment")
    if not isinstance(env, dict):
        raise ResponseError("environment: must be an object")
    vw = env.get("viewport") or {}
    if not isinstance(vw, dict):
        raise ResponseError(f"environment.viewport: must be an object {{width, height}}, got {type(vw).__name__}")
    out = {
        "user_agent": str(env.get("user_agent", ""))[:500],
        "viewport": {"width": int(_within("environment.viewport.width", vw.get("width"), 0, MAX_PIXELS)),
                     "height": int(_within("environment.viewport.height", vw.get("height"), 0, MAX_PIXELS))},
        "refresh_hz": _within("environment.refresh_hz", env.get("refresh_hz"), 0, MAX_REFRESH_HZ),
        "device": env.get("device"),
        "dpr": _within("environment.dpr", env.get("dpr", 1), 0, MAX_DPR),
        "touch": bool(env.get("touch", False)),
        "language": str(env.get("language", ""))[:35],
    }
    out["engine"], out["engine_version"] = browsers.engine_of(out["user_agent"])
    if env.get("timer_resolution_ms") is not None:
        out["timer_resolution_ms"] = _within("environment.timer_resolution_ms", env["timer_resolution_ms"], 0, 1000)
    if out["device"] not in ("desktop", "tablet", "phone"):
        raise ResponseError(f"environment.device: must be desktop, tablet or phone, got {out['device']!r}")
    return out


def environment_refusal(limits: dict, env: dict[str, Any]) -> str | None:
    """Why this environment does not meet the study's limits (``None``: it does)."""
    devices = limits.get("devices")
    if devices and env["device"] not in devices:
        return f"device {env['device']} not allowed"
    engine = env.get("engine") or browsers.engine_of(env.get("user_agent"))[0]
    if not browsers.allowed(engine, limits.get("browsers")):
        return f"browser {engine or 'unknown'} not allowed"
    mv = limits.get("min_viewport") or {}
    if env["viewport"]["width"] < mv.get("width", 0) or env["viewport"]["height"] < mv.get("height", 0):
        return "viewport too small"
    if env["refresh_hz"] < limits.get("min_refresh_hz", 0):
        return "refresh rate too low"
    return None
