"""The answer a researcher asked for, first: per condition, the level at which P % of the population accepts.

Read from the results dict alone (pure, no Django), for the results page and the report alike, so both show the
same numbers under the same names. Each acceptability block gives its population rows, and with each the numbers
that are easily confused with the headline, named so they cannot be: the population's median threshold and SD,
the pooled curve's levels (all answers as if from one person), and the mean of individual thresholds or why there
is none. Numbers are formatted here (three significant digits, no exponent) so a template only places them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

LN10 = math.log(10)


def number(x: Any, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits without an exponent (1523 → "1523", 0.1234 → "0.123"); "—" for
    none. An infinite end of an interval is "∞" or "−∞"."""
    if x is None:
        return "—"
    x = float(x)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def interval(lo: Any, hi: Any, *, open_low: str = "−∞", open_high: str = "∞") -> str:
    return f"{open_low if lo is None else number(lo)} – {open_high if hi is None else number(hi)}"


def _spread(row: Mapping[str, Any], unit: str) -> dict[str, str]:
    """The population SD in words a reader can use: log10 units and a factor on a log axis, the level's unit on a
    linear one."""
    sigma, lo, hi = (row.get(k) for k in ("population_sigma", "population_sigma_ci_low", "population_sigma_ci_high"))
    if row.get("population_sigma_scale") == "ln":
        def log10(v):
            return None if v is None else float(v) / LN10

        def factor(v):
            return None if v is None else math.exp(float(v))

        return {"value": number(log10(sigma)), "unit": "log10", "ci": interval(log10(lo), log10(hi)),
                "factor": number(factor(sigma)), "factor_ci": interval(factor(lo), factor(hi))}
    return {"value": number(sigma), "unit": unit, "ci": interval(lo, hi), "factor": "", "factor_ci": ""}


def rows(results: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per acceptability block with population rows: the block's axis, share and unit, and per
    condition the headline and the numbers that follow it, formatted."""
    results = results or {}
    psychometric = {p.get("block"): p for p in results.get("psychometric") or []}
    out = []
    for entry in results.get("population") or []:
        if not entry.get("rows"):
            continue
        block = entry.get("block")
        psy = psychometric.get(block) or {}
        unit = entry.get("unit") or ""
        share = float(entry.get("quantile") or (results.get("options") or {}).get("quantile") or 0.75)
        fits = {c.get("condition"): c for c in psy.get("conditions") or []}
        if psy.get("pooled"):
            fits.setdefault("all", psy["pooled"])
        conditions = []
        for r in entry["rows"]:
            fit = fits.get(r.get("condition")) or {}
            mid_ci = fit.get("threshold_ci_95") or [r.get("pooled_ci_low"), r.get("pooled_ci_high")]
            q_ci = fit.get("threshold_q_ci_95") or [r.get("pooled_q_ci_low"), r.get("pooled_q_ci_high")]
            n_ind = int(r.get("n_individual") or 0)
            conditions.append({
                "condition": r.get("condition"),
                "n_participants": r.get("n_participants"),
                "point": number(r.get("population_q")),
                "ci": interval(r.get("population_q_ci_low"), r.get("population_q_ci_high")),
                "median": number(r.get("population_mu")),
                "median_ci": interval(r.get("population_mu_ci_low"), r.get("population_mu_ci_high")),
                "sd": _spread(r, unit),
                "pooled_q": number(fit.get("threshold_q", r.get("pooled_q"))),
                "pooled_q_ci": interval(*q_ci),
                "pooled_mid": number(fit.get("threshold", r.get("pooled_threshold"))),
                "pooled_mid_ci": interval(*mid_ci),
                "individual_mean": (number(r.get("mean_individual_threshold"))
                                    if r.get("mean_individual_threshold") is not None else ""),
                "n_individual": n_ind,
                "individual_beyond": int(r.get("individual_beyond") or 0),
                "individual_note": r.get("individual_note") or ("" if n_ind else "individual fits not run"),
                "individual_limit": r.get("individual_limit"),
                "lapse": number(fit.get("lapse", r.get("lapse"))),
                "guess": number(fit.get("guess", r.get("guess"))),
                "at_bound": list(fit.get("at_bound") or r.get("at_bound") or []),
                # the ends of the curve the levels stop short of (pipeline.reach_short), with how far up it gets
                "reach_short": list(r.get("reach_short") or []),
                "reach_low": _percent(r.get("population_reach_low")),
                "reach_high": _percent(r.get("population_reach_high")),
                "population_lapse": number(r.get("lapse")),
                "population_guess": number(r.get("guess")),
                # the bound and reach warnings, as codes and formatted values: the page words them
                "notices": _notices(r, fit, psy, bool(entry.get("log_axis")), share),
            })
        out.append({
            "block": block, "level_name": entry.get("level_name") or "level", "unit": unit,
            "log_axis": bool(entry.get("log_axis")), "axis_source": entry.get("axis_source") or "",
            "decreasing": bool(entry.get("decreasing")), "share": share, "percent": f"{100 * share:g}",
            "lapse_max": psy.get("lapse_max"), "guess_max": psy.get("guess_max"),
            "conditions": conditions,
            "bound_warnings": [w for w in (psy.get("warnings") or []) + (entry.get("warnings") or [])
                               if "at its bound" in w],
        })
    return out


def _notices(row: Mapping[str, Any], fit: Mapping[str, Any], psy: Mapping[str, Any], log_axis: bool,
             share: float) -> list[dict[str, Any]]:
    """A condition's notices (analysis.reporting.notices), formatted: the pooled fit's rates at their bound (else
    the population model's), and the ends of the curve the levels stop short of. Built from the row's own keys
    (``at_bound``, ``reach_short``, ``population_reach_low/_high``), so a run stored before notices reads the same."""
    from analysis.reporting import notices

    cond = row.get("condition")
    source, model = (fit, "pooled") if fit.get("at_bound") else (row, "population")
    out = [notices.bound(cond, name, source[name], psy[f"{name}_max"], log_axis, model)
           for name in source.get("at_bound") or []
           if _num(source.get(name)) is not None and _num(psy.get(f"{name}_max")) is not None]
    for end in row.get("reach_short") or []:
        reach, value = (row.get("population_reach_high"), row.get("lapse")) if end == "top" else \
            (row.get("population_reach_low"), row.get("guess"))
        if _num(reach) is not None and _num(value) is not None:
            out.append(notices.reach(cond, end, reach, value, share))
    return [notices.shown(n) for n in out]


# --- the numbers, unformatted ----------------------------------------------------------------------------------


def _percent(value: Any) -> str:
    """A share as a whole percent ("78"), or "" where there is none."""
    v = _num(value)
    return f"{100 * v:.0f}" if v is not None and math.isfinite(v) else ""


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def numbers(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The same numbers as ``rows``, unformatted, for the end-to-end validation (``benchmarks/e2e.py``) and the
    planner (``analysis.stats.planning``), so both check what a researcher reads. One dict per (yes/no block,
    condition) of ``results["population"]``: ``q``, ``q_low``, ``q_high``, ``median`` (with ``median_low`` /
    ``median_high`` when the population fit gives μ an interval), ``pooled`` (with its interval), ``quantile``,
    ``unit``; None where a value is missing."""
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
