"""The one-page HTML score report: the template ``analysis/score_report.html`` filled from scores (Django's
template engine and translations; the numbers and the figure come from the pure modules)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext as _

from analysis.reporting import score_figure
from analysis.stats.scoring import fmt_share


def _why(cause: str) -> str:
    return {"rate": _("slow decode rate"), "ttft": _("long time to first token"),
            "none": _("not held back (acceptable)")}.get(cause, cause)


def comparison_sentence(cmp: Mapping[str, Any] | None) -> str:
    """Which run feels faster, by how much and how sure, in the report's language."""
    if not cmp:
        return ""
    ms = cmp["mean_share"]
    lo, hi = (f"{100 * v:+.1f}" for v in ms["interval"])
    diff = f"{100 * ms['difference']:+.1f}"
    how = (_("paired by prompt (%(n)s pairs)") % {"n": cmp["n_pairs"]} if cmp["method"] == "paired"
           else _("requests resampled (the prompts do not match)"))
    if cmp["faster"] == "undecided":
        verdict = _("Neither run feels faster with 95 %% certainty (probability that B is faster: %(p)s).") % {
            "p": f"{ms['p_b_better']:.3f}"}
    else:
        p = ms["p_b_better"] if cmp["faster"] == "B" else ms["p_a_better"]
        verdict = _("%(run)s feels faster (probability %(p)s).") % {"run": cmp["faster"], "p": f"{p:.3f}"}
    return verdict + " " + _("B − A: %(diff)s points of the population accept an average request (95 %% interval "
                             "%(lo)s to %(hi)s); %(how)s.") % {"diff": diff, "lo": lo, "hi": hi, "how": how}


def render(model: Mapping[str, Any], runs: list[tuple[str, Mapping[str, Any]]],
           comparison: Mapping[str, Any] | None = None, language: str = "en") -> str:
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
            "model": model, "runs": rows, "comparison": comparison_sentence(comparison), "figure": figure,
            "percent": f"{100 * float(runs[0][1]['population_share']):g}" if runs else "",
        })
