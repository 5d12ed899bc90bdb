"""The pages that matter per engine, in Firefox and WebKit (Chromium runs the fuller versions of these in
test_participant.py, test_playground.py and test_dashboard_flow.py): one full participant journey in English
and one in Chinese, the engine and version the environment check records, a study restricted to other engines
turning the participant away before consent, the playground's four variants, and the dashboard's replay.

Real Daphne on the test PostgreSQL; every click a real pointer click (BiDi input actions in Firefox, WebDriver
element clicks in WebKit). Screenshots: artifacts/screenshots/engines/<engine>-*.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dashboard_study import completed_study, log_in_researcher, replay_a_trial, service_env  # noqa: F401 - fixtures
from django.contrib.auth import get_user_model
from engines import SELECTED
from participant_pages import EXPECTED_KINDS, READY, check_completed, session_of, trial_answer, trimmed_demo, view_of
from studies import open_study, study_file, without_panel_links

from pacelab import browsers
from playback.core import playground, texts
from playback.models.delivery import PaintReport, Playback
from studyapp.models import Session

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.timeout(600)]

SHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots" / "engines"
OTHER_ENGINES = [e for e in SELECTED if e != "chromium"]
ENGINE_FAMILY = {"firefox": "firefox", "webkit": "safari", "chromium": "chromium"}


@pytest.fixture(scope="session", params=OTHER_ENGINES)
def other_engine(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def other_browser(other_engine):
    from engines import launch

    b = launch(other_engine)
    yield b
    b.close()


@pytest.fixture
def open_page(other_browser):
    pages = []

    def open_(width: int = 1100, height: int = 820):
        page = other_browser.new_page(viewport={"width": width, "height": height})
        pages.append(page)
        return page

    yield open_
    for page in pages:
        page.close()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{page.engine}-{name}.png"))


@pytest.fixture
def study(tmp_path, service_env):  # noqa: F811 - the dashboard module's service_env, extended
    owner = get_user_model().objects.create_user("researcher", password="x" * 12)
    return open_study(study_file(tmp_path, without_panel_links(trimmed_demo(tmp_path)), "engines"), owner)


QUESTIONNAIRE = """() => {
  const set = (el, v) => { el.value = v; el.dispatchEvent(new Event("input", {bubbles: true}));
                           el.dispatchEvent(new Event("change", {bubbles: true})); };
  for (const fs of document.querySelectorAll(".q-item")) {
    const kind = fs.dataset.type, item = fs.dataset.id;
    if (kind === "likert") fs.querySelector('input[value="4"]').click();
    else if (kind === "single_choice" && fs.querySelector('input[value="__other__"]')) {
      fs.querySelector('input[value="__other__"]').click(); set(fs.querySelector(".other-text"), "Cantonese");
    } else if (kind === "single_choice") fs.querySelectorAll("input[type=radio]")[1].click();
    else if (kind === "multiple_choice") { const c = fs.querySelectorAll("input[type=checkbox]"); c[0].click();
                                           c[2].click(); }
    else if (kind === "number") set(fs.querySelector("input"), "30");
    else if (item === "comments") set(fs.querySelector("textarea"), "Nice study. 很好。");
  }
}"""


def complete_journey(page, lang: str) -> list[str]:
    """Click through every step until the end page; returns the kinds seen (trial kinds as trial-<type>)."""
    seen: list[str] = []
    for n in range(1, 60):
        page.wait_for_selector(READY, timeout=30_000)
        step, kind = page.get_attribute("#step", "data-step"), page.get_attribute("#step", "data-kind")
        if kind == "end":
            shoot(page, f"{lang}-end")
            return [*seen, "end"]
        view = view_of(page)
        seen.append(f"trial-{view['trial']['type']}" if kind == "trial" else kind)
        if kind == "trial":
            done, total = view["progress"]["done"] + 1, view["progress"]["total"]
            assert page.inner_text("#progress .progress-text") == (
                f"第 {done} / {total} 题" if lang == "zh" else f"Trial {done} of {total}")
            page.wait_for_selector("#controls:not([hidden])", timeout=30_000)
            # the controls came with every stream finished, painted in this engine
            assert page.evaluate("n => document.querySelectorAll(\".pl-player[data-state='done']\").length === n",
                                 len(view["trial"]["playbacks"]))
            value = trial_answer(page, view)
            if page.evaluate("() => !!document.getElementById('comment')"):
                page.fill("#comment", "感觉很流畅" if lang == "zh" else "felt smooth")
            if n < 12:
                shoot(page, f"{lang}-{n:02d}-trial")
            if page.evaluate("() => !!document.getElementById('slider')"):
                page.fill("#slider", value)
                page.click("#next")
            else:
                page.click(f'.choice[data-value="{value}"]')
                if page.is_visible("#next"):
                    page.click("#next")
        elif kind == "consent":
            shoot(page, f"{lang}-consent")
            # "I agree" is enabled once the page has checked the device (about a second)
            page.wait_for_selector('[data-answer="accept"]:not([disabled])')
            page.click('[data-answer="accept"]')
        elif kind == "questionnaire":
            page.evaluate(QUESTIONNAIRE)
            page.click("form#questionnaire button[type=submit]")
        elif kind != "environment":  # the environment check submits by itself
            page.click('[data-answer="continue"]')
        page.wait_for_selector(f'{READY}:not([data-step="{step}"][data-kind="{kind}"])', timeout=30_000)
    raise AssertionError(f"no end page after {seen}")


def check_environment(session: Session, page) -> None:
    """The environment check names this engine and its version, and the timer resolution it measured."""
    env = session.environment
    assert env["engine"] == ENGINE_FAMILY[page.engine]
    assert env["engine"] == browsers.engine_of(page.evaluate("navigator.userAgent"))[0]
    assert env["engine_version"] and env["engine_version"][0].isdigit()
    assert 0 < env["timer_resolution_ms"] <= 1.0


def test_a_participant_completes_the_study_in_english(open_page, study, daphne_server):
    page = open_page()
    page.goto(f"{daphne_server}/s/{study.slug}/?PROLIFIC_PID=pp-{page.engine}&lang=en")
    seen = complete_journey(page, "en")
    assert EXPECTED_KINDS <= set(seen)
    session = session_of(page)
    check_completed(session)
    check_environment(session, page)
    assert page.inner_text("#code") == "C7PACE1"
    assert page.js_errors == []


def test_a_participant_completes_the_study_in_chinese(open_page, study, daphne_server):
    page = open_page()
    page.goto(f"{daphne_server}/s/{study.slug}/?lang=zh-hans")
    page.wait_for_selector(READY)
    assert page.get_attribute("html", "lang") == "zh-hans"
    assert page.inner_text('[data-answer="accept"]') == "我同意，继续"
    seen = complete_journey(page, "zh")
    assert EXPECTED_KINDS <= set(seen)
    session = session_of(page)
    assert session.language == "zh-hans"
    check_completed(session)
    check_environment(session, page)
    assert "您的完成码" in page.inner_text(".code-line")
    assert page.js_errors == []


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_a_study_for_other_engines_turns_the_participant_away_before_consent(open_page, daphne_server, tmp_path,
                                                                               service_env, lang):  # noqa: F811
    owner = get_user_model().objects.create_user(f"only-{lang}", password="x" * 12)
    doc = without_panel_links(trimmed_demo(tmp_path))
    doc["id"] = f"only-other-{lang}"
    page = open_page()
    mine = ENGINE_FAMILY[page.engine]
    doc["limits"]["browsers"] = [e for e in ("chromium", "firefox", "safari") if e != mine]
    study = open_study(study_file(tmp_path, doc, doc["id"]), owner)
    page.goto(f"{daphne_server}/s/{study.slug}/?PROLIFIC_PID=turned-away&lang={lang}")
    page.wait_for_selector('#step[data-kind="unavailable"][data-reason="browser"]')
    text = page.inner_text("#step")
    names = browsers.brands(doc["limits"]["browsers"])
    assert all(name in text for name in names)
    assert ("本研究只能在" in text) if lang == "zh-hans" else ("This study works only in" in text)
    shoot(page, f"refused-{lang}")
    assert Session.objects.filter(study=study).count() == 0  # nothing kept: no session, no consent
    assert page.js_errors == []


# --- the playground --------------------------------------------------------------------------------------------

PLAYGROUND = {
    "src": "demo", "name": "en-chat-coffee", "seed": "1", "n": "4",
    "a.rate": "40", "a.ttft": "300", "a.render": "token", "a.ind": "dots", "a.mode": "prefetch",
    "b.rate": "40", "b.ttft": "300", "b.render": "batch", "b.batch_ms": "50", "b.ind": "shimmer",
    "c.rate": "40", "c.ttft": "300", "c.render": "smooth", "c.ind": "spinner", "c.mode": "live",
    "d.rate": "40", "d.ttft": "300", "d.render": "fade", "d.ind": "progress", "d.mode": "live",
}


def test_the_playground_plays_four_variants_and_stores_their_paint_logs(open_page, daphne_server, service_env,  # noqa: F811
                                                                       django_user_model):
    designer = django_user_model.objects.create_user("designer", password="pw-designer-1")
    page = open_page(1600, 1000)
    config = playground.parse(PLAYGROUND).config
    page.goto(f"{daphne_server}/playground/?{playground.to_query(config)}")
    page.fill("#id_username", "designer")  # redirected to the login form first
    page.fill("#id_password", "pw-designer-1")
    page.click("button[type=submit]")
    page.wait_for_function("window.__playground && window.__playground.ready", timeout=30_000)
    assert page.count(".pg-panel") == 4
    page.click("#pg-play")
    page.wait_for_function("window.__playground.done", timeout=60_000, polling=200)
    shoot(page, "playground")
    results = page.evaluate("window.__playground.results()")
    source = texts.bundled_text("en-chat-coffee")
    for letter, variant in zip("abcd", config.variants):
        got = results[letter]
        assert got["errors"] == [] and got["state"] == "done", (letter, got["errors"])
        assert got["revealedText"] == source and got["summary"]["unpainted"] == 0
        playback = Playback.objects.get(token=got["token"], owner=designer)
        assert playback.mode == variant.mode and playback.config["render"] == variant.render
        reports = PaintReport.objects.filter(playback=playback)
        assert reports.exists() and all(r.clock_offset_ms is not None for r in reports)
    assert page.js_errors == []


# --- the dashboard's replay ------------------------------------------------------------------------------------


def test_the_dashboard_replays_what_a_participant_painted(open_page, completed_study, daphne_server):  # noqa: F811
    page = open_page(1400, 1000)
    log_in_researcher(page, daphne_server)
    replay_a_trial(page, daphne_server, completed_study)
    shoot(page, "dashboard-replay")
    assert page.js_errors == []
