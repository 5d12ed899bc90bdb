"""The methods paragraph (analysis/reporting/methods.py), from a study file and pipeline results."""


import pytest
from sim_frames import SPEC, frames

from analysis.reporting import methods as report
from analysis.stats import pipeline
from analysis.tables import headline


@pytest.fixture(scope="module")
def results():
    trials, people = frames(8, slow_painter=2, inattentive=5)
    return pipeline.run(trials, people, spec=SPEC,
                        options=pipeline.Options(n_boot=30, deviance_samples=0, individual_max=0))


def test_the_methods_paragraph_states_design_n_exclusions_and_fitting(results):
    text = report.methods_paragraph(SPEC, results)
    assert "Simulated study" in text and "in 3 main blocks:" in text
    assert "rate (5 levels: 10, 15, 25, 40, 60; within subjects)" in text
    assert "delivery (2 levels: prefetch, live; between subjects)" in text
    assert "In total, 8 participants took part" in text
    assert "removed 2" in text and "failed an attention check: 1" in text and "painted late" in text
    assert "leaving 6" in text
    assert "logistic sigmoid" in text and "Thurstone Case V" in text and "30 bootstrap resamples" in text
    more = {**results, "options": {**results["options"], "n_boot": 2000}}
    assert "2,000 bootstrap resamples" in report.methods_paragraph(SPEC, more)
    assert "on a 5-point scale" in text
    assert "tokenizers (two-alternative forced choices of the stream that felt faster; crossing tokenizer" in text
    assert "Block order was counterbalanced with a balanced (Williams) Latin square" in text


def test_the_methods_paragraph_names_the_threshold_interval_method(results):
    text = report.methods_paragraph(SPEC, results)
    assert "guess rate integrated out under its prior" in text  # the default
    # the pipeline's yes/no fits have their guess rate free: no fit's cut was scaled, so the paper is not told so
    assert {c.get("bartlett_factor") for p in results["psychometric"] for c in [p["pooled"], *p["conditions"]]} \
        == {1.0}
    assert "Bartlett" not in text
    fixed = {**results, "psychometric": [{**results["psychometric"][0],
                                          "pooled": {**results["psychometric"][0]["pooled"], "bartlett_factor": 1.1}}]}
    assert "the cut was scaled by a parametric-bootstrap Bartlett factor" in report.methods_paragraph(SPEC, fixed)
    posterior = {**results, "options": {**results["options"], "interval": "posterior"}}
    assert "credible intervals" in report.methods_paragraph(SPEC, posterior)


def test_the_methods_paragraph_says_who_each_exclusion_rule_removed_in_words_a_paper_can_print():
    ex = {"participants_total": 1204, "participants_excluded": 5, "trials_analysed": 38120, "rules": [
        {"rule": "failed_attention", "params": {}, "participants": [1, 2], "trials": 80},
        {"rule": "too_fast", "params": {"min_median_rt_ms": 400.0}, "participants": [3], "trials": 40},
        {"rule": "fidelity_violated", "params": {"bound_ms": 50.0, "max_fraction": 0.2}, "participants": [4],
         "trials": 40},
        {"rule": "fidelity_violated", "params": {"bound_ms": 33.4}, "participants": [], "trials": 17},
        {"rule": "session_excluded", "params": {}, "participants": [5], "trials": 12}]}
    text = report.methods_paragraph({"id": "x", "title": "X", "blocks": []}, {"exclusions": ex, "options": {}})
    assert ("In total, 1,204 participants took part; the study file's exclusion rules removed 5 (failed an "
            "attention check: 2; median response time below 400 ms: 1; more than 20 % of their trials painted "
            "late (95th-percentile lateness above 50 ms): 1; withdrew, their answers kept but excluded: 1), leaving "
            "1,199; 17 trials painted late (95th-percentile lateness above 33.4 ms) were excluded. The analyses "
            "used 38,120 main trials") in text
    assert "_" not in text.split("In total")[1]  # no rule keys or parameter names
    one = report.methods_paragraph(
        {"id": "x", "title": "X", "blocks": [
            {"id": "p", "type": "practice", "task": {"type": "acceptability"}},
            {"id": "m", "type": "main", "task": {"type": "acceptability"}, "design": {"factorial": ["rate"]}}],
         "counterbalancing": {"block_order": "latin_square"}},
        {"exclusions": {"participants_total": 1, "trials_analysed": 1}, "options": {}})
    assert "in 1 main block: m (" in one and "after 1 practice block that was not analysed" in one
    assert "In total, 1 participant took part" in one and "used 1 main trial (" in one
    assert "Latin square" not in one  # one main block has no order to counterbalance


def test_the_methods_paragraph_leaves_out_analyses_without_results():
    text = report.methods_paragraph({"id": "x", "title": "X", "blocks": []},
                                    {"exclusions": {"participants_total": 3}, "options": {}})
    assert "In total, 3 participants took part" in text and "in 0 main blocks." in text
    assert "psychometric" not in text and "Thurstone" not in text and "Ratings" not in text


def test_the_methods_paragraph_says_when_intervals_were_widened_by_the_participant_jackknife(results):
    groups = sorted({f["cluster"]["groups"] for p in results["psychometric"]
                     for f in [p["pooled"], *p["conditions"]] if f["cluster"]["method"]})
    assert groups  # the pooled fit has six participants
    text = report.methods_paragraph(SPEC, results)
    assert "jackknife over participants" in text and f"({groups[0]}" in text
    off = {**results, "psychometric": [
        {**p, "pooled": {**p["pooled"], "cluster": {"method": None, "reason": "off"}},
         "conditions": [{**c, "cluster": {"method": None, "reason": "off"}} for c in p["conditions"]]}
        for p in results["psychometric"]]}
    assert "jackknife" not in report.methods_paragraph(SPEC, off)


def test_the_methods_paragraph_names_a_sliders_default_ends():
    spec = {"id": "x", "title": "X", "blocks": [
        {"id": "feel", "type": "main", "design": {"factorial": ["strategy"]},
         "task": {"type": "rating", "scale": {"type": "slider"}}}]}
    text = report.methods_paragraph(spec, {"n": {"participants": 0}})
    assert "0–100 slider" in text and "None" not in text


def test_the_methods_paragraph_names_the_population_intervals_method_per_condition(results):
    rows = results["population"][0]["rows"]
    assert {r["population_q_ci_method"] for r in rows} == {"profile-t"}
    assert ("95 % profile-likelihood interval: the values of the point whose profile log likelihood lies within "
            "t²/2 of its maximum, t the Student-t quantile for that level on n − 1 degrees of freedom (n "
            "participants).") in report.methods_paragraph(SPEC, results)

    def with_methods(*methods):
        pop = [{**results["population"][0], "rows": [{**r, "population_q_ci_method": m}
                                                      for r, m in zip(rows, methods)]}]
        return report.methods_paragraph(SPEC, {**results, "population": pop})

    assert "μ and σ estimated by restricted (REML-type) maximum likelihood" in report.methods_paragraph(SPEC, results)
    older = [{**results["population"][0], "rows": [{k: v for k, v in r.items() if k != "population_estimation"}
                                                   for r in rows]}]
    older_text = report.methods_paragraph(SPEC, {**results, "population": older})
    assert "μ and σ estimated by maximum likelihood;" in older_text
    # results of earlier pipeline versions: the delta method, or the profile where σ sat at its floor
    assert "has a 95 % delta-method interval." in with_methods(*["delta"] * len(rows))
    mixed = with_methods("profile", *["delta"] * (len(rows) - 1))
    assert f"profile-likelihood one where σ sat at its lower bound (the participants agreed closely): " \
           f"{rows[0]['condition']}." in mixed
    assert "95 % profile-likelihood interval" in with_methods(*["profile"] * len(rows))


def _blocks_spec(cb, *blocks):
    return {"id": "o", "title": "O", "counterbalancing": cb, "blocks": list(blocks)}


def test_the_methods_paragraph_says_how_trials_were_ordered_as_the_study_file_set_it():
    listed = {"id": "rate", "type": "main", "task": {"type": "acceptability"}, "design": {"factorial": ["rate"]}}
    fixed = {**listed, "id": "tour", "order": "fixed"}
    shared = report.methods_paragraph(_blocks_spec({"seed": "fixed", "fixed_seed": 3}, listed), {})
    assert "Trial order was randomised in one seeded order shared by all participants" in shared
    mixed = report.methods_paragraph(_blocks_spec({"max_repeats": 2}, listed, fixed), {})
    assert "trial order was randomised in rate per participant with at most 2 repeats" in mixed
    assert "trials were shown in the listed order in tour" in mixed
    only_fixed = report.methods_paragraph(_blocks_spec({"max_repeats": 2}, fixed), {})
    assert "randomised" not in only_fixed and "repeats" not in only_fixed


def test_the_methods_paragraph_names_interleaved_adaptive_tracks():
    proc = {"dimension": "tokens_per_s", "tracks": [{"method": "staircase"}, {"method": "staircase"},
                                                    {"method": "questplus"}]}
    block = {"id": "stair", "type": "main", "task": {"type": "acceptability"}, "procedure": proc}
    text = report.methods_paragraph(_blocks_spec({}, block), {})
    assert "3 interleaved adaptive tracks: 2 staircase and 1 QUEST+" in text
    one = report.methods_paragraph(_blocks_spec({}, {**block, "procedure": {"method": "questplus"}}), {})
    assert "an adaptive QUEST+ procedure" in one and "  " not in one


def test_the_population_formula_subtracts_for_curves_that_fall_with_the_level(results):
    rising = report.methods_paragraph(SPEC, results)
    assert "μ + Φ⁻¹(0.75)·σ" in rising
    falling = {**results, "population": [{**p, "decreasing": True} for p in results["population"]]}
    text = report.methods_paragraph(SPEC, falling)
    assert "μ − Φ⁻¹(0.75)·σ" in text and "μ + Φ⁻¹" not in text


def test_the_methods_paragraph_names_the_axis_each_block_was_fitted_on_and_the_population_model(results):
    text = report.methods_paragraph(SPEC, results)
    assert ("Levels were fitted on a logarithmic axis (x the natural log of the level, so a threshold's interval and "
            "the spread between people are ratios) in acceptability (rate, tokens/s), as perceived speed follows "
            "ratios of rates (Weber).") in text
    assert "participants' thresholds Normal(μ, σ) on the fitting axis (log-normal in the level)" in text
    assert "the level at which 75 % of people accept, the headline of the results" in text
    assert "σ a profile-likelihood interval with the same cut" in text
    linear = {**results, "psychometric": [{**p, "log_axis": False} for p in results["psychometric"]],
              "population": [{**p, "log_axis": False} for p in results["population"]]}
    text = report.methods_paragraph(SPEC, linear)
    assert "Levels were fitted on a linear axis in acceptability (rate, tokens/s)." in text
    assert "thresholds Normal(μ, σ), a shared width" in text


def test_headline_numbers_keep_three_significant_digits_without_an_exponent_and_name_open_ends():
    assert [headline.number(x) for x in (1523.4, 21.24, 0.12345, 0, None, float("inf"))] == \
        ["1523", "21.2", "0.123", "0", "—", "∞"]
    assert headline.interval(None, 21.5) == "−∞ – 21.5" and headline.interval(3, None) == "3.00 – ∞"
