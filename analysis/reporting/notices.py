"""Warnings that a reader's page words itself: a fit whose lapse or guess rate ended at its bound, and levels that
stop short of the curve's top or bottom.

The pipeline stores each as a code and its values (a *notice*: ``{"code": "bound", ...}`` or ``{"code": "reach",
...}``, in the entry's ``notices``), so the results page and the report word it in the reader's language
(``templates/analysis/_notice.html``, translatable) from the same numbers. ``english`` renders the plain-text
sentence (the entry's ``warnings`` in results.json) from the same code: the only English wording outside the
template, and the same sentence (tests/analysis/reporting/test_notices.py renders both). ``shown`` formats a
notice's numbers once, for both.

Notices::

    {"code": "bound", "condition": "c1", "model": "pooled" | "population", "rate": "lapse" | "guess",
     "value": 0.2, "bound": 0.2, "log_axis": false}
    {"code": "reach", "condition": "c1", "end": "top" | "bottom", "rate": "lapse" | "guess",
     "reach": 0.62, "value": 0.081, "quantile": 0.75}

``reach`` is how far up the population-averaged core curve is at the highest level tested (``end`` "top", the
lapse rate then read from the curve's shape) or already is at the lowest (``end`` "bottom", the guess rate).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from analysis.tables.headline import number

BOUND = "bound"
REACH = "reach"
RATE_OF_END = {"top": "lapse", "bottom": "guess"}


def bound(condition: Any, rate: str, value: float, bound: float, log_axis: bool, model: str = "pooled"
          ) -> dict[str, Any]:
    """A fit whose ``rate`` ("lapse" or "guess") ended at (or near) its upper ``bound``; ``model`` "pooled" (the
    pooled psychometric fit) or "population" (the population model's own rate)."""
    return {"code": BOUND, "condition": str(condition), "model": model, "rate": rate, "value": float(value),
            "bound": float(bound), "log_axis": bool(log_axis)}


def reach(condition: Any, end: str, reach: float, value: float, quantile: float) -> dict[str, Any]:
    """Levels that stop short of the curve's ``end`` ("top" or "bottom"), which it reaches only to ``reach``;
    ``value`` is the rate (lapse at the top, guess at the bottom) then read from the curve's shape."""
    return {"code": REACH, "condition": str(condition), "end": end, "rate": RATE_OF_END[end], "reach": float(reach),
            "value": float(value), "quantile": float(quantile)}


def shown(notice: Mapping[str, Any]) -> dict[str, Any]:
    """The notice with its numbers formatted as the reader sees them: ``value`` to three significant digits,
    ``bound`` as given, ``reach`` and ``percent`` (the quantile) in whole or given percent."""
    out = dict(notice)
    out["value"] = number(notice.get("value"))
    if notice.get("code") == BOUND:
        out["bound"] = f"{float(notice['bound']):g}"
    else:
        out["reach"] = f"{100 * float(notice['reach']):.0f}"
        out["percent"] = f"{100 * float(notice['quantile']):g}"
    return out


def english(notice: Mapping[str, Any]) -> str:
    """The notice as one plain English sentence (or two: a bound's says what to try)."""
    n = shown(notice)
    cond, rate = n["condition"], n["rate"]
    if n["code"] == BOUND:
        who = f"{cond} (population model)" if n.get("model") == "population" else cond
        advice = ("Try more levels around the threshold, or a wider bound (analysis: lapse_max or guess_max in the "
                  "block)." if n.get("log_axis") else
                  "Try a log axis (analysis: {axis: log} in the block), more levels around the threshold, or a wider "
                  "bound (analysis: lapse_max or guess_max in the block).")
        return (f"{who}: the {rate} rate ended at {n['value']}, at its bound {n['bound']}: the curve does not fit "
                f"the answers at the ends of the levels and the misfit went into the {rate} rate. {advice}")
    where = ("at the highest level tested the average participant's curve is only" if n["end"] == "top" else
             "at the lowest level tested the average participant's curve is already")
    return (f"{cond}: {where} {n['reach']} % of the way up, so the {rate} rate ({n['value']}) is read from the "
            f"curve's shape and the {n['percent']} % point may be off by more than its interval says. Test levels "
            f"that reach further.")


def worded(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A results entry (psychometric or population) for a page: ``notices_shown`` (its notices, formatted, for
    ``_notice.html``) and ``plain_warnings`` (its other warnings: those no notice words)."""
    notices: Sequence[Mapping[str, Any]] = entry.get("notices") or []
    return {**entry, "notices_shown": [shown(n) for n in notices],
            "plain_warnings": unworded(entry.get("warnings") or [], notices)}


def unworded(warnings: Iterable[str], notices: Iterable[Mapping[str, Any]]) -> list[str]:
    """The warnings that are not the English of one of ``notices`` (a page words those itself)."""
    said = {english(n) for n in notices}
    return [w for w in warnings if w not in said]
