"""The analysis pipeline over simulated tidy frames with known effects (pure: no Django)."""

import json

import numpy as np
import pandas as pd
import pytest
from sim_frames import SPEC, frames  # noqa: E402

from analysis.reporting import notices  # noqa: E402
from analysis.stats import pipeline  # noqa: E402
from analysis.stats.psychometric import FitOptions  # noqa: E402

FAST = pipeline.Options(n_boot=40, deviance_samples=0, individual_max=0)


@pytest.fixture(scope="module")
def results():
    trials, people = frames(12, slow_painter=3, inattentive=4)
    seen = []
    out = pipeline.run(trials, people, spec=SPEC, options=FAST, progress=lambda s, p: seen.append((s, p)))
    return out, seen


def test_results_are_plain_json_without_nan(results):
    out, _ = results
    text = json.dumps(out, allow_nan=False)
    assert json.loads(text) == out


def test_progress_runs_through_every_stage_in_order_and_ends_at_100(results):
    _, seen = results
    stages = list(dict.fromkeys(s for s, _ in seen))
    assert stages == [name for name, _ in pipeline.STAGES] + ["done"]
    percents = [p for _, p in seen]
    assert percents == sorted(percents) and percents[-1] == 100.0


def test_the_study_rules_exclude_the_inattentive_and_the_badly_painted_participant(results):
    ex = results[0]["exclusions"]
    assert ex["participants_total"] == 12 and ex["participants_excluded"] == 2
    assert ex["by_reason"] == {"failed_attention": 1, "fidelity_violated": 1}
    assert results[0]["n"]["participants"] == 10


def test_thresholds_are_higher_with_a_long_ttft_and_conditions_keep_their_numeric_order(results):
    entry = results[0]["psychometric"][0]
    assert entry["level_name"] == "rate" and entry["unit"] == "tokens/s" and not entry["decreasing"]
    fits = {c["condition"]: c for c in entry["conditions"]}
    assert [c["condition"] for c in entry["conditions"]][0].startswith("ttft=300")
    short = np.mean([f["threshold"] for k, f in fits.items() if k.startswith("ttft=300,")])
    long = np.mean([f["threshold"] for k, f in fits.items() if k.startswith("ttft=2000,")])
    assert long > short
    pooled = entry["pooled"]
    assert pooled["threshold_ci_95"][0] < pooled["threshold"] < pooled["threshold_ci_95"][1]
    assert 18 < pooled["threshold"] < 36  # simulated: thresholds ~ N(25, 5), +6 for half the trials
    curve = pooled["curve"]
    assert len(curve["x"]) == len(curve["psi"]) == len(curve["lo"]) == len(curve["hi"])
    assert all(lo <= p + 1e-9 and p <= hi + 1e-9 for lo, p, hi in zip(curve["lo"], curve["psi"], curve["hi"])) or (
        np.mean([lo <= p <= hi for lo, p, hi in zip(curve["lo"], curve["psi"], curve["hi"])]) > 0.9)
    assert sum(p["n"] for p in pooled["points"]) == pooled["n_trials"] == 10 * 20


def test_population_rows_cover_every_condition_and_the_75_point_lies_above_the_mean_for_a_rate(results):
    pop = results[0]["population"][0]
    assert len(pop["rows"]) == 4
    for row in pop["rows"]:
        assert row["population_q"] >= row["population_mu"]
    assert pop["phrases"] and "moves the 75 % point" in pop["phrases"][0]


def test_ratings_find_the_smooth_strategy_rated_faster(results):
    entry = results[0]["ratings"][0]
    assert entry["scale"] == [1.0, 5.0]
    by = {r["level"]: r["mos"] for r in entry["mos_by_factor"]["strategy"]}
    assert by["smooth"] > by["token"]
    terms = {t["term"]: t for t in entry["mixed_model"]["terms"]}
    assert terms["strategy[token]"]["estimate"] < 0  # against the reference level, smooth (alphabetical)
    assert entry["subject_model"]["n_raters"] == 10


def test_pairwise_scales_the_compared_factor_and_finds_qwen_preferred(results):
    entry = results[0]["pairwise"][0]
    assert entry["compare"] == "tokenizer"
    jod = {r["condition"]: r["jod"] for r in entry["thurstone"]}
    assert set(jod) == {"cl100k_base", "qwen3.6"} and jod["qwen3.6"] > jod["cl100k_base"]
    shares = entry["preferences"]
    assert sum(s["n"] for s in shares) == entry["n_trials"] == 10 * 4
    assert entry["pse_jnd"]["metric"] == "chars_per_s"


def test_pairwise_also_scales_the_compared_factor_within_each_level_of_the_blocks_other_factors(results):
    entry = results[0]["pairwise"][0]
    strata = {st["stratum"]: st for st in entry["by_stratum"]}
    assert set(strata) == {s["stratum"] for s in entry["preferences"]} and len(strata) >= 2
    assert sum(st["n_trials"] for st in strata.values()) == entry["n_trials"]
    for st in strata.values():
        jod = {r["condition"]: r["jod"] for r in st["thurstone"]}
        assert set(jod) == {"cl100k_base", "qwen3.6"} and jod["cl100k_base"] == 0
        assert all(r["ci_low"] is not None for r in st["thurstone"])


def test_a_2afc_block_without_other_factors_has_no_per_stratum_scales():
    frame = pd.DataFrame({"participant": ["p1", "p2"] * 6, "block": "pairs", "trial_type": "afc",
                          "f_strategy": ["token~smooth"] * 12, "response_value": [1, 0, 1, 1, 0, 1] * 2})
    spec = {"blocks": [{"id": "pairs", "task": {"type": "afc", "compare": "strategy"}}]}
    entry = pipeline.stage_pairwise(frame, spec, FAST, lambda f: None)[0]
    assert entry["thurstone"] and "by_stratum" not in entry


def test_predictors_rank_the_rate_above_ttft_for_yes_no_answers(results):
    table = next(p for p in results[0]["predictors"] if p["kind"] == "yes/no")["table"]
    ranks = {r["metric"]: r["rank"] for r in table}
    assert ranks["tokens_per_s"] < ranks["ttft_ms"]


def test_rating_streams_that_share_every_metric_are_not_ranked_and_say_so(results):
    entry = next(p for p in results[0]["predictors"] if p["kind"] == "rating")
    assert all(r["rank"] is None for r in entry["table"]) and entry["points"] == {}
    assert "nothing to rank" in entry["warnings"][0]


def test_fidelity_uses_the_study_bound_and_lists_the_slow_painter_first(results):
    fid = results[0]["fidelity"]
    assert fid["bound_ms"] == 50.0
    assert fid["flagged"][0]["participant"] == 3
    devices = {g["device"] for g in fid["groups"]}
    assert devices == {"desktop", "phone"}
    assert {g["browser"] for g in fid["groups"]} == {"chromium", "firefox"}  # the engines paint differently
    assert all(g["browser"] in ("chromium", "firefox") for g in fid["groups"])
    assert sum(g["n"] for g in fid["groups"]) == fid["n_trials"]


def test_a_cancel_stops_the_pipeline_before_the_next_stage():
    trials, people = frames(4)
    seen = []

    def progress(stage, percent):
        seen.append(stage)

    with pytest.raises(pipeline.Cancelled):
        pipeline.run(trials, people, spec=SPEC, options=FAST, progress=progress,
                     cancelled=lambda: "psychometric" in seen)
    assert "population" not in seen


def test_a_frame_with_only_ratings_runs_the_rating_stages_and_skips_the_rest():
    trials, people = frames(6)
    only = trials.loc[trials["trial_type"] == "rating"]
    out = pipeline.run(only, people, spec=SPEC, options=FAST)
    assert out["psychometric"] == [] and out["pairwise"] == [] and out["ratings"][0]["mos"]


def test_yes_no_answers_are_read_from_numbers_words_and_booleans():
    assert [pipeline.binary(v) for v in (1, 0.0, "yes", "No", True, {"accept": False})] == [1, 0, 1, 0, 1, 0]
    assert np.isnan(pipeline.binary("maybe")) and np.isnan(pipeline.binary(3))


def _acceptability(seed, block, factor, sets, levels, participants, repeats, p_accept):
    """Simulated tidy rows of one acceptability factor, with the study-file spec that names it."""
    rng = np.random.default_rng(seed)
    rows = [{"participant": pid, "block": block, "trial_type": "acceptability",
             "condition": f"{block}:{factor}={level}", f"f_{factor}": str(level),
             "response_value": float(rng.random() < p_accept(level))}
            for pid in range(participants) for level in levels for _ in range(repeats)]
    return pd.DataFrame(rows), {"factors": [{"name": factor, "sets": sets, "levels": list(levels)}]}


def test_a_ttft_level_is_fitted_as_a_falling_curve():
    df, spec = _acceptability(1, "wait", "ttft", "ttft_ms", (200, 500, 1000, 2000, 4000), 6, 4,
                              lambda ttft: 1 / (1 + np.exp((ttft - 1500) / 300)))
    out = pipeline.run(df, None, spec=spec, options=FAST)
    entry = out["psychometric"][0]
    assert entry["decreasing"] and entry["level_name"] == "ttft_ms"
    assert 800 < entry["pooled"]["threshold"] < 2500


def test_levels_that_stop_short_of_the_top_of_the_curve_are_flagged_with_the_lapse_they_leave_to_the_shape():
    # the fastest rate tested (20) is where the curve is only half-way up: the lapse cannot be told from the spread
    short, spec = _acceptability(3, "acc", "rate", "rate", (4, 6, 9, 13, 20), 12, 4,
                                 lambda rate: 0.97 / (1 + np.exp(-(np.log(rate) - np.log(20)) * 3)))
    row = pipeline.run(short, None, spec=spec, options=FAST)["population"][0]
    assert row["rows"][0]["population_reach_high"] < pipeline.REACH
    assert row["rows"][0]["reach_short"] == ["top"]
    assert any("only" in w and "of the way up, so the lapse rate" in w for w in row["warnings"])
    # stored as a code and its values, which the pages word (the warning is its English)
    [notice] = [n for n in row["notices"] if n["code"] == "reach"]
    assert notice == {"code": "reach", "condition": row["rows"][0]["condition"], "end": "top", "rate": "lapse",
                      "reach": row["rows"][0]["population_reach_high"], "value": row["rows"][0]["lapse"],
                      "quantile": row["quantile"]}
    assert notices.english(notice) in row["warnings"]
    # levels on both sides of the thresholds: nothing to flag
    wide, spec = _acceptability(3, "acc", "rate", "rate", (2, 4, 8, 16, 32, 64, 128), 12, 4,
                                lambda rate: 0.97 / (1 + np.exp(-(np.log(rate) - np.log(16)) * 3)))
    row = pipeline.run(wide, None, spec=spec, options=FAST)["population"][0]
    assert row["rows"][0]["reach_short"] == [] and not any("of the way up" in w for w in row["warnings"])
    assert not any(n["code"] == "reach" for n in row["notices"])


def test_psychometric_fits_get_one_row_per_level_and_participant_and_plot_one_point_per_level():
    df, spec = _acceptability(2, "acc", "rate", "rate", (5, 10, 20, 40, 80), 5, 3,
                              lambda rate: 1 / (1 + np.exp(-(rate - 20) / 6)))
    pooled = pipeline.run(df, None, spec=spec, options=FAST)["psychometric"][0]["pooled"]
    assert pooled["n_blocks"] == 5 * 5 and pooled["n_levels"] == 5 and pooled["n_participants"] == 5
    assert [p["level"] for p in pooled["points"]] == [5.0, 10.0, 20.0, 40.0, 80.0]
    assert all(p["n"] == 15 for p in pooled["points"]) and pooled["n_trials"] == 75


def test_the_pipeline_uses_the_fits_default_threshold_interval():
    assert pipeline.Options().interval == FitOptions().interval


def test_fits_over_participants_widen_to_the_participant_jackknife_and_keep_the_models_interval(results):
    entry = results[0]["psychometric"][0]
    for f in [entry["pooled"], *entry["conditions"]]:
        model, used = f["threshold_ci_95_model"], f["threshold_ci_95"]
        assert used[0] <= model[0] and used[1] >= model[1]
        assert f["threshold_q_ci_95"][0] <= f["threshold_q_ci_95_model"][0]
        assert f["cluster"] == {"method": "participant jackknife", "groups": f["n_participants"]}
        jk = f["threshold_ci_95_jackknife"]
        assert used == [min(model[0], jk[0]), max(model[1], jk[1])]
    # simulated thresholds differ between participants (SD 5): the jackknife reaches further than the model
    assert entry["pooled"]["threshold_ci_95"] != entry["pooled"]["threshold_ci_95_model"]


def test_the_jackknife_can_be_turned_off_and_is_not_used_below_five_participants():
    trials, people = frames(12, slow_painter=3, inattentive=4)
    off = pipeline.run(trials, people, spec=SPEC, options=pipeline.Options(
        n_boot=20, deviance_samples=0, individual_max=0, cluster_groups=0))
    pooled = off["psychometric"][0]["pooled"]
    assert pooled["cluster"] == {"method": None, "reason": "off"}
    assert pooled["threshold_ci_95"] == pooled["threshold_ci_95_model"]
    few = pipeline.run(*frames(4), spec=SPEC, options=FAST)["psychometric"][0]["pooled"]
    assert few["n_participants"] == 4
    assert few["cluster"] == {"method": None, "reason": "fewer than 5 participants"}
    assert few["threshold_ci_95"] == few["threshold_ci_95_model"]


def test_a_slider_without_ends_clips_the_mos_interval_at_the_study_files_defaults():
    rng = np.random.default_rng(2)
    rows = [{"participant": f"p{p}", "block": "feel", "trial_type": "rating", "condition": "feel:strategy=smooth",
             "f_strategy": "smooth", "response_value": float(min(100.0, rng.normal(97, 6)))} for p in range(6)]
    spec = {"blocks": [{"id": "feel", "type": "main", "design": {"factorial": ["strategy"]},
                        "task": {"type": "rating", "scale": {"type": "slider"}}}],
            "factors": [{"name": "strategy", "levels": ["smooth"]}]}
    assert pipeline._scale(spec["blocks"][0], None) == (0.0, 100.0)
    out = pipeline.run(pd.DataFrame(rows), None, spec=spec, options=FAST)
    (row,) = out["ratings"][0]["mos"]
    assert row["ci_high"] <= 100.0 and row["ci_low"] < row["mos"]


def test_a_2afc_block_comparing_rates_is_scaled_from_the_designs_a_b_pairs():
    # the design writes a compared factor's pair as "A~B" (A first); rates have no a_/b_ label column of their own
    from tidy_rows import Rows, stim, stream

    spec = {"id": "s", "factors": [{"name": "rate", "sets": "rate", "levels": [10, 20, 40]}],
            "blocks": [{"id": "pairs", "type": "main", "design": {"factorial": ["rate"]},
                        "task": {"type": "afc", "compare": "rate"}}]}
    rng = np.random.default_rng(0)
    rows = Rows()
    for sid in range(1, 7):
        rows.session(sid, group="all")
        for i, (ra, rb) in enumerate([(10, 20), (10, 40), (20, 40)] * 3):
            chosen = "B" if rng.random() < 0.8 else "A"  # the faster stream, mostly
            order = "AB" if i % 2 else "BA"
            sa, sb = stream(500, 1000 / ra, n=20), stream(500, 1000 / rb, n=20)
            rows.trial(sid, i, "afc", {"response": "a" if order[0] == chosen else "b", "chosen": chosen},
                       streams=[sa, sb] if order == "AB" else [sb, sa], stimuli=[stim(), stim()], order=order,
                       condition=f"pairs:rate={ra}~{rb}", block="pairs")
    trials, _ = rows.build(spec)
    (entry,) = pipeline.stage_pairwise(pipeline.analysable(trials), spec, pipeline.Options(n_boot=20),
                                       lambda f: None)
    assert entry["warnings"] == [] and entry["n_trials"] == 54
    assert {(p["a"], p["b"]) for p in entry["preferences"]} == {("10", "20"), ("10", "40"), ("20", "40")}
    jod = {r["condition"]: r["jod"] for r in entry["thurstone"]}
    assert jod["10"] < jod["20"] < jod["40"]
    assert entry["pse_jnd"]["metric"] == "tokens_per_s"


def test_2afc_trials_stay_in_the_fidelity_groups_under_their_streams_strategies():
    from tidy_rows import Rows, entries, stim, stream

    rows = Rows()
    rows.session(1, env={"device": "desktop"})
    rows.trial(1, 0, "acceptability", {"response": "yes"}, streams=[stream(500, 50)], paint=[entries([5] * 20)])
    rows.trial(1, 1, "afc", {"response": "a", "chosen": "A"}, streams=[stream(500, 50), stream(500, 80)],
               stimuli=[stim(), stim("qwen")], order="AB", condition="main:tokenizer=x",
               paint=[entries([60] * 20), entries([60] * 20)])
    rows.trial(1, 2, "afc", {"response": "a", "chosen": "A"}, streams=[stream(500, 50), stream(500, 80)],
               stimuli=[stim(), stim(strategy="smooth")], order="AB", condition="main:strategy=x",
               paint=[entries([5] * 20), entries([5] * 20)])
    trials, people = rows.build()
    res = pipeline.stage_fidelity(trials, people, pipeline.Options())
    groups = {(g["strategy"], g["device"]): (g["n"], g["violated"]) for g in res["groups"]}
    assert groups == {("token", "desktop"): (2, 1), ("token / smooth", "desktop"): (1, 0)}
    assert sum(n for n, _ in groups.values()) == res["n_trials"] == 3 and res["n_violated"] == 1


def test_a_rate_counted_in_characters_is_labelled_chars_per_s():
    df, spec = _acceptability(3, "speed", "rate", "rate", (10, 20, 40, 80), 4, 3, lambda r: min(1.0, r / 60))
    assert pipeline.yes_no_sets(df, spec)[0]["unit"] == "tokens/s"
    df["rate_unit"] = "chars"
    assert pipeline.yes_no_sets(df, spec)[0]["unit"] == "chars/s"


def test_preference_shares_follow_the_confidence_level_asked_for():
    trials, people = frames(6)
    only = trials.loc[trials["trial_type"] == "afc"]
    wide = pipeline.run(only, people, spec=SPEC, options=FAST)["pairwise"][0]["preferences"][0]
    narrow = pipeline.run(only, people, spec=SPEC, options=pipeline.Options(
        n_boot=40, deviance_samples=0, individual_max=0, ci=0.8))["pairwise"][0]["preferences"][0]
    assert wide["ci_low"] < narrow["ci_low"] < narrow["ci_high"] < wide["ci_high"]


def test_adaptive_trials_are_one_stimulus_per_level_shown_not_one_per_track():
    rng = np.random.default_rng(0)
    rows = []
    for p in range(10):
        for track in ("up", "down"):
            for _ in range(15):
                rate = float(rng.choice([5, 8, 12, 18, 27, 40, 60]))
                rows.append({"participant": p, "block": "acc", "trial_type": "acceptability",
                             "condition": f"acc:{track}", "level": rate, "tokens_per_s": rate,
                             "ttft_ms": 500 + rng.normal(0, 300),
                             "response_value": float(rng.random() < 1 / (1 + np.exp(-(rate - 20) / 3)))})
    (entry,) = pipeline.stage_predictors(pd.DataFrame(rows), pipeline.Options(n_boot=50), lambda f: None)
    best = entry["table"][0]
    assert best["metric"] == "tokens_per_s" and best["n_stimuli"] == 14  # 2 tracks x 7 levels
    assert best["loglik_gain"] > 0.3 and best["spearman"] > 0.8


def test_a_population_interval_never_runs_off_the_levels_the_model_integrates_over():
    # seed 5: in one condition σ sits just above its floor; the delta method's interval was [-320, 373] tokens/s
    res = pipeline.run(*frames(12, seed=5), spec=SPEC, options=pipeline.Options(n_boot=10, deviance_samples=0,
                                                                                  individual_max=0))
    rows = {r["condition"]: r for p in res["population"] for r in p["rows"]}
    near_floor = rows["ttft=300, delivery=prefetch"]
    assert near_floor["population_q_ci_method"] == "profile-t"
    assert near_floor["population_q_ci_low"] < near_floor["population_q"] < near_floor["population_q_ci_high"]
    for r in rows.values():  # the tested rates span 10-60 tokens/s
        assert 0 < r["population_q_ci_low"] and r["population_q_ci_high"] < 110, r


def test_a_threshold_beyond_the_tested_levels_is_flagged_as_the_priors():
    rows = [{"participant": p, "level": float(lv), "y": 1, "condition": "all"}
            for p in range(6) for lv in (20, 35, 50, 65, 80) for _ in range(3)]  # every answer "yes"
    yn = [{"block": "b", "level_name": "rate", "unit": "tokens/s", "decreasing": False,
           "data": pd.DataFrame(rows), "order": ["all"]}]
    entry = pipeline.stage_psychometric(yn, pipeline.Options(n_boot=10, deviance_samples=0), lambda f: None)[0]
    assert entry["pooled"]["threshold"] < 20 and entry["pooled"]["beyond_levels"] == "below"
    assert "lies below the levels tested (20–80)" in entry["warnings"][0]
    assert "interval is open on the low side" in entry["warnings"][1]
    assert pipeline.jsonable(entry)["pooled"]["threshold_ci_95"][0] is None  # open: no number, not the grid's edge
    mixed = pd.DataFrame(rows).assign(y=lambda d: (d["level"] >= 50).astype(int))
    entry = pipeline.stage_psychometric([{**yn[0], "data": mixed}], pipeline.Options(n_boot=10, deviance_samples=0),
                                        lambda f: None)[0]
    assert "beyond_levels" not in entry["pooled"] and entry["warnings"] == []


def _rate_and_ttft(spec_extra=None, block_extra=None):
    df, spec = _acceptability(3, "acc", "rate", "rate", (5, 10, 20, 40, 80), 4, 2,
                              lambda rate: 1 / (1 + np.exp(-(np.log(rate) - np.log(20)) / 0.3)))
    spec["factors"][0].update(spec_extra or {})
    spec["blocks"] = [{"id": "acc", "type": "main", "task": {"type": "acceptability"}, **(block_extra or {})}]
    return df, spec


def test_a_rate_is_fitted_on_a_log_axis_and_a_ttft_on_a_linear_one_unless_the_study_file_says():
    df, spec = _rate_and_ttft()
    assert [(d["log_axis"], d["axis_source"]) for d in pipeline.yes_no_sets(df, spec)] == [(True, "rate")]
    wait, wait_spec = _acceptability(1, "wait", "ttft", "ttft_ms", (200, 500, 1000, 2000), 3, 1, lambda t: 0.5)
    assert [(d["log_axis"], d["axis_source"]) for d in pipeline.yes_no_sets(wait, wait_spec)] == [(False, "default")]
    df, spec = _rate_and_ttft({"axis": "linear"})
    assert [(d["log_axis"], d["axis_source"]) for d in pipeline.yes_no_sets(df, spec)] == [(False, "factor")]
    df, spec = _rate_and_ttft({"axis": "linear"}, {"analysis": {"axis": "log"}})  # the block's word wins
    assert [(d["log_axis"], d["axis_source"]) for d in pipeline.yes_no_sets(df, spec)] == [(True, "block")]
    forced = pipeline.Options(axis="linear")
    assert [(d["log_axis"], d["axis_source"]) for d in pipeline.yes_no_sets(df, spec, forced)] == [(False, "options")]
    with pytest.raises(ValueError, match="axis must be"):
        pipeline.Options(axis="sqrt")


def test_the_axis_and_the_population_share_reach_every_fit_and_the_population_rows():
    df, spec = _rate_and_ttft(block_extra={"analysis": {"population_share": 0.9}})
    out = pipeline.run(df, None, spec=spec, options=FAST)
    psy, pop = out["psychometric"][0], out["population"][0]
    assert psy["log_axis"] and psy["pooled"]["log_axis"] and psy["pooled"]["width_units"] == "log level"
    assert psy["quantile"] == pop["quantile"] == psy["pooled"]["q"] == 0.9
    row = pop["rows"][0]
    assert row["quantile"] == 0.9 and row["log_axis"] and row["population_sigma_scale"] == "ln"
    assert row["pooled_q"] == psy["pooled"]["threshold_q"]
    # the curve is drawn at log-spaced levels: equal ratios between neighbours
    xs = np.array(psy["pooled"]["curve"]["x"])
    assert np.allclose(xs[1:] / xs[:-1], xs[1] / xs[0])


def test_individual_fits_above_the_runs_limit_say_why_there_is_no_mean():
    df, spec = _rate_and_ttft()
    row = pipeline.run(df, None, spec=spec, options=FAST)["population"][0]["rows"][0]
    assert row["mean_individual_threshold"] is None and row["individual_limit"] == 0
    assert row["individual_note"] == "not fitted: 4 participants, over the limit of 0 set for this run"
    row = pipeline.run(df, None, spec=spec, options=pipeline.Options(n_boot=20, deviance_samples=0))["population"][0][
        "rows"][0]
    assert row["n_individual"] == 4 and row["mean_individual_threshold"] > 0 and row["individual_note"] is None


def test_a_lapse_that_ends_at_its_bound_is_flagged_with_what_to_try():
    # a quarter of the answers at the fastest rates are "no": a lapse of 0.25 against a bound of 0.1
    df, spec = _acceptability(4, "acc", "rate", "rate", (5, 10, 20, 40, 80), 6, 4,
                              lambda rate: 0.75 / (1 + np.exp(-(rate - 20) / 3)))
    spec["blocks"] = [{"id": "acc", "type": "main", "task": {"type": "acceptability"},
                       "analysis": {"axis": "linear", "lapse_max": 0.1}}]
    out = pipeline.run(df, None, spec=spec, options=FAST)
    psy = out["psychometric"][0]
    assert psy["pooled"]["at_bound"] == ["lapse"] and psy["lapse_max"] == 0.1
    advice = [w for w in psy["warnings"] if w.startswith("pooled: the lapse rate ended at")]
    assert advice and "Try a log axis" in advice[0] and "or a wider bound (analysis: lapse_max" in advice[0]
    pooled = [n for n in psy["notices"] if n["condition"] == "pooled"]
    assert pooled == [{"code": "bound", "condition": "pooled", "model": "pooled", "rate": "lapse",
                       "value": psy["pooled"]["lapse"], "bound": 0.1, "log_axis": False}]
    assert [notices.english(n) for n in psy["notices"]] == [w for w in psy["warnings"] if "at its bound" in w]
    assert out["population"][0]["rows"][0]["at_bound"] == ["lapse"]
    population_advice = [w for w in out["population"][0]["warnings"]
                         if "(population model): the lapse rate ended at" in w]
    assert population_advice and "or a wider bound" in population_advice[0]
    assert [n["model"] for n in out["population"][0]["notices"] if n["code"] == "bound"] == ["population"]
    assert pipeline._at_bound({"lapse": 0.189, "guess": 0.0}, 0.2, 0.2) == []
    assert pipeline._at_bound({"lapse": 0.19, "guess": 0.2}, 0.2, 0.2) == ["lapse", "guess"]


def test_a_straight_liner_is_named_in_the_ratings_entry_and_left_out_of_the_subject_model():
    trials, _ = frames(10)
    trials = trials[trials["attention_check"].isna()].copy()  # as the stage gets them: attention items apart
    rated = trials["trial_type"] == "rating"
    trials.loc[rated & (trials["participant"] == 3), ["response", "response_value"]] = ["4", 4.0]
    entry = pipeline.stage_ratings(trials, SPEC, lambda _p: None)[0]
    assert entry["straight_liners"] == [{"participant": "3", "n": int((rated & (trials["participant"] == 3)).sum()),
                                         "value": 4.0}]
    assert entry["subject_model"]["excluded_raters"] == ["3"]
    assert entry["subject_model"]["interval"] == "jackknife"
    assert any("straight-liners: 3 (" in w for w in entry["warnings"])
    flagged = {r["participant"]: r for r in entry["subject_model"]["raters_flagged"]}
    assert flagged["3"]["straight_liner"] and flagged["3"]["excluded"]
    widths = [s["ci_high"] - s["ci_low"] for s in entry["subject_model"]["stimuli"]]
    assert min(widths) > 0.1  # no interval pinned by the constant rater
    from dashboard.views.results import key_numbers

    shown = key_numbers({"ratings": [entry]})["straight_liners"]
    assert [(f["block"], f["participant"]) for f in shown] == [("ratings", "3")]
