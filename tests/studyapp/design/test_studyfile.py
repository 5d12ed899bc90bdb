"""The study file: YAML loading, the published schema, and every problem reported with its path."""

import json

import jsonschema
import pytest
from study_builders import STAIRCASE, study

from studyapp.design import studyfile


def messages(doc):
    return [str(p) for p in studyfile.validate(doc)]


def test_the_demo_study_is_valid():
    doc = studyfile.load_study(studyfile.demo_study_path())
    assert doc["id"] == "demo-perceived-speed"
    assert {b["task"]["type"] for b in doc["blocks"]} == {"acceptability", "rating", "afc"}


def test_the_published_schema_is_draft_2020_12_and_accepts_the_demo_with_a_plain_validator():
    schema = json.loads((studyfile.demo_study_path().parent.parent / "schema" / "study.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = studyfile.parse_yaml(studyfile.demo_study_path().read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc)) == []


def test_the_minimal_study_is_valid():
    assert messages(study()) == []


def test_an_explicit_trial_rate_error_names_block_trial_and_field():
    doc = study()
    doc["blocks"].append({"id": "explicit", "type": "main", "stimulus": "coffee",
                          "trials": [{"rate": 10}, {"rate": 20}, {"rate": 30}, {"rate": 0}],
                          "task": {"type": "acceptability", "question": "OK?"}})
    assert messages(doc) == ["blocks[1].trials[3].rate: must be > 0, got 0"]


def test_every_schema_error_is_collected_and_sorted_by_path_naturally():
    doc = study()
    doc["blocks"] = [dict(doc["blocks"][0], id=f"b{i}") for i in range(11)]
    doc["blocks"][10]["repeats"] = 0
    doc["blocks"][2]["type"] = "warmup"
    doc["stimuli"]["coffee"]["seed"] = -1
    doc["colour"] = "blue"
    out = messages(doc)
    assert out == [
        "blocks[2].type: must be one of \"practice\", \"main\"; got \"warmup\"",
        "blocks[10].repeats: must be >= 1, got 0",
        "colour: unknown key (allowed: " + out[2].split("(allowed: ")[1],
        "stimuli.coffee.seed: must be >= 0, got -1",
    ]


def test_a_missing_required_key_is_reported_at_its_own_path():
    doc = study()
    del doc["blocks"][0]["task"]["question"]
    assert messages(doc) == ["blocks[0].task.question: required"]


def test_a_missing_translation_is_reported_at_the_text():
    doc = study()
    doc["texts"]["consent"] = {"en": "Consent?"}
    assert messages(doc) == ["texts.consent: missing translation for zh-hans"]


def test_a_translation_in_a_language_the_study_does_not_have_is_reported():
    doc = study(languages=["en"])
    doc["title"] = {"en": "Mini", "fr": "Mini"}
    out = messages(doc)
    assert "title.fr: 'fr' is not one of the study's languages (en)" in out


def test_a_text_of_the_wrong_shape_gets_one_readable_message():
    doc = study()
    doc["texts"]["debrief"] = ["Thanks"]
    assert messages(doc) == [
        "texts.debrief: must be a string or a mapping of language to string, e.g. {en: ..., zh-hans: ...}"]


def test_duplicate_yaml_keys_are_refused_with_their_line():
    with pytest.raises(studyfile.StudyFileError, match="line 3.*duplicate key 'id'"):
        studyfile.parse_yaml("version: 1\nid: a\nid: b\n")


def test_yes_and_no_stay_strings_as_in_yaml_1_2():
    assert studyfile.parse_yaml("a: yes\nb: no\nc: on\nd: true\n") == {"a": "yes", "b": "no", "c": "on", "d": True}


def test_unknown_tokenizer_and_bundled_text_are_reported_where_written():
    doc = study()
    doc["stimuli"]["coffee"]["tokenizer"] = "gpt-9"
    doc["stimuli"]["coffee"]["text"] = {"en": "en-chat-coffee", "zh-hans": "zh-chat-nope"}
    out = messages(doc)
    assert len(out) == 2
    assert out[0].startswith("stimuli.coffee.text.zh-hans: unknown bundled text 'zh-chat-nope'")
    assert out[1].startswith("stimuli.coffee.tokenizer: unknown tokenizer 'gpt-9'")


def test_a_factor_level_that_makes_an_invalid_timing_spec_is_reported_at_the_level():
    doc = study()
    doc["factors"].append({"name": "jit", "sets": "jitter_cv", "levels": [0, 0.5]})
    doc["blocks"][0]["design"]["factorial"].append("jit")
    assert messages(doc) == ["factors[2].levels[1]: jitter_cv: must be 0 when jitter is 'none' "
                             "(choose 'gamma' or 'lognormal')"]


def test_a_plain_level_of_the_wrong_type_for_its_parameter_is_reported():
    doc = study()
    doc["factors"][0]["levels"] = [20, -5, "fast"]
    out = messages(doc)
    assert out == ["factors[0].levels[1]: rate: must be > 0, got -5",
                   "factors[0].levels[2]: rate: must be a number, got a string"]


def test_references_to_undefined_stimuli_and_factors_are_reported():
    doc = study()
    doc["blocks"][0]["stimulus"] = "tea"
    assert messages(doc) == ["blocks[0].stimulus: unknown stimulus 'tea'"]
    doc = study()
    doc["blocks"][0]["design"]["factorial"] = ["rate", "speed"]
    assert messages(doc) == ["blocks[0].design.factorial[1]: unknown factor 'speed'"]


def test_explicit_conditions_must_name_existing_levels():
    doc = study()
    doc["blocks"][0]["design"] = {"conditions": [{"rate": 20, "ttft": 200}, {"rate": 33, "ttft": 200}]}
    assert messages(doc) == ["blocks[0].design.conditions[1].rate: 33 is not a level of rate (20, 40, 80)"]


def test_quotas_must_match_the_between_subjects_groups():
    doc = study(limits={"quotas": {"overall": 100, "groups": {"ttft=200": 20, "ttft=9999": 20}}})
    doc["factors"][1]["assignment"] = "between"
    out = messages(doc)
    assert "limits.quotas.groups[\"ttft=9999\"]: no such group; groups: ttft=200, ttft=1500" in out
    assert "limits.quotas.groups: no quota for group 'ttft=1500'" in out
    assert "limits.quotas.overall: 100 exceeds the sum of the group quotas (40)" in out


def test_max_repeats_that_cannot_be_met_is_reported_at_the_block():
    doc = study(counterbalancing={"max_repeats": 1})
    doc["blocks"][0]["design"] = {"factorial": ["rate"]}
    doc["blocks"][0]["repeats"] = 3
    assert messages(doc) == []
    doc["blocks"][0]["design"] = {"conditions": [{"rate": 20}]}
    assert messages(doc)[0].startswith("blocks[0].repeats: 3 repeats of 1 condition(s) cannot keep")


def test_an_instructed_attention_check_must_expect_a_point_of_the_scale():
    doc = study()
    doc["blocks"][0]["task"] = {"type": "rating", "question": "Fast?",
                                "scale": {"type": "likert", "points": 5, "anchors": {"low": "slow", "high": "fast"}}}
    doc["attention_checks"] = {"items": [{"id": "ic", "type": "instructed", "block": "accept", "position": 1,
                                          "question": "Choose 9", "expected": 9}]}
    assert messages(doc) == ["attention_checks.items[0].expected: must be a number from 1 to 5 on this block's scale"]


def test_a_catch_trial_expects_a_or_b_and_needs_both_streams():
    doc = study(attention_checks={"items": [{"id": "c", "type": "catch", "block": "accept", "expected": "x",
                                             "a": {"rate": 80}}]})
    out = messages(doc)
    assert "attention_checks.items[0].b: required" in out
    assert any(m.startswith("attention_checks.items[0].expected: must be one of") for m in out)


def test_an_adaptive_procedure_is_validated_by_the_adaptive_module_at_its_path():
    doc = study()
    doc["blocks"].append({"id": "stair", "type": "main", "stimulus": "coffee",
                          "procedure": STAIRCASE,
                          "task": {"type": "acceptability", "question": "OK?"}})
    assert messages(doc) == []
    doc["blocks"][1]["procedure"] = dict(STAIRCASE, rule="2up")
    out = messages(doc)
    assert len(out) == 1 and out[0].startswith("blocks[1].procedure.rule: ") and "2up" in out[0]


def test_a_trace_stimulus_can_be_retimed_but_not_retokenised():
    doc = study()
    doc["stimuli"]["steady"] = {"trace": {"id": "demo-steady-en"}, "rate": 20}
    assert messages(doc) == []
    doc["blocks"][0]["stimulus"] = "steady"  # the block's rate and TTFT factors re-time the trace
    assert messages(doc) == []
    doc["stimuli"]["steady"]["jitter"] = "gamma"
    assert messages(doc) == ["stimuli.steady.jitter: does not apply to a trace stimulus (only ttft_ms, rate)"]


def test_an_unknown_bundled_trace_is_reported():
    doc = study()
    doc["stimuli"]["rec"] = {"trace": {"id": "nope"}}
    assert messages(doc)[0].startswith("stimuli.rec.trace.id: unknown bundled trace 'nope'")


def test_nul_anywhere_in_the_document_is_a_problem_named_by_its_path():
    """PostgreSQL cannot store NUL in jsonb; the study file is refused up front, not at the database."""
    doc = study()
    doc["texts"]["consent"]["en"] = "I agree\x00"
    assert "texts.consent.en: must not contain the NUL character (U+0000)" in messages(doc)


def test_load_study_on_a_broken_file_raises_with_all_problems(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("version: 2\nid: Bad Id\n")
    with pytest.raises(studyfile.StudyFileError) as info:
        studyfile.load_study(path)
    paths = [p.path for p in info.value.problems]
    assert paths[:2] == ["blocks", "id"] and "version" in paths


def _keys(node, out):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("properties",) and isinstance(value, dict):
                out.update(value)
            _keys(value, out)
    elif isinstance(node, list):
        for value in node:
            _keys(value, out)
    return out


def test_the_documentation_names_every_key_of_the_schema():
    doc = (studyfile.demo_study_path().parent.parent.parent / "docs" / "study-file.md").read_text()
    missing = sorted(k for k in _keys(studyfile.schema(), set()) if f"`{k}`" not in doc and f"{k}:" not in doc)
    assert missing == []


def test_a_block_says_how_its_acceptability_answers_are_analysed_and_a_factor_its_axis():
    doc = study()
    doc["factors"][1]["axis"] = "log"
    doc["blocks"][0]["analysis"] = {"axis": "linear", "population_share": 0.9, "lapse_max": 0.3}
    assert messages(doc) == []
    doc["factors"][0]["axis"] = "sqrt"
    doc["blocks"][0]["analysis"] = {"axis": "log", "population_share": 1.0, "lapse": 0.1}
    assert messages(doc) == [
        "blocks[0].analysis.lapse: unknown key (allowed: axis, guess_max, lapse_max, population_share)",
        "blocks[0].analysis.population_share: must be < 1, got 1.0",
        "factors[0].axis: must be one of \"log\", \"linear\"; got \"sqrt\""]


def test_analysis_settings_on_a_block_that_is_not_acceptability_are_refused():
    doc = study()
    doc["blocks"].append({"id": "feel", "type": "main", "stimulus": "coffee", "design": {"factorial": ["rate"]},
                          "task": {"type": "rating", "question": "Fast?", "scale": {"type": "likert", "points": 5}},
                          "analysis": {"axis": "log"}})
    assert messages(doc) == ["blocks[1].analysis: only an acceptability block is analysed with these settings "
                             "(axis, population_share, lapse_max, guess_max)"]


def test_a_factor_on_a_log_axis_needs_levels_above_zero():
    doc = study()
    doc["factors"].append({"name": "stall", "sets": "stall_ms", "levels": [0, 200], "axis": "log"})
    doc["blocks"][0]["design"]["factorial"].append("stall")
    assert "factors[2].levels[0]: a factor fitted on a log axis needs levels above 0 (or axis: linear)" in messages(doc)


def test_the_client_presets_are_render_strategies_a_study_may_name():
    own = {"ai-sdk-smooth": {"delayInMs": 20}, "chat-ui-smooth": {"maxBufferedMs": 400},
           "accelerating": {"startSpeed": 3}, "typewriter": {"charsPerSec": 80}}
    for name, options in own.items():
        assert messages(study(render={"strategy": name, "strategy_options": options})) == []
    (problem,) = messages(study(render={"strategy": "typewriter", "strategy_options": {"maxBufferedMs": 400}}))
    assert problem.startswith("render.strategy_options: typewriter option maxBufferedMs: not an option")
    (problem,) = messages(study(render={"strategy": "vercel"}))
    assert problem.startswith("render.strategy:") and "chat-ui-smooth" in problem


def test_strategy_options_are_checked_against_the_strategys_declaration_where_written():
    doc = study()
    doc["blocks"].append({"id": "sentences", "type": "main", "stimulus": "coffee",
                          "trials": [{"strategy": "ai-sdk-smooth",
                                      "strategy_options": {"chunking": "regexp", "regexp": "[.!?]\\s+",
                                                           "flags": "i", "delayInMs": 20}},
                                     {"strategy": "chat-ui-smooth", "strategy_options": {"locale": "zh"}}],
                          "task": {"type": "rating", "question": "OK?", "scale": {"type": "likert", "points": 5}}})
    assert messages(doc) == []
    doc["blocks"][-1]["trials"][0]["strategy_options"]["regexp"] = "[.!?"
    doc["blocks"][-1]["trials"][1]["strategy_options"]["locale"] = "zh_CN"
    assert messages(doc) == [
        "blocks[1].trials[0].strategy_options: ai-sdk-smooth option regexp: is not a valid regular expression "
        "(missing ] (an unterminated character class)): '[.!?'"]
    doc["blocks"][-1]["trials"][0]["strategy_options"]["regexp"] = "[.!?]"
    assert messages(doc) == [
        "blocks[1].trials[1].strategy_options: chat-ui-smooth option locale: is not a language tag "
        "(such as en, zh, ja, zh-Hant), got 'zh_CN'"]
