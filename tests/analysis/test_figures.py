"""Figures drawn from a results dict: every figure in SVG, PNG and PDF, labelled with the study's conditions."""

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sim_frames import SPEC, frames  # noqa: E402

from analysis import figures, pipeline  # noqa: E402


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
    # no predictors-rating: the simulated rating streams share every metric, so there is nothing to plot
    assert names == ["psychometric-acceptability", "thresholds-acceptability", "mos-ratings",
                     "pairwise-tokenizers", "predictors-yes-no", "fidelity"]
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
