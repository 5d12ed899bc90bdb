"""Looking at a participant: the list, their timeline, the replay of what was painted, the quality report and the
payment decisions with their CSV; all of it only inside the researcher's own study."""

import csv
import io
import json
import re
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse
from journey_driver import step as drive_step
from study_builders import study as build

from dashboard.core import replay
from dashboard.models import PaymentDecision
from playback.core.protocol import PaintEntry, frames_of
from playback.models.delivery import PaintReport
from playback.services.delivery import paint_batch_record
from studyapp import services as study_services
from studyapp.models import Session, Study, Trial, TrialPlayback

LATE_MS = 4.0  # each frame is painted LATE_MS × (seq % 5) after its scheduled time


def paint_new_playbacks(session: Session, *, hidden: bool = False, drop_last: bool = False) -> None:
    """Send the paint log a browser would for every showing of this session that has none yet."""
    links = TrialPlayback.objects.filter(trial__session=session).select_related("playback")
    for link in links:
        if PaintReport.objects.filter(playback=link.playback).exists():
            continue
        frames = [f for f in frames_of(link.playback.stream) if f.text]
        if drop_last:
            frames = frames[:-1]
        entries = [PaintEntry(seq=f.seq, t_ms=f.t_ms, recv_ms=f.t_ms, paint_ms=f.t_ms + LATE_MS * (f.seq % 5),
                              chars=len(f.text), hidden=hidden) for f in frames]
        half = len(entries) // 2
        paint_batch_record(playback=link.playback, batch=1, entries=entries[:half], clock=None)
        paint_batch_record(playback=link.playback, batch=2, entries=entries[half:], clock=None)
        paint_batch_record(playback=link.playback, batch=2, entries=entries[half:], clock=None)  # a retry


def play(study: Study, pid: str, **paint) -> Session:
    """A participant who goes through the whole study: pages visited, answers given, paint logs sent."""
    session, _ = study_services.session_enter(study=study, panel={"participant": pid})
    for _ in range(200):
        session.refresh_from_db()
        if session.state != Session.State.ACTIVE:
            return session
        study_services.session_touch(session=session)
        drive_step(session)
        paint_new_playbacks(session, **paint)
    raise AssertionError("the session did not finish")


@pytest.fixture
def played(study):
    study_services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    return {"good": play(study, "PID-GOOD"), "hidden": play(study, "PID-HIDDEN", hidden=True)}


@pytest.fixture
def other_study(researchers):
    """Bob's study, with one participant of its own."""
    s, _ = study_services.study_load(doc=build(id="bob-study"), owner=researchers["bob"])
    study_services.study_set_state(study=s, state="open")
    s.refresh_from_db()
    return s, play(s, "PID-BOB")


def url(study, route, **query) -> str:
    base = reverse(f"dashboard:{route}", kwargs={"slug": study.slug})
    return base + ("?" + urlencode(query) if query else "")


def first_trial(session: Session) -> Trial:
    return Trial.objects.filter(session=session, status=Trial.Status.ANSWERED).order_by("index").first()


# --- the pure replay ---------------------------------------------------------------------------------------------


STREAM = {"pieces": [[0.0, "Hel"], [100.0, "lo"], [150.0, ""], [200.0, ", wor"], [300.0, "ld"]]}


def entry(seq, t, paint, hidden=False):
    return {"seq": seq, "t_ms": t, "recv_ms": t, "paint_ms": paint, "chars": 1, "hidden": hidden}


def test_the_replayed_screen_is_every_frame_painted_by_then_in_stream_order():
    log = [entry(0, 0.0, 16.0), entry(1, 100.0, 180.0), entry(3, 200.0, 170.0), entry(4, 300.0, 316.0)]
    r = replay.build(STREAM, log)
    assert replay.screen_at(r, 15.0) == "" and replay.screen_at(r, 16.0) == "Hel"
    assert replay.screen_at(r, 175.0) == "Hel, wor"  # frame 3 painted before frame 1: shown as the log says
    assert replay.screen_at(r, 400.0) == r["painted_text"] == "Hello, world" == r["scheduled_text"]
    assert replay.screen_at(r, 150.0, painted=False) == "Hello"
    assert [p["late_ms"] for p in r["painted"]] == [16.0, 80.0, -30.0, 16.0]
    assert r["duration_ms"] == 316.0 and r["never_painted"] == []


def test_frames_missing_from_the_log_were_never_on_screen_and_a_repeated_entry_counts_once():
    log = [entry(0, 0.0, 10.0), entry(0, 0.0, 99.0), entry(1, 100.0, 101.0, hidden=True)]
    r = replay.build(STREAM, log, bound_ms=20.0)
    assert r["painted_text"] == "Hello" and r["never_painted"] == [3, 4]  # the empty piece 2 is not "missing"
    assert r["painted"][0]["paint_ms"] == 10.0 and r["painted"][1]["hidden"] is True
    assert r["summary"]["frames"] == 2 and r["summary"]["hidden_frames"] == 1 and r["bound_ms"] == 20.0


def test_a_playback_without_a_log_replays_the_schedule_only():
    r = replay.build(STREAM, [])
    assert r["painted"] == [] and r["summary"] is None and r["scheduled_text"] == "Hello, world"


# --- pages -------------------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_participant_list_shows_every_participant_with_a_link(played, study, client_of):
    html = client_of("vera").get(url(study, "participants")).content.decode()
    for session in played.values():
        assert f'data-session="{session.pk}"' in html and f"?id={session.pk}" in html
        assert session.panel_pid in html


@pytest.mark.django_db
def test_the_timeline_shows_each_step_with_time_spent_answers_and_replays(played, study, client_of):
    session = played["good"]
    html = client_of("alice").get(url(study, "participant", id=session.pk)).content.decode()
    rows = re.findall(r'<tr data-step="(\d+)" data-kind="(\w+)"', html)
    assert [int(s) for s, _ in rows] == list(range(len(session.plan["steps"])))
    assert [k for _, k in rows] == [s["kind"] for s in session.plan["steps"]]
    answered = Trial.objects.filter(session=session, status=Trial.Status.ANSWERED)
    for trial in answered:
        assert f"?trial={trial.pk}&amp;position=0" in html
    assert html.count('class="replay-link"') == answered.count()
    assert "user_agent" in html and "refresh_hz" in html  # the environment
    assert "&quot;response&quot;: &quot;yes&quot;" in html or "&#x27;response&#x27;: &#x27;yes&#x27;" in html
    consent = re.search(r'<tr data-step="0" data-kind="consent".*?</tr>', html, re.S).group(0)
    assert re.search(r'<td class="num">\d+\.\d</td>', consent)  # the time spent on the consent page


@pytest.mark.django_db
def test_the_replay_data_are_the_stream_and_its_paint_log(played, study, client_of):
    trial = first_trial(played["good"])
    link = TrialPlayback.objects.get(trial=trial, showing=trial.plays, position=0)
    data = client_of("vera").get(url(study, "replay_data", trial=trial.pk)).json()
    frames = frames_of(link.playback.stream)
    assert [f["t_ms"] for f in data["scheduled"]] == [f.t_ms for f in frames]
    assert data["painted_text"] == data["scheduled_text"] == "".join(f.text for f in frames)
    assert {p["seq"]: p["late_ms"] for p in data["painted"]} == {f.seq: LATE_MS * (f.seq % 5) for f in frames if f.text}
    assert data["summary"]["frames"] == len(data["painted"]) and data["summary"]["hidden_frames"] == 0
    assert data["trial"]["id"] == trial.pk and data["session"] == played["good"].pk


@pytest.mark.django_db
def test_the_replay_page_carries_its_data_and_both_panes(played, study, client_of):
    trial = first_trial(played["hidden"])
    html = client_of("alice").get(url(study, "replay", trial=trial.pk)).content.decode()
    assert 'id="pane-scheduled"' in html and 'id="pane-painted"' in html and 'id="late-plot"' in html
    found = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', html, re.S)
    data = json.loads(found.group(1))
    assert data["summary"]["hidden_frames"] == len(data["painted"]) > 0
    assert "js/dashboard/replay.js" in html and '<option value="0.1">' in html  # slow motion


@pytest.mark.django_db
def test_a_missing_or_malformed_id_is_a_404(played, study, client_of):
    alice = client_of("alice")
    for name, query in [("participant", {}), ("participant", {"id": "x"}), ("participant", {"id": 999999}),
                        ("replay", {}), ("replay", {"trial": "1;drop"}), ("replay_data", {"trial": 999999}),
                        ("replay_data", {"trial": first_trial(played["good"]).pk, "position": 5})]:
        assert alice.get(url(study, name, **query)).status_code == 404, (name, query)


@pytest.mark.django_db
def test_ids_of_another_study_are_404_through_my_study_and_strangers_get_404_with_valid_ids(
        played, study, other_study, client_of):
    bob_study, bob_session = other_study
    alice, bob = client_of("alice"), client_of("bob")
    foreign_trial = first_trial(bob_session)
    for name, query in [("participant", {"id": bob_session.pk}), ("replay", {"trial": foreign_trial.pk}),
                        ("replay_data", {"trial": foreign_trial.pk})]:
        assert alice.get(url(study, name, **query)).status_code == 404, name
    mine = played["good"]
    for name, query in [("participant", {"id": mine.pk}), ("replay", {"trial": first_trial(mine).pk}),
                        ("replay_data", {"trial": first_trial(mine).pk}), ("quality", {}), ("payments", {}),
                        ("participants", {})]:
        assert bob.get(url(study, name, **query)).status_code == 404, name
    assert bob.get(url(bob_study, "participant", id=bob_session.pk)).status_code == 200  # his own, of course


@pytest.mark.django_db
def test_preview_sessions_are_not_participants(study, client_of):
    preview, _ = study_services.session_enter(study=study, panel={}, preview=True)
    alice = client_of("alice")
    assert f'data-session="{preview.pk}"' not in alice.get(url(study, "participants")).content.decode()
    assert alice.get(url(study, "participant", id=preview.pk)).status_code == 404


# --- quality and payments ----------------------------------------------------------------------------------------


def rows_of(html: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(0) for m in re.finditer(r'<tr id="p(\d+)".*?</tr>', html, re.S)}


@pytest.mark.django_db
def test_the_quality_report_suggests_from_the_paint_logs_and_answers(played, study, client_of):
    html = client_of("alice").get(url(study, "quality")).content.decode()
    rows = rows_of(html)
    good, hidden = rows[played["good"].pk], rows[played["hidden"].pk]
    assert 'data-suggestion="approve"' in good and 'data-suggestion="reject"' in hidden
    assert "the page was hidden during 6 of 6 trials" in hidden
    assert f'name="session" value="{played["good"].pk}"' in good and "not yet decided" in good
    assert 'name="csrfmiddlewaretoken"' in html and 'action="/dashboard/alice-study/quality/decide/"' in html


@pytest.mark.django_db
def test_a_viewer_sees_the_report_but_cannot_decide(played, study, client_of):
    vera = client_of("vera")
    html = vera.get(url(study, "quality")).content.decode()
    assert 'id="bulkbar"' not in html and 'name="session"' not in html and 'data-suggestion="approve"' in html
    response = vera.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject", "reason": "x"})
    assert response.status_code == 403 and not PaymentDecision.objects.exists()


@pytest.mark.django_db
def test_an_editor_decides_and_the_decision_wins_over_the_suggestion(played, study, client_of, researchers):
    ed = client_of("ed")
    hidden = played["hidden"]
    response = ed.post(url(study, "decide"), {"session": hidden.pk, "decision": "approve",
                                              "reason": "  network trouble, not their fault "})
    assert response.status_code == 302 and response["Location"] == url(study, "quality")
    d = PaymentDecision.objects.get(session=hidden)
    assert (d.decision, d.reason, d.decided_by) == ("approve", "network trouble, not their fault", researchers["ed"])
    ed.post(url(study, "decide"), {"session": hidden.pk, "decision": "reject", "reason": "changed my mind"})
    assert PaymentDecision.objects.get(session=hidden).decision == "reject" and PaymentDecision.objects.count() == 1
    html = ed.get(url(study, "quality")).content.decode()
    assert 'data-decision="reject"' in rows_of(html)[hidden.pk] and "decided by ed" in rows_of(html)[hidden.pk]


@pytest.mark.django_db
def test_a_bad_decision_or_another_studys_session_stores_nothing(played, study, other_study, client_of):
    alice = client_of("alice")
    _bob_study, bob_session = other_study
    for data in ({"session": played["good"].pk, "decision": "pay-double"}, {"session": "x", "decision": "approve"},
                 {"session": bob_session.pk, "decision": "reject"}):
        response = alice.post(url(study, "decide"), data, follow=True)
        assert response.status_code == 200 and b'class="error"' in response.content
    assert not PaymentDecision.objects.exists()


@pytest.mark.django_db
def test_the_payment_csv_lists_every_completed_participant_with_decision_and_source(played, study, client_of):
    alice = client_of("alice")
    alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "approve", "reason": "fine"})
    response = alice.get(url(study, "payments"))
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert 'attachment; filename="alice-study-payments.csv"' == response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert list(rows[0]) == ["participant_id", "session", "state", "suggested", "suggested_reason", "decision",
                             "reason", "decided_by", "decided_at"]
    by_pid = {r["participant_id"]: r for r in rows}
    good = by_pid["PID-GOOD"]
    assert (good["suggested"], good["decision"], good["reason"], good["decided_by"]) == ("approve", "approve", "fine",
                                                                                         "alice")
    hidden = by_pid["PID-HIDDEN"]  # suggested, never decided: the decision columns stay empty
    assert (hidden["suggested"], hidden["decision"], hidden["reason"], hidden["decided_at"]) == ("reject", "", "", "")
    assert "hidden during 6 of 6 trials" in hidden["suggested_reason"]


@pytest.mark.django_db
def test_one_file_per_decision_has_a_single_prolific_pid_column_of_decided_ids_only(played, study, client_of):
    vera = client_of("vera")
    approve = vera.get(url(study, "payments", decision="approve"))
    assert approve.content.decode().splitlines() == ["PROLIFIC_PID"]  # nobody reviewed yet: nobody to approve
    assert approve["Content-Disposition"] == 'attachment; filename="alice-study-approve-decided.csv"'
    suggested = vera.get(url(study, "payments", decision="approve", source="suggested"))
    assert suggested.content.decode().splitlines() == ["PROLIFIC_PID", "PID-GOOD"]
    assert "suggested-unreviewed" in suggested["Content-Disposition"]
    client_of("alice").post(url(study, "decide"), {"session": played["hidden"].pk, "decision": "reject",
                                                   "reason_id": "attention"})
    reject = vera.get(url(study, "payments", decision="reject")).content.decode().splitlines()
    assert reject == ["PROLIFIC_PID", "PID-HIDDEN"]
    assert vera.get(url(study, "payments", decision="maybe")).status_code == 400
    assert vera.get(url(study, "payments", decision="approve", source="guessed")).status_code == 400


@pytest.mark.django_db
def test_sessions_that_did_not_complete_are_not_in_the_payment_files(played, study, client_of):
    active, _ = study_services.session_enter(study=study, panel={"participant": "PID-ACTIVE"})
    Session.objects.filter(pk=played["good"].pk).update(state=Session.State.RETURNED)
    text = client_of("alice").get(url(study, "payments")).content.decode()
    assert "PID-ACTIVE" not in text and "PID-GOOD" not in text and "PID-HIDDEN" in text
    html = client_of("alice").get(url(study, "quality")).content.decode()
    assert 'data-suggestion=""' in rows_of(html)[active.pk]


@pytest.mark.django_db
def test_decisions_need_the_csrf_token(played, study, researchers):
    alice = Client(enforce_csrf_checks=True)
    alice.force_login(researchers["alice"])
    response = alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject"})
    assert response.status_code == 403 and not PaymentDecision.objects.exists()
    html = alice.get(url(study, "quality")).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = alice.post(url(study, "decide"), {"session": played["good"].pk, "decision": "reject",
                                                 "reason": "no code", "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and PaymentDecision.objects.get().decision == "reject"


@pytest.mark.django_db
def test_the_payments_command_decides_and_prints_the_same_files(played, study, researchers):
    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command("payments", study.slug, "--decide", str(played["hidden"].pk), "approve", "bad wifi", "--by", "ed",
                 stdout=out)
    assert out.getvalue().strip() == f"alice-study: participant {played['hidden'].pk}: approve"
    assert PaymentDecision.objects.get(session=played["hidden"]).decided_by == researchers["ed"]
    out = io.StringIO()
    call_command("payments", study.slug, "--decision", "approve", stdout=out)
    assert out.getvalue().splitlines() == ["PROLIFIC_PID", "PID-HIDDEN"]  # decided only; PID-GOOD is a suggestion
    out = io.StringIO()
    call_command("payments", study.slug, "--decision", "approve", "--source", "suggested", stdout=out)
    assert out.getvalue().splitlines() == ["PROLIFIC_PID", "PID-GOOD"]
    with pytest.raises(CommandError, match="not a participant of this study"):
        call_command("payments", study.slug, "--decide", "999999", "reject", "x")
