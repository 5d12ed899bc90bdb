"""Figures drawn from a results dict: every figure in SVG, PNG and PDF, labelled with the study's conditions."""

import xml.etree.ElementTree as ET

import pytest
from sim_frames import SPEC, frames  # noqa: E402

from analysis.reporting import figures  # noqa: E402
from analysis.stats import pipeline


@pytest.fixture(scope="module")
def results():
    trials, people = frames(8, slow_painter=2)
    return pipeline.run(trials, people, spec=SPEC,
                        options=pipeline.Options(n_boot=30, deviance_samples=0, individual_max=0))


@pytest.fixture(scope="module")
def written(results, tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    return out, figures.render_all(results, out)


def test_every_analysis_gets_a_figure_in_three_formats(written):
    out, made = written
    names = [f["name"] for f in made]
    # no predictors-rating: the simulated rating streams share every metric, so there is nothing to plot;
    # the tokenizer pairs are compared within two passages, so they are also scaled per passage (stratum)
    assert names == ["psychometric-acceptability", "thresholds-acceptability", "mos-ratings",
                     "pairwise-tokenizers", "pairwise-strata-tokenizers", "predictors-yes-no", "fidelity"]
    for fig in made:
        assert fig["files"] == [f"{fig['name']}.svg", f"{fig['name']}.png", f"{fig['name']}.pdf"]
        assert (out / f"{fig['name']}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"{fig['name']}.pdf").read_bytes()[:5] == b"%PDF-"


def test_svgs_are_valid_xml_with_the_conditions_as_text(written):
    out, _ = written
    svg = (out / "psychometric-acceptability.svg").read_text()
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "ttft=2000, delivery=live" in svg and "rate (tokens/s)" in svg
    assert "qwen3.6" in (out / "pairwise-tokenizers.svg").read_text()
    assert "bound 50 ms" in (out / "fidelity.svg").read_text()


def test_the_same_results_draw_the_same_svg(results, tmp_path):
    a = figures.render_all(results, tmp_path / "a", formats=("svg",))
    b = figures.render_all(results, tmp_path / "b", formats=("svg",))
    assert [f["name"] for f in a] == [f["name"] for f in b]
    for f in a:
        assert (tmp_path / "a" / f["files"][0]).read_bytes() == (tmp_path / "b" / f["files"][0]).read_bytes()


def test_results_without_analyses_draw_nothing(tmp_path):
    empty = {"psychometric": [], "population": [], "ratings": [], "pairwise": [], "predictors": [],
             "fidelity": {"available": False}}
    assert figures.render_all(empty, tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_each_figure_calls_back_so_a_run_can_be_cancelled_between_figures(results, tmp_path):
    calls = []
    made = figures.render_all(results, tmp_path, formats=("svg",), on_figure=calls.append)
    assert calls == list(range(len(made)))


@pytest.mark.parametrize(("what", "block", "title"), [
    ("Ratings", "ratings", "Ratings"), ("Acceptability", " Acceptability", "Acceptability"),
    ("Ratings", "ratings-2", "Ratings: ratings-2"), ("Pairwise scale", "tokenizers", "Pairwise scale: tokenizers"),
])
def test_a_title_names_the_block_unless_the_block_is_named_for_what_the_figure_shows(what, block, title):
    assert figures._title(what, block) == title


def _entry(log_axis):
    curve = {"x": [4.0, 10.0, 40.0], "psi": [0.1, 0.5, 0.9], "lo": None, "hi": None}
    points = [{"level": lv, "p": p, "n": 10} for lv, p in ((4.0, 0.1), (8.0, 0.3), (16.0, 0.6), (40.0, 0.9))]
    return {"block": "acc", "level_name": "rate", "unit": "tokens/s", "log_axis": log_axis,
            "conditions": [{"condition": "ttft=200", "threshold": 11.0, "curve": curve, "points": points}]}


def _tick_labels(fig):
    fig.canvas.draw()
    return [t.get_text() for t in fig.axes[0].get_xticklabels()]


def test_a_log_axis_fit_is_drawn_on_a_log_scale_ticked_at_the_levels_in_their_unit():
    fig = figures.psychometric(_entry(True))
    try:
        assert fig.axes[0].get_xscale() == "log"
        assert _tick_labels(fig) == ["4", "8", "16", "40"]
        assert fig.axes[0].get_xlabel() == "rate (tokens/s), log scale"
    finally:
        figures.plt.close(fig)
    fig = figures.psychometric(_entry(False))
    try:
        assert fig.axes[0].get_xscale() == "linear" and fig.axes[0].get_xlabel() == "rate (tokens/s)"
    finally:
        figures.plt.close(fig)


def test_the_thresholds_figure_names_the_population_point_apart_from_the_pooled_curve():
    rows = [{"condition": "ttft=200", "population_q": 15.0, "population_q_ci_low": 13.0, "population_q_ci_high": 17.0,
             "population_mu": 12.0, "population_mu_ci_low": 11.0, "population_mu_ci_high": 13.0,
             "pooled_threshold": 11.5, "pooled_ci_low": 10.5, "pooled_ci_high": 12.5}]
    fig = figures.thresholds({"block": "acc", "level_name": "rate", "unit": "tokens/s", "log_axis": True,
                              "quantile": 0.75, "rows": rows})
    try:
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert labels == ["population: 75 % of people accept", "population: median threshold",
                          "pooled curve: midpoint"]
        assert fig.axes[0].get_xscale() == "log"
    finally:
        figures.plt.close(fig)
