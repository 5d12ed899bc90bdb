"""A rating scale's ends, with the study file's defaults: every part of PaceLab reads them the same way."""

from studyapp.design.scales import is_likert, scale_range


def test_no_scale_is_a_five_point_likert_scale():
    assert is_likert(None) and scale_range(None) == (1.0, 5.0)
    assert scale_range({"type": "likert", "points": 7}) == (1.0, 7.0)


def test_a_slider_without_ends_runs_from_0_to_100():
    assert not is_likert({"type": "slider"})
    assert scale_range({"type": "slider"}) == (0.0, 100.0)
    assert scale_range({"type": "slider", "min": -5, "max": 5}) == (-5.0, 5.0)
    assert scale_range({"type": "slider", "max": 10}) == (0.0, 10.0)
