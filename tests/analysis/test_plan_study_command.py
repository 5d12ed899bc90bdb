"""manage.py plan_study: the planner's table for a study file or a loaded study, its JSON, and clear errors for a
bad model file (naming the field) or bad flags."""

import json
from io import StringIO

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from analysis.models import PlanRun
from analysis.stats import e2e_designs, planning
from studyapp import services


def small_study() -> dict:
    """A rate × TTFT study small enough to simulate in seconds."""
    doc = e2e_designs.rate_ttft_study(rates=[6, 12, 24, 48], repeats=2)
    doc["id"] = "plan-small"
    return doc


def _run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("plan_study", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def study_file(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(small_study()), encoding="utf-8")
    return path


@pytest.mark.django_db
def test_a_study_file_gets_the_width_of_each_headline_interval_per_participant_count(study_file):
    out, err = _run(str(study_file), "--participants", "10", "--runs", "1", "--processes", "1")
    for ttft in (200, 1500):
        assert f"with 10 participants the 75 % point at ttft={ttft} is known to ±" in out
    assert "1/1 simulated studies" in err  # the progress
    assert "power: share of simulated studies whose two 95 % intervals do not overlap" in out
    assert "ttft=200 vs ttft=1500" in out and "s per simulated study" in out


@pytest.mark.django_db
def test_a_loaded_study_keeps_its_plan_and_json_has_the_table(tmp_path):
    owner = get_user_model().objects.create_user("planner", password="x" * 12)
    study, _ = services.study_load(doc=small_study(), owner=owner)
    out, _ = _run(study.slug, "--participants", "10", "--runs", "2", "--processes", "1", "--json")
    doc = json.loads(out)
    assert doc["participants"] == [10] and doc["runs"] == 2 and doc["quantile"] == 0.75
    rows = {r["condition"]: r for r in doc["conditions"]}
    assert set(rows) == {"ttft=200", "ttft=1500"}
    # the truth is the model's: thresholds 12 tokens/s at zero TTFT, +0.12 log10 per s, SD 0.1 log10 (75 %: +0.067)
    assert rows["ttft=1500"]["true_q"] == pytest.approx(10 ** (1.0792 + 0.18 + 0.0674), rel=0.02)
    assert all(r["median_width"] is None or r["median_width"] > 0 for r in rows.values())
    assert doc["pairs"][0]["true_difference"] > 0
    plan = PlanRun.objects.get(study=study)
    assert plan.state == PlanRun.State.DONE and plan.done == plan.total == 2
    assert plan.results["conditions"] == doc["conditions"]


@pytest.mark.parametrize(("content", "named"), [
    ({"threshold_sd": -0.1}, "threshold_sd: must be >= 0"),
    ({"thresold": 12}, "thresold: not a model parameter"),
    ({"lapse": "high"}, "lapse: must be a number"),
])
def test_a_bad_model_file_is_refused_naming_the_field(tmp_path, study_file, content, named):
    model = tmp_path / "model.json"
    model.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(CommandError, match=named):
        _run(str(study_file), "--model", str(model), "--runs", "1")


def test_a_pilot_results_json_is_a_model_and_a_broken_one_names_the_row(tmp_path):
    rows = [{"condition": "ttft=200", "population_mu": 13.0, "population_sigma": 3.0, "lapse": 0.04},
            {"condition": "ttft=1500", "population_mu": 19.0, "population_sigma": 4.4, "lapse": 0.02}]
    results = {"pipeline_version": 9, "population": [{"block": "acceptability", "rows": rows}]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results), encoding="utf-8")
    pop = planning.load_model(path)
    assert pop.threshold == pytest.approx(13.0 / 10 ** (0.2 * (1.2787 - 1.1139) / 1.3), rel=0.05)
    assert pop.ttft_shift == pytest.approx((1.2788 - 1.1139) / 1.3, rel=0.01)
    assert pop.lapse == pytest.approx(0.03)
    rows[1]["population_mu"] = None
    path.write_text(json.dumps(results), encoding="utf-8")
    with pytest.raises(planning.ModelFileError, match=r"population\[0\]\.rows\[1\]\.population_mu"):
        planning.load_model(path)


@pytest.mark.django_db
@pytest.mark.parametrize(("args", "message"), [
    (["--participants", "20,x"], "--participants: a comma-separated list"),
    (["--participants", "1"], "each count must be at least 2"),
    (["--runs", "0"], "--runs: must be at least 1"),
])
def test_bad_flags_and_unknown_studies_are_refused(study_file, args, message):
    with pytest.raises(CommandError, match=message):
        _run(str(study_file), *args)
    with pytest.raises(CommandError, match="no loaded study has this slug"):
        _run("no-such-study", "--runs", "1")
