"""`arrival: <pattern>` in a study file: the pattern's whole timing model (and a text kind's text and tokenizer),
set where it is written and overridden by keys beside it and later layers; bad uses are named where written."""

import pytest
from study_builders import study

from playback.core import arrivals
from studyapp.design import plan as design
from studyapp.design import studyfile


def arrival_study(**stimulus_changes):
    doc = study(factors=[{"name": "arrival", "sets": "arrival", "levels": ["steady-api", "proxy-bursts", "cjk"]}])
    doc["stimuli"]["coffee"].update(stimulus_changes)
    doc["blocks"][0]["design"] = {"factorial": ["arrival"]}
    return doc


def specs(doc, language="en"):
    return {c.levels["arrival"]: c.stimuli[0] for c in design.expand(doc, language).blocks[0].conditions}


def test_a_factor_of_arrival_patterns_gives_each_condition_the_patterns_whole_timing():
    doc = arrival_study()
    assert studyfile.validate(doc) == []
    got = specs(doc)
    assert got["steady-api"].timing == arrivals.get("steady-api").timing  # the stimulus's 300 ms / 40 tok/s replaced
    assert got["proxy-bursts"].timing.flush == "interval"
    assert (got["steady-api"].text, got["steady-api"].tokenizer) == ("en-chat-coffee", "char")


def test_a_text_kind_brings_its_text_and_tokenizer_and_the_stream_is_chinese():
    cjk = specs(arrival_study())["cjk"]
    assert (cjk.text, cjk.tokenizer, cjk.language) == ("zh-chat-tea", "qwen3.6", "zh")
    stream = design.stimulus_stream(cjk)
    assert stream.meta.tokenizer == "qwen3.6" and stream.pieces[0].t_ms == 600


def test_keys_beside_the_pattern_and_in_later_layers_override_it():
    doc = arrival_study()
    doc["factors"].append({"name": "ttft", "sets": "ttft_ms", "levels": [2000]})
    doc["blocks"][0]["design"] = {"factorial": ["arrival", "ttft"]}
    assert specs(doc)["proxy-bursts"].timing.ttft_ms == 2000
    beside = study()
    beside["stimuli"]["coffee"].update(arrival="long-stalls", stall_ms=4000)
    spec = design.expand(beside).blocks[0].conditions[0].stimuli[0]
    assert spec.timing.stall_ms == 4000 and spec.timing.stall_count == 2
    assert spec.timing.rate == 20  # the factor's level (a later layer) wins over the pattern's 40


def test_an_unknown_pattern_is_named_at_the_level_that_wrote_it():
    doc = arrival_study()
    doc["factors"][0]["levels"][1] = "proxy"
    problems = [str(p) for p in studyfile.validate(doc)]
    assert any(p.startswith("factors[0].levels[1]: arrival: must be one of") and "'proxy'" in p.replace('"', "'")
               for p in problems), problems


def test_an_unknown_pattern_in_a_stimulus_is_named_at_its_key():
    doc = study()
    doc["stimuli"]["coffee"]["arrival"] = "bursty"
    problems = [str(p) for p in studyfile.validate(doc)]
    assert any(p.startswith("stimuli.coffee.arrival: must be one of") for p in problems), problems


def test_a_pattern_cannot_time_a_trace():
    doc = study()
    doc["stimuli"] = {"rec": {"trace": {"id": design.bundled_trace_ids()[0]}}}
    doc["blocks"][0]["stimulus"] = "rec"
    doc["factors"] = [{"name": "arrival", "sets": "arrival", "levels": ["steady-api", "fast-dump"]}]
    doc["blocks"][0]["design"] = {"factorial": ["arrival"]}
    problems = [str(p) for p in studyfile.validate(doc)]
    assert problems == ["factors[0].levels[0]: an arrival pattern times a text stimulus; a trace keeps its recorded "
                        "arrivals (only ttft_ms and rate re-time it)"]


def test_a_pattern_combined_into_an_invalid_timing_is_reported_where_the_override_was_written():
    doc = study()
    doc["stimuli"]["coffee"].update(arrival="long-stalls", stall_rate_per_s=0.5)
    problems = [str(p) for p in studyfile.validate(doc)]
    assert problems and all(p.startswith("stimuli.coffee.") for p in problems), problems
    assert any("stall_count" in p and "either" in p for p in problems)


@pytest.mark.parametrize("name", arrivals.names())
def test_every_pattern_is_a_valid_stimulus(name):
    doc = study()
    doc["stimuli"]["coffee"]["arrival"] = name
    doc["factors"] = [f for f in doc["factors"] if f["name"] == "rate"]
    doc["blocks"][0]["design"] = {"factorial": ["rate"]}
    doc["factors"][0] = {"name": "rate", "sets": "seed", "levels": [1, 2]}
    assert studyfile.validate(doc) == []
