"""The results page's "Download the perception model": the finished run's model file, for the study's viewers only."""

from urllib.parse import urlencode

import pytest
from django.urls import reverse
from model_results import results

from analysis.models import AnalysisRun  # noqa: E402
from analysis.stats import perception_model  # noqa: E402

pytestmark = pytest.mark.django_db


def url(study, route, **query) -> str:
    base = reverse(f"dashboard:{route}", kwargs={"slug": study.slug})
    return base + ("?" + urlencode(query) if query else "")


@pytest.fixture
def done(study):
    return AnalysisRun.objects.create(study=study, data_version="e" * 64, state=AnalysisRun.State.DONE,
                                      results=results())


def test_the_results_page_offers_the_model_and_a_viewer_downloads_a_valid_file(study, done, client_of):
    vera = client_of("vera")
    page = vera.get(url(study, "analysis", run=done.pk)).content.decode()
    assert 'id="download-model"' in page and f"model.json?run={done.pk}" in page
    response = vera.get(url(study, "perception_model", run=done.pk))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert f"run{done.pk}-model.json" in response["Content-Disposition"]
    model = response.json()
    perception_model.validate(model)
    assert model["provenance"]["analysis_run"] == done.pk and model["provenance"]["study"] == study.slug


def test_the_button_and_its_text_are_in_chinese(study, done, client_of):
    page = client_of("vera").get(url(study, "analysis", run=done.pk), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "下载感知模型（JSON）" in page.content.decode()


def test_a_stranger_gets_404(study, done, client_of):
    assert client_of("bob").get(url(study, "perception_model", run=done.pk)).status_code == 404


def test_a_run_without_a_population_fit_says_why(study, client_of):
    run = AnalysisRun.objects.create(study=study, data_version="f" * 64, state=AnalysisRun.State.DONE,
                                     results={"population": []})
    response = client_of("alice").get(url(study, "perception_model", run=run.pk))
    assert response.status_code == 409 and "population" in response.content.decode()
    page = client_of("alice").get(url(study, "analysis", run=run.pk)).content.decode()
    assert 'id="download-model"' not in page
