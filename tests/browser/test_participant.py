"""The participant pages end to end: a real Daphne on the test PostgreSQL, Debian's Chromium clicking like a
person through a trimmed copy of the demo study (every step kind and trial type: acceptability, rating with an
instructed attention check, 2AFC with a catch trial, reading, questionnaire), in English and in Chinese.

Also: a refresh in the middle of a trial shows it again from the start (and the server records the
interruption) and says so, and a Prolific participant is sent to the completion URL with the study's code (the
external request is intercepted: nothing leaves the machine). The rough edges of the journey (resume, Back,
device check, texts, languages) are in test_participant_journey.py.
Screenshots of every step: artifacts/screenshots/participant/<lang>-<nn>-<kind>.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from participant_pages import (
    EXPECTED_KINDS,
    READY,
    check_completed,
    session_of,
    to_first_trial,
    trial_answer,
    trimmed_demo,
    view_of,
    wait_next,
)
from studies import open_study, study_file

from studyapp.models import Answer, Session, Trial

pytestmark = [pytest.mark.browser, pytest.mark.integration]

SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots" / "participant"
PROLIFIC = "https://app.prolific.com/**"
# Records, at the moment the response controls appear, whether every player had finished its stream.
CONTROLS_WATCH = """new MutationObserver(() => {
  const c = document.getElementById("controls");
  if (c && !c.hidden && window.__controlsAfterEnd === undefined) {
    const players = [...document.querySelectorAll(".pl-player")];
    window.__controlsAfterEnd = players.length > 0 && players.every((p) => p.dataset.state === "done");
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["hidden"] });"""


@pytest.fixture
def study(tmp_path, service_env):
    owner = get_user_model().objects.create_user("researcher", password="x" * 12)
    return open_study(trimmed_demo(tmp_path), owner)


@pytest.fixture
def page(browser, daphne_server):
    context = browser.new_context(viewport={"width": 1100, "height": 820})
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    page.external = []

    def panel(route):  # the panel's completion page, answered here: no request leaves the machine
        page.external.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<html><body>panel</body></html>")

    page.route(PROLIFIC, panel)
    page.add_init_script(CONTROLS_WATCH)
    page.base = daphne_server
    yield page
    context.close()


def shoot(page, lang: str, n: int, kind: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{lang}-{n:02d}-{kind}.png"), full_page=True)


def fill_questionnaire(page) -> None:
    for fs in page.locator(".q-item").all():
        kind, item = fs.get_attribute("data-type"), fs.get_attribute("data-id")
        if kind == "likert":
            fs.locator('input[value="4"]').check()
        elif kind == "single_choice" and fs.locator('input[value="__other__"]').count():
            fs.locator('input[value="__other__"]').check()
            fs.locator(".other-text").fill("Cantonese")
        elif kind == "single_choice":
            fs.locator("input[type=radio]").nth(1).check()
        elif kind == "multiple_choice":
            fs.locator("input[type=checkbox]").nth(0).check()
            fs.locator("input[type=checkbox]").nth(2).check()
        elif kind == "number":
            fs.locator("input").fill("30")
        elif item == "comments":
            fs.locator("textarea").fill("Nice study. 很好。")


def complete_journey(page, lang: str) -> list[str]:
    """Click through every step until an end page; returns the kinds seen (trial kinds as trial-<type>)."""
    seen: list[str] = []
    for n in range(1, 60):
        page.wait_for_selector(READY, timeout=30000)
        step = page.get_attribute("#step", "data-step")
        kind = page.get_attribute("#step", "data-kind")
        if kind == "end":
            shoot(page, lang, n, "complete")
            seen.append("end")
            return seen
        view = view_of(page)
        label = f"trial-{view['trial']['type']}" if kind == "trial" else kind
        seen.append(label)
        if kind == "trial":
            if view["trial"]["practice"]:
                assert page.locator("#practice-badge").is_visible()
            progress = page.locator("#progress .progress-text").inner_text()
            done, total = view["progress"]["done"] + 1, view["progress"]["total"]
            assert progress == (f"第 {done} / {total} 题" if lang == "zh" else f"Trial {done} of {total}")
            page.wait_for_selector("#controls:not([hidden])", timeout=30000)
            assert page.evaluate("window.__controlsAfterEnd") is True  # controls only after the stream ended
            assert page.locator(".pl-player[data-state='done']").count() == len(view["trial"]["playbacks"])
            shown = page.locator(".player").all_inner_texts()
            cjk = [any("\u4e00" <= ch <= "\u9fff" for ch in text) for text in shown]
            assert cjk == [lang == "zh"] * len(shown), shown  # every answer in the participant's language
            assert not any("**" in text for text in shown), shown  # a cut answer never shows raw markdown
            value = trial_answer(page, view)
            if page.locator("#comment").count():
                page.locator("#comment").fill("感觉很流畅" if lang == "zh" else "felt smooth")
            if view["trial"].get("presentation") == "side_by_side":  # both answers on screen at once
                assert page.locator(".stages.side-by-side .stage:visible").count() == 2
            shoot(page, lang, n, label)
            if page.locator("#slider").count():
                assert page.locator("#next").is_disabled()  # a slider must be moved before it counts
                page.locator("#slider").fill(value)
                assert page.locator("#slider-value").inner_text() == value  # the number is shown once moved
                page.locator("#next").click()
            else:
                page.locator(f'.choice[data-value="{value}"]').click()
                if page.locator("#next").is_visible():
                    page.locator("#next").click()
        elif kind == "environment":
            shoot(page, lang, n, kind)  # while it measures (about a second), then it submits by itself
        elif kind == "consent":
            shoot(page, lang, n, kind)
            page.locator('[data-answer="accept"]').dblclick()  # a double click submits once
        elif kind == "questionnaire":
            page.locator("form#questionnaire button[type=submit]").click()  # all empty: refused in place
            assert page.locator(".q-item.invalid").count() >= 3
            fill_questionnaire(page)
            shoot(page, lang, n, kind)
            page.locator("form#questionnaire button[type=submit]").click()
        else:
            shoot(page, lang, n, kind)
            page.locator('[data-answer="continue"]').click()
        wait_next(page, step, kind)
    raise AssertionError(f"no end page after {seen}")


def test_a_prolific_participant_completes_the_study_in_english_and_is_sent_back_with_the_code(page, study):
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=pp-en-1&STUDY_ID=st-1&SESSION_ID=se-1")
    seen = complete_journey(page, "en")
    assert EXPECTED_KINDS <= set(seen)
    session = session_of(page)
    assert (session.panel_pid, session.panel_study_id, session.panel_session_id) == ("pp-en-1", "st-1", "se-1")
    check_completed(session)
    assert page.locator("#code").inner_text() == "C7PACE1"
    assert page.locator("#panel-return").get_attribute("href").endswith("cc=C7PACE1")
    page.wait_for_url("https://app.prolific.com/submissions/complete?cc=C7PACE1", timeout=15000)
    assert page.external == ["https://app.prolific.com/submissions/complete?cc=C7PACE1"]
    assert page.js_errors == []


def test_slider_ratings_and_side_by_side_pairs_are_answered_and_stored(page, tmp_path):
    """The other two layouts: a rating on a slider (Next stays disabled until it is moved) and a 2AFC with both
    answers streaming side by side."""
    doc = trimmed_demo(tmp_path)
    blocks = {b["id"]: b for b in doc["blocks"]}
    scale = blocks["ratings"]["task"]["scale"]
    blocks["ratings"]["task"]["scale"] = {"type": "slider", "min": 0, "max": 100, "anchors": scale["anchors"]}
    for key in ("labels", "gap_ms"):
        blocks["tokenizers"]["task"].pop(key, None)
    blocks["tokenizers"]["task"]["presentation"] = "side_by_side"
    owner = get_user_model().objects.create_user("layouts", password="x" * 12)
    study = open_study(study_file(tmp_path, doc, "layouts"), owner)
    page.goto(f"{page.base}/s/{study.slug}/?PROLIFIC_PID=layouts-1&lang=en")
    seen = complete_journey(page, "layouts")
    assert {"trial-rating", "trial-afc"} <= set(seen) and page.js_errors == []
    session = Session.objects.get(panel_pid="layouts-1")
    assert session.state == Session.State.COMPLETED
    ratings = [a.value["response"] for a in Answer.objects.filter(session=session, key="trial", trial__kind="rating")
               if not a.trial.attention]
    assert ratings and all(r == 73 for r in ratings)
    pairs = Answer.objects.filter(session=session, key="trial", trial__kind="afc")
    assert pairs and all(a.value["response"] in ("a", "b") for a in pairs)


def test_a_participant_completes_the_study_in_chinese(page, study):
    page.goto(f"{page.base}/s/{study.slug}/?lang=zh-hans")
    page.wait_for_selector(READY)
    assert page.locator("html").get_attribute("lang") == "zh-hans"
    assert page.locator('[data-answer="accept"]').inner_text() == "我同意，继续"
    assert page.locator("#withdraw").inner_text() == "退出本研究"
    seen = complete_journey(page, "zh")
    assert EXPECTED_KINDS <= set(seen)
    session = session_of(page)
    assert session.language == "zh-hans"
    check_completed(session)
    assert "您的完成码" in page.locator(".code-line").inner_text()
    assert page.js_errors == []


def advance_to_first_trial(page, study) -> Session:
    page.goto(f"{page.base}/s/{study.slug}/")
    to_first_trial(page)
    return session_of(page)


def test_a_refresh_in_the_middle_of_a_trial_shows_it_again_from_the_start(page, study):
    session = advance_to_first_trial(page, study)
    trial = Trial.objects.get(session=session, step=session.step)
    page.wait_for_selector(".pl-player[data-state='waiting']")  # the stream started: waiting for its first text
    page.reload()
    page.wait_for_selector(READY)
    assert page.get_attribute("#step", "data-step") == str(session.step)
    trial.refresh_from_db()
    assert trial.plays == 2 and len(trial.interruptions) == 1 and trial.interruptions[0]["after_plays"] == 1
    assert page.locator("#controls").is_hidden()
    assert page.locator("#replay-notice").is_visible()  # the participant is told why it starts again
    assert "played again from the start" in page.locator("#replay-notice").inner_text()
    page.wait_for_selector("#controls:not([hidden])", timeout=20000)
    step = page.get_attribute("#step", "data-step")
    page.locator('.choice[data-value="no"]').click()
    wait_next(page, step, "trial")
    answer = Answer.objects.get(session=session, trial=trial)
    assert answer.value["response"] == "no" and Answer.objects.filter(session=session, key="trial").count() == 1
    assert page.js_errors == []
