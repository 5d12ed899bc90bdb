"""The methods paragraph of an analysis run, written from the study file and the results.

``methods_paragraph`` is pure (a study file dict and a results dict in, text out) so it can be tested and pasted
into a paper; ``analysis.report_page`` puts it into the HTML report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from analysis.reporting.wording import counted
from studyapp.design.scales import scale_range


def text_of(value: Any, language: str = "en") -> str:
    if isinstance(value, Mapping):
        return str(value.get(language) or next(iter(value.values()), ""))
    return str(value or "")


def _join(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _factor(f: Mapping[str, Any]) -> str:
    labels = [str(lv.get("label")) if isinstance(lv, Mapping) else str(lv) for lv in f.get("levels") or []]
    how = "between subjects" if f.get("assignment") == "between" else "within subjects"
    return f"{f['name']} ({len(labels)} levels: {', '.join(labels)}; {how})"


TASKS = {"acceptability": "yes/no acceptability judgements", "rating": "ratings", "afc": "two-alternative forced "
         "choices of the stream that felt faster", "reading": "reading times"}


# how each threshold interval method (analysis.stats.psychometric.INTERVALS) reads in the methods paragraph
_INTERVAL_PHRASES = {
    "posterior": "credible intervals (percentiles of the marginal posterior)",
    "profile": "profile-likelihood confidence intervals",
    "hybrid": ("confidence intervals from the likelihood maximised over width, lapse and overdispersion with the "
               "guess rate integrated out under its prior (likelihood-ratio cut at χ²₁/2)"),
}
# said only where a fit had its guess rate fixed and so its cut scaled (``bartlett_factor`` other than 1)
_BARTLETT_PHRASE = ("; where the guess rate was fixed, the cut was scaled by a parametric-bootstrap Bartlett factor "
                    "(the likelihood-ratio statistic's mean over binomial resamples of the fit)")


def _interval_phrase(results: Mapping[str, Any]) -> str:
    """The threshold interval's method in words, with the Bartlett clause only if some fit used the factor."""
    method = (results.get("options") or {}).get("interval", "posterior")
    phrase = _INTERVAL_PHRASES.get(method, "intervals")
    fits = [f for p in results.get("psychometric") or []
            for f in [p.get("pooled") or {}, *(p.get("conditions") or [])]]
    if method == "hybrid" and any(abs(float(f.get("bartlett_factor") or 1.0) - 1.0) > 1e-12 for f in fits):
        phrase = phrase[:-1] + _BARTLETT_PHRASE + ")"
    return phrase


def _block(b: Mapping[str, Any]) -> str:
    task = b.get("task") or {}
    kind = TASKS.get(task.get("type"), str(task.get("type")))
    scale = task.get("scale") or {}
    if scale.get("type") == "likert":
        kind += f" on a {scale.get('points')}-point scale"
    elif scale.get("type") == "slider":
        low, high = scale_range(scale)
        kind += f" on a {low:g}–{high:g} slider"
    design = b.get("design") or {}
    if "factorial" in design:
        how = f"crossing {' × '.join(design['factorial'])}"
    elif "conditions" in design:
        how = f"{len(design['conditions'])} listed conditions"
    elif b.get("procedure"):
        how = _procedure(b["procedure"])
    elif b.get("trials"):
        how = f"{len(b['trials'])} explicit trials"
    else:
        how = "the study's default design"
    if task.get("compare"):
        how += f", pairing the levels of {task['compare']}"
    reps = int(b.get("repeats", 1))
    return f"{b['id']} ({kind}; {how}{f', each shown {reps} times' if reps > 1 else ''})"


_METHODS = {"staircase": "staircase", "questplus": "QUEST+"}


def _procedure(proc: Mapping[str, Any]) -> str:
    """An adaptive block in words: one track inline, or ``tracks:`` interleaved (docs/adaptive.md)."""
    tracks = proc.get("tracks")
    if not tracks:
        return f"an adaptive {_METHODS.get(proc.get('method'), proc.get('method') or '')} procedure".replace("  ", " ")
    counts: dict[str, int] = {}
    for t in tracks:
        name = _METHODS.get(t.get("method") or proc.get("method"), t.get("method") or proc.get("method") or "adaptive")
        counts[name] = counts.get(name, 0) + 1
    kinds = _join([f"{n} {name}" for name, n in counts.items()])
    return f"{counted(len(tracks), 'interleaved adaptive track')}: {kinds}"


# counterbalancing.block_order in words (docs/study-file.md); with one main block there is no order to report
_BLOCK_ORDERS = {
    "fixed": "the main blocks were shown in the order listed",
    "latin_square": "block order was counterbalanced with a balanced (Williams) Latin square, one row per participant",
    "random": "block order was randomised per participant",
}


def _order_sentence(cb: Mapping[str, Any], main: Sequence[Mapping[str, Any]]) -> str:
    """How blocks and trials were ordered, from ``counterbalancing`` and each block's ``order``."""
    fixed_seed = cb.get("seed") == "fixed"
    listed = [b for b in main if not b.get("procedure") and not b.get("trials")]
    shuffled = [b for b in listed if b.get("order", "random") != "fixed"]
    policy = str(cb.get("block_order", "fixed"))
    parts = [_BLOCK_ORDERS.get(policy, f"block order was {policy.replace('_', ' ')}")] if len(main) >= 2 else []
    if shuffled:
        repeats = (f" with at most {cb['max_repeats']} repeats of a condition in a row" if cb.get("max_repeats")
                   else "")
        who = ("in one seeded order shared by all participants" if fixed_seed else "per participant")
        which = "" if len(shuffled) == len(listed) else f" in {_join([str(b['id']) for b in shuffled])}"
        parts.append(f"trial order was randomised{which} {who}{repeats}")
    fixed = [b for b in listed if b.get("order", "random") == "fixed"]
    if fixed:
        parts.append(f"trials were shown in the listed order in {_join([str(b['id']) for b in fixed])}")
    if any((b.get("task") or {}).get("type") == "afc" for b in main):
        parts.append(f"2AFC presentation order was {cb.get('afc_order', 'balanced')}")
    if not parts:
        return ""
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def _fmt(x: Any, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}g}"


def _population_rows(results: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every condition's population row, over the yes/no blocks."""
    return [r for p in results.get("population") or [] for r in p.get("rows") or []]


def _population_interval_phrase(results: Mapping[str, Any]) -> str:
    """Which interval the population quantile got: the profile likelihood with a Student-t cut ("profile-t", every
    condition of current results); in results of earlier pipeline versions delta-method, profile-likelihood (σ at its
    lower bound, where the delta method has none), or each for the conditions that used it."""
    rows = _population_rows(results)
    if rows and all(r.get("population_q_ci_method") == "profile-t" for r in rows):
        return ("profile-likelihood interval: the values of the point whose profile log likelihood lies within t²/2 "
                "of its maximum, t the Student-t quantile for that level on n − 1 degrees of freedom (n "
                "participants)")
    profile = [str(r["condition"]) for r in rows if r.get("population_q_ci_method") == "profile"]
    if not profile:
        return "delta-method interval"
    if len(profile) == len(rows):
        return ("profile-likelihood interval (the participants agreed closely: σ sat at its lower bound, where "
                "the delta method gives none)")
    return (f"delta-method interval, or a profile-likelihood one where σ sat at its lower bound (the participants "
            f"agreed closely): {', '.join(profile)}")


def _population_estimation_phrase(results: Mapping[str, Any]) -> str:
    """How μ and σ were estimated: restricted maximum likelihood (pipeline version 7 on), plain maximum likelihood
    in earlier results (which have no ``population_estimation``)."""
    rows = _population_rows(results)
    if rows and all(r.get("population_estimation") == "reml" for r in rows):
        return (", μ and σ estimated by restricted (REML-type) maximum likelihood (the Cox–Reid adjustment for μ "
                "added to the marginal likelihood; the intervals are the unadjusted likelihood's)")
    return ", μ and σ estimated by maximum likelihood"


def methods_paragraph(spec: Mapping[str, Any], results: Mapping[str, Any]) -> str:
    """A methods section in prose: design, N, exclusions, and how each analysis was fitted."""
    opts = results.get("options") or {}
    out = []
    title = text_of(spec.get("title"))
    main = [b for b in spec.get("blocks") or [] if b.get("type") == "main"]
    practice = [b for b in spec.get("blocks") or [] if b.get("type") == "practice"]
    out.append(f"The study “{title}” ({spec.get('id', '')}) presented LLM answers streamed at controlled timings in "
               f"{counted(len(main), 'main block')}{': ' if main else ''}{_join([_block(b) for b in main])}"
               + (f", after {counted(len(practice), 'practice block')} that {'was' if len(practice) == 1 else 'were'} "
                  f"not analysed." if practice else "."))
    if spec.get("factors"):
        out.append(f"Factors: {_join([_factor(f) for f in spec['factors']])}.")
    cb = spec.get("counterbalancing") or {}
    if cb and (order := _order_sentence(cb, main)):
        out.append(order)
    out.append(_exclusion_sentence(results.get("exclusions") or {}))
    if any(p.get("pooled") for p in results.get("psychometric") or []):
        out.append(
            f"Yes/no answers were modelled per condition and pooled with psychometric functions ψ(x) = γ + (1 − γ − λ)"
            f"·S(x; m, w), S a {opts.get('sigmoid', 'logistic')} sigmoid, with the lapse rate λ free in "
            f"[0, {opts.get('lapse_max', 0.2)}] and the guess rate γ in [0, {opts.get('guess_max', 0.2)}], fitted "
            f"as a Bayesian posterior on a grid with psignifit 4's default priors and beta-binomial "
            f"overdispersion; thresholds (m, the 50 % point of the sigmoid's rise) are reported with "
            f"{100 * opts.get('ci', 0.95):g} % "
            f"{_interval_phrase(results)}."
            + _jackknife_phrase(results) + _axis_sentence(results))
    if _population_rows(results):
        shares = sorted({float(p.get("quantile") or opts.get("quantile", 0.75))
                         for p in results.get("population") or [] if p.get("rows")})
        q = 100 * shares[0]
        share = _join([f"{100 * v:g} %" for v in shares])
        logs = {bool(p.get("log_axis")) for p in results.get("population") or [] if p.get("rows")}
        normal = ("Normal(μ, σ) on the fitting axis (log-normal in the level)" if logs == {True} else
                  "Normal(μ, σ) on the fitting axis (log-normal in the level where that axis is logarithmic)"
                  if True in logs else "Normal(μ, σ)")
        out.append(
            f"Population acceptability (the level at which {share} of people accept, the headline of the results) "
            f"was estimated with a hierarchical model: participants' thresholds {normal}, a shared width, lapse and "
            f"guess (estimated with the thresholds, within the block's bounds), each threshold integrated out "
            f"numerically"
            f"{_population_estimation_phrase(results)}; the {q:g} % point "
            f"{_quantile_formula(results, q / 100)} has a {100 * opts.get('ci', 0.95):g} % "
            f"{_population_interval_phrase(results)}.{_sigma_phrase(results)}")
    ratings = [r for r in results.get("ratings") or [] if r.get("mos")]
    if ratings:
        formulas = [r["mixed_model"]["formula"] for r in ratings if r.get("mixed_model")]
        out.append(
            "Ratings were summarised as mean opinion scores with Student-t 95 % intervals, rater bias and "
            "inconsistency were estimated with the subject model of Li & Bampis (2017)"
            + (f", and factor effects with linear mixed models ({'; '.join(formulas)}) with a random intercept per "
               f"participant (REML)" if formulas else "") + ".")
    pw = [p for p in results.get("pairwise") or [] if p.get("thurstone") or p.get("pse_jnd")]
    if pw:
        out.append(
            f"Two-alternative forced choices were scaled with Thurstone Case V (maximum likelihood with a distance "
            f"prior; 1 JOD = 75 % preference) and Bradley–Terry, with percentile intervals from "
            f"{int(opts.get('n_boot', 1000)):,} bootstrap resamples of participants; where the two streams differed "
            f"in a rate, a logistic fit of the choice on the log rate ratio gave the PSE and JND.")
    if results.get("predictors"):
        out.append("Candidate stream metrics were ranked by their held-out log-likelihood gain in 5-fold "
                   "cross-validation grouped by participant (yes/no) or by the absolute Spearman correlation with the "
                   "mean response per stimulus (ratings).")
    fid = results.get("fidelity") or {}
    if fid.get("available"):
        out.append(f"Timing fidelity was checked from the browsers' paint logs: {fid.get('n_violated', 0):,} of "
                   f"{counted(fid.get('n_trials', 0), 'trial')} had a 95th-percentile lateness (painted − "
                   f"scheduled) above {_fmt(fid.get('bound_ms'))} ms.")
    return " ".join(out)


def _rule_phrase(rule: Mapping[str, Any]) -> str:
    """One exclusion rule as a reader of the paper needs it: what a participant did, not the rule's key."""
    params = rule.get("params") or {}
    name = rule.get("rule")
    if name == "fidelity_violated":
        share = params.get("max_fraction")
        return (f"more than {100 * float(share):g} % of their trials painted late (95th-percentile lateness above "
                f"{float(params.get('bound_ms', 0)):g} ms)")
    if name == "too_fast":
        return f"median response time below {float(params.get('min_median_rt_ms', 0)):g} ms"
    return _RULE_PHRASES.get(str(name), str(name).replace("_", " "))


_RULE_PHRASES = {"failed_attention": "failed an attention check", "incomplete": "did not finish",
                 "withdrawn": "withdrew", "session_excluded": "withdrew, their answers kept but excluded"}


def _exclusion_sentence(ex: Mapping[str, Any]) -> str:
    """N, who the study file's exclusion rules removed and why, and how many trials were analysed.

    A fidelity rule without ``max_fraction`` drops trials, not people, so it is counted in trials.
    """
    n_total, n_ex = int(ex.get("participants_total", 0)), int(ex.get("participants_excluded", 0))
    people = [r for r in ex.get("rules") or [] if not _trial_rule(r)]
    trials = [r for r in ex.get("rules") or [] if _trial_rule(r)]
    text = f"In total, {counted(n_total, 'participant')} took part"
    if people:
        parts = [f"{_rule_phrase(r)}: {len(r.get('participants') or [])}" for r in people]
        text += (f"; the study file's exclusion rules removed {n_ex:,} ({'; '.join(parts)}), leaving "
                 f"{n_total - n_ex:,}")
    elif n_ex:
        text += f"; {n_ex:,} were excluded, leaving {n_total - n_ex:,}"
    for r in trials:
        text += (f"; {counted(int(r.get('trials', 0)), 'trial')} painted late (95th-percentile lateness above "
                 f"{float((r.get('params') or {}).get('bound_ms', 0)):g} ms) were excluded")
    return (text + f". The analyses used {counted(int(ex.get('trials_analysed', 0)), 'main trial')} (attention "
            f"checks and practice trials excluded).")


def _trial_rule(rule: Mapping[str, Any]) -> bool:
    return rule.get("rule") == "fidelity_violated" and (rule.get("params") or {}).get("max_fraction") is None


def _quantile_formula(results: Mapping[str, Any], q: float) -> str:
    """μ + Φ⁻¹(q)·σ for rising curves; μ − Φ⁻¹(q)·σ where acceptance falls with the level (TTFT), since there the
    level q of users accept is below the mean threshold."""
    falling = {bool(p.get("decreasing")) for p in results.get("population") or [] if p.get("rows")}
    up, down = f"μ + Φ⁻¹({q:g})·σ", f"μ − Φ⁻¹({q:g})·σ"
    if falling == {True}:
        return down
    if falling == {True, False}:
        return f"{up} ({down} where acceptance falls as the level grows)"
    return up


def _axis_sentence(results: Mapping[str, Any]) -> str:
    """Which axis each acceptability block's levels were fitted on (results before pipeline version 10 have no
    ``log_axis`` and were fitted on a linear one)."""
    log, linear, weber = [], [], False
    for p in results.get("psychometric") or []:
        if not (p.get("pooled") or p.get("conditions")):
            continue
        unit = p.get("unit") or ""
        what = f"{p.get('block')} ({p.get('level_name') or 'level'}{', ' + unit if unit else ''})"
        (log if p.get("log_axis") else linear).append(what)
        weber = weber or (bool(p.get("log_axis")) and p.get("axis_source") == "rate")
    parts = []
    if log:
        parts.append(f"on a logarithmic axis (x the natural log of the level, so a threshold's interval and the "
                     f"spread between people are ratios) in {_join(log)}"
                     + (", as perceived speed follows ratios of rates (Weber)" if weber else ""))
    if linear:
        parts.append(f"on a linear axis in {_join(linear)}")
    return f" Levels were fitted {'; and '.join(parts)}." if parts else ""


def _sigma_phrase(results: Mapping[str, Any]) -> str:
    """σ's interval and the individual fits, where the results have them (pipeline version 10 on)."""
    rows = _population_rows(results)
    text = ""
    if rows and all("population_sigma_ci_low" in r for r in rows):
        text += (" μ has a Wald interval with the same t quantile (the profile where σ sits near its floor), and σ a "
                 "profile-likelihood interval with the same cut.")
    if any(int(r.get("n_individual") or 0) for r in rows):
        text += (" For comparison, each participant's threshold was also fitted on its own (lapse and guess as in "
                 "the model) and the thresholds averaged on the fitting axis.")
    return text


def _jackknife_phrase(results: Mapping) -> str:
    """What the methods paragraph says when fits over participants were widened by the participant jackknife."""
    fits = [f for p in results.get("psychometric") or [] for f in [p.get("pooled") or {}, *(p.get("conditions") or [])]]
    groups = sorted({(f.get("cluster") or {}).get("groups") for f in fits} - {None})
    if not groups:
        return ""
    span = f"{groups[0]}" if len(groups) == 1 else f"{groups[0]}–{groups[-1]}"
    return (f" Because one participant's answers move together across levels, each interval was widened, where "
            f"it reached further, to a delete-a-group jackknife over participants ({span} groups, Student-t).")

