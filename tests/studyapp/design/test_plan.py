"""The design: factors → conditions → groups → a participant's deterministic trial plan → streams."""

from collections import Counter

import pytest
from study_builders import STAIRCASE, study

from playback.core import metrics, tokenizers
from studyapp.design import counterbalance, studyfile
from studyapp.design import plan as design


@pytest.fixture(scope="module")
def demo():
    return design.expand(studyfile.load_study(studyfile.demo_study_path()))


def test_a_factorial_block_has_one_condition_per_level_combination():
    d = design.expand(study())
    conds = d.blocks[0].conditions
    assert len(conds) == 6
    assert {(c.stimuli[0].timing.rate, c.stimuli[0].timing.ttft_ms) for c in conds} == {
        (r, t) for r in (20.0, 40.0, 80.0) for t in (200.0, 1500.0)}
    assert conds[0].id == "accept:rate=20,ttft=200" and conds[0].levels == {"rate": "20", "ttft": "200"}


def test_a_condition_keeps_the_stimulus_fields_it_does_not_vary():
    spec = design.expand(study()).blocks[0].conditions[0].stimuli[0]
    assert (spec.text, spec.tokenizer, spec.seed, spec.max_chars) == ("en-chat-coffee", "char", 1, 120)
    assert (spec.strategy, spec.indicator, spec.delivery) == ("token", "none", "prefetch")


def test_between_subjects_factors_make_groups_and_each_group_sees_only_its_level():
    doc = study()
    doc["factors"][1]["assignment"] = "between"
    d = design.expand(doc)
    assert [g.id for g in d.groups] == ["ttft=200", "ttft=1500"]
    plan = design.participant_plan(d, 3, "ttft=1500")
    assert {t.stimuli[0].timing.ttft_ms for t in plan[0].trials} == {1500.0}
    assert len(plan[0].trials) == 3


def test_a_study_without_between_factors_has_one_group():
    assert [g.id for g in design.expand(study()).groups] == [design.NO_GROUP]


def test_the_plan_is_deterministic_for_a_seed_and_differs_between_seeds():
    doc = study()
    doc["blocks"][0]["repeats"] = 2
    d = design.expand(doc)
    one = [t.to_dict() for b in design.participant_plan(d, 11) for t in b.trials]
    assert one == [t.to_dict() for b in design.participant_plan(d, 11) for t in b.trials]
    orders = {tuple(t.condition for b in design.participant_plan(d, s) for t in b.trials) for s in range(10)}
    assert len(orders) > 5


def test_max_repeats_holds_in_every_participants_trial_order():
    doc = study(counterbalancing={"max_repeats": 1})
    doc["blocks"][0]["repeats"] = 3
    d = design.expand(doc)
    for seed in range(20):
        conds = [t.condition for t in design.participant_plan(d, seed)[0].trials]
        assert Counter(conds) == Counter({c.id: 3 for c in d.blocks[0].conditions})
        assert counterbalance.max_run_length(conds) == 1


def test_trial_indices_run_across_blocks_and_positions_within_them(demo):
    plan = design.participant_plan(demo, 5, "delivery=prefetch")
    trials = [t for b in plan for t in b.trials]
    assert [t.index for t in trials] == list(range(len(trials)))
    for b in plan:
        assert [t.position for t in b.trials] == list(range(len(b.trials)))


def test_practice_blocks_stay_first_and_main_blocks_follow_the_latin_square(demo):
    firsts = set()
    for row in range(6):
        plan = design.participant_plan(demo, 0, "delivery=live", row=row)
        assert plan[0].id == "practice" and all(t.practice for t in plan[0].trials)
        assert not any(t.practice for b in plan[1:] for t in b.trials)
        firsts.add(plan[1].id)
    assert firsts == {"acceptability", "ratings", "tokenizers"}


def test_two_afc_trials_carry_both_streams_and_a_balanced_presentation_order(demo):
    plan = design.participant_plan(demo, 9, "delivery=prefetch")
    afc = [t for b in plan for t in b.trials if t.type == "afc" and t.attention_check is None]
    assert len(afc) == 4
    assert Counter(t.order for t in afc) == Counter({"AB": 2, "BA": 2})
    for t in afc:
        a, b = t.ab
        assert (a.tokenizer, b.tokenizer) == ("cl100k_base", "qwen3.6")
        assert a.text == b.text and a.timing == b.timing
        assert t.stimuli[0] is (a if t.order == "AB" else b)


def test_attention_checks_are_flagged_and_placed_in_their_block(demo):
    plan = {b.id: b for b in design.participant_plan(demo, 2, "delivery=prefetch")}
    catch = [t for t in plan["tokenizers"].trials if t.attention_check == "catch-afc"]
    assert len(catch) == 1 and catch[0].position == 2 and catch[0].expected == "a"
    fast, slow = catch[0].ab
    assert fast.timing.rate > slow.timing.rate
    instructed = [t for t in plan["ratings"].trials if t.attention_check == "instructed-rating"]
    assert len(instructed) == 1 and instructed[0].expected == 2 and instructed[0].scale["points"] == 5
    assert instructed[0].question["en"].startswith("Attention check")


def test_response_controls_wait_for_the_end_of_the_stream_by_default(demo):
    trial = design.participant_plan(demo, 1, "delivery=prefetch")[1].trials[0]
    assert trial.task["controls"] == "after_end"


def test_the_demo_covers_every_trial_type_and_fits_in_about_ten_minutes(demo):
    info = design.summary(demo)
    assert set(info["per_group"]) == {"delivery=prefetch", "delivery=live"}
    for row in info["per_group"].values():
        assert 4 * 60 <= row["estimated_s"] <= 12 * 60
    types = {t.type for b in design.participant_plan(demo, 0, "delivery=live") for t in b.trials}
    assert types == {"acceptability", "rating", "afc"}


def test_a_trial_stream_is_synthesised_deterministically_at_the_condition_rate():
    d = design.expand(study())
    trial = design.participant_plan(d, 4)[0].trials[0]
    (one,) = design.trial_streams(trial)
    (two,) = design.trial_streams(trial)
    assert one == two
    m = metrics.compute(one)
    spec = trial.stimuli[0]
    assert m.tokens_per_s == pytest.approx(spec.timing.rate)
    assert m.ttft_ms == pytest.approx(spec.timing.ttft_ms)
    assert len(one.text) <= 120


def test_same_tokens_per_second_with_a_coarser_tokenizer_shows_chinese_text_faster():
    zh = design.expand(studyfile.load_study(studyfile.demo_study_path()), "zh-hans")
    cond = next(c for c in zh.blocks[3].conditions if c.levels["passage"] == "brew")
    assert cond.stimuli[0].text == "zh-chat-tea"
    fine, coarse = (design.stimulus_stream(s) for s in cond.stimuli)
    assert fine.text == coarse.text
    assert len(fine.pieces) == len(tokenizers.get("cl100k_base").pieces(fine.text))
    assert metrics.compute(coarse).e2e_ms < metrics.compute(fine).e2e_ms


def test_a_trace_stimulus_is_retimed_to_the_condition_rate():
    doc = study()
    doc["stimuli"]["steady"] = {"trace": {"id": "demo-steady-en"}}
    doc["blocks"][0]["stimulus"] = "steady"
    d = design.expand(doc)
    cond = d.blocks[0].conditions[-1]
    stream = design.stimulus_stream(cond.stimuli[0])
    m = metrics.compute(stream)
    assert m.tokens_per_s == pytest.approx(80.0) and m.ttft_ms == pytest.approx(1500.0)


def test_a_per_language_text_resolves_to_the_participants_language():
    doc = study()
    doc["stimuli"]["coffee"]["text"] = {"en": "en-chat-coffee", "zh-hans": "zh-chat-tea"}
    assert design.expand(doc, "zh-hans").blocks[0].conditions[0].stimuli[0].text == "zh-chat-tea"
    assert design.expand(doc, "en").blocks[0].conditions[0].stimuli[0].language == "en"


def test_the_demo_gives_each_participant_the_answers_of_their_language():
    doc = studyfile.load_study(studyfile.demo_study_path())
    for language, content in (("en", "en"), ("zh-hans", "zh")):
        expanded = design.expand(doc, language)
        shown = {s.language for b in expanded.blocks for c in b.conditions for s in c.stimuli}
        assert shown == {content}, (language, shown)
    assert studyfile.language_warnings(doc) == []


def test_cut_text_ends_at_a_sentence_when_it_can():
    text = "One two three. Four five six seven eight nine."
    assert design.cut_text(text, 24) == "One two three."
    assert design.cut_text(text, 33) == "One two three. Four five six"  # a sentence end too early: cut at a word
    assert design.cut_text(text, 100) == text


def test_explicit_conditions_keep_their_order_when_the_block_is_fixed():
    doc = study()
    doc["blocks"][0]["design"] = {"conditions": [{"rate": 80, "ttft": 200}, {"rate": 20, "ttft": 1500}]}
    doc["blocks"][0]["order"] = "fixed"
    doc["blocks"][0]["repeats"] = 2
    trials = design.participant_plan(design.expand(doc), 1)[0].trials
    assert [t.stimuli[0].timing.rate for t in trials] == [80.0, 20.0, 80.0, 20.0]


def test_an_adaptive_block_has_a_base_stimulus_and_no_fixed_trials():
    doc = study()
    doc["blocks"].append({"id": "stair", "type": "main", "stimulus": "coffee", "procedure": STAIRCASE,
                          "task": {"type": "acceptability", "question": "OK?"}})
    plan = design.participant_plan(design.expand(doc), 1)
    assert plan[1].trials == () and plan[1].procedure == STAIRCASE
    assert plan[1].base.timing.rate == 40.0


def test_an_unknown_group_is_refused():
    with pytest.raises(ValueError, match="unknown"):
        design.participant_plan(design.expand(study()), 1, "nope")
