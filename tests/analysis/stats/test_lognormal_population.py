"""Issue 40's study end to end through ``analysis.stats.pipeline.run``: a log-normal population of bots answering
acceptability over rate × TTFT. Fitted on a log axis (the default for a rate), the lapse is not inflated and the
population's 75 % point is covered by its interval; the headline reads it with its unit."""

import math

import pytest
from sim_population import SPEC, frames, population, true_point  # noqa: E402

from analysis.stats import pipeline  # noqa: E402
from analysis.tables import headline

OPTIONS = pipeline.Options(n_boot=20, deviance_samples=0, cluster_groups=0)
TRUE_LAPSE = 0.03


@pytest.fixture(scope="module")
def results():
    return pipeline.run(frames(80, seed=1), None, spec=SPEC, options=OPTIONS)


def test_a_rate_is_fitted_on_a_log_axis_without_the_study_file_saying_so(results):
    psy, pop = results["psychometric"][0], results["population"][0]
    assert psy["log_axis"] is True and psy["axis_source"] == "rate"
    assert pop["log_axis"] is True and all(r["log_axis"] for r in pop["rows"])
    assert all(c["log_axis"] for c in [psy["pooled"], *psy["conditions"]])


def test_the_lapse_is_not_inflated_and_nothing_sits_on_its_bound(results):
    # on a linear axis the same answers gave a pooled lapse of 0.15-0.17 (docs/analysis.md, "The headline")
    for fit in results["psychometric"][0]["conditions"]:
        assert fit["lapse"] < TRUE_LAPSE + 0.07 and fit["guess"] < 0.07, fit["condition"]
        assert fit["at_bound"] == []


def test_the_population_75_percent_point_and_sigma_intervals_cover_the_truth(results):
    pop = population()
    for row in results["population"][0]["rows"]:
        ttft = float(row["condition"].split("=")[1])
        truth = true_point(pop, ttft)
        assert row["population_q_ci_low"] <= truth <= row["population_q_ci_high"], (row["condition"], truth)
        sigma = pop.threshold_sd * math.log(10)  # σ is in natural-log units of the rate on a log axis
        assert row["population_sigma_scale"] == "ln"
        assert row["population_sigma_ci_low"] <= sigma <= row["population_sigma_ci_high"], row["condition"]
        assert row["population_mu_ci_low"] < row["population_mu"] < row["population_mu_ci_high"]


def test_every_participant_is_fitted_for_the_mean_of_individual_thresholds(results):
    for row in results["population"][0]["rows"]:
        assert row["n_individual"] == 80 and row["individual_note"] is None
        assert row["mean_individual_threshold"] < row["population_q"]  # a rate: the 75 % point lies above


def test_the_headline_names_the_share_the_level_its_interval_and_unit(results):
    block = headline.rows(results)[0]
    assert block["percent"] == "75" and block["unit"] == "tokens/s" and block["log_axis"]
    slow = next(c for c in block["conditions"] if c["condition"] == "ttft=1500")
    row = next(r for r in results["population"][0]["rows"] if r["condition"] == "ttft=1500")
    assert slow["point"] == headline.number(row["population_q"])
    lo, hi = headline.number(row["population_q_ci_low"]), headline.number(row["population_q_ci_high"])
    assert slow["ci"] == f"{lo} – {hi}"
    assert slow["sd"]["unit"] == "log10" and slow["sd"]["factor"].startswith("1.")
