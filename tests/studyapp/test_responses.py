"""Checking submissions (pure): the attention-check verdicts, and NUL refused wherever it hides."""

import pytest

from studyapp import responses
from studyapp.responses import ResponseError

SLIDER = {"type": "rating", "attention_check": "instructed", "expected": 20,
          "scale": {"type": "slider", "min": 0, "max": 100}}
LIKERT = {"type": "rating", "attention_check": "instructed", "expected": 2,
          "scale": {"type": "likert", "points": 5}}


@pytest.mark.parametrize(("response", "passed"), [(20, True), (25, True), (15, True), (25.5, False), (2, False)])
def test_an_instructed_slider_value_passes_within_five_percent_of_the_scale(response, passed):
    assert responses.attention_passed(SLIDER, {"response": response}) is passed


def test_a_fine_slider_still_allows_one_step_and_likert_points_must_match_exactly():
    fine = {**SLIDER, "expected": 3, "scale": {"type": "slider", "min": 0, "max": 10, "step": 1}}
    assert responses.attention_passed(fine, {"response": 4}) is True
    assert responses.attention_passed(fine, {"response": 5}) is False
    assert responses.attention_passed(LIKERT, {"response": 2}) is True
    assert responses.attention_passed(LIKERT, {"response": 3}) is False
    assert responses.attention_passed({"type": "rating"}, {"response": 3}) is None  # not a check


def test_a_questionnaire_number_without_bounds_still_stays_within_what_jsonb_gives_back_unchanged():
    items = [{"id": "n", "type": "number", "required": True}]
    assert responses.questionnaire_answers(items, {"n": 1e15}) == {"n": 1e15}
    with pytest.raises(ResponseError, match=r"answers\.n: must be within ±1e\+15"):
        responses.questionnaire_answers(items, {"n": 5.120113203405201e16})


def test_nul_is_refused_by_path_and_panel_values_lose_control_characters():
    with pytest.raises(ResponseError, match=r"payload\.answers\.q1\[1\]: text must not contain the NUL"):
        responses.no_nul({"answers": {"q1": ["ok", "a\x00b"]}})
    responses.no_nul({"answers": {"q1": ["ok", "中文"]}})
    assert responses.panel_value(" pid\x00-1\x07\n ") == "pid-1"
    assert responses.panel_value(None) == "" and len(responses.panel_value("x" * 300)) == 128
