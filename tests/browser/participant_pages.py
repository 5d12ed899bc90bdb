"""The participant's pages as the browser tests drive them: the trimmed demo study they run, what a step page
holds, and how an attentive participant moves through it. Shared by test_participant.py,
test_participant_journey.py and test_engines_pages.py (plain functions; each module keeps its own fixtures).
"""

from __future__ import annotations

from pathlib import Path

from studies import study_file

from studyapp.design import studyfile
from studyapp.models import Answer, Session, Trial

READY = '#step[data-ready="1"]'
# the step kinds (trial kinds as trial-<type>) a participant meets in the trimmed demo
EXPECTED_KINDS = {"consent", "environment", "instructions", "trial-acceptability", "message", "trial-rating",
                  "trial-afc", "trial-reading", "break", "questionnaire", "debrief", "end"}


def trimmed_demo(tmp_path: Path) -> dict:
    """The demo study with one condition per block, short fast streams, and a reading block added."""
    doc = studyfile.load_study(studyfile.demo_study_path())
    pairs = next(b for b in doc["blocks"] if b["id"] == "tokenizers")["stimulus"]
    for name, chars in (("coffee", 90), ("sleep", 90), (pairs, 40)):
        doc["stimuli"][name]["max_chars"] = chars
    passage = next(f for f in doc["factors"] if f["name"] == "passage")["levels"][0]
    levels = {"rate": [60], "ttft": [150], "strategy": ["fade"], "indicator": ["dots"], "passage": [passage]}
    for factor in doc["factors"]:
        factor["levels"] = levels.get(factor["name"], factor["levels"])
    blocks = {b["id"]: b for b in doc["blocks"]}
    blocks["practice"]["trials"] = [{"label": "slow", "rate": 40, "ttft_ms": 1800}]
    blocks["tokenizers"]["repeats"] = 1
    blocks["tokenizers"]["task"]["gap_ms"] = 300
    doc["blocks"].append({
        "id": "reading", "type": "main", "stimulus": "coffee", "trials": [{"label": "r", "rate": 80, "ttft_ms": 100}],
        "task": {"type": "reading", "question": {"en": "Press the button when you have read the answer.",
                                                 "zh-hans": "读完回答后请按按钮。"}},
        "break_after": False})
    catch = next(i for i in doc["attention_checks"]["items"] if i["type"] == "catch")
    catch.update(position=1, a={"rate": 80, "ttft_ms": 100}, b={"rate": 30, "ttft_ms": 700})
    return study_file(tmp_path, doc, "trimmed-demo")


def view_of(page) -> dict:
    """The step's data, as the page's scripts read it."""
    return page.evaluate("JSON.parse(document.getElementById('step-data').textContent)")


def session_of(page) -> Session:
    """The session of the participant's page (its token is in the URL)."""
    token = page.url.split("/p/", 1)[1].split("/", 1)[0]
    return Session.objects.get(token=token)


def wait_next(page, step: str, kind: str) -> None:
    """Wait until the server's next page is shown (a new step, or the same step turned into an end page)."""
    page.wait_for_selector(f'{READY}:not([data-step="{step}"][data-kind="{kind}"])', timeout=30000)


def to_first_trial(page) -> None:
    """From the consent page to the first trial: consent, the environment check (it submits by itself), the
    instructions."""
    for _ in range(3):
        page.wait_for_selector(READY)
        step, kind = page.get_attribute("#step", "data-step"), page.get_attribute("#step", "data-kind")
        if kind == "consent":
            page.locator('[data-answer="accept"]').click()
        elif kind != "environment":
            page.locator('[data-answer="continue"]').click()
        wait_next(page, step, kind)
    assert page.get_attribute("#step", "data-kind") == "trial"


def trial_answer(page, view: dict) -> str:
    """What an attentive participant answers (they read the question and compare the streams they saw)."""
    t = view["trial"]
    trial = Trial.objects.get(session=session_of(page), index=t["index"])
    if trial.attention:
        if t["type"] == "afc":
            return "a" if trial.spec["order"][0] == str(trial.spec["expected"]).upper() else "b"
        return str(trial.spec["expected"])
    if t["type"] == "rating" and (t.get("scale") or {}).get("type") == "slider":
        return "73"
    return {"acceptability": "yes", "rating": "4", "afc": "a", "reading": "done"}[t["type"]]


def check_completed(session: Session) -> None:
    """The session of a participant who completed the trimmed demo at 1,100 px as an attentive participant
    answers it (the questionnaire as test_participant.py and test_engines_pages.py fill it): all of it stored."""
    session.refresh_from_db()
    assert session.state == Session.State.COMPLETED
    trials = Trial.objects.filter(session=session)
    assert not trials.filter(status=Trial.Status.PENDING).exists()
    answers = {a.trial_id: a for a in Answer.objects.filter(session=session, key="trial")}
    assert len(answers) == trials.count() and Answer.objects.filter(session=session, key="consent").count() == 1
    for trial in trials:
        a = answers[trial.pk]
        assert 0 < a.response_ms < 30000
        if trial.attention:
            assert a.value["attention_passed"] is True
        if trial.kind == "reading":
            assert 0 < a.value["reading_ms"] < 30000
    assert session.flags == [] and session.environment["device"] == "desktop"
    assert session.environment["refresh_hz"] >= 50 and session.environment["viewport"]["width"] == 1100
    q = Answer.objects.get(session=session, key="questionnaire").value
    assert q["native_language"] == "other:Cantonese" and q["reading_habits"] == 4
    assert q["assistants"] == ["chatgpt", "deepseek"]
