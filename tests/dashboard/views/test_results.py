"""Running and reading the analysis from the dashboard: start, progress, cancel, results with figures, downloads,
and the live progress socket; strangers get 404 (and 4404 on the socket) everywhere."""

import csv
import io
import re
import uuid
import zipfile
from urllib.parse import urlencode

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.urls import reverse
from journey_driver import run_to_end
from study_builders import study as build

from analysis import events, messages, services
from analysis.models import AnalysisRun
from analysis.stats import pipeline
from pacelab.asgi import application
from studyapp import services as study_services
from studyapp.models import Study, Trial

FAST = pipeline.Options(n_boot=30, deviance_samples=0, individual_max=0)


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    settings.PACELAB_TASK_QUEUE = f"test-unconsumed-{uuid.uuid4().hex[:8]}"  # nothing here may reach a worker
    return settings.VAR_DIR


def complete_sessions(study: Study, n: int) -> None:
    study_services.study_set_state(study=study, state="open")
    study.refresh_from_db()
    for i in range(n):
        session, _ = study_services.session_enter(study=study, panel={"participant": f"R{i}"})
        run_to_end(session)


@pytest.fixture
def analysed(study):
    complete_sessions(study, 3)
    return study


def url(study, route, **query) -> str:
    base = reverse(f"dashboard:{route}", kwargs={"slug": study.slug})
    return base + ("?" + urlencode(query) if query else "")


def start(client, study) -> AnalysisRun:
    response = client.post(url(study, "analysis_start"))
    assert response.status_code == 302
    run_id = int(re.search(r"\?run=(\d+)$", response["Location"]).group(1))
    return AnalysisRun.objects.get(pk=run_id)


@pytest.fixture
def done_run(analysed, client_of):
    run = start(client_of("alice"), analysed)
    run = services.analysis_run(run_id=run.pk, options=FAST)
    assert run.state == AnalysisRun.State.DONE, run.error
    return run


@pytest.mark.django_db
def test_an_editor_starts_a_run_and_the_status_follows_it_to_the_end(analysed, client_of):
    ed = client_of("ed")
    run = start(ed, analysed)
    assert run.state == AnalysisRun.State.QUEUED and run.study == analysed and run.requested_by.username == "ed"
    status = ed.get(url(analysed, "analysis_status", run=run.pk))
    assert status.json() == {"run": run.pk, "state": "queued", "stage": "", "percent": 0.0, "finished": False,
                             "error": ""}
    page = ed.get(url(analysed, "analysis", run=run.pk)).content.decode()
    assert f'data-ws-path="/ws/dashboard/{analysed.slug}/analysis/{run.pk}/"' in page
    assert 'id="analysis-bar"' in page and 'id="analysis-cancel"' in page
    seen = []
    services.analysis_run(run_id=run.pk, options=FAST, echo=lambda stage, percent: seen.append(percent))
    assert len(set(seen)) > 2 and seen == sorted(seen)
    assert ed.get(url(analysed, "analysis_status", run=run.pk)).json() | {"stage": ""} == {
        "run": run.pk, "state": "done", "stage": "", "percent": 100.0, "finished": True, "error": ""}
    assert start(ed, analysed).pk == run.pk  # unchanged data: the stored run


@pytest.mark.django_db
def test_the_results_page_shows_key_numbers_and_embeds_every_figure(done_run, analysed, client_of):
    vera = client_of("vera")  # a viewer may read results
    html = vera.get(url(analysed, "analysis")).content.decode()  # the latest run without ?run=
    assert 'id="thresholds"' in html and 'id="predictors"' in html
    thresholds = re.search(r'<table class="data" id="thresholds">.*?</table>', html, re.S).group(0)
    pooled = done_run.results["psychometric"][0]["pooled"]
    assert f"{pooled['threshold']:.2f}" in thresholds
    svgs = sorted(f.name for f in done_run.files.all() if f.name.endswith(".svg"))
    shown = re.findall(r'<img src="([^"]+)"', html)
    assert len(svgs) >= 1 and len(shown) == len(svgs)
    for src in shown:
        response = vera.get(src.replace("&amp;", "&"))
        assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
        assert b"<svg" in b"".join(response.streaming_content)
        assert "'unsafe-inline'" in response["Content-Security-Policy"]  # matplotlib styles its SVG inline
    assert 'id="analysis-start"' not in html and 'id="analysis-cancel"' not in html  # a viewer runs nothing


@pytest.mark.django_db
def test_run_files_download_with_their_content_types(done_run, analysed, client_of):
    alice = client_of("alice")
    expected = {"report.html": "text/html; charset=utf-8", "results.json": "application/json",
                "methods.txt": "text/plain; charset=utf-8"}
    names = set(done_run.files.values_list("name", flat=True))
    pdf = next(n for n in names if n.endswith(".pdf"))
    png = next(n for n in names if n.endswith(".png"))
    for name, kind in [*expected.items(), (pdf, "application/pdf"), (png, "image/png")]:
        response = alice.get(url(analysed, "analysis_file", run=done_run.pk, name=name, download=1))
        assert response.status_code == 200 and response["Content-Type"] == kind, name
        assert response["Content-Disposition"].startswith("attachment;"), name
    report = b"".join(alice.get(url(analysed, "analysis_file", run=done_run.pk, name="report.html")).streaming_content)
    assert b"<svg" in report
    for bad in ("../../settings.py", "figures", "nope.txt", "/etc/passwd"):
        assert alice.get(url(analysed, "analysis_file", run=done_run.pk, name=bad)).status_code == 404, bad


@pytest.mark.django_db
def test_the_export_zip_has_one_trials_row_per_answered_trial(analysed, client_of):
    response = client_of("vera").get(url(analysed, "export"))
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == f'attachment; filename="{analysed.slug}-export.zip"'
    zf = zipfile.ZipFile(io.BytesIO(response.content))
    assert {"trials.csv", "participants.csv", "codebook.csv", "exclusions.json"} <= set(zf.namelist())
    rows = list(csv.DictReader(io.StringIO(zf.read("trials.csv").decode())))
    answered = Trial.objects.filter(session__study=analysed, status=Trial.Status.ANSWERED)
    assert len(rows) == answered.count() == 3 * 6
    assert sorted((int(r["participant"]), int(r["trial_index"])) for r in rows) == sorted(
        answered.values_list("session_id", "index"))
    codebook = client_of("vera").get(url(analysed, "codebook"))
    assert codebook["Content-Type"] == "text/csv; charset=utf-8"
    book = list(csv.DictReader(io.StringIO(codebook.content.decode())))
    assert {"trials", "participants"} == {r["table"] for r in book} and any(r["column"] == "response" for r in book)


@pytest.mark.django_db
def test_a_queued_run_can_be_cancelled_by_an_editor_not_by_a_viewer(analysed, client_of):
    run = start(client_of("alice"), analysed)
    assert client_of("vera").post(url(analysed, "analysis_cancel"), {"run": run.pk}).status_code == 403
    assert client_of("vera").post(url(analysed, "analysis_start")).status_code == 403
    run.refresh_from_db()
    assert run.state == AnalysisRun.State.QUEUED
    assert client_of("ed").post(url(analysed, "analysis_cancel"), {"run": run.pk}).status_code == 302
    run.refresh_from_db()
    assert run.state == AnalysisRun.State.CANCELLED and run.finished_at is not None


@pytest.mark.django_db
def test_another_studys_run_is_404_through_my_study_and_strangers_get_404(done_run, analysed, researchers, client_of):
    bob_study, _ = study_services.study_load(doc=build(id="bob-results"), owner=researchers["bob"])
    bob_run = AnalysisRun.objects.create(study=bob_study, data_version="x")
    alice, bob = client_of("alice"), client_of("bob")
    for name, query in [("analysis", {"run": bob_run.pk}), ("analysis_status", {"run": bob_run.pk}),
                        ("analysis_file", {"run": bob_run.pk, "name": "report.html"})]:
        assert alice.get(url(analysed, name, **query)).status_code == 404, name
    assert alice.post(url(analysed, "analysis_cancel"), {"run": bob_run.pk}).status_code == 404
    for name, query in [("analysis", {"run": done_run.pk}), ("analysis_status", {"run": done_run.pk}),
                        ("analysis_file", {"run": done_run.pk, "name": "report.html"}), ("export", {}),
                        ("codebook", {})]:
        assert bob.get(url(analysed, name, **query)).status_code == 404, name
    assert bob.post(url(analysed, "analysis_start")).status_code == 404
    assert AnalysisRun.objects.filter(study=analysed).count() == 1


@pytest.mark.django_db
def test_every_form_on_the_analysis_page_carries_a_csrf_token_and_needs_it(analysed, researchers):
    alice = Client(enforce_csrf_checks=True)
    alice.force_login(researchers["alice"])
    assert alice.post(url(analysed, "analysis_start")).status_code == 403
    assert not AnalysisRun.objects.exists()
    html = alice.get(url(analysed, "analysis")).content.decode()
    forms = re.findall(r'<form[^>]*method="post".*?</form>', html, re.S)
    assert forms and all('name="csrfmiddlewaretoken"' in f for f in forms)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    assert alice.post(url(analysed, "analysis_start"), {"csrfmiddlewaretoken": token}).status_code == 302
    run = AnalysisRun.objects.get()
    html = alice.get(url(analysed, "analysis", run=run.pk)).content.decode()
    forms = re.findall(r'<form[^>]*method="post".*?</form>', html, re.S)
    assert all('name="csrfmiddlewaretoken"' in f for f in forms)
    actions = {re.search(r'action="([^"]+)"', f).group(1) for f in forms}
    assert {url(analysed, "analysis_start"), url(analysed, "analysis_cancel")} <= actions


# --- the live progress socket ------------------------------------------------------------------------------------


async def socket(client: Client, path: str, origin: str = "http://127.0.0.1"):
    headers = [(b"origin", origin.encode())]
    if settings.SESSION_COOKIE_NAME in client.cookies:
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect()
    return communicator, connected


@pytest.mark.django_db(transaction=True)
async def test_the_progress_socket_sends_the_state_then_each_notification(study, client_of, db_thread):
    run = await AnalysisRun.objects.acreate(study=study, data_version="v1")
    path = f"/ws/dashboard/{study.slug}/analysis/{run.pk}/"
    communicator, connected = await socket(await sync_to_async(client_of)("vera"), path)
    assert connected
    first = await communicator.receive_json_from(timeout=5)
    assert first == {"type": "progress", "run": run.pk, "state": "queued", "stage": "", "percent": 0.0,
                     "finished": False, "error": ""}
    for percent in (12.5, 40.0):
        await sync_to_async(events.analysis_progress)(run.pk, state="running", stage="psychometric", percent=percent)
        msg = await communicator.receive_json_from(timeout=5)
        assert (msg["state"], msg["stage"], msg["percent"], msg["finished"]) == ("running", "psychometric", percent,
                                                                                 False)
    await communicator.send_json_to({"type": "refresh"})
    assert (await communicator.receive_json_from(timeout=5))["state"] == "queued"  # the row, read again
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_progress_socket_refuses_strangers_anonymous_and_foreign_runs_with_4404(study, researchers,
                                                                                       client_of, db_thread):
    run = await AnalysisRun.objects.acreate(study=study, data_version="v1")
    bob_study, _ = await sync_to_async(study_services.study_load)(doc=build(id="bob-ws"), owner=researchers["bob"])
    bob_run = await AnalysisRun.objects.acreate(study=bob_study, data_version="v1")
    cases = [(await sync_to_async(client_of)("bob"), f"/ws/dashboard/{study.slug}/analysis/{run.pk}/"),
             (Client(), f"/ws/dashboard/{study.slug}/analysis/{run.pk}/"),
             (await sync_to_async(client_of)("alice"), f"/ws/dashboard/{study.slug}/analysis/{bob_run.pk}/"),
             (await sync_to_async(client_of)("alice"), f"/ws/dashboard/{study.slug}/analysis/999999/")]
    for client, path in cases:
        communicator, connected = await socket(client, path)
        assert connected, path
        assert await communicator.receive_output(timeout=3) == {"type": "websocket.close", "code": 4404}, path
        await communicator.disconnect()


def run_file_url(study, run_id: int, name: str) -> str:
    return reverse("dashboard:analysis_run_file", kwargs={"slug": study.slug, "run": run_id, "name": name})


@pytest.mark.django_db
def test_the_report_opened_from_the_dashboard_links_to_its_own_figures(done_run, analysed, client_of):
    alice = client_of("alice")
    page = alice.get(url(analysed, "analysis", run=done_run.pk)).content.decode()
    report_url = run_file_url(analysed, done_run.pk, "report.html")
    assert f'href="{report_url}"' in page
    report = b"".join(alice.get(report_url).streaming_content).decode()
    links = re.findall(r'<a href="(figures/[^"]+)"', report)
    assert links
    base = report_url.rsplit("/", 1)[0] + "/"
    for link in links:  # what the browser resolves the report's relative links to
        response = alice.get(base + link)
        assert response.status_code == 200, link
    assert alice.get(run_file_url(analysed, done_run.pk, "../../settings.py")).status_code == 404
    assert client_of("bob").get(report_url).status_code == 404  # a stranger
    assert alice.get(run_file_url(analysed, done_run.pk + 999, "report.html")).status_code == 404


@pytest.mark.django_db
def test_the_progress_stage_and_a_runs_error_read_in_the_pages_language(analysed, client_of):
    alice = client_of("alice")
    run = start(alice, analysed)
    AnalysisRun.objects.filter(pk=run.pk).update(stage="psychometric", state=AnalysisRun.State.RUNNING)
    zh = alice.get(url(analysed, "analysis", run=run.pk), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert '<span id="analysis-stage">心理测量函数</span>' in zh
    assert 'data-stage-figures="图表与报告"' in zh  # the live updates' labels
    en = alice.get(url(analysed, "analysis", run=run.pk), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert '<span id="analysis-stage">Psychometric functions</span>' in en
    AnalysisRun.objects.filter(pk=run.pk).update(state=AnalysisRun.State.CANCELLED, error=messages.superseded(41))
    zh = alice.get(url(analysed, "analysis", run=run.pk), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "分析运行 41" in zh and "superseded" not in zh


@pytest.mark.django_db
def test_the_html_report_is_written_in_the_requesters_language(analysed, client_of):
    alice = client_of("alice")
    response = alice.post(url(analysed, "analysis_start"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    run = AnalysisRun.objects.get(pk=int(re.search(r"\?run=(\d+)$", response["Location"]).group(1)))
    assert run.language == "zh-hans"
    run = services.analysis_run(run_id=run.pk, options=FAST)
    html = (services.run_dir(run) / "report.html").read_text()
    assert '<html lang="zh-hans">' in html and "排除" in html
    english = services.analysis_run(run_id=services.analysis_request(study=analysed, force=True,
                                                                     enqueue_task=False).pk, options=FAST)
    english_html = (services.run_dir(english) / "report.html").read_text()
    assert '<html lang="en">' in english_html and "排除" not in english_html


@pytest.mark.django_db
def test_the_results_tables_show_strata_and_a_dash_for_unranked_metrics(done_run, analysed, client_of):
    results = {**done_run.results,
               "pairwise": [{"block": "b", "preferences": [
                   {"a": "x", "b": "y", "stratum": "passage=tea", "n": 4, "share_a": 0.5, "ci_low": 0.1,
                    "ci_high": 0.9},
                   {"a": "x", "b": "y", "stratum": "passage=subway", "n": 4, "share_a": 0.25, "ci_low": 0.0,
                    "ci_high": 0.7}]}],
               "predictors": [{"kind": "rating", "table": [{"metric": "ttft_ms", "rank": None, "spearman": None}]}]}
    AnalysisRun.objects.filter(pk=done_run.pk).update(results=results)
    html = client_of("alice").get(url(analysed, "analysis", run=done_run.pk)).content.decode()
    prefs = re.search(r'<table class="data" id="preferences">.*?</table>', html, re.S).group(0)
    assert "passage=tea" in prefs and "passage=subway" in prefs
    predictors = re.search(r'<table class="data" id="predictors">.*?</table>', html, re.S).group(0)
    assert "None" not in predictors and "—" in predictors


@pytest.mark.django_db
def test_a_threshold_beyond_the_tested_levels_says_so_in_the_table(done_run, analysed, client_of):
    entry = done_run.results["psychometric"][0]
    pooled = {**entry["pooled"], "beyond_levels": "below"}
    conditions = [{k: v for k, v in c.items() if k != "beyond_levels"} for c in entry.get("conditions") or []]
    results = {**done_run.results, "psychometric": [{**entry, "pooled": pooled, "conditions": conditions}]}
    AnalysisRun.objects.filter(pk=done_run.pk).update(results=results)
    alice = client_of("alice")
    html = alice.get(url(analysed, "analysis", run=done_run.pk)).content.decode()
    table = re.search(r'<table class="data" id="thresholds">.*?</table>', html, re.S).group(0)
    assert table.count('class="muted beyond"') == 1 and "below the levels tested" in table
    zh = alice.get(url(analysed, "analysis", run=done_run.pk), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "低于所测水平" in zh


@pytest.mark.django_db
def test_an_open_threshold_interval_shows_as_unbounded_not_as_a_number(done_run, analysed, client_of):
    entry = done_run.results["psychometric"][0]
    pooled = {**entry["pooled"], "threshold_ci_95": [None, 21.5]}  # stored null: the answers leave it open below
    results = {**done_run.results, "psychometric": [{**entry, "pooled": pooled}]}
    AnalysisRun.objects.filter(pk=done_run.pk).update(results=results)
    html = client_of("alice").get(url(analysed, "analysis", run=done_run.pk)).content.decode()
    table = re.search(r'<table class="data" id="thresholds">.*?</table>', html, re.S).group(0)
    assert "−∞ – 21.50" in table and "None" not in table


@pytest.fixture(scope="module")
def lognormal_results():
    """A log-normal population of 30 bots (thresholds around 12 tokens/s) through the pipeline."""

    from sim_population import SPEC, frames

    return pipeline.run(frames(30, seed=2), None, spec=SPEC,
                        options=pipeline.Options(n_boot=20, deviance_samples=0, cluster_groups=0))


@pytest.mark.django_db
def test_the_results_page_leads_with_the_level_at_which_75_percent_of_the_population_accept(
        done_run, analysed, client_of, lognormal_results):
    from sim_population import population, true_point

    from analysis.tables.headline import number

    AnalysisRun.objects.filter(pk=done_run.pk).update(results=lognormal_results)
    alice = client_of("alice")
    html = alice.get(url(analysed, "analysis", run=done_run.pk)).content.decode()
    section = re.search(r'<section id="headline">.*?</section>', html, re.S).group(0)
    assert html.index('id="headline"') < html.index("Who was analysed") < html.index('id="thresholds"')
    for row in lognormal_results["population"][0]["rows"]:
        point, lo, hi = (number(row[k]) for k in ("population_q", "population_q_ci_low", "population_q_ci_high"))
        assert f"{row['condition']}</code>: 75 % of the population accept from {point} tokens/s (95 % CI {lo} – {hi})" \
            in section
        assert f"{number(row['population_mu'])} tokens/s" in section and "log10 units (×1." in section
        assert f"{number(row['mean_individual_threshold'])} tokens/s" in section and "30 participants fitted" in section
        # the interval the page shows holds the population's true 75 % point (the bots' log-normal thresholds)
        shown = re.search(rf"{re.escape(row['condition'])}</code>: 75 % of the population accept from [0-9.]+ "
                          r"tokens/s \(95 % CI ([0-9.]+) – ([0-9.]+)\)", section)
        truth = true_point(population(), float(row["condition"].split("=")[1]))
        assert float(shown.group(1)) <= truth <= float(shown.group(2)), (row["condition"], truth, shown.group(0))
    for name in ("population median threshold", "SD between people",
                 "pooled curve: level where 75 % of all answers are yes", "pooled curve: midpoint (50 % of its rise)"):
        assert name in section
    assert "Levels were fitted on a log axis" in section and "perceived speed goes by ratios" in section
    zh = alice.get(url(analysed, "analysis", run=done_run.pk), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "的人群从" in zh and "人群阈值中位数" in zh and "水平在对数轴上拟合" in zh


@pytest.mark.django_db
def test_a_lapse_at_its_bound_is_flagged_on_the_results_page_with_what_to_try(done_run, analysed, client_of,
                                                                            lognormal_results):
    entry = lognormal_results["psychometric"][0]
    first = {**entry["conditions"][0], "lapse": 0.195, "at_bound": ["lapse"]}
    results = {**lognormal_results, "psychometric": [{**entry, "conditions": [first, *entry["conditions"][1:]]}]}
    AnalysisRun.objects.filter(pk=done_run.pk).update(results=results)
    html = client_of("alice").get(url(analysed, "analysis", run=done_run.pk)).content.decode()
    warning = re.search(r'<p class="warn bound-warning">(.*?)</p>', html, re.S).group(1)
    assert f"{first['condition']}: the lapse rate ended at 0.195, at its bound 0.2" in warning
    assert "more levels around the threshold" in warning and "log axis" not in warning  # it was on one already
