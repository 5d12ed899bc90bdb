"""Fixed-seed cases whose estimates and intervals were recorded before the analysis was made faster.

Not a test module. ``python tests/analysis/speed_reference.py`` writes ``data/speed_reference.json`` from the
code as it stands; it was run on the slow code (commit 8644a35), and again when pipeline version 11 changed the
population model on purpose (its lapse and guess estimated, a BFGS optimiser) and at version 12 (profile
intervals searched from two starts, exact gradients); tests/analysis/test_speed_equivalence.py
checks that the code still gives the same numbers. Each case returns a flat dict of named numbers.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

import sim_population  # noqa: E402

from analysis.stats import clustered, population, psychometric  # noqa: E402
from analysis.stats.psychometric import FitOptions  # noqa: E402

PATH = Path(__file__).resolve().parent / "data" / "speed_reference.json"


def _frame(n: int, seed: int, ttft: int = 1500, **pop):
    df = sim_population.frames(n=n, seed=seed, pop=sim_population.population(**pop), repeats=2)
    g = df.loc[df["f_ttft"] == str(ttft)]
    return g.assign(level=g["f_rate"].astype(float), response=g["response_value"])[
        ["participant", "level", "response"]]


def _pop_numbers(r: population.PopulationResult) -> dict:
    return {"q": r.quantile_level, "q_lo": r.quantile_ci_95[0], "q_hi": r.quantile_ci_95[1], "mu": r.mu_level,
            "mu_lo": r.mu_ci_95[0], "mu_hi": r.mu_ci_95[1], "sigma": r.sigma, "sigma_lo": r.sigma_ci_95[0],
            "sigma_hi": r.sigma_ci_95[1], "width": r.width, "lapse": r.lapse, "guess": r.guess,
            "mean_individual": r.mean_individual_threshold, "individual_beyond": r.individual_beyond}


def _fit_numbers(r: psychometric.FitResult, q: float = 0.75) -> dict:
    q_level, q_ci = r.threshold_at(q)
    return {"threshold": r.threshold, "lo": r.threshold_ci_95[0], "hi": r.threshold_ci_95[1], "width": r.width,
            "width_lo": r.width_ci[0], "width_hi": r.width_ci[1], "lapse": r.lapse, "guess": r.guess,
            "eta": r.eta, "deviance": r.deviance, "deviance_p": r.deviance_p, "bartlett": r.bartlett,
            "q": q_level, "q_lo": q_ci[0], "q_hi": q_ci[1]}


def _blocks(frame):
    rows = frame.groupby(["level", "participant"])["response"].agg(["sum", "count"]).reset_index()
    return rows


def cases() -> dict:
    """name -> a callable returning the case's numbers."""
    fixed = FitOptions(log_axis=True, lapse=0.03, guess=0.01, deviance_samples=0)
    out = {
        # as the pipeline calls it: log axis, lapse and guess fixed, REML points, individual fits
        "population_n40_fixed": lambda: _pop_numbers(population.fit_population(_frame(40, 1), fixed)),
        "population_n20_fixed_q90": lambda: _pop_numbers(
            population.fit_population(_frame(20, 2, ttft=200), fixed, quantile=0.9)),
        "population_n12_sd05_ml": lambda: _pop_numbers(
            population.fit_population(_frame(12, 3, sd=0.05), fixed, reml=False)),
        # people who agree (σ at its floor: the profile interval for μ)
        "population_n15_agree": lambda: _pop_numbers(
            population.fit_population(_frame(15, 4, sd=0.0001), fixed)),
        # the default options: lapse and guess free, a linear falling axis
        "population_n20_free_linear": lambda: _pop_numbers(population.fit_population(
            _frame(20, 5), FitOptions(lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2), deviance_samples=0),
            individual=False)),
    }

    def pooled(n, seed, **kw):
        rows = _blocks(_frame(n, seed))
        opts = FitOptions(log_axis=True, lapse_bounds=(0.0, 0.2), guess_bounds=(0.0, 0.2), seed=seed, **kw)
        r = psychometric.fit(psychometric.blocks(rows["level"], rows["sum"], rows["count"]), opts)
        numbers = _fit_numbers(r)
        jk = clustered.jackknife(rows["level"], rows["sum"], rows["count"], rows["participant"], opts, r, q=0.75)
        numbers.update(jk_lo=jk.threshold_ci[0], jk_hi=jk.threshold_ci[1], jk_q_lo=jk.threshold_q_ci[0],
                       jk_q_hi=jk.threshold_q_ci[1])
        return numbers

    def single(seed, experiment="yes/no", **kw):
        rng = np.random.default_rng(seed)
        guess = 0.5 if experiment == "2AFC" else 0.02
        data = psychometric.simulate(rng, [1, 2, 3, 4, 5, 6, 7], 20, m=4.0, w=3.0, guess=guess, lapse=0.03,
                                     eta=kw.pop("eta", 0.0), blocks_per_level=kw.pop("blocks", 1))
        return _fit_numbers(psychometric.fit(data, FitOptions(experiment=experiment, seed=seed, **kw)))

    out.update({
        "pooled_n40": lambda: pooled(40, 11),
        "pooled_n20_posterior": lambda: pooled(20, 12, interval="posterior"),
        "fit_yes_no": lambda: single(21),
        "fit_yes_no_eta_blocks": lambda: single(22, eta=0.2, blocks=4),
        "fit_2afc_bartlett": lambda: single(23, experiment="2AFC"),
        "fit_profile_weibull": lambda: single(24, interval="profile", sigmoid="weibull"),
        "fit_fixed_rates": lambda: single(25, lapse=0.03, guess=0.02, deviance_samples=0),
    })
    return out


def e2e_case(name: str = "n20", index: int = 0) -> dict:
    """One whole simulated study of ``benchmarks/e2e.py``, as ``one_study`` runs it: every number of the
    pipeline's acceptability fits and population rows per condition."""
    from analysis.stats import e2e_designs, simulate
    from analysis.stats.pipeline import Options, run
    from studyapp.design.counterbalance import sub_seed

    design = e2e_designs.designs()[name]
    trials, participants = simulate.study_frame(design.study, design.population, design.participants,
                                                sub_seed(0, name, index), streams=simulate.streams_for(design.study))
    results = run(trials, participants, spec=design.study, options=Options())
    out = {"trials_yes": float((trials["response_value"] == 1).sum()), "trials": float(len(trials))}

    def take(prefix, d):
        for key, value in d.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[f"{prefix}:{key}"] = value
            elif isinstance(value, (list, tuple)) and len(value) == 2 and all(
                    isinstance(v, (int, float)) for v in value):
                out[f"{prefix}:{key}:0"], out[f"{prefix}:{key}:1"] = value

    for block in results["psychometric"]:
        for c in block.get("conditions", []) + ([block["pooled"]] if "pooled" in block else []):
            take(f"psy:{c['condition']}", c)
    for block in results["population"]:
        for r in block["rows"]:
            take(f"pop:{r['condition']}", r)
    return out


def clean(d: dict) -> dict:
    return {k: (None if v is None else (str(v) if isinstance(v, float) and not math.isfinite(v) else float(v)))
            for k, v in d.items()}


def main() -> None:
    warnings.simplefilter("ignore")
    record = {name: clean(f()) for name, f in cases().items()}
    for name in ("n20", "edge"):
        record[f"e2e_{name}_0"] = clean(e2e_case(name, 0))
    PATH.parent.mkdir(exist_ok=True)
    PATH.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
