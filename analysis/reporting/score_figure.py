"""The score report's figure: the model's acceptability surface over TTFT and rate, the requests as points on it,
the range the study tested outlined, and the requests' shares as a histogram. Drawn as the analysis figures are
(``analysis.reporting.figures``: matplotlib, Agg, SVG with text kept as text). Pure: no Django."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.ticker import FuncFormatter

from analysis.reporting import figures  # the Agg backend and the shared rcParams, set on import
from analysis.stats.scoring import Surface

plt = figures.plt
NAMES = {"tokens_per_s": "decode rate", "chars_per_s": "characters per second", "ttft_ms": "TTFT"}


def _limits(values: np.ndarray, tested: tuple[float, float], log: bool) -> tuple[float, float]:
    lo = min(float(np.min(values)) if len(values) else tested[0], tested[0])
    hi = max(float(np.max(values)) if len(values) else tested[1], tested[1])
    if log:
        return lo / 1.25, hi * 1.25
    pad = 0.08 * (hi - lo or 1.0)
    return max(lo - pad, 0.0), hi + pad


def surface_figure(model: Mapping[str, Any], runs: list[tuple[str, Mapping[str, Any]]]):
    """One figure: the surface with every run's requests (one colour per run), and their share histograms."""
    surface = Surface(model, draws=0)
    preds = model["predictors"]
    level_name, level_unit = preds[0]["metric"], preds[0]["unit"]
    log = preds[0]["axis"] == "log"
    rows = [(name, result.get("requests") or []) for name, result in runs]
    xs = np.array([r["ttft_ms"] or 0.0 for _, rr in rows for r in rr], dtype=float)
    ys = np.array([r[level_name] or np.nan for _, rr in rows for r in rr], dtype=float)
    ys = ys[np.isfinite(ys)]
    two = len(preds) > 1
    fig, (ax, hx) = plt.subplots(1, 2, figsize=(10, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    x_tested = tuple(preds[1]["tested"]) if two else (0.0, max(float(np.max(xs)) if len(xs) else 1000.0, 1000.0))
    xlo, xhi = _limits(xs, x_tested, False)
    ylo, yhi = _limits(ys, tuple(preds[0]["tested"]), log)
    gx = np.linspace(xlo, xhi, 120)
    gy = np.geomspace(ylo, yhi, 120) if log else np.linspace(ylo, yhi, 120)
    mx, my = np.meshgrid(gx, gy)
    share = surface.shares(my.ravel(), mx.ravel())[0].reshape(mx.shape)
    filled = ax.contourf(mx, my, share, levels=np.linspace(0, 1, 11), cmap="RdYlGn", alpha=0.85)
    lines = ax.contour(mx, my, share, levels=[0.5, model["population"]["share"]], colors="k", linewidths=0.8)
    ax.clabel(lines, fmt=lambda v: f"{100 * v:g} %", fontsize=7)
    fig.colorbar(filled, ax=ax, label="share of the population accepting")
    if two:
        (t0, t1), (r0, r1) = preds[1]["tested"], preds[0]["tested"]
        ax.plot([t0, t1, t1, t0, t0], [r0, r0, r1, r1, r0], ls="--", color="k", lw=1, label="range tested")
    markers = ["o", "^", "s", "D"]
    for i, (name, rr) in enumerate(rows):
        px = [r["ttft_ms"] for r in rr]
        py = [r[level_name] for r in rr]
        ax.scatter(px, py, s=10 if len(rr) > 200 else 22, marker=markers[i % 4], facecolor="none",
                   edgecolor=["#1f3b73", "#7a1f5c", "#444444", "#0b6e4f"][i % 4], lw=0.8, label=name)
        hx.hist([r["share"] for r in rr], bins=np.linspace(0, 1, 21), alpha=0.6, label=name)
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlim(xlo, xhi)
    ax.set_ylim(ylo, yhi)
    ax.set_xlabel("TTFT (ms)")
    ax.set_ylabel(f"{NAMES.get(level_name, level_name)} ({level_unit})")
    ax.legend(loc="lower right", fontsize=7)
    target = model["population"]["share"]
    hx.axvline(target, color="k", ls=":", lw=1)
    hx.set_xlabel("predicted share accepting, per request")
    hx.set_ylabel("requests")
    if len(rows) > 1:
        hx.legend(fontsize=7)
    title = "Predicted acceptability"
    if model.get("simulated"):
        title += f" — model from {model['label']}"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def svg(fig) -> str:
    import io

    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.find("<svg"):]
