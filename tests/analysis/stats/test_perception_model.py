"""A perception model file: built from a finished run's population fits, validated field by field, refused when
newer than this PaceLab reads."""

import copy
import json
import math

import pytest
from model_results import DEMO, results

from analysis.stats import perception_model as pm  # noqa: E402
from analysis.stats.demo_model import DEMO_MODEL_PATH  # noqa: E402

PROV = {"study": "demo-perceived-speed", "data_version": "abc", "analysis_run": 7, "bots": False,
        "created": "2026-12-07T10:00:00+00:00"}


def built() -> dict:
    return pm.build(results(), DEMO, PROV)


def test_the_level_is_the_first_predictor_and_ttft_conditions_become_anchors_with_delivery_averaged():
    model = built()
    assert [p["metric"] for p in model["predictors"]] == ["tokens_per_s", "ttft_ms"]
    assert model["predictors"][0]["tested"] == [10.0, 60.0] and model["predictors"][1]["tested"] == [300.0, 2000.0]
    anchors = model["population"]["anchors"]
    assert [a["at"] for a in anchors] == [300.0, 2000.0]
    assert anchors[0]["mu"] == pytest.approx(math.log(20.0)) and anchors[1]["mu"] == pytest.approx(math.log(30.0))
    assert anchors[0]["n_participants"] == 60  # both delivery groups
    # 95 % interval ±0.15 on ln μ, with the t quantile of 29 df; two groups averaged: SE / √2
    t = 2.045229642132703
    assert anchors[0]["mu_se"] == pytest.approx(0.15 / t / math.sqrt(2), rel=1e-6)
    assert anchors[0]["log_sigma"] == pytest.approx(math.log(0.35))


def test_provenance_names_the_study_its_languages_tokenizers_and_that_people_answered():
    prov = built()["provenance"]
    assert prov["study"] == "demo-perceived-speed" and prov["analysis_run"] == 7 and prov["data_version"] == "abc"
    assert prov["languages"] == ["en", "zh-hans"] and prov["tokenizers"] == ["cl100k_base", "qwen3.6"]
    assert prov["participants"] == "people" and prov["n_participants"] == 60


def test_a_model_from_bots_is_labelled_simulated():
    model = pm.build(results(), DEMO, {**PROV, "bots": True})
    assert model["simulated"] is True and "simulated participants" in model["label"]
    assert model["provenance"]["participants"] == "bots"


def test_a_run_without_a_population_fit_gives_no_model():
    with pytest.raises(pm.ModelFileError, match="population"):
        pm.build({"population": []}, DEMO, PROV)


@pytest.mark.parametrize(("change", "field"), [
    (lambda m: m.pop("version"), "version"),
    (lambda m: m.update(version=pm.VERSION + 1), "version"),
    (lambda m: m["population"].update(uncertainty="vibes"), "population.uncertainty"),
    (lambda m: m.update(schema="something"), "schema"),
    (lambda m: m.update(simulated="yes"), "simulated"),
    (lambda m: m["provenance"].pop("study"), "provenance.study"),
    (lambda m: m["predictors"][0].update(metric="vibes"), "predictors[0].metric"),
    (lambda m: m["predictors"][1].update(tested=[2000, 300]), "predictors[1].tested"),
    (lambda m: m["population"]["anchors"][1].update(mu="x"), "population.anchors[1].mu"),
    (lambda m: m["population"]["anchors"][0].update(mu_se=0), "population.anchors[0].mu_se"),
    (lambda m: m["population"].update(share=1.5), "population.share"),
    (lambda m: m["population"]["anchors"].reverse(), "population.anchors[1].at"),
])
def test_validate_names_the_field_that_is_wrong(change, field):
    model = copy.deepcopy(built())
    change(model)
    with pytest.raises(pm.ModelFileError) as err:
        pm.validate(model)
    assert err.value.field == field and str(err.value).startswith(field + ":")


def test_a_newer_version_is_refused_with_advice(tmp_path):
    model = built() | {"version": pm.VERSION + 1}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    with pytest.raises(pm.ModelFileError, match=r"newer than this PaceLab reads.*update PaceLab.*m\.json"):
        pm.load(path)


def test_load_names_the_file_and_line_of_bad_json(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"schema": ')
    with pytest.raises(pm.ModelFileError, match=r"broken\.json: not JSON \(line 1"):
        pm.load(path)


def test_the_committed_demo_model_is_valid_and_labelled_simulated():
    model = pm.load(DEMO_MODEL_PATH)
    assert model["simulated"] and model["provenance"]["participants"] == "bots"
    assert model["provenance"]["study"] == "demo-perceived-speed" and model["provenance"]["n_participants"] >= 40


def with_draws(n: int = 30) -> dict:
    model = copy.deepcopy(built())
    pop = model["population"]
    pop["uncertainty"] = "joint draws"
    pop["draws"] = {"method": "test", "n": n, "mu": [[a["mu"] for a in pop["anchors"]]] * n,
                    "log_sigma": [[a["log_sigma"] for a in pop["anchors"]]] * n}
    return model


@pytest.mark.parametrize(("change", "field"), [
    (lambda p: p.pop("draws"), "population.draws"),
    (lambda p: p["draws"].pop("mu"), "population.draws.mu"),
    (lambda p: p["draws"].update(mu=p["draws"]["mu"][:5]), "population.draws.mu"),
    (lambda p: p["draws"].update(log_sigma=p["draws"]["log_sigma"][:-1]), "population.draws.log_sigma"),
    (lambda p: p["draws"]["mu"].__setitem__(3, [1.0]), "population.draws.mu[3]"),
    (lambda p: p["draws"]["log_sigma"].__setitem__(2, [1.0, "x"]), "population.draws.log_sigma[2]"),
])
def test_validate_names_the_field_of_the_draws_that_is_wrong(change, field):
    model = with_draws()
    change(model["population"])
    with pytest.raises(pm.ModelFileError) as err:
        pm.validate(model)
    assert err.value.field == field


def test_a_version_1_file_without_draws_still_reads():
    model = copy.deepcopy(built())
    model["version"] = 1
    del model["population"]["uncertainty"]
    pm.validate(model)
    with_draws()["population"]["draws"]["n"] = 30
    pm.validate(with_draws())


def test_the_committed_demo_model_carries_joint_draws():
    pop = pm.load(DEMO_MODEL_PATH)["population"]
    assert pop["uncertainty"] == "joint draws" and len(pop["draws"]["mu"]) == pop["draws"]["n"] >= 200
