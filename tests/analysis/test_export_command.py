"""manage.py export against the real database: sessions driven through the demo study, files re-read."""

import json
from io import StringIO

import pandas as pd
import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from journey_driver import run_to_end, step  # noqa: E402

from analysis import selectors
from analysis.tables import exclusions, exporting
from playback.models.delivery import PaintReport, Playback
from studyapp import services
from studyapp.design import studyfile
from studyapp.models import Answer, Session, Trial, TrialPlayback

pytestmark = pytest.mark.django_db

COLUMNS = {"study", "participant", "group", "block", "trial_type", "condition", "f_rate", "f_ttft", "f_delivery",
           "f_strategy", "f_indicator", "f_tokenizer", "f_passage", "ttft_ms", "tokens_per_s", "a_tokenizer",
           "b_tokenizer", "order", "first", "response", "response_value", "chose_first", "response_ms", "plays",
           "interrupted", "tab_hidden", "fidelity_p95_ms", "fidelity_violated", "failed_attention",
           "attention_check", "attention_passed", "practice", "excluded", "exclusion_reason"}


@pytest.fixture
def study(require_postgres):
    owner = get_user_model().objects.create_user("owner", password="x" * 12)
    doc = studyfile.load_study(studyfile.demo_study_path())
    study, _ = services.study_load(doc=doc, owner=owner)
    return services.study_set_state(study=study, state="open")


def enter(study, pid):
    return services.session_enter(study=study, panel={"participant": pid}, language="en")[0]


def paint(session, late_ms, hidden_every=0):
    """A paint log for the answered showing of every answered trial: each piece painted ``late_ms`` late."""
    for link in TrialPlayback.objects.filter(trial__session=session).select_related("playback"):
        pieces = link.playback.stream["pieces"]
        entries = [{"seq": i, "t_ms": p[0], "recv_ms": p[0], "paint_ms": p[0] + late_ms, "chars": len(p[1]),
                    "hidden": bool(hidden_every) and i % hidden_every == 0} for i, p in enumerate(pieces)]
        PaintReport.objects.create(playback=link.playback, batch=0, entries=entries)


def partial(study, pid, steps):
    s = enter(study, pid)
    for _ in range(steps):
        step(s)
    s.refresh_from_db()
    return s


@pytest.fixture
def driven(study):
    """Two completed participants (one painting far off schedule) and one who stopped early."""
    good = run_to_end(enter(study, "P-good"))
    late = run_to_end(enter(study, "P-late"))
    paint(good, 5.0)
    paint(late, 80.0)  # over the demo study's bound of 50 ms on every trial: more than 20 % violate
    stopped = partial(study, "P-stopped", 8)
    return good, late, stopped


def run_export(*args):
    out = StringIO()
    call_command("export", *args, stdout=out)
    return out.getvalue()


def test_the_csv_has_one_row_per_answered_trial_and_the_documented_columns(study, driven, tmp_path):
    good, late, stopped = driven
    text = run_export(study.slug, "--out", str(tmp_path), "--include-excluded")
    df = pd.read_csv(tmp_path / "trials.csv")
    assert len(df) == Answer.objects.filter(key="trial").count() > 0
    assert COLUMNS <= set(df.columns)
    assert "panel_pid" not in df.columns and not df.isin(["P-good", "P-late", "P-stopped"]).any().any()
    assert set(df["participant"]) == {good.pk, late.pk, stopped.pk}
    by = df.groupby("participant")
    assert by["excluded"].all()[late.pk] and by["excluded"].all()[stopped.pk] and not by["excluded"].any()[good.pk]
    assert by["fidelity_violated"].all()[late.pk] and not by["fidelity_violated"].any()[good.pk]
    assert by["exclusion_reason"].first()[late.pk] == "fidelity_violated"
    assert "incomplete" in by["exclusion_reason"].first()[stopped.pk]
    afc = df[(df["trial_type"] == "afc") & df["attention_check"].isna()]
    assert set(afc["a_tokenizer"]) == {"cl100k_base"} and set(afc["b_tokenizer"]) == {"qwen3.6"}
    assert (afc["chose_first"] == 1).all() and ((afc["response_value"] == 1) == (afc["first"] == "A")).all()
    for name in ("trials.csv", "trials.parquet", "participants.csv", "codebook.csv", "codebook.md"):
        assert str(tmp_path / name) in text
    assert "fidelity_violated (bound_ms=50.0, max_fraction=0.2): 1 participant, " in text
    book = pd.read_csv(tmp_path / "codebook.csv")
    assert set(df.columns) == set(book.loc[book["table"] == "trials", "column"])


def test_parquet_round_trips_the_exported_frame(study, driven, tmp_path):
    run_export(study.slug, "--out", str(tmp_path), "--include-excluded", "--format", "parquet")
    trials, participants = selectors.study_frame(study)
    expected, _ = exclusions.apply(trials, exclusions.rules_of(study.spec), participants=participants)
    back = exporting.read_parquet(tmp_path / "trials.parquet")
    pd.testing.assert_frame_equal(back, expected.reset_index(drop=True))
    assert not (tmp_path / "trials.csv").exists()


def test_by_default_excluded_trials_are_left_out_but_every_participant_is_listed(study, driven, tmp_path):
    good, late, stopped = driven
    run_export(study.slug, "--out", str(tmp_path))
    df = pd.read_csv(tmp_path / "trials.csv")
    assert set(df["participant"]) == {good.pk} and len(df) == Answer.objects.filter(session=good, key="trial").count()
    people = pd.read_csv(tmp_path / "participants.csv").set_index("participant")
    assert people.loc[good.pk, "panel_pid"] == "P-good" and people.loc[late.pk, "panel_pid"] == "P-late"
    assert people.loc[stopped.pk, "state"] == "active" and people.loc[stopped.pk, "excluded"]
    assert people.loc[good.pk, "device"] == "desktop" and people.loc[good.pk, "refresh_hz"] == 60
    report = json.loads((tmp_path / "exclusions.json").read_text())
    assert report["participants_excluded"] == 2
    assert report["excluded_participants"][str(stopped.pk)] == ["incomplete"]


def test_a_trial_without_playbacks_gets_the_metrics_of_its_rebuilt_streams(study):
    s = partial(study, "P-r", 8)
    before, _ = selectors.study_frame(study)
    trial = Trial.objects.filter(session=s, status="answered").order_by("index").first()
    Playback.objects.filter(trial_link__trial=trial).delete()
    after, _ = selectors.study_frame(study)
    row = before["trial_index"] == trial.index
    assert not TrialPlayback.objects.filter(trial=trial).exists()
    cols = ["ttft_ms", "tokens_per_s", "itl_cv", "e2e_ms", "andes_qoe"]
    pd.testing.assert_frame_equal(after.loc[row, cols], before.loc[row, cols])
    assert before.loc[row, "ttft_ms"].notna().all()


def test_an_interrupted_trial_reports_the_answered_showing(study):
    s = partial(study, "P-i", 3)  # consent, environment, instructions: the next step is the first trial
    trial = Trial.objects.get(session=s, step=s.step)
    first = services.trial_show(session=s, trial=trial)
    PaintReport.objects.create(playback=first[0], batch=0, entries=[
        {"seq": 0, "t_ms": 0, "recv_ms": 0, "paint_ms": 500, "chars": 1, "hidden": True}])
    step(s)  # shows it again and answers
    df, _ = selectors.study_frame(study)
    row = df[df["trial_index"] == trial.index].iloc[0]
    assert (row["plays"], row["interrupted"]) == (2, 1)
    assert row["fidelity_frames"] == 0 and pd.isna(row["tab_hidden"])  # the first showing's log is not the answered
    # one, and the answered showing sent none: whether the tab was hidden is not known


def test_reading_a_study_takes_the_same_few_queries_however_many_sessions(study):
    partial(study, "P-q1", 6)
    with CaptureQueriesContext(connection) as one:
        selectors.study_rows(study)
    for i in range(3):
        partial(study, f"P-q{i + 2}", 6)
    with CaptureQueriesContext(connection) as four:
        rows = selectors.study_rows(study)
    assert len(four) == len(one) <= 6
    assert len(rows.sessions) == 4 and Session.objects.filter(study=study).count() == 4


def test_an_unknown_study_or_format_is_a_command_error(study, tmp_path):
    with pytest.raises(CommandError, match="no study"):
        run_export("nope", "--out", str(tmp_path))
    with pytest.raises(CommandError, match="xlsx"):
        run_export(study.slug, "--out", str(tmp_path), "--format", "csv,xlsx")
