"""The HTML report page (analysis/report_page.py): the methods, tables, exclusions and figures in one file, in the
reader's language."""

import re

import pytest
from sim_frames import SPEC, frames

from analysis import report_page
from analysis.reporting import figures
from analysis.reporting import methods as report
from analysis.stats import pipeline
from analysis.tables import headline


@pytest.fixture(scope="module")
def results():
    trials, people = frames(8, slow_painter=2, inattentive=5)
    return pipeline.run(trials, people, spec=SPEC,
                        options=pipeline.Options(n_boot=30, deviance_samples=0, individual_max=0))


def test_the_report_embeds_figures_tables_and_the_exclusion_report(results, tmp_path):
    made = figures.render_all(results, tmp_path, formats=("svg",))
    shown = [f | {"svg": (tmp_path / f["files"][0]).read_text()} for f in made]
    methods = report.methods_paragraph(SPEC, results)
    html = report_page.render_html(spec=SPEC, results=results, figures=shown, methods=methods,
                              run={"id": 7, "data_version": "abc123def4567890"})
    assert html.count("<svg") == len(made) > 0
    assert "analysis run 7" in html and "abc123def456" in html
    for section in ("methods", "exclusions", "psychometric", "population", "ratings", "pairwise", "predictors",
                    "fidelity", "figures"):
        assert f'id="{section}"' in html
    assert "failed_attention" in html and "fidelity_violated" in html
    pooled = results["psychometric"][0]["pooled"]["threshold"]
    assert f"{pooled:.2f}" in html
    assert "qwen3.6" in html and "strategy=smooth, indicator=dots" in html
    assert "None" not in re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
    assert methods.split(".")[0] in html


def test_the_report_is_written_in_the_language_asked_for_whatever_the_thread_last_activated(results):
    from django.utils import translation

    kwargs = {"spec": SPEC, "results": results, "figures": [], "methods": "M.", "run": {"id": 3}}
    with translation.override("zh-hans"):
        english = report_page.render_html(**kwargs)
    with translation.override("en"):
        chinese = report_page.render_html(**kwargs, language="zh-hans")
    assert '<html lang="en">' in english and "analysis run 3" in english and "分析报告" not in english
    assert '<html lang="zh-hans">' in chinese and "分析报告" in chinese


def test_an_open_threshold_interval_reads_as_unbounded_in_the_report(results):
    entry = results["psychometric"][0]
    opened = {**results, "psychometric": [{**entry, "pooled": {**entry["pooled"], "threshold_ci_95": [None, 21.5]}}]}
    html = report_page.render_html(spec=SPEC, results=opened, figures=[], methods="M.", run={"id": 1})
    assert "−∞ – 21.50" in html


def test_the_reports_counts_carry_thousands_separators_like_the_methods_paragraph(results):
    ex = {**results["exclusions"], "participants_total": 1204, "participants_excluded": 7,
          "participants_included": 1197, "trials_total": 43344, "trials_analysed": 40112}
    fid = {**results["fidelity"], "n_trials": 43344, "n_violated": 1250}
    big = {**results, "exclusions": ex, "fidelity": fid}
    html = report_page.render_html(spec=SPEC, results=big, figures=[], methods="M.", run={"id": 1})
    assert "1,204 participants, 7 excluded, 1,197 analysed." in html
    assert "40,112 of 43,344 trials analysed." in html
    assert "1,250 of 43,344 trials had a p95 lateness" in html
    # in Chinese, as Django's zh_Hans number format writes them: no separator (its grouping is by 4, for 万)
    chinese = report_page.render_html(spec=SPEC, results=big, figures=[], methods="M.", run={"id": 1},
                                      language="zh-hans")
    assert "43344" in chinese and "43,344" not in chinese


def test_the_report_leads_with_the_population_point_per_condition_then_the_numbers_named_apart(results):
    html = report_page.render_html(spec=SPEC, results=results, figures=[], methods="M.", run={"id": 1})
    assert html.index('id="headline"') < html.index('id="methods"')
    row = results["population"][0]["rows"][0]
    point = headline.number(row["population_q"])
    ci = headline.interval(row["population_q_ci_low"], row["population_q_ci_high"])  # "∞" for an open end
    assert f"75 % of the population accept from {point} tokens/s (95 % CI {ci})" in html
    for name in ("population median threshold", "SD between people", "pooled curve: level where 75 % of all "
                 "answers are yes", "pooled curve: midpoint (50 % of its rise)", "mean of individual thresholds"):
        assert name in html
    assert "Levels were fitted on a log axis" in html
    n = row["n_participants"]
    assert f"not fitted: {n} participants, over this run's limit of 0" in html  # individual_max=0 in this run
    chinese = report_page.render_html(spec=SPEC, results=results, figures=[], methods="M.", run={"id": 1},
                                 language="zh-hans")
    assert f"75 % 的人群从 {point} tokens/s 起可以接受" in chinese and "人群阈值中位数" in chinese


def test_a_fit_at_its_lapse_bound_is_flagged_in_the_report_with_what_to_try(results):
    entry = results["psychometric"][0]
    cond = entry["conditions"][0]
    flagged = {**results, "psychometric": [{**entry, "log_axis": False, "conditions": [
        {**cond, "lapse": 0.2, "at_bound": ["lapse"]}, *entry["conditions"][1:]]}],
        "population": [{**results["population"][0], "log_axis": False}]}
    html = report_page.render_html(spec=SPEC, results=flagged, figures=[], methods="M.", run={"id": 1})
    assert (f"{cond['condition']}: the lapse rate ended at 0.200, at its bound 0.2: the curve does not fit the "
            "answers at the ends of the levels") in html
    assert "Try a log axis (analysis: {axis: log} in the block)" in html


def test_levels_that_stop_short_of_the_curves_top_are_flagged_in_the_report_in_either_language(results):
    entry = results["population"][0]
    row = entry["rows"][0]
    short = {**results, "population": [{**entry, "rows": [
        {**row, "lapse": 0.081, "population_reach_high": 0.62, "reach_short": ["top"]}, *entry["rows"][1:]]}]}
    html = report_page.render_html(spec=SPEC, results=short, figures=[], methods="M.", run={"id": 1})
    assert (f"{row['condition']}: at the highest level tested the average participant's curve is only 62 % "
            "of the way up, so the lapse rate (0.0810) is read from the curve's shape") in html
    assert html.count('class="warn reach-warning"') == 1
    chinese = report_page.render_html(spec=SPEC, results=short, figures=[], methods="M.", run={"id": 1},
                                      language="zh-hans")
    assert "一般参与者的曲线只升到 62 %，因此失误率（0.0810）" in chinese
    plain = report_page.render_html(spec=SPEC, results=results, figures=[], methods="M.", run={"id": 1})
    assert "reach-warning" not in plain or all(r.get("reach_short") for r in entry["rows"])


def test_the_bound_and_reach_warnings_of_a_run_are_worded_in_the_reports_language_and_the_others_kept(results):
    from analysis.reporting import notices

    entry = results["population"][0]
    notice = notices.reach(entry["rows"][0]["condition"], "top", 0.62, 0.081, entry["quantile"])
    stored = {**results, "population": [{**entry, "notices": [notice],
                                         "warnings": ["a warning no notice words", notices.english(notice)]}]}
    english = report_page.render_html(spec=SPEC, results=stored, figures=[], methods="M.", run={"id": 1})
    population = english.split('id="population"')[1].split("<h2")[0]
    assert population.count('class="warn reach-warning"') == 1 and population.count('class="warn"') == 1
    assert "a warning no notice words" in population
    chinese = report_page.render_html(spec=SPEC, results=stored, figures=[], methods="M.", run={"id": 1},
                                      language="zh-hans")
    population = chinese.split('id="population"')[1].split("<h2")[0]
    assert "一般参与者的曲线只升到 62 %，因此失误率（0.0810）" in population
    assert notices.english(notice) not in chinese and "of the way up" not in chinese
    assert "a warning no notice words" in population
