"""The plain-text summary ``score_traces`` prints: a score, its extrapolation warning, a comparison. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from analysis.stats.scoring import fmt_share


def _num(x: Any, unit: str = "", digits: int = 0) -> str:
    return "—" if x is None else f"{float(x):.{digits}f}{' ' + unit if unit else ''}"


def banner(model_info: Mapping[str, Any]) -> list[str]:
    """The simulated-participants label, in capitals, first and last: never to be read as human data."""
    if not model_info.get("simulated"):
        return []
    return [f"!! MODEL FITTED ON {model_info['label'].upper()} !!"]


def summary(result: Mapping[str, Any], title: str = "") -> list[str]:
    m = result["model"]
    pct = f"{100 * result['population_share']:g} %"
    lines = [*banner(m)]
    lines.append(f"{title or 'score'}: model from study {m['study']!r} ({m['n_participants']} "
                 f"{'bots' if m['simulated'] else 'participants'}), predictors {', '.join(m['predictors'])}")
    lines.append(f"requests: {result['n_requests']} read, {result['n_scored']} scored"
                 + (f", {result['n_unscored']} not scored (no decode rate: a single content piece)"
                    if result["n_unscored"] else ""))
    if not result["n_scored"]:
        return [*lines, *banner(m)]
    acc = result["acceptable"]
    lines.append(f"acceptable to at least {pct} of the population: {acc['count']} of {result['n_scored']} requests "
                 f"= {fmt_share(acc['share'])} (95 % interval {fmt_share(acc['interval'][0])} – "
                 f"{fmt_share(acc['interval'][1])})")
    ms = result["mean_share"]
    lines.append(f"share of the population accepting an average request: {fmt_share(ms['value'])} "
                 f"(95 % interval {fmt_share(ms['interval'][0])} – {fmt_share(ms['interval'][1])})")
    q = result["distribution"]["quantiles"]
    lines.append("distribution over requests (share accepting): "
                 + ", ".join(f"{k} {fmt_share(v)}" for k, v in q.items()))
    counts = result["distribution"]["hist_counts"]
    edges = result["distribution"]["hist_edges"]
    top = max(counts) or 1
    for i, c in enumerate(counts):
        lines.append(f"  {100 * edges[i]:3.0f}–{100 * edges[i + 1]:3.0f} % |{'#' * round(30 * c / top):<30}| {c}")
    lines.append("worst requests:")
    for w in result["worst"]:
        cause = {"rate": "slow decode rate", "ttft": "long TTFT", "none": "not held back (acceptable)"}[w["cause"]]
        lines.append(f"  {w['id']}: {fmt_share(w['share'])} accept ({fmt_share(w['low'])} – {fmt_share(w['high'])})"
                     f"; TTFT {_num(w['ttft_ms'], 'ms')}, {_num(w['tokens_per_s'], 'tokens/s', 1)}, "
                     f"{_num(w['chars_per_s'], 'chars/s', 1)}, stalls {_num(w['stall_total_ms'], 'ms')}"
                     f" — why: {cause}{' [extrapolated]' if w['extrapolated'] else ''}")
    lines += extrapolation(result)
    return [*lines, *banner(m)]


def extrapolation(result: Mapping[str, Any]) -> list[str]:
    ex = result["extrapolated"]
    if not ex["count"]:
        return ["extrapolated: 0 requests (every request lies within the range the study tested)"]
    tested = result["model"]["tested"]
    ranges = ", ".join(f"{k} {v[0]:g}–{v[1]:g}" for k, v in tested.items())
    by = ", ".join(f"{v} by {k}" for k, v in ex["by_predictor"].items() if v)
    return [f"!! EXTRAPOLATED: {ex['count']} of {result['n_scored']} requests ({fmt_share(ex['share'])}) lie outside "
            f"the range the study tested ({ranges}): {by}. Their scores are the model's extrapolation, not "
            f"anything the participants saw !!"]


def comparison(cmp: Mapping[str, Any], name_a: str, name_b: str) -> list[str]:
    ms, acc = cmp["mean_share"], cmp["acceptable"]
    how = (f"paired by prompt ({cmp['n_pairs']} pairs)" if cmp["method"] == "paired"
           else f"resampled ({cmp['n_a']} and {cmp['n_b']} requests, prompts do not match)")
    if cmp["faster"] == "undecided":
        verdict = (f"neither feels faster with {100 * cmp['sure_at']:g} % certainty "
                   f"(P(B faster) = {ms['p_b_better']:.3f})")
    else:
        faster, slower = (name_b, name_a) if cmp["faster"] == "B" else (name_a, name_b)
        p = ms["p_b_better"] if cmp["faster"] == "B" else ms["p_a_better"]
        verdict = f"{faster} feels faster than {slower} (probability {p:.3f})"
    pts = 100 * ms["difference"]
    return [
        f"compare A = {name_a} with B = {name_b}, {how}:",
        f"  {verdict}",
        f"  B − A, share of the population accepting an average request: {pts:+.1f} points "
        f"(95 % interval {100 * ms['interval'][0]:+.1f} to {100 * ms['interval'][1]:+.1f})",
        f"  B − A, requests acceptable to at least {100 * cmp['population_share']:g} % of the population: "
        f"{100 * acc['difference']:+.1f} points (95 % interval {100 * acc['interval'][0]:+.1f} to "
        f"{100 * acc['interval'][1]:+.1f})",
    ]
