"""The headline numbers of an analysis run, per acceptability condition, as the results page shows them.

One reader for the end-to-end validation (``benchmarks/e2e.py``) and the planner (``analysis.planning``), so both
check the numbers a researcher reads: the population's P % point (``population_q``, the answer to "at what rate
do P % of users accept"), the population median (``population_mu``) and the pooled curve's level at P %, each
with its 95 % interval where the results carry one. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One dict per (yes/no block, condition) of ``results["population"]``: ``q``, ``q_low``, ``q_high``,
    ``median`` (with ``median_low``/``median_high`` when the population fit gives μ an interval), ``pooled``
    (with its interval), ``quantile``, ``unit``; None where a value is missing."""
    pooled = {}
    for block in results.get("psychometric") or []:
        for c in block.get("conditions") or []:
            pooled[(block.get("block"), c.get("condition"))] = c
        if block.get("pooled") and not block.get("conditions"):
            pooled[(block.get("block"), "all")] = block["pooled"]
    out = []
    for block in results.get("population") or []:
        for r in block.get("rows") or []:
            psy = pooled.get((block.get("block"), r.get("condition")), {})
            pq_ci = psy.get("threshold_q_ci_95") or [None, None]
            pooled_q = r.get("pooled_q", psy.get("threshold_q"))
            out.append({
                "block": block.get("block"), "condition": r.get("condition"), "unit": block.get("unit"),
                "quantile": _num(r.get("quantile")),
                "q": _num(r.get("population_q")), "q_low": _num(r.get("population_q_ci_low")),
                "q_high": _num(r.get("population_q_ci_high")),
                "median": _num(r.get("population_mu")), "median_low": _num(r.get("population_mu_ci_low")),
                "median_high": _num(r.get("population_mu_ci_high")),
                "pooled": _num(pooled_q), "pooled_low": _num(r.get("pooled_q_ci_low", pq_ci[0])),
                "pooled_high": _num(r.get("pooled_q_ci_high", pq_ci[1])),
            })
    return out
