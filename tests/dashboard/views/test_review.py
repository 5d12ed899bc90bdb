"""Reviewing a study as researchers do on a panel: rejections carry a reason the participant can read, suggestions
stay apart from decisions, many participants are decided at once, the table filters, sorts and pages, bonuses
follow the study file, and the panel's export is reconciled with the sessions here."""

import io
import re
import sys
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone
from study_builders import study as build

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_participants import paint_new_playbacks, play, rows_of  # noqa: E402, F401

from analysis.models import AnalysisRun  # noqa: E402
from dashboard import payments  # noqa: E402
from dashboard.core import bonuses, reconcile
from dashboard.models import PaymentDecision, QualitySummary  # noqa: E402
from dashboard.predictor_rows import predictor_rows  # noqa: E402
from dashboard.selectors import review as review  # noqa: E402
from studyapp import services as study_services  # noqa: E402
from studyapp.design import studyfile  # noqa: E402
from studyapp.models import Session  # noqa: E402

REASONS = [{"id": "attention", "text": "You failed the attention checks the instructions described."},
           {"id": "no_code", "text": "You submitted without the study's completion code."}]


def url(study, route, **query) -> str:
    base = reverse(f"dashboard:{route}", kwargs={"slug": study.slug})
    return base + ("?" + urlencode(query, doseq=True) if query else "")


@pytest.fixture
def played(study):
    study.spec = {**study.spec, "payments": {"currency": "GBP", "rejection_reasons": REASONS,
                                             "bonus": {"completed": 0.5, "per_attention_check_passed": 0.1}}}
    study.save(update_fields=["spec"])
    study_services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    return {"good": play(study, "PID-GOOD"), "hidden": play(study, "PID-HIDDEN", hidden=True)}


def completed(study, pid: str) -> Session:
    """A session marked completed without trials (enough for decisions, files and reconciliation)."""
    session, _ = study_services.session_enter(study=study, panel={"participant": pid})
    Session.objects.filter(pk=session.pk).update(state=Session.State.COMPLETED, finished_at=timezone.now())
    session.refresh_from_db()
    return session


# --- 1, 2: a rejection carries a reason the participant reads, never the approval's text ----------------------------


@pytest.mark.django_db
def test_the_page_never_prefills_a_reason_and_a_reject_without_one_is_refused(played, study, client_of):
    alice = client_of("alice")
    html = alice.get(url(study, "quality")).content.decode()
    assert "completed; all checks passed" not in re.search(r'<form method="post".*?</form>', html, re.S).group(0)
    assert 'name="reason" value=' not in html
    response = alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject"}, follow=True)
    assert "a rejection needs a reason" in response.content.decode()
    response = alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject",
                                                 "reason": "   "}, follow=True)
    assert "a rejection needs a reason" in response.content.decode()
    assert not PaymentDecision.objects.exists()


@pytest.mark.django_db
def test_a_reject_takes_a_reason_from_the_studys_list_or_a_written_one(played, study, client_of):
    alice = client_of("alice")
    alice.post(url(study, "decide"), {"session": played["hidden"].pk, "decision": "reject", "reason_id": "attention"})
    d = PaymentDecision.objects.get(session=played["hidden"])
    assert (d.decision, d.reason_id, d.reason) == ("reject", "attention", REASONS[0]["text"])
    alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject",
                                      "reason": "Answered in 4 seconds per trial."})
    assert PaymentDecision.objects.get(session=played["good"]).reason == "Answered in 4 seconds per trial."
    response = alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject",
                                                 "reason_id": "made_up"}, follow=True)
    assert "not one of the study&#x27;s rejection reasons" in response.content.decode()
    rows = payments.payments_csv(study, review.review_rows(study)).splitlines()
    assert all("completed; all checks passed" not in r.split(",", 6)[-1] for r in rows[1:])


def test_without_a_list_in_the_study_file_three_default_reasons_are_offered():
    assert [r["id"] for r in review.rejection_reasons({})] == ["attention", "no_code", "returned"]
    assert review.rejection_reasons({"payments": {"rejection_reasons": REASONS}}) == REASONS


def test_the_study_file_checks_payments_with_paths():
    doc = build(payments={"rejection_reasons": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
                          "bonus": {"completed": -1}})
    problems = [str(p) for p in studyfile.validate(doc)]
    assert "payments.bonus.completed: must be >= 0, got -1" in problems
    ok = build(payments={"rejection_reasons": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]})
    assert [str(p) for p in studyfile.validate(ok)] == ["payments.rejection_reasons[1].id: duplicate id 'a'"]
    assert studyfile.validate(studyfile.parse_yaml(studyfile.demo_study_path().read_text())) == []


# --- 3: suggested apart from decided ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_approving_the_suggested_ones_shown_leaves_suggested_rejects_and_unseen_sessions_alone(played, study,
                                                                                                 client_of):
    unseen = completed(study, "PID-UNSEEN")
    alice = client_of("alice")
    response = alice.post(url(study, "decide"), {"action": "approve_suggested",
                                                 "shown": [played["good"].pk, played["hidden"].pk]}, follow=True)
    assert "Decision saved for participant" in response.content.decode()
    assert {d.session_id: d.decision for d in PaymentDecision.objects.all()} == {played["good"].pk: "approve"}
    assert not PaymentDecision.objects.filter(session=unseen).exists()
    html = alice.get(url(study, "quality")).content.decode()
    assert "decided: 1 approved, 0 rejected · not yet decided: 2" in html


# --- 4: bulk, filters, sort, pages, the participant's own page ----------------------------------------------------


@pytest.mark.django_db
def test_many_participants_are_decided_at_once_or_none_is(played, study, client_of):
    extra = [completed(study, f"PID-X{i}") for i in range(3)]
    running, _ = study_services.session_enter(study=study, panel={"participant": "PID-RUNNING"})
    alice = client_of("alice")
    response = alice.post(url(study, "decide"), {"session": [s.pk for s in extra] + [running.pk],
                                                 "decision": "approve"}, follow=True)
    assert "did not complete" in response.content.decode() and not PaymentDecision.objects.exists()
    back = url(study, "quality", state="completed")
    response = alice.post(url(study, "decide"), {"session": [s.pk for s in extra], "decision": "reject",
                                                 "reason_id": "no_code", "next": back})
    assert response["Location"] == back
    response = alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "approve",
                                                 "next": "https://evil.example/"})
    assert response["Location"] == url(study, "quality")  # only back to this site
    assert PaymentDecision.objects.filter(decision="reject", reason_id="no_code").count() == 3


@pytest.mark.django_db
def test_the_table_filters_sorts_and_pages(played, study, client_of):
    for i in range(4):
        slow = completed(study, f"PID-P{i}")
        Session.objects.filter(pk=slow.pk).update(started_at=slow.finished_at - timezone.timedelta(minutes=20))
    alice = client_of("alice")
    html = alice.get(url(study, "quality", suggested="reject")).content.decode()
    assert list(rows_of(html)) == [played["hidden"].pk]
    html = alice.get(url(study, "quality", decided="undecided", sort="-participant", per_page=50)).content.decode()
    ids = list(rows_of(html))
    assert ids == sorted(ids, reverse=True) and len(ids) == 6
    html = alice.get(url(study, "quality", q="PID-GOOD")).content.decode()
    assert list(rows_of(html)) == [played["good"].pk]
    html = alice.get(url(study, "quality", shorter_than="5")).content.decode()
    assert set(rows_of(html)) == {played["good"].pk, played["hidden"].pk}  # the others took 20 minutes
    assert len(rows_of(alice.get(url(study, "quality", shorter_than="25")).content.decode())) == 6
    html = alice.get(url(study, "quality", attention="failed")).content.decode()
    assert "No participant matches these filters." in html
    rows = review.review_rows(study)
    page = review.page_of(review.sort_rows(rows, "participant"), "2", "50")
    assert page["number"] == 1 and page["pages"] == 1  # a page past the end is the last page
    many = [{"session": i} for i in range(120)]
    p2 = review.page_of(many, "2", "50")
    assert (p2["first"], p2["last"], p2["pages"], p2["previous"], p2["next"]) == (51, 100, 3, 1, 3)
    rows[0]["quality"] = {**rows[0]["quality"], "minutes_on_task": None}
    assert review.sort_rows(rows, "-minutes")[-1] is rows[0]  # no value: last, whichever the direction
    assert review.sort_rows(rows, "minutes")[-1] is rows[0]


@pytest.mark.django_db
def test_a_decision_is_made_on_the_participants_own_page(played, study, client_of):
    alice = client_of("alice")
    page = url(study, "participant", id=played["hidden"].pk)
    html = alice.get(page).content.decode()
    assert 'id="decide-one"' in html and "the page was hidden during 6 of 6 trials" in html
    assert '<code id="code-given">CDONE42</code>' in html
    response = alice.post(url(study, "decide"), {"session": played["hidden"].pk, "decision": "reject",
                                                 "reason_id": "attention", "next": page})
    assert response["Location"] == page
    html = alice.get(page).content.decode()
    assert 'data-decision="reject"' in html and REASONS[0]["text"] in html
    assert 'id="decide-one"' not in client_of("vera").get(page).content.decode()


@pytest.mark.django_db
def test_quality_reports_are_cached_and_recomputed_when_the_session_changes(played, study):
    rows = review.review_rows(study)
    assert QualitySummary.objects.count() == 2
    good = played["good"]
    Session.objects.filter(pk=good.pk).update(finished_at=timezone.now() - timezone.timedelta(hours=1))
    review.review_rows(study)
    summary = QualitySummary.objects.get(session=good)
    assert summary.final  # long after the end: never recomputed again while nothing changes
    QualitySummary.objects.filter(pk=summary.pk).update(data={**summary.data, "attention_failed": 99})
    assert next(r for r in review.review_rows(study) if r["session"] == good.pk)["quality"]["attention_failed"] == 99
    Session.objects.filter(pk=good.pk).update(flags=["flagged by a test"])
    fresh = next(r for r in review.review_rows(study) if r["session"] == good.pk)
    assert fresh["quality"]["attention_failed"] == 0 and len(rows) == 2


# --- 5: bonuses -------------------------------------------------------------------------------------------------------


def test_a_bonus_rule_pays_for_completion_and_per_attention_check_passed_up_to_a_cap():
    rule = bonuses.rule_from_spec({"payments": {"bonus": {"completed": 0.5, "per_attention_check_passed": 0.1,
                                                          "all_attention_checks_passed": 0.25, "max": 0.9}}})
    two_of_two = {"state": "completed", "attention_answered": 2, "attention_failed": 0}
    one_of_two = {"state": "completed", "attention_answered": 2, "attention_failed": 1}
    assert bonuses.amount(rule, two_of_two) == Decimal("0.90")  # 0.5 + 0.2 + 0.25 capped at 0.9
    assert bonuses.amount(rule, one_of_two) == Decimal("0.60")
    assert bonuses.amount(rule, {"state": "returned"}) == Decimal("0.00")
    assert bonuses.rule_from_spec({}).empty


@pytest.mark.django_db
def test_the_bonus_csv_is_prolifics_bulk_format_for_approved_participants_only(played, study, client_of):
    alice = client_of("alice")
    assert alice.get(url(study, "bonuses")).content == b""  # nobody approved yet: no bonus for a suggestion
    alice.post(url(study, "decide"), {"session": [played["good"].pk, played["hidden"].pk], "decision": "approve"})
    alice.post(url(study, "decide"), {"session": played["hidden"].pk, "decision": "reject", "reason_id": "no_code"})
    response = alice.get(url(study, "bonuses"))
    assert response["Content-Disposition"] == 'attachment; filename="alice-study-bonuses.csv"'
    assert response.content.decode() == "PID-GOOD,0.50\n"  # the minimal study has no attention checks
    out = io.StringIO()
    call_command("export_bonuses", study.slug, stdout=out)
    assert out.getvalue() == "PID-GOOD,0.50\n"


# --- 6: reconciliation with the panel's export --------------------------------------------------------------------


HEADER = ("Submission id,Participant id,Status,Custom study tncs accepted at,Started at,Completed at,Reviewed at,"
          "Archived at,Time taken,Completion code,Total approvals,Age,Sex\n")


def export(*rows: tuple[str, str, str]) -> str:
    lines = [f"S{i},{pid},{status},Not Applicable,2026-12-07T10:00:00Z,2026-12-07T10:12:00Z,,,720,{code},12,30,F"
             for i, (pid, status, code) in enumerate(rows)]
    return HEADER + "\n".join(lines) + "\n"


@pytest.mark.django_db
def test_the_export_is_reconciled_with_three_kinds_of_mismatch(study, client_of):
    study_services.study_set_state(study=study, state="open")
    done = completed(study, "PID-OK")
    wrong = completed(study, "PID-WRONGCODE")
    active, _ = study_services.session_enter(study=study, panel={"participant": "PID-ACTIVE"})
    text = export(("PID-OK", "AWAITING REVIEW", "CDONE42"), ("PID-WRONGCODE", "AWAITING REVIEW", "NOCODE"),
                  ("PID-ACTIVE", "AWAITING REVIEW", "CDONE42"), ("PID-GHOST", "APPROVED", "CDONE42"))
    result = payments.reconcile_export(study, text)
    kinds = {k: [m["participant"] for m in v] for k, v in result.mismatches.items()}
    assert kinds == {"in_panel_not_here": ["PID-GHOST"], "here_not_completed": ["PID-ACTIVE"],
                     "code_mismatch": ["PID-WRONGCODE", "PID-ACTIVE"], "here_not_in_panel": []}
    assert result.matched == 1 and done.pk and wrong.pk and active.pk
    upload = io.BytesIO(("\ufeff" + text).encode())
    upload.name = "prolific_export.csv"
    html = client_of("vera").post(url(study, "reconcile"), {"export": upload}).content.decode()
    assert "4 submissions in the export, 3 sessions here with a panel id: 1 match, 4 mismatches." in html
    assert 'data-participant="PID-GHOST"' in html and "NOCODE" in html
    path = Path(study.slug + "-export.csv")
    try:
        path.write_text(text)
        out = io.StringIO()
        call_command("reconcile_panel", study.slug, str(path), stdout=out)
        assert "completion code mismatch (2)" in out.getvalue() and "PID-GHOST: panel APPROVED" in out.getvalue()
    finally:
        path.unlink()


def test_an_export_without_the_needed_columns_is_refused_with_the_line():
    with pytest.raises(reconcile.ExportError, match=r"line 1: the export has no 'Participant id' column"):
        reconcile.parse_export("id,status\nx,APPROVED\n")
    with pytest.raises(reconcile.ExportError, match="line 3: no participant id"):
        reconcile.parse_export("Participant id,Status\nA,APPROVED\n,APPROVED\n")
    rows = reconcile.parse_export("participant_id,STATUS\nA,approved\n")  # reworded headers still match
    assert rows[0].participant == "A" and rows[0].status == "APPROVED" and rows[0].code is None


@pytest.mark.django_db
def test_the_participant_list_shows_the_code_given_submission_time_and_duration(study, client_of):
    study_services.study_set_state(study=study, state="open")
    done = completed(study, "PID-DONE")
    html = client_of("alice").get(url(study, "participants")).content.decode()
    row = re.search(rf'<tr data-session="{done.pk}">.*?</tr>', html, re.S).group(0)
    assert '<code class="code-given">CDONE42</code>' in row and "Submitted" in html


# --- commands -----------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_review_decisions_lists_approves_the_suggested_and_rejects_only_with_a_reason(played, study, researchers):
    out = io.StringIO()
    call_command("review_decisions", study.slug, stdout=out)
    assert f"{played['good'].pk}\tPID-GOOD\tsuggested=approve\tdecided=-" in out.getvalue()
    with pytest.raises(CommandError, match="a rejection needs a reason"):
        call_command("review_decisions", study.slug, "reject", str(played["hidden"].pk))
    call_command("review_decisions", study.slug, "approve", "--suggested", "--by", "ed", stdout=io.StringIO())
    call_command("review_decisions", study.slug, "reject", str(played["hidden"].pk), "--reason-id", "attention",
                 stdout=io.StringIO())
    assert {d.session.panel_pid: (d.decision, d.decided_by) for d in PaymentDecision.objects.all()} == {
        "PID-GOOD": ("approve", researchers["ed"]), "PID-HIDDEN": ("reject", None)}


# --- 7, 8: the predictor ranking, the icon, whole percents --------------------------------------------------------


def test_the_predictor_ranking_shows_what_it_is_ranked_by_and_why_a_row_is_unranked():
    results = {"predictors": [
        {"kind": "yes/no", "table": [
            {"rank": 1, "metric": "ttft_ms", "n_stimuli": 8, "spearman": -0.9, "loglik_gain": 0.05},
            {"rank": 2, "metric": "e2e_ms", "n_stimuli": 8, "spearman": -0.853, "loglik_gain": 0.03},
            {"rank": 3, "metric": "tokens_per_s", "n_stimuli": 8, "spearman": 0.944, "loglik_gain": 0.01},
            {"rank": None, "metric": "jitter_cv", "n_stimuli": 8, "spearman": None, "loglik_gain": None}]},
        {"kind": "rating", "table": [{"rank": None, "metric": "stall_ms", "n_stimuli": 2, "spearman": None}]}]}
    rows = predictor_rows(results)
    assert [r["ranking_value"] for r in rows[:3]] == [0.05, 0.03, 0.01]  # ordered by what it shows
    assert str(rows[0]["ranked_by"]) == "held-out log-lik. gain / trial"
    assert "does not vary" in str(rows[3]["unranked_reason"]) and "fewer than 3" in str(rows[4]["unranked_reason"])


@pytest.mark.django_db
def test_the_results_page_shows_the_ranking_column_and_the_reason_for_a_dash(study, client_of):
    run = AnalysisRun.objects.create(study=study, data_version="x", state=AnalysisRun.State.DONE, percent=100.0,
                                     results={"predictors": [{"kind": "rating", "table": [
                                         {"rank": 1, "metric": "ttft_ms", "n_stimuli": 6, "spearman": -0.8},
                                         {"rank": None, "metric": "stall_ms", "n_stimuli": 6, "spearman": None}]}]})
    html = client_of("alice").get(url(study, "analysis", run=run.pk)).content.decode()
    table = re.search(r'<table class="data" id="predictors">.*?</table>', html, re.S).group(0)
    assert "Ranked by" in table and "0.8000" in table and "|Spearman ρ|" in table
    assert "nothing to rank" in table


@pytest.mark.django_db
def test_a_queued_run_shows_zero_percent_as_the_script_does(study, client_of):
    run = AnalysisRun.objects.create(study=study, data_version="y", percent=0.0)
    html = client_of("alice").get(url(study, "analysis", run=run.pk)).content.decode()
    assert '<span id="analysis-percent">0</span>' in html
    assert client_of("alice").get(url(study, "analysis_status", run=run.pk)).content.count(b'"percent": 0,') == 1
    script = (Path(__file__).resolve().parents[3] / "static/js/dashboard/analysis.js").read_text()
    assert "String(Math.round(percent))" in script


@pytest.mark.django_db
def test_the_site_has_a_favicon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/x-icon"
    assert response.content[:4] == b"\x00\x00\x01\x00"  # an ICO header


@pytest.mark.django_db
def test_a_page_leaves_reports_it_has_no_time_for_to_the_background_task(played, study, client_of, monkeypatch):
    from dashboard import tasks

    monkeypatch.setattr(review, "PAGE_CHUNK", 1)
    monkeypatch.setattr(review, "PAGE_BUDGET_S", 0.0)
    asked: list[int] = []
    monkeypatch.setattr(tasks, "quality_refresh_soon", asked.append)
    html = client_of("alice").get(url(study, "quality")).content.decode()
    assert "The quality report of 1 participant is still being computed" in html and "computing…" in html
    assert asked == [study.pk] and QualitySummary.objects.count() == 1
    assert tasks.quality_refresh(study.pk) == 2 and QualitySummary.objects.count() == 2
    html = client_of("alice").get(url(study, "quality")).content.decode()
    assert "still being computed" not in html and asked == [study.pk]
