"""The planner page: an editor starts a plan of a study before it opens, the page follows its progress, and the
finished plan shows the expected headline intervals and power; viewers read it, strangers get 404."""

import pytest
from django.urls import reverse

from analysis import plans
from analysis.models import PlanRun
from analysis.stats import e2e_designs
from dashboard import services
from studyapp import services as study_services


@pytest.fixture
def rate_study(researchers):
    doc = e2e_designs.rate_ttft_study(rates=[6, 12, 24, 48], repeats=2)
    doc["id"] = "alice-plan"
    study, _ = study_services.study_load(doc=doc, owner=researchers["alice"])
    services.study_share(study=study, username="vera", role="viewer")
    return study


def url(study, route) -> str:
    return reverse(f"dashboard:{route}", kwargs={"slug": study.slug})


@pytest.mark.django_db
def test_an_editor_plans_a_study_and_the_page_shows_the_table_when_done(rate_study, client_of):
    alice, vera = client_of("alice"), client_of("vera")
    page = alice.get(url(rate_study, "plan")).content.decode()
    assert 'id="no-plan"' in page and 'id="plan-start"' in page
    assert 'id="plan-start"' not in vera.get(url(rate_study, "plan")).content.decode()  # a viewer only reads
    assert vera.post(url(rate_study, "plan_start"), {"participants": "10", "runs": "1"}).status_code == 403

    response = alice.post(url(rate_study, "plan_start"), {"participants": "10", "runs": "1"})
    assert response.status_code == 302
    plan = PlanRun.objects.get(study=rate_study)
    assert plan.state == PlanRun.State.QUEUED and plan.participants == [10] and plan.runs == 1
    page = alice.get(url(rate_study, "plan")).content.decode()
    assert 'id="plan-bar"' in page and 'data-finished="0"' in page
    assert alice.get(url(rate_study, "plan_status")).json()["state"] == "queued"
    # asking again while it is under way returns the same plan
    alice.post(url(rate_study, "plan_start"), {"participants": "10", "runs": "1"})
    assert PlanRun.objects.filter(study=rate_study).count() == 1

    seen = []
    plan = plans.plan_execute(plan_id=plan.pk, processes=1, echo=lambda done, total: seen.append((done, total)))
    assert plan.state == PlanRun.State.DONE, plan.error
    assert seen == [(0, 1), (1, 1)]
    status = vera.get(url(rate_study, "plan_status")).json()
    assert status | {"plan": None} == {"plan": None, "state": "done", "done": 1, "total": 1, "percent": 100.0,
                                       "finished": True, "error": ""}
    page = vera.get(url(rate_study, "plan")).content.decode()
    for ttft in (200, 1500):
        assert f"with 10 participants the 75 % point at ttft={ttft} is known to ±" in page
    assert 'id="plan-power"' in page and "ttft=200 / ttft=1500" in page


@pytest.mark.django_db
def test_the_plan_page_reads_in_chinese_and_refuses_a_bad_form_with_its_reason(rate_study, client_of):
    alice = client_of("alice")
    page = alice.get(url(rate_study, "plan"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "规划参与人数" in page and "Plan participants" not in page
    response = alice.post(url(rate_study, "plan_start"), {"participants": "ten", "runs": "1"})
    assert response.status_code == 400 and 'id="plan-form-error"' in response.content.decode()
    assert alice.post(url(rate_study, "plan_start"), {"participants": "10", "runs": "0"}).status_code == 400
    assert not PlanRun.objects.filter(study=rate_study).exists()


@pytest.mark.django_db
def test_strangers_get_404_from_the_plan_pages(rate_study, client_of):
    bob = client_of("bob")
    for route in ("plan", "plan_status"):
        assert bob.get(url(rate_study, route)).status_code == 404
    assert bob.post(url(rate_study, "plan_start"), {"participants": "10", "runs": "1"}).status_code == 404
