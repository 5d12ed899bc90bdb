"""The participant journey's rough edges, in Debian's Chromium against a real Daphne (issue 41): at 1280×800 in
English and Chinese, and at 390×844 with touch.

- a panel id alone, from a fresh browser, never enters the session: a resume page asks for the resume code
  shown on the participant's own pages, and that code (or the panel's SESSION_ID) continues it;
- a cut answer shows bold text, not `**`;
- consent and other study texts are paragraphs: Chinese wrapped mid-sentence in the study file is one line;
- the device requirement is stated on the consent page and a phone is refused there, nothing recorded;
- Back stays in the study with a notice, Forward does not restart the trial;
- withdrawing on the consent page keeps nothing.
Screenshots: var/screenshots/ (consent in English and Chinese, the Back notice, the phone refusal, the resume
page).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from participant_pages import READY, session_of, to_first_trial, trimmed_demo, wait_next
from studies import open_study, study_file

from studyapp.models import Answer, Decline, Session, Trial

pytestmark = [pytest.mark.browser, pytest.mark.integration]

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True,
         "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/126.0 Mobile Safari/537.36"}


def load(tmp_path: Path, doc: dict, name: str):
    owner = get_user_model().objects.get_or_create(username="journey")[0]
    return open_study(study_file(tmp_path, doc, name), owner)


@pytest.fixture
def study(tmp_path, service_env):
    return load(tmp_path, trimmed_demo(tmp_path), "journey")


@pytest.fixture
def open_page(browser, daphne_server):
    contexts = []

    def make(**options):
        context = browser.new_context(**(DESKTOP | options))
        contexts.append(context)
        page = context.new_page()
        page.js_errors = []
        page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
        page.on("dialog", lambda dialog: dialog.accept())
        page.base = daphne_server
        return page

    yield make
    for context in contexts:
        context.close()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_a_panel_id_alone_from_another_browser_gets_the_resume_page_and_the_resume_code_continues(open_page, study):
    me = open_page()
    me.goto(f"{me.base}/s/{study.slug}/?PROLIFIC_PID=victim-1&STUDY_ID=st&SESSION_ID=se-victim-1")
    to_first_trial(me)
    mine = session_of(me)
    before = (mine.step, Answer.objects.filter(session=mine).count())

    other = open_page()  # a fresh browser that knows only the panel id
    other.goto(f"{other.base}/s/{study.slug}/?PROLIFIC_PID=victim-1")
    other.wait_for_selector("#step")
    assert "/p/" not in other.url and mine.token not in other.content()  # never the other session
    assert other.get_attribute("#step", "data-kind") == "resume"
    code = me.locator("#resume-code").inner_text()  # shown at the bottom of the participant's own pages
    other.locator("#resume-code").fill("ZZZZ-ZZZZ")
    other.locator("#resume-form button[type=submit]").click()
    other.wait_for_selector("#resume-error")
    assert "/p/" not in other.url
    shoot(other, "resume-page-en")
    mine.refresh_from_db()
    assert (mine.step, Answer.objects.filter(session=mine).count()) == before  # nothing moved or answered

    other.locator("#resume-code").fill(code.lower())  # the participant on their second device, typing the code
    other.locator("#resume-form button[type=submit]").click()
    other.wait_for_selector(READY)
    assert session_of(other).pk == mine.pk and other.get_attribute("#step", "data-kind") == "trial"

    third = open_page()  # the panel's own link (its per-attempt SESSION_ID) is enough too
    third.goto(f"{third.base}/s/{study.slug}/?PROLIFIC_PID=victim-1&STUDY_ID=st&SESSION_ID=se-victim-1")
    third.wait_for_selector(READY)
    assert session_of(third).pk == mine.pk
    assert Session.objects.count() == 1 and me.js_errors == other.js_errors == third.js_errors == []


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_consent_states_the_device_requirement_and_its_text_is_paragraphs_not_wrapped_lines(open_page, study, lang):
    page = open_page()
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=consent-{lang}&lang={lang}")
    page.wait_for_selector('#step[data-device="ok"]', timeout=15000)
    text = page.locator("#step > .study-text")
    assert text.locator("br").count() == 0
    paragraphs = text.locator("p").all_inner_texts()
    assert len(paragraphs) == 1 and "\n" not in paragraphs[0]
    if lang == "zh-hans":
        assert "在屏幕上逐步出现" in paragraphs[0]  # wrapped there in the study file: one sentence, no space
        assert page.locator("#requirements h2").inner_text() == "参加本研究需要"
        assert "本研究不能使用手机参加。" in page.locator("#requirements").inner_text()
    else:
        assert "appear on screen and tell us how they felt" in paragraphs[0]
        assert "Phones cannot be used for this study." in page.locator("#requirements").inner_text()
    box, accept = page.locator("#requirements").bounding_box(), page.locator('[data-answer="accept"]').bounding_box()
    assert box["y"] + box["height"] <= accept["y"]  # stated before the consent question
    assert page.locator('[data-answer="accept"]').is_enabled()
    shoot(page, f"consent-{'zh' if lang == 'zh-hans' else 'en'}")
    assert page.js_errors == []


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_a_phone_is_refused_on_the_consent_page_and_nothing_is_recorded(open_page, study, lang):
    page = open_page(**PHONE)
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=phone-{lang}&SESSION_ID=se-phone&lang={lang}")
    page.wait_for_selector('#step[data-device="refused"]', timeout=15000)
    assert page.locator("#consent-question").is_hidden() and page.locator("#device-refused").is_visible()
    reason = page.locator("#refusal-reason").inner_text()
    assert ("手机" in reason) if lang == "zh-hans" else ("Phone" in reason)
    assert not Answer.objects.exists()
    shoot(page, f"phone-refused-{'zh' if lang == 'zh-hans' else 'en'}")
    page.locator('[data-answer="leave"]').tap()
    page.wait_for_selector('#step[data-kind="declined"][data-reason="device"]')
    assert not Session.objects.filter(panel_pid=f"phone-{lang}").exists() and not Answer.objects.exists()
    assert list(Decline.objects.values_list("reason", flat=True)) == ["device"]
    assert page.js_errors == []


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_back_stays_in_the_study_with_a_notice_and_forward_does_not_restart_the_trial(open_page, study, lang):
    page = open_page()
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=back-{lang}&lang={lang}")
    to_first_trial(page)
    session = session_of(page)
    trial = Trial.objects.get(session=session, step=session.step)
    url = page.url
    page.wait_for_selector(".pl-player")
    page.go_back()
    page.wait_for_selector("#back-notice:not([hidden])")
    assert page.url == url and page.get_attribute("#step", "data-step") == str(session.step)
    notice = page.locator("#back-notice").inner_text()
    assert ("已经提交的回答无法更改" in notice) if lang == "zh-hans" else ("cannot be changed" in notice)
    page.wait_for_selector("#controls:not([hidden])", timeout=20000)
    shoot(page, f"back-notice-{'zh' if lang == 'zh-hans' else 'en'}")
    page.go_forward()  # nothing ahead: the trial is neither left nor restarted
    assert page.url == url
    trial.refresh_from_db()
    assert trial.plays == 1 and trial.interruptions == []
    page.locator('.choice[data-value="yes"]').click()
    wait_next(page, str(session.step), "trial")
    session.refresh_from_db()
    assert session.step == trial.step + 1 and Answer.objects.filter(session=session, key="trial").count() == 1
    assert page.js_errors == []


def test_withdrawing_on_the_consent_page_keeps_nothing(open_page, study):
    page = open_page()
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=early-1&SESSION_ID=se-early&lang=zh-hans")
    page.wait_for_selector(READY)
    page.locator("#withdraw").click()  # confirmed (the dialog is accepted)
    page.wait_for_selector('#step[data-kind="declined"][data-reason="withdrawn"]')
    assert "您在研究开始前离开了" in page.locator("#step").inner_text()
    assert not Session.objects.filter(panel_pid="early-1").exists() and not Answer.objects.exists()
    assert list(Decline.objects.values_list("reason", flat=True)) == ["withdrawn"]


def test_a_cut_answer_shows_bold_text_not_raw_markdown(open_page, tmp_path, service_env):
    doc = trimmed_demo(tmp_path)
    doc["stimuli"]["coffee"]["max_chars"] = 240  # the demo's own cut: it falls inside **Grind a little coarser.**
    practice = next(b for b in doc["blocks"] if b["id"] == "practice")
    practice["trials"] = [{"label": "fast", "rate": 200, "ttft_ms": 100}]
    study = load(tmp_path, doc, "cut")
    page = open_page()
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=cut-1&lang=en")
    to_first_trial(page)
    page.wait_for_selector("#controls:not([hidden])", timeout=30000)
    player = page.locator("#player-0")
    assert "**" not in player.inner_text()
    assert player.locator("strong").all_inner_texts()[-1] == "Grind a little coarser."
    assert page.js_errors == []
