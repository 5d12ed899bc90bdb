"""A study restricted to some browser engines (``limits.browsers``): the participant is told before consent and
nothing is stored; the environment check records the engine and version and screens out another engine that
gets past the entry page (a changed user agent)."""

from __future__ import annotations

import copy

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from journey_driver import ENV, enter, submit

from studyapp import services
from studyapp.design import studyfile
from studyapp.models import Answer, Session

pytestmark = pytest.mark.django_db

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"
CHROME = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 "
          "Safari/537.36")


def _study(browsers: list[str] | None):
    doc = copy.deepcopy(studyfile.load_study(studyfile.demo_study_path()))
    if browsers is not None:
        doc["limits"]["browsers"] = browsers
    owner = get_user_model().objects.create_user(f"owner-{len(browsers or [])}", password="x" * 12)
    study, _ = services.study_load(doc=doc, owner=owner)
    return services.study_set_state(study=study, state="open")


@pytest.mark.parametrize(("lang", "words"), [("en", "This study works only in Chrome, Edge, Safari."),
                                             ("zh-hans", "本研究只能在 Chrome、Edge、Safari 中进行")])
def test_another_engine_is_told_which_browsers_to_use_before_consent_and_nothing_is_stored(lang, words):
    study = _study(["chromium", "webkit"])
    response = Client(headers={"user-agent": FIREFOX}).get(f"/s/{study.slug}/", {"PROLIFIC_PID": "fx-1", "lang": lang})
    html = response.content.decode()
    assert response.status_code == 200 and 'data-reason="browser"' in html and words in html
    assert 'data-kind="consent"' not in html
    assert Session.objects.count() == 0 and Answer.objects.count() == 0


def test_an_allowed_engine_enters_as_usual():
    study = _study(["chromium"])
    client = Client(headers={"user-agent": CHROME})
    session = enter(client, study, PROLIFIC_PID="ch-1")
    assert session.state == Session.State.ACTIVE


def test_the_environment_check_records_the_engine_its_version_and_the_timer_resolution():
    study = _study(None)
    client = Client(headers={"user-agent": FIREFOX})
    session = enter(client, study, PROLIFIC_PID="fx-2")
    assert submit(client, session, {"consent": True}).status_code == 200
    session.refresh_from_db()
    env = {"environment": {**ENV["environment"], "user_agent": FIREFOX, "timer_resolution_ms": 1.0}}
    assert submit(client, session, env).status_code == 200
    session.refresh_from_db()
    assert session.environment["engine"] == "firefox" and session.environment["engine_version"] == "153.0"
    assert session.environment["timer_resolution_ms"] == 1.0


def test_an_engine_that_got_past_the_entry_page_is_screened_out_at_the_environment_check():
    study = _study(["chromium"])
    client = Client(headers={"user-agent": CHROME})
    session = enter(client, study, PROLIFIC_PID="ch-2")
    assert submit(client, session, {"consent": True}).status_code == 200
    session.refresh_from_db()
    response = submit(client, session, {"environment": {**ENV["environment"], "user_agent": FIREFOX}})
    assert response.json()["state"] == "screened_out"
    session.refresh_from_db()
    assert session.flags == ["screened out: browser firefox not allowed"]


def test_the_study_file_names_a_browser_it_does_not_know():
    doc = copy.deepcopy(studyfile.load_study(studyfile.demo_study_path()))
    doc["limits"]["browsers"] = ["opera"]
    problems = [str(p) for p in studyfile.validate(doc)]
    assert any("limits.browsers" in p and "opera" in p for p in problems), problems
