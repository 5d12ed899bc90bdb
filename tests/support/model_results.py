"""A finished run's results, as ``analysis.stats.pipeline.run`` stores them, reduced to what a perception model reads:
a yes/no block over rate (log axis) with conditions TTFT × delivery, and the predictor ranking."""

import math

from studyapp.design import studyfile

DEMO = studyfile.load_study(studyfile.demo_study_path())


def row(condition: str, mu: float, sigma_ln: float, n: int = 30) -> dict:
    return {"condition": condition, "n_participants": n, "quantile": 0.75,
            "population_mu": mu, "population_mu_ci_low": mu * math.exp(-0.15),
            "population_mu_ci_high": mu * math.exp(0.15),
            "population_sigma": sigma_ln, "population_sigma_ci_low": sigma_ln * 0.7,
            "population_sigma_ci_high": sigma_ln * 1.4, "population_sigma_scale": "ln", "log_axis": True}


def results(mu_300: float = 20.0, mu_2000: float = 30.0, sigma: float = 0.35) -> dict:
    rows = [row(f"ttft={t}, delivery={d}", mu, sigma) for t, mu in ((300, mu_300), (2000, mu_2000))
            for d in ("live", "prefetch")]
    points = [{"level": lv, "n": 30, "k": 15, "p": 0.5} for lv in (10, 15, 25, 40, 60)]
    return {
        "pipeline_version": 10, "n": {"participants": 60, "trials": 600},
        "psychometric": [{"block": "acceptability", "level_name": "rate", "unit": "tokens/s",
                          "pooled": {"condition": "pooled", "points": points}, "conditions": []}],
        "population": [{"block": "acceptability", "level_name": "rate", "unit": "tokens/s", "decreasing": False,
                        "log_axis": True, "quantile": 0.75, "rows": rows}],
        "predictors": [{"kind": "yes/no", "table": [{"metric": "tokens_per_s", "rank": 1, "loglik_gain": 0.14,
                                                      "spearman": 0.9}]}],
    }
