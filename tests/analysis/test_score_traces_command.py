"""manage.py score_traces on the shared sample traces with the demo model, and manage.py export_model from a
finished run in the database: the outputs a researcher reads, their JSON keys, the HTML report, the errors."""

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from model_results import DEMO, results

from analysis.stats import perception_model  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "data"  # copies of ../shared/samples
VLLM = SAMPLES / "vllm-bench-detailed.json"
GENAI = SAMPLES / "genai-perf-profile_export.json"
RUN_KEYS = {"model", "population_share", "draws", "n_requests", "n_scored", "n_unscored", "unscored", "acceptable",
            "mean_share", "distribution", "extrapolated", "worst", "requests", "files", "notes", "name"}
REQUEST_KEYS = {"id", "share", "low", "high", "ttft_ms", "tokens_per_s", "chars_per_s", "stall_total_ms",
                "extrapolated"}


def run(*args) -> str:
    out = StringIO()
    call_command("score_traces", *map(str, args), stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> Path:
    if not VLLM.exists() or not GENAI.exists():
        pytest.fail(f"the samples are missing: {SAMPLES}")
    d = tmp_path_factory.mktemp("samples")
    for f in (VLLM, GENAI):
        shutil.copy(f, d / f.name)
    return d


def test_the_vllm_sample_is_scored_with_the_demo_model_and_says_it_is_simulated(samples):
    text = run(samples / VLLM.name)
    lines = text.strip().splitlines()
    assert lines[0] == lines[-1] == "!! MODEL FITTED ON SIMULATED PARTICIPANTS (BOTS), NOT HUMAN DATA !!"
    assert "requests: 4 read, 4 scored" in text  # the sample's failed request is left out by the importer
    assert "acceptable to at least 75 % of the population:" in text and "worst requests:" in text
    assert "EXTRAPOLATED:" in text


def test_json_keys_are_the_documented_ones(samples):
    doc = json.loads(run(samples / GENAI.name, "--json", "--population-share", "0.5"))
    assert set(doc) == {"score_version", "simulated", "label", "runs", "comparison"}
    assert doc["score_version"] == 1 and doc["simulated"] is True and doc["comparison"] is None
    (r,) = doc["runs"]
    assert set(r) == RUN_KEYS and r["population_share"] == 0.5
    assert r["n_scored"] == len(r["requests"]) > 0
    assert set(r["requests"][0]) == REQUEST_KEYS
    assert set(r["worst"][0]) == REQUEST_KEYS | {"cause", "penalty"}
    assert set(r["acceptable"]) == {"share", "count", "interval"}
    assert set(r["extrapolated"]) == {"count", "share", "by_predictor", "requests"}
    assert r["files"][0]["format"] == "genai_perf"


def test_html_report_has_the_plot_the_label_and_the_numbers(samples, tmp_path):
    out = tmp_path / "report" / "score.html"
    run(samples / VLLM.name, "--html", out)
    page = out.read_text()
    assert "<svg" in page and "simulated participants (bots), not human data" in page
    assert 'class="extrapolated"' in page and "vllm:3" in page


def test_html_report_in_chinese(samples, tmp_path):
    out = tmp_path / "score-zh.html"
    run(samples / VLLM.name, "--html", out, "--language", "zh-hans")
    page = out.read_text()
    assert 'lang="zh-hans"' in page and "模拟参与者" in page


def test_vs_says_which_run_feels_faster(samples, tmp_path):
    slow = json.loads(VLLM.read_text())
    slow["ttfts"] = [t * 3 for t in slow["ttfts"]]
    slow["itls"] = [[g * 2 for g in gaps] for gaps in slow["itls"]]
    b = tmp_path / "slow.json"
    b.write_text(json.dumps(slow))
    doc = json.loads(run(samples / VLLM.name, "--vs", b, "--json"))
    cmp = doc["comparison"]
    assert cmp["method"] == "resampled" and cmp["faster"] in ("A", "undecided")
    assert cmp["mean_share"]["difference"] < 0
    text = run(samples / VLLM.name, "--vs", b)
    assert "compare A = A: vllm-bench-detailed.json with B = B: slow.json" in text


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m.update(version=99), "--model: version: 99 is newer"),
    (lambda m: m["population"]["anchors"][0].pop("mu"), "--model: population.anchors[0].mu: missing"),
])
def test_a_bad_model_file_is_refused_naming_the_field(samples, tmp_path, change, message):
    model = perception_model.load(perception_model_path())
    change(model)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    with pytest.raises(CommandError, match=message.replace("[", r"\[").replace("]", r"\]")):
        run(samples / VLLM.name, "--model", path)


def perception_model_path() -> Path:
    from analysis.stats.demo_model import DEMO_MODEL_PATH

    return DEMO_MODEL_PATH


def test_a_broken_trace_is_refused_naming_the_file_and_field(tmp_path):
    doc = json.loads(VLLM.read_text())
    doc["ttfts"] = doc["ttfts"][:2]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CommandError, match=r"short\.json: itls: has 5 entries but ttfts has 2|short\.json: .*ttfts"):
        run(path)
    with pytest.raises(CommandError, match=r"missing\.json: no such file"):
        run(tmp_path / "missing.json")


def test_a_population_share_outside_0_1_is_refused(samples):
    with pytest.raises(CommandError, match="--population-share: must lie strictly between 0 and 1"):
        run(samples / VLLM.name, "--population-share", "75")


# --- export_model from the database ----------------------------------------------------------------------------


@pytest.fixture
def finished(db):
    from django.contrib.auth import get_user_model

    from analysis.models import AnalysisRun
    from studyapp import services

    owner = get_user_model().objects.create_user("model-owner", password="x" * 12)
    study, _ = services.study_load(doc=DEMO, owner=owner)
    run = AnalysisRun.objects.create(study=study, data_version="d" * 64, state=AnalysisRun.State.DONE,
                                     results=results())
    return study, run


def test_export_model_writes_a_valid_file_of_the_latest_finished_run(finished, tmp_path):
    study, run = finished
    out = tmp_path / "model.json"
    call_command("export_model", study.slug, "--out", str(out), stdout=StringIO())
    model = perception_model.load(out)
    assert model["provenance"]["analysis_run"] == run.pk and model["provenance"]["data_version"] == "d" * 64
    assert model["simulated"] is False and model["provenance"]["participants"] == "people"
    scored = json.loads(run_with(out))
    assert scored["simulated"] is False and scored["runs"][0]["n_scored"] == 4


def run_with(model: Path) -> str:
    return run(VLLM, "--model", model, "--json")


def test_export_model_of_a_study_bots_answered_is_labelled_simulated(finished, tmp_path):
    from studyapp import services

    study, _run = finished
    services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    services.session_enter(study=study, panel={"participant": "bot-run1-0000"})
    out = StringIO()
    call_command("export_model", study.slug, stdout=out)
    assert json.loads(out.getvalue())["simulated"] is True


def test_export_model_without_a_finished_run_says_so(db):
    from django.contrib.auth import get_user_model

    from studyapp import services

    owner = get_user_model().objects.create_user("model-owner2", password="x" * 12)
    study, _ = services.study_load(doc=DEMO, owner=owner)
    with pytest.raises(CommandError, match="no finished analysis run: run `manage.py analyze` first"):
        call_command("export_model", study.slug, stdout=StringIO())
    with pytest.raises(CommandError, match="STUDY: no study 'nope'"):
        call_command("export_model", "nope", stdout=StringIO())
