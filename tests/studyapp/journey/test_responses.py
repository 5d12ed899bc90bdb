"""Checking submissions (pure): the attention-check verdicts, and NUL refused wherever it hides."""

import pytest

from studyapp.journey import responses
from studyapp.journey.responses import ResponseError

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


@pytest.mark.parametrize("viewport", ["yes", 7, [1280, 800], True])
def test_a_viewport_that_is_not_an_object_is_refused_by_name_not_a_server_error(viewport):
    env = {"user_agent": "test", "viewport": viewport, "refresh_hz": 60, "device": "desktop", "dpr": 1}
    with pytest.raises(ResponseError, match=r"^environment\.viewport: must be an object"):
        responses.environment({"environment": env})


def test_a_well_formed_environment_is_kept_with_whole_pixel_viewport():
    env = {"user_agent": "ua", "viewport": {"width": 1280.0, "height": 800}, "refresh_hz": 59.94,
           "device": "desktop", "dpr": 2, "touch": False, "language": "zh-Hans"}
    out = responses.environment({"environment": env})
    assert out["viewport"] == {"width": 1280, "height": 800} and out["refresh_hz"] == 59.94 and out["dpr"] == 2.0


@pytest.mark.parametrize(("field", "value"), [("refresh_hz", 1e308), ("refresh_hz", -60), ("dpr", 1e300),
                                              ("viewport", {"width": 1e20, "height": 800}),
                                              ("viewport", {"width": 1280, "height": -1})])
def test_environment_numbers_outside_what_a_browser_reports_are_refused_by_name(field, value):
    env = {"user_agent": "ua", "viewport": {"width": 1280, "height": 800}, "refresh_hz": 60, "device": "desktop",
           "dpr": 1, field: value}
    with pytest.raises(ResponseError, match=rf"^environment\.{field}(\.width|\.height)?: must be between"):
        responses.environment({"environment": env})


@pytest.mark.parametrize("reading_ms", [-1, 1e308, 86_400_001])
def test_a_reading_time_outside_zero_to_one_day_is_refused_by_name(reading_ms):
    with pytest.raises(ResponseError, match=r"^reading_ms: must be between 0 and 8\.64e\+07"):
        responses.trial_value({"type": "reading"}, {"response": "done", "reading_ms": reading_ms})
    assert responses.trial_value({"type": "reading"}, {"response": "done", "reading_ms": 86_400_000}) == {
        "response": "done", "reading_ms": 86_400_000.0}
