"""A researcher reviews a study that bots completed, in Chromium at 1,280 px: the whole quality table fits (the
decision column included), a rejection without a reason is refused, several participants are rejected at once
with a reason from the study's list, the suggested approvals on the page are approved in one click, and a
decision is taken on a participant's own page.

Real Daphne (production mode: PostgreSQL, Redis channel layer), bots over HTTP and the playback websocket,
headless Chromium. A screenshot of the table with a bulk selection goes to var/screenshots/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pagewait import wait_js
from studies import complete_with_bots, log_in, open_study
from study_builders import study as build

from dashboard.models import PaymentDecision
from studyapp.bots import observers as bot_models

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.timeout(600)]

SLUG = "review-study"
N_BOTS = 8
PASSWORD = "rhea-reviews-results-7"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
REASONS = [{"id": "attention", "text": "You did not pass the attention check: the instructions asked for No."},
           {"id": "no_code", "text": "Your submission has no completion code."}]


@pytest.fixture
def reviewed_study(django_user_model, daphne_server):
    researcher = django_user_model.objects.create_user("rhea", password=PASSWORD)
    doc = build(id=SLUG,
                recruitment={"panel": "prolific", "params": {"participant": "PROLIFIC_PID"},
                             "completion": {"code": "CREVIEW1", "url": "https://panel.example/done?cc=CREVIEW1"}},
                attention_checks={"on_fail": "flag", "max_failures": 0, "items": [
                    {"id": "say-no", "type": "instructed", "block": "accept", "position": "random",
                     "question": {"en": "Attention check: whatever you saw, please answer no.",
                                  "zh-hans": "注意力检测：无论看到什么，请回答否。"}, "expected": "no"}]},
                payments={"currency": "GBP", "rejection_reasons": REASONS,
                          "bonus": {"completed": 0.5, "per_attention_check_passed": 0.25}})
    population = bot_models.Population(attentive=0.5)  # some bots miss the check: suggested rejections
    return complete_with_bots(open_study(doc, researcher), daphne_server, N_BOTS, seed=3, population=population)


def test_a_researcher_reviews_in_bulk_at_1280_px(reviewed_study, daphne_server, browser):
    base = daphne_server
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    log_in(page, base, "rhea", PASSWORD)
    quality = f"{base}/dashboard/{SLUG}/quality/"
    page.goto(quality)

    # the whole table fits the window: no horizontal scroll, the decision column inside the viewport
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    box = page.locator("#quality thead th").last.bounding_box()
    assert box["x"] + box["width"] <= 1280, box
    rows = page.locator("#quality tbody tr")
    assert rows.count() == N_BOTS
    suggested = page.evaluate("[...document.querySelectorAll('#quality tbody tr')].map(r => r.dataset.suggestion)")
    rejects = [i for i, s in enumerate(suggested) if s == "reject"]
    assert rejects and len(rejects) < N_BOTS, suggested  # the population missed some checks, not all

    # select all, then a reject without a reason: refused, nothing stored
    page.check("#select-all")
    wait_js(page, f"document.getElementById('selected-count').textContent.includes('{N_BOTS}')", 5000)
    with page.expect_navigation():
        page.click("#reject-selected")
    assert "a rejection needs a reason" in page.locator("ul.messages").inner_text()
    assert not PaymentDecision.objects.exists()

    # the suggested rejections, ticked, with the study's reason: the bulk selection the screenshot shows
    for i in rejects:
        rows.nth(i).locator('input[name="session"]').check()
    page.select_option('select[name="reason_id"]', "attention")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "quality-bulk-1280.png"), full_page=True)
    with page.expect_navigation():
        page.click("#reject-selected")
    assert f"Decision saved for {len(rejects)} participant" in page.locator("ul.messages").inner_text() or (
        len(rejects) == 1 and "Decision saved for participant" in page.locator("ul.messages").inner_text())
    stored = {d.session_id: (d.decision, d.reason_id, d.reason) for d in PaymentDecision.objects.all()}
    assert len(stored) == len(rejects) and {v for v in stored.values()} == {("reject", "attention", REASONS[0]["text"])}

    # approve the suggested approvals shown: the rest, and only them
    with page.expect_navigation():
        page.click("#approve-suggested")
    decided = page.evaluate("[...document.querySelectorAll('#quality tbody tr')].map(r => r.dataset.decision)")
    assert decided == ["reject" if s == "reject" else "approve" for s in suggested]
    assert "not yet decided: 0" in page.locator("#review-progress").inner_text()

    # a participant's own page: change one decision with a written reason
    first = page.locator("#quality tbody tr").first
    session_id = first.get_attribute("data-session")
    with page.expect_navigation():
        first.locator("a").first.click()
    page.fill('#decide-one input[name="reason"]', "Answered every trial in under a second.")
    with page.expect_navigation():
        page.click('#decide-one button[value="reject"]')
    assert page.url.endswith(f"/participant/?id={session_id}")
    assert page.locator("#decision-now").get_attribute("data-decision") == "reject"
    assert PaymentDecision.objects.get(session_id=int(session_id)).reason == "Answered every trial in under a second."

    # the bonus file pays the approved ones only
    bonus = page.request.get(f"{base}/dashboard/{SLUG}/bonuses.csv").text()
    approved = PaymentDecision.objects.filter(decision="approve").count()
    assert len(bonus.splitlines()) == approved and all(line.count(",") == 1 for line in bonus.splitlines())
    assert not errors and not failed, (errors, failed)  # the favicon included
    page.close()
