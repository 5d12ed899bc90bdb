"""The results page's predictor ranking: the top rows of each ranking with the number they are ranked by, and
why an unranked row ("—") has no rank.

``analysis.stats.predictors.rank_predictors`` orders yes/no answers by the held-out log-likelihood gain per trial and
ratings by |Spearman ρ|; showing only ρ made a yes/no ranking look out of order (#2 ρ −0.853 above #3 ρ 0.944).
A metric is left unranked when it was seen on fewer than three stimuli, when it does not vary across them, or
when the answers never vary (nothing to predict). No Django beyond lazy translations.
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.translation import gettext_lazy as _

TOP = 5
RANKED_BY = {"yes/no": _("held-out log-lik. gain / trial"), "rating": _("|Spearman ρ|")}
UNRANKED = {
    "few": _("seen on fewer than 3 stimuli: too few to rank"),
    "flat": _("the metric does not vary across the stimuli, or the answers never vary: nothing to rank"),
}


def _number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def predictor_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Up to ``TOP`` rows per kind of answer, in rank order, each with ``ranked_by`` (what the rank orders by),
    ``ranking_value`` and, for unranked rows, ``unranked_reason``."""
    out = []
    for entry in results.get("predictors") or []:
        kind = entry.get("kind")
        for r in (entry.get("table") or [])[:TOP]:
            row = {"kind": kind, **r, "ranked_by": RANKED_BY.get(kind, ""), "unranked_reason": ""}
            if kind == "yes/no":
                row["ranking_value"] = _number(r.get("loglik_gain"))
            else:
                rho = _number(r.get("spearman"))
                row["ranking_value"] = abs(rho) if rho is not None else None
            if r.get("rank") is None or _number(r.get("rank")) is None:
                row["rank"] = None
                few = (_number(r.get("n_stimuli")) or 0) < 3
                row["unranked_reason"] = UNRANKED["few" if few else "flat"]
            out.append(row)
    return out
