"""Figures of an analysis run, drawn from the results dict alone (matplotlib, Agg backend, no display).

Every figure is written as SVG (embedded in the HTML report), PNG (300 dpi) and PDF (vector, for papers), so a
report can be re-rendered from stored results without rerunning the statistics. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator  # noqa: E402

FORMATS = ("svg", "png", "pdf")
plt.rcParams.update({"svg.fonttype": "none", "font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                     "svg.hashsalt": "pacelab"})  # a fixed salt: the same results give the same SVG


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name).strip("-") or "figure"


def _title(what: str, block: str) -> str:
    """``what: block``, or ``what`` alone when the block is named for it (no "Ratings: ratings")."""
    return what if str(block).strip().lower() == what.lower() else f"{what}: {block}"


def _ci_err(values, lows, highs) -> np.ndarray:
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    lo = np.array([np.nan if x is None else x for x in lows], dtype=float)
    hi = np.array([np.nan if x is None else x for x in highs], dtype=float)
    return np.nan_to_num(np.vstack([v - lo, hi - v]), nan=0.0).clip(min=0)


def _level_axis(ax, entry: Mapping[str, Any], levels) -> None:
    """A log-scaled x axis where the block was fitted on a log axis, ticked at the levels tested, in their unit
    (4, 8, 16 tokens/s, not 10⁰·⁶); a linear one otherwise."""
    if not entry.get("log_axis"):
        return
    shown = sorted({float(v) for v in levels if v is not None and float(v) > 0})
    if not shown:
        return
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(shown))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())


def psychometric(entry: Mapping[str, Any]):
    """ψ per condition with its CI band, data points sized by the number of trials at each level."""
    fig, ax = plt.subplots(figsize=(6, 4))
    fits = entry.get("conditions") or ([entry["pooled"]] if entry.get("pooled") else [])
    colors = plt.cm.tab10(np.linspace(0, 1, 10))
    for i, fit in enumerate(fits):
        c = colors[i % 10]
        curve = fit["curve"]
        ax.plot(curve["x"], curve["psi"], color=c, label=f"{fit['condition']} (m = {fit['threshold']:.3g})")
        if curve.get("lo") and curve.get("hi"):
            ax.fill_between(curve["x"], curve["lo"], curve["hi"], color=c, alpha=0.15, linewidth=0)
        pts = fit["points"]
        ax.scatter([p["level"] for p in pts], [p["p"] for p in pts], s=[8 + 4 * p["n"] for p in pts], color=c,
                   alpha=0.7, edgecolors="white", linewidths=0.5)
    unit = f" ({entry['unit']})" if entry.get("unit") else ""
    _level_axis(ax, entry, [p["level"] for fit in fits for p in fit["points"]])
    scale = ", log scale" if entry.get("log_axis") else ""
    ax.set_xlabel(f"{entry.get('level_name', 'level')}{unit}{scale}")
    ax.set_ylabel("share answering yes")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(_title("Acceptability", entry["block"]))
    if fits:
        ax.legend(fontsize=7, frameon=False, loc="best")
    fig.tight_layout()
    return fig


def thresholds(entry: Mapping[str, Any]):
    """Per condition: the population's P % point (the headline), its median threshold and the pooled curve's
    midpoint, each with its 95 % CI, under names that cannot be confused."""
    rows = entry["rows"]
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.45 * len(rows) * 2.0))
    y = np.arange(len(rows))
    series = ((-0.2, "population_q", f"population: {100 * entry['quantile']:g} % of people accept", "tab:orange"),
              (0.0, "population_mu", "population: median threshold", "tab:green"),
              (0.2, "pooled_threshold", "pooled curve: midpoint", "tab:blue"))
    shown = []
    for offset, key, label, color in series:
        base = "pooled" if key == "pooled_threshold" else key
        vals = [r.get(key) for r in rows]
        if all(v is None for v in vals):
            continue
        lows, highs = [r.get(f"{base}_ci_low") for r in rows], [r.get(f"{base}_ci_high") for r in rows]
        shown += [v for v in vals + lows + highs if v is not None]
        ax.errorbar([np.nan if v is None else v for v in vals], y + offset, xerr=_ci_err(vals, lows, highs),
                    fmt="o", color=color, capsize=3, label=label)
    ax.set_yticks(y, [r["condition"] for r in rows])
    ax.invert_yaxis()
    unit = f" ({entry['unit']})" if entry.get("unit") else ""
    if entry.get("log_axis") and shown and min(shown) > 0:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 1.5, 2.0, 3.0, 5.0, 7.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
    scale = ", log scale" if entry.get("log_axis") else ""
    ax.set_xlabel(f"{entry.get('level_name', 'level')}{unit}{scale}")
    ax.set_title(_title("Thresholds by condition", entry["block"]))
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def mos(entry: Mapping[str, Any]):
    """Mean opinion score per condition with its 95 % CI (on the scale's range)."""
    rows = entry["mos"]
    fig, ax = plt.subplots(figsize=(6, 0.6 + 0.35 * len(rows) + 0.6))
    y = np.arange(len(rows))
    vals = [r["mos"] for r in rows]
    ax.errorbar(vals, y, xerr=_ci_err(vals, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows]), fmt="o",
                color="tab:green", capsize=3)
    ax.set_yticks(y, [r["condition"] for r in rows])
    ax.invert_yaxis()
    if entry.get("scale"):
        ax.set_xlim(entry["scale"][0] - 0.1, entry["scale"][1] + 0.1)
    ax.set_xlabel("mean opinion score (95 % CI)")
    ax.set_title(_title("Ratings", entry["block"]))
    fig.tight_layout()
    return fig


def pairwise(entry: Mapping[str, Any]):
    """Thurstone (and Bradley–Terry) scale in JOD with bootstrap CIs; 1 JOD = 75 % preference."""
    fig, ax = plt.subplots(figsize=(6, 3))
    methods = [m for m in ("thurstone", "bradley_terry") if entry.get(m)]
    for k, method in enumerate(methods):
        rows = entry[method]
        y = np.arange(len(rows)) + (k - (len(methods) - 1) / 2) * 0.2
        vals = [r["jod"] for r in rows]
        ax.errorbar(vals, y, xerr=_ci_err(vals, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows]),
                    fmt="o", capsize=3, label=method.replace("_", "-"))
    if methods:
        rows = entry[methods[0]]
        ax.set_yticks(np.arange(len(rows)), [r["condition"] for r in rows])
        ax.legend(fontsize=7, frameon=False)
    ax.axvline(0, color="grey", linewidth=0.5)
    ax.invert_yaxis()
    ax.set_xlabel("scale (JOD; the first condition is 0)")
    ax.set_title(_title("Pairwise scale", entry["block"]))
    fig.tight_layout()
    return fig


def pairwise_strata(entry: Mapping[str, Any]):
    """One Thurstone scale per stratum (e.g. per arrival pattern), side by side on a shared JOD axis."""
    strata = [st for st in entry["by_stratum"] if st.get("thurstone")]
    fig, axes = plt.subplots(1, len(strata), figsize=(2.6 * len(strata) + 1, 3), sharex=True, squeeze=False)
    for ax, st in zip(axes[0], strata):
        rows = st["thurstone"]
        vals = [r["jod"] for r in rows]
        ax.errorbar(vals, np.arange(len(rows)), fmt="o", capsize=3,
                    xerr=_ci_err(vals, [r["ci_low"] for r in rows], [r["ci_high"] for r in rows]))
        ax.set_yticks(np.arange(len(rows)), [r["condition"] for r in rows])
        ax.axvline(0, color="grey", linewidth=0.5)
        ax.invert_yaxis()
        ax.set_title(str(st["stratum"]), fontsize=8)
        ax.set_xlabel("JOD")
    fig.suptitle(_title("Pairwise scale per stratum", entry["block"]))
    fig.tight_layout()
    return fig


def predictors(entry: Mapping[str, Any]):
    """Mean response per stimulus against the best-ranked metrics."""
    points = entry.get("points") or {}
    n = max(len(points), 1)
    fig, axes = plt.subplots(1, n, figsize=(3 * n, 3), squeeze=False)
    for ax, (metric, pts) in zip(axes[0], points.items()):
        xs = [p["x"] for p in pts if p["x"] is not None and p["y"] is not None]
        ys = [p["y"] for p in pts if p["x"] is not None and p["y"] is not None]
        ns = [p["n"] for p in pts if p["x"] is not None and p["y"] is not None]
        ax.scatter(xs, ys, s=[6 + 2 * k for k in ns], alpha=0.7)
        ax.set_xlabel(metric)
        ax.set_ylabel(entry.get("response", "response"))
    fig.suptitle(f"Metric vs. response ({entry['kind']})")
    fig.tight_layout()
    return fig


def fidelity(report: Mapping[str, Any]):
    """Histograms of per-trial p95 lateness (painted − scheduled), per strategy, device class and browser."""
    groups = report["groups"]
    fig, ax = plt.subplots(figsize=(6, 3.2))
    edges = np.asarray(groups[0]["hist_edges"]) if groups else np.arange(0, 105, 5.0)
    for g in groups:
        label = f"{g['strategy']} / {g['device']} / {g.get('browser', 'unknown')} (n={g['n']})"
        ax.stairs(g["hist_counts"], edges, label=label)
    ax.axvline(report["bound_ms"], color="red", linestyle="--", linewidth=1, label=f"bound {report['bound_ms']:g} ms")
    ax.set_xlabel("p95 lateness per trial (ms; last bin: 100 ms or more)")
    ax.set_ylabel("trials")
    ax.set_title("Timing fidelity")
    ax.legend(fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def figures(results: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(name, caption, figure) for everything the results hold; the caller closes each figure."""
    for entry in results.get("psychometric") or []:
        if entry.get("pooled") or entry.get("conditions"):
            yield (f"psychometric-{_safe(entry['block'])}", f"Psychometric functions, block {entry['block']}",
                   psychometric(entry))
    for entry in results.get("population") or []:
        if entry.get("rows"):
            yield (f"thresholds-{_safe(entry['block'])}", f"Thresholds by condition, block {entry['block']}",
                   thresholds(entry))
    for entry in results.get("ratings") or []:
        if entry.get("mos"):
            yield f"mos-{_safe(entry['block'])}", f"Mean opinion scores, block {entry['block']}", mos(entry)
    for entry in results.get("pairwise") or []:
        if entry.get("thurstone") or entry.get("bradley_terry"):
            yield f"pairwise-{_safe(entry['block'])}", f"Pairwise scale, block {entry['block']}", pairwise(entry)
        if any(st.get("thurstone") for st in entry.get("by_stratum") or []):
            yield (f"pairwise-strata-{_safe(entry['block'])}", f"Pairwise scale per stratum, block {entry['block']}",
                   pairwise_strata(entry))
    for entry in results.get("predictors") or []:
        if entry.get("points"):
            yield (f"predictors-{_safe(entry['kind'])}", f"Metric vs. response ({entry['kind']})",
                   predictors(entry))
    fid = results.get("fidelity") or {}
    if fid.get("available") and fid.get("groups"):
        yield "fidelity", "Timing fidelity: painted − scheduled", fidelity(fid)


def render_all(results: Mapping[str, Any], out_dir: str | Path, formats: tuple[str, ...] = FORMATS,
               on_figure=None) -> list[dict[str, Any]]:
    """Write every figure in ``formats`` under ``out_dir``; returns ``[{name, caption, files}]``.

    ``on_figure(i)`` is called after each figure (progress and cancel checks).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, (name, caption, fig) in enumerate(figures(results)):
        try:
            files = []
            for fmt in formats:
                path = out / f"{name}.{fmt}"
                fig.savefig(path, format=fmt, dpi=300 if fmt == "png" else None,
                            metadata={"Date": None} if fmt == "svg" else None)
                files.append(path.name)
        finally:
            plt.close(fig)
        written.append({"name": name, "caption": caption, "files": files})
        if on_figure is not None:
            on_figure(i)
    return written
