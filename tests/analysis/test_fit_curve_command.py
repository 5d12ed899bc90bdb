"""manage.py fit_curve: JSON interface, human output, clear errors."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from analysis.stats.sigmoids import Sigmoid

JSON_KEYS = {"threshold", "threshold_ci_95", "width", "guess", "lapse", "deviance", "n_trials"}


def _write_trials(path, m=30.0, w=20.0, seed=0):
    rng = np.random.default_rng(seed)
    s = Sigmoid("logistic")
    lines = ["level,response"]
    for level in np.linspace(10, 50, 5):
        for _ in range(40):
            lines.append(f"{level},{int(rng.random() < 0.02 + 0.96 * s(level, m, w))}")
    path.write_text("\n".join(lines) + "\n")


def _run(*args):
    from io import StringIO

    out = StringIO()
    call_command("fit_curve", *args, stdout=out)
    return out.getvalue()


def test_json_output_has_the_interface_keys(tmp_path):
    path = tmp_path / "trials.csv"
    _write_trials(path)
    doc = json.loads(_run(str(path), "--json"))
    assert JSON_KEYS <= doc.keys()
    lo, hi = doc["threshold_ci_95"]
    assert lo < doc["threshold"] < hi
    assert 20 < doc["threshold"] < 40
    assert doc["n_trials"] == 200


def test_options_reach_the_fit(tmp_path):
    path = tmp_path / "agg.csv"
    path.write_text("level,n_positive,n_total\n5,22,40\n10,25,40\n20,31,40\n40,37,40\n80,39,40\n")
    doc = json.loads(_run(str(path), "--sigmoid", "weibull", "--experiment", "2AFC", "--json"))
    assert doc["guess"] == 0.5
    assert doc["log_axis"] is True and doc["sigmoid"] == "weibull"


def test_the_bartlett_factor_is_reported_and_applies_only_to_a_fixed_guess_rate(tmp_path):
    path = tmp_path / "agg.csv"
    path.write_text("level,n_positive,n_total\n5,22,40\n10,25,40\n20,31,40\n40,37,40\n80,39,40\n")
    afc = json.loads(_run(str(path), "--experiment", "2AFC", "--json"))
    yes_no = json.loads(_run(str(path), "--json"))
    assert 0.5 < afc["bartlett_factor"] < 2 and afc["bartlett_factor"] != 1.0  # estimated, not the default
    assert yes_no["bartlett_factor"] == 1.0  # the guess rate is integrated out instead


def test_interval_method_is_chosen_and_reported(tmp_path):
    path = tmp_path / "trials.csv"
    _write_trials(path)
    docs = {i: json.loads(_run(str(path), "--interval", i, "--json")) for i in ("posterior", "profile", "hybrid")}
    assert json.loads(_run(str(path), "--json"))["interval"] == "hybrid"
    assert {i: d["interval"] for i, d in docs.items()} == {i: i for i in docs}
    assert docs["posterior"]["threshold_ci_95"] != docs["hybrid"]["threshold_ci_95"]
    with pytest.raises(CommandError):
        _run(str(path), "--interval", "bootstrap")


def test_human_output_names_threshold_and_interval(tmp_path):
    path = tmp_path / "trials.csv"
    _write_trials(path)
    text = _run(str(path), "--log-axis")
    assert "threshold" in text and "95 % CI" in text and "log axis" in text


def test_malformed_csv_is_a_command_error_naming_row_and_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("level,n_positive,n_total\n1,1,2\n2,1,x\n")
    with pytest.raises(CommandError, match="row 3, column n_total"):
        _run(str(path))


def test_missing_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        _run(str(tmp_path / "nope.csv"))


def _write_people(path, people, sd, seed=2):
    rng = np.random.default_rng(seed)
    s = Sigmoid("logistic")
    lines = ["participant,level,response"]
    for p in range(people):
        m = rng.normal(30.0, sd)
        for level in np.linspace(10, 50, 5):
            lines += [f"p{p},{level},{int(rng.random() < 0.02 + 0.96 * s(level, m, 8.0))}" for _ in range(6)]
    path.write_text("\n".join(lines) + "\n")


def test_trials_of_participants_who_differ_get_the_jackknife_widened_interval(tmp_path):
    path = tmp_path / "people.csv"
    _write_people(path, 10, 10.0)
    doc = json.loads(_run(str(path), "--json"))
    assert doc["cluster"] == {"method": "participant jackknife", "groups": 10}
    model, used = doc["threshold_ci_95_model"], doc["threshold_ci_95"]
    assert used[0] <= model[0] and used[1] >= model[1] and used != model
    off = json.loads(_run(str(path), "--json", "--no-jackknife"))
    assert off["threshold_ci_95"] == off["threshold_ci_95_model"] == model
    assert off["cluster"] == {"method": None, "reason": "off"}
    assert "widened by a jackknife over 10 groups of participants" in _run(str(path))


def test_files_without_participants_keep_the_models_interval(tmp_path):
    path = tmp_path / "trials.csv"
    _write_trials(path)
    doc = json.loads(_run(str(path), "--json"))
    assert doc["threshold_ci_95"] == doc["threshold_ci_95_model"]
    assert doc["cluster"] == {"method": None, "reason": "no participant column"}
    few = tmp_path / "few.csv"
    _write_people(few, 3, 10.0)
    assert json.loads(_run(str(few), "--json"))["cluster"]["reason"] == "fewer than 5 participants"


def test_a_threshold_at_75_percent_of_the_rise_is_widened_over_participants_too(tmp_path):
    path = tmp_path / "people.csv"
    _write_people(path, 10, 10.0)
    mid = json.loads(_run(str(path), "--json"))
    doc = json.loads(_run(str(path), "--json", "--threshold-pc", "0.75"))
    assert doc["threshold"] > mid["threshold"]  # a rising curve reaches 75 % of its rise later than 50 %
    assert doc["cluster"] == {"method": "participant jackknife", "groups": 10}
    model, used, jk = doc["threshold_ci_95_model"], doc["threshold_ci_95"], doc["threshold_ci_95_jackknife"]
    assert jk[0] < doc["threshold"] < jk[1]
    assert used == [min(model[0], jk[0]), max(model[1], jk[1])] and used != model


def test_an_open_interval_is_null_in_strict_json_with_its_side_named_and_a_warning(tmp_path):
    path = tmp_path / "all_yes.csv"
    path.write_text("level,n_positive,n_total\n" + "".join(f"{lv},{20 if lv > 10 else 19},20\n"
                                                           for lv in (10, 15, 20, 25, 30, 40, 60)))
    text = _run(str(path), "--json")
    out = json.loads(text, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert out["threshold_ci_95"][0] is None and out["threshold_ci_95"][1] > out["threshold"]
    assert out["threshold_ci_open"] == ["low"]
    assert any("open on the low side" in w for w in out["warnings"])
    assert any("below the levels tested (10–60)" in w for w in out["warnings"])


def test_a_closed_interval_has_no_open_side_and_no_warnings(tmp_path):
    path = tmp_path / "trials.csv"
    _write_trials(path)
    out = json.loads(_run(str(path), "--json"))
    assert out["threshold_ci_open"] == [] and out["warnings"] == []
    assert all(isinstance(end, float) for end in out["threshold_ci_95"])


def test_2afc_answers_below_chance_are_warned_about_on_stderr(tmp_path):
    from io import StringIO

    path = tmp_path / "swapped.csv"
    path.write_text("level,n_positive,n_total\n" + "".join(f"{lv},{k},20\n"
                                                           for lv, k in zip((1, 2, 3, 4, 5), (5, 4, 6, 5, 3))))
    out, err = StringIO(), StringIO()
    call_command("fit_curve", str(path), "--experiment", "2AFC", stdout=out, stderr=err)
    assert "warning: the answers are below chance: 23.0 % correct where guessing gives 50 %" in err.getvalue()


def test_a_log_axis_refuses_a_zero_level_naming_its_row(tmp_path):
    path = tmp_path / "zero.csv"
    path.write_text("level,response\n0,0\n10,1\n20,1\n")
    _run(str(path))  # a linear axis takes it
    for flags in (["--log-axis"], ["--sigmoid", "weibull"]):
        with pytest.raises(CommandError, match="row 2, column level: a log axis"):
            _run(str(path), *flags)
