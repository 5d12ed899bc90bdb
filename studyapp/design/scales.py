"""A rating scale's ends, with the study file's defaults, in one place.

A block's ``task.scale`` may leave things out: no scale is a 5-point Likert scale, a slider without ``min`` or
``max`` runs from 0 to 100. The response check, the bots, the study-file check and the analysis (where a MOS
interval is clipped to the scale's ends and the methods paragraph names them) must agree on what that means.
Pure: no Django import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_SCALE: Mapping[str, Any] = {"type": "likert", "points": 5}
SLIDER_MIN, SLIDER_MAX = 0.0, 100.0


def is_likert(scale: Mapping[str, Any] | None) -> bool:
    """True for a Likert scale (the default when none is given)."""
    return (scale or DEFAULT_SCALE).get("type", "likert") == "likert"


def scale_range(scale: Mapping[str, Any] | None) -> tuple[float, float]:
    """The lowest and highest answer the scale allows: (1, points) on a Likert scale, (min, max) on a slider."""
    scale = scale or DEFAULT_SCALE
    if is_likert(scale):
        return 1.0, float(scale.get("points", DEFAULT_SCALE["points"]))
    return float(scale.get("min", SLIDER_MIN)), float(scale.get("max", SLIDER_MAX))
