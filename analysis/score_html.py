"""The one-page HTML score report: the template ``analysis/score_report.html`` filled from scores (Django's
template engine and translations; the numbers and the figure come from the pure modules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _

from analysis import score_figure
from analysis.scoring import fmt_share


def _why(cause: str) -> str:
    return {"rate": _("slow decode rate"), "ttft": _("long time to first token"),
            "none": _("no single cause")}.get(cause, cause)


def render(model: Mapping[str, Any], runs: list[tuple[str, Mapping[str, Any]]], comparison: str = "",
           language: str = "en") -> str:
    with translation.override(language):
        rows = []
        for name, result in runs:
            acc, mean = result.get("acceptable") or {}, result.get("mean_share") or {}
            rows.append({
                "name": name, "result": result,
                "acceptable": fmt_share(acc.get("share")),
                "acceptable_ci": " – ".join(fmt_share(v) for v in acc.get("interval") or [None, None]),
                "mean": fmt_share(mean.get("value")),
                "mean_ci": " – ".join(fmt_share(v) for v in mean.get("interval") or [None, None]),
                "worst": [{**w, "share_text": fmt_share(w["share"]), "why": _why(w["cause"])}
                          for w in result.get("worst") or []],
            })
        figure = score_figure.svg(score_figure.surface_figure(model, list(runs)))
        return render_to_string("analysis/score_report.html", {
            "model": model, "runs": rows, "comparison": comparison, "figure": figure,
            "percent": f"{100 * float(runs[0][1]['population_share']):g}" if runs else "",
        })
