"""The reduced path the end-to-end validation and the planner analyse with (``pipeline.headline_run``) gives the
headline numbers of the full pipeline (``pipeline.run``) exactly: same data, same options, every number equal.
A simulated study of the validation's own designs, with its exclusion rules and attention checks."""

import warnings

import pytest

from analysis.stats import e2e_designs, pipeline, planning, simulate
from analysis.tables import headline
from studyapp.design.counterbalance import sub_seed


def _study(name: str, index: int):
    warnings.simplefilter("ignore")
    design = e2e_designs.designs()[name]
    trials, participants = simulate.study_frame(design.study, design.population, design.participants,
                                                sub_seed(0, name, index), streams=simulate.streams_for(design.study))
    return design, trials, participants


@pytest.mark.parametrize(("name", "options"), [
    ("n20", pipeline.Options()),  # the validation's options: the defaults
    ("edge", planning.OPTIONS),  # the planner's
])
def test_the_reduced_path_gives_the_full_pipelines_headline_numbers_exactly(name, options):
    design, trials, participants = _study(name, 0)
    full = pipeline.run(trials, participants, spec=design.study, options=options)
    reduced = pipeline.headline_run(trials, participants, spec=design.study, options=options)
    want, got = headline.numbers(full), headline.numbers(reduced)
    assert want and len(want) == 2  # both TTFT conditions have a headline
    assert got == want
    assert reduced["exclusions"] == full["exclusions"]


def test_the_reduced_path_leaves_out_what_no_headline_reads():
    design, trials, participants = _study("n20", 1)
    reduced = pipeline.headline_run(trials, participants, spec=design.study)
    block = reduced["psychometric"][0]
    assert "pooled" not in block and len(block["conditions"]) == 2  # the per-condition fits the headline reads
    assert all(c["curve"]["lo"] is None and c["deviance_p"] is None for c in block["conditions"])
    assert all(r["mean_individual_threshold"] is None for r in reduced["population"][0]["rows"])
    assert not {"ratings", "pairwise", "predictors", "fidelity"} & set(reduced)
