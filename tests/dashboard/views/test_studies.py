"""What a researcher does on the dashboard: create from a file or the editor (problems shown with their paths),
edit, open/pause/close, copy, share, preview (never counted), and what the snapshot counts."""

import io
import uuid

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse
from journey_driver import run_to_end, step
from study_builders import study as build

from dashboard.selectors import studies as selectors
from studyapp import services as study_services
from studyapp.design import studyfile
from studyapp.models import Session, Study, StudyMember

pytestmark = pytest.mark.django_db


def upload(client, text: str, name: str = "study.yaml", url: str | None = None):
    f = io.BytesIO(text.encode())
    f.name = name
    return client.post(url or reverse("dashboard:create"), {"file": f, "text": ""})


def test_uploading_the_demo_study_creates_a_draft_owned_by_the_uploader(researchers, client_of):
    text = studyfile.demo_study_path().read_text(encoding="utf-8")
    response = upload(client_of("alice"), text)
    created = Study.objects.get(slug="demo-perceived-speed")
    assert response.status_code == 302 and response["Location"] == reverse("dashboard:detail",
                                                                           kwargs={"slug": created.slug})
    assert (created.owner.username, created.state) == ("alice", Study.State.DRAFT)
    assert created.spec == studyfile.load_study(studyfile.demo_study_path())


def test_an_invalid_file_shows_every_problem_with_its_path_and_saves_nothing(researchers, client_of):
    doc = build(id="broken")
    doc["stimuli"]["coffee"]["ttft_ms"] = -3
    doc["blocks"][0]["stimulus"] = "tea"
    expected = studyfile.validate(doc)
    assert expected  # the document really is broken
    response = upload(client_of("alice"), yaml.safe_dump(doc, allow_unicode=True))
    html = response.content.decode()
    assert response.status_code == 400 and not Study.objects.filter(slug="broken").exists()
    for problem in expected:
        assert f'<code class="path">{problem.path}</code>' in html, problem
    assert "ttft_ms" in html and 'name="text"' in html  # the uploaded text is back in the editor to fix


def test_a_yaml_syntax_error_is_reported_with_its_line(researchers, client_of):
    response = client_of("alice").post(reverse("dashboard:create"), {"text": "id: x\n  title: [unclosed\n"})
    assert response.status_code == 400 and b"line 2" in response.content


def test_a_study_typed_in_the_browser_is_created(researchers, client_of):
    text = yaml.safe_dump(build(id="typed"), allow_unicode=True)
    response = client_of("bob").post(reverse("dashboard:create"), {"text": text})
    assert response.status_code == 302 and Study.objects.get(slug="typed").owner.username == "bob"


def test_an_id_that_is_taken_is_refused_without_touching_the_other_study(study, client_of):
    doc = build(id=study.slug, title={"en": "Hijack", "zh-hans": "劫持"})
    response = client_of("bob").post(reverse("dashboard:create"), {"text": yaml.safe_dump(doc, allow_unicode=True)})
    study.refresh_from_db()
    assert response.status_code == 400 and b'<code class="path">id</code>' in response.content
    assert (study.owner.username, study.version, study.title) == ("alice", 1, "Mini")


def test_trace_files_on_the_server_cannot_be_named_from_the_browser(researchers, client_of):
    doc = build(id="traced")
    doc["stimuli"]["coffee"]["trace"] = {"id": "x", "file": "/etc/passwd"}
    response = client_of("alice").post(reverse("dashboard:create"), {"text": yaml.safe_dump(doc)})
    assert response.status_code == 400 and b"stimuli.coffee.trace.file" in response.content
    assert not Study.objects.filter(slug="traced").exists()


def test_editing_in_the_browser_saves_a_new_version_and_keeps_the_id(study, client_of):
    ed = client_of("ed")
    page = ed.get(reverse("dashboard:edit", kwargs={"slug": study.slug}))
    text = page.context["form"].initial["text"]
    assert studyfile.load_text(text) == study.spec  # the editor shows the study file as stored
    changed = text.replace("en: Mini", "en: Mini two")
    assert ed.post(reverse("dashboard:edit", kwargs={"slug": study.slug}), {"text": changed}).status_code == 302
    study.refresh_from_db()
    assert (study.version, study.title, study.owner.username) == (2, "Mini two", "alice")
    renamed = changed.replace("id: alice-study", "id: other-id")
    response = ed.post(reverse("dashboard:edit", kwargs={"slug": study.slug}), {"text": renamed})
    assert response.status_code == 400 and b'<code class="path">id</code>' in response.content
    assert not Study.objects.filter(slug="other-id").exists()


def test_open_pause_close_and_closing_is_final(study, client_of):
    alice = client_of("alice")
    url = reverse("dashboard:state", kwargs={"slug": study.slug})
    states = []
    for action in ("open", "pause", "open", "close", "open"):
        alice.post(url, {"action": action})
        study.refresh_from_db()
        states.append(study.state)
    assert states == ["open", "paused", "open", "closed", "closed"]
    page = alice.get(reverse("dashboard:detail", kwargs={"slug": study.slug}))
    assert 'data-action="open"' not in page.content.decode()


def test_an_editor_copies_a_study_into_a_new_draft_of_their_own(study, client_of):
    study_services.study_set_state(study=study, state="open")
    response = client_of("ed").post(reverse("dashboard:copy", kwargs={"slug": study.slug}), {"slug": "eds-copy"})
    copy = Study.objects.get(slug="eds-copy")
    assert response.status_code == 302
    assert (copy.owner.username, copy.state, copy.version) == ("ed", Study.State.DRAFT, 1)
    assert copy.spec == study.spec | {"id": "eds-copy"}
    assert not StudyMember.objects.filter(study=copy).exists()
    again = client_of("ed").post(reverse("dashboard:copy", kwargs={"slug": study.slug}), {"slug": "eds-copy"})
    assert again.status_code == 400 and Study.objects.filter(slug="eds-copy").count() == 1


def test_the_owner_shares_and_unshares_on_the_share_page(study, client_of):
    alice = client_of("alice")
    url = reverse("dashboard:share", kwargs={"slug": study.slug})
    assert alice.post(url, {"username": "bob", "role": "viewer"}).status_code == 302
    assert client_of("bob").get(reverse("dashboard:detail", kwargs={"slug": study.slug})).status_code == 200
    alice.post(url, {"remove": "bob"})
    assert client_of("bob").get(reverse("dashboard:detail", kwargs={"slug": study.slug})).status_code == 404


def test_share_and_copy_commands(study, researchers):
    out = io.StringIO()
    call_command("share_study", study.slug, "bob", "--role", "editor", stdout=out)
    assert StudyMember.objects.get(study=study, user__username="bob").role == "editor"
    call_command("copy_study", study.slug, "bobs-copy", "--owner", "bob", stdout=out)
    assert Study.objects.get(slug="bobs-copy").owner.username == "bob"
    call_command("share_study", study.slug, "bob", "--remove", stdout=out)
    assert not StudyMember.objects.filter(study=study, user__username="bob").exists()


def test_a_preview_is_a_participant_session_that_is_never_counted(study, client_of):
    vera = client_of("vera")
    url = reverse("dashboard:preview", kwargs={"slug": study.slug})
    response = vera.post(url)
    first = Session.objects.get(study=study)
    assert response.status_code == 302 and response["Location"] == reverse("participant",
                                                                           kwargs={"token": first.token})
    assert first.preview and first.excluded
    step(first)  # the researcher clicks through consent
    snapshot = selectors.study_snapshot(study)
    assert snapshot["counts"]["started"] == 0 and snapshot["attention"]["answered"] == 0
    vera.post(url)  # a second preview discards the first and what it recorded
    assert list(Session.objects.filter(study=study).values_list("preview", flat=True)) == [True]
    assert not Session.objects.filter(pk=first.pk).exists()


def test_the_snapshot_counts_sessions_groups_conditions_and_trial_times(study):
    study_services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    done = [run_to_end(study_services.session_enter(study=study, panel={"participant": f"P{i}"})[0])
            for i in range(2)]
    live = study_services.session_enter(study=study, panel={"participant": "P-live"})[0]
    declining = study_services.session_enter(study=study, panel={"participant": "P-no"})[0]
    step(declining, {"consent": False}, client_id=uuid.uuid4().hex)
    step(live, {"consent": True}, client_id=uuid.uuid4().hex)  # withdrawing before consent would leave no session
    study_services.session_withdraw(session=live)
    snap = selectors.study_snapshot(study)
    assert [s.state for s in done] == ["completed", "completed"]
    assert snap["counts"] | {} == {"started": 4, "active": 0, "completed": 2, "timed_out": 0, "returned": 0,
                                   "screened_out": 0, "withdrawn": 1, "declined": 1}
    assert snap["overall_quota"] == 10
    (group,) = snap["groups"]
    assert (group["completed"], group["started"]) == (2, 3)
    n_conditions = len({t.condition for s in done for t in s.trials.filter(practice=False, attention=False)})
    assert len(snap["conditions"]) == n_conditions and sum(c["answered"] for c in snap["conditions"]) == sum(
        s.trials.filter(practice=False, attention=False).count() for s in done)
    assert snap["median_trial_s"] is not None and snap["median_trial_s"] >= 0
    detail_codes = selectors.completion_codes(study.spec)
    assert detail_codes == [{"kind": "completion", "code": "CDONE42", "url": "https://panel.example/done?cc=CDONE42"}]


def test_the_detail_page_shows_the_completion_codes_and_the_participant_link(study, client_of):
    html = client_of("vera").get(reverse("dashboard:detail", kwargs={"slug": study.slug})).content.decode()
    assert "CDONE42" in html and f"/s/{study.slug}/" in html and 'data-ws-path="/ws/dashboard/alice-study/"' in html
