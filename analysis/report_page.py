"""The HTML report page of an analysis run: the one Django render of the report (``analysis.reporting`` writes
the text).

``render_html`` fills ``templates/analysis/report.html`` with the tables, the exclusion report and the figures' SVG
inlined, so the report is one self-contained file that opens without the server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.template.loader import render_to_string
from django.utils import translation

from analysis.reporting import notices
from analysis.reporting.methods import text_of
from analysis.tables import headline


def render_html(*, spec: Mapping[str, Any], results: Mapping[str, Any], figures: Sequence[Mapping[str, Any]],
                methods: str, run: Mapping[str, Any] | None = None, language: str = "en") -> str:
    """The report page in ``language`` (explicit, so it never depends on whatever the thread last activated).

    ``figures``: ``[{name, caption, svg, files}]`` (SVG text inlined).
    """
    headline_rows = headline.rows(results)
    # the acceptability entries' bound and reach warnings are worded by the template, in ``language``
    results = {**results, **{stage: [notices.worded(entry) for entry in results.get(stage) or []]
                             for stage in ("psychometric", "population")}}
    with translation.override(language):
        return render_to_string("analysis/report.html", {
            "title": text_of(spec.get("title")), "study_id": spec.get("id", ""), "results": results,
            "figures": figures, "methods": methods, "run": run or {},
            "exclusion_lines": (results.get("exclusions") or {}).get("lines") or [],
            "headline": headline_rows,
        })
