"""A researcher logs in, uploads the demo study, opens it and watches 20 bots arrive on the live dashboard:
real Daphne, Redis channel layer, headless Chromium; the page is never reloaded."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from dashboard.selectors import studies as selectors
from studyapp.bots import runner as bots
from studyapp.design import studyfile
from studyapp.models import Study

pytestmark = [pytest.mark.browser, pytest.mark.integration, pytest.mark.timeout(420)]

SLUG = "demo-perceived-speed"
N_BOTS = 20


class BotRun(threading.Thread):
    """Bots on their own event loop in a thread, so the test can watch the page meanwhile and stop them."""

    def __init__(self, config: bots.RunConfig) -> None:
        super().__init__(daemon=True)
        self.config = config
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task | None = None
        self.started_evt = threading.Event()

    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.ensure_future(bots.run(self.config))
        self.started_evt.set()
        try:
            await self.task
        except asyncio.CancelledError:
            pass

    def stop(self) -> None:
        self.started_evt.wait(5)
        if self.loop is not None and self.task is not None and not self.task.done():
            self.loop.call_soon_threadsafe(self.task.cancel)
        self.join(30)


def count(page, key: str) -> int:
    return int(page.locator(f'[data-count="{key}"]').inner_text(timeout=5_000))


def wait_until(page, predicate, timeout_s: float, what: str) -> None:
    """Poll from Python (the page's CSP forbids the eval that ``wait_for_function`` needs)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def researcher(django_user_model):
    return django_user_model.objects.create_user("rita", password="rita-watches-live-9")


def test_a_researcher_watches_bots_arrive_live(daphne_server, browser, screenshot_dir, researcher):
    page = browser.new_page(viewport={"width": 1400, "height": 1300})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{daphne_server}/accounts/login/?next=/dashboard/")
    page.fill('input[name="username"]', "rita")
    page.fill('input[name="password"]', "rita-watches-live-9")
    page.click('button[type="submit"]')
    page.wait_for_url(f"{daphne_server}/dashboard/")

    page.click('a[href="/dashboard/new/"]')
    page.set_input_files('input[name="file"]', str(studyfile.demo_study_path()))
    page.click('form.study-form button[type="submit"]')
    page.wait_for_url(f"{daphne_server}/dashboard/{SLUG}/")
    assert Study.objects.get(slug=SLUG).owner == researcher

    page.click('button[data-action="open"]')
    page.wait_for_url(f"{daphne_server}/dashboard/{SLUG}/")
    page.wait_for_selector('#study-state[data-state="open"]')
    page.wait_for_selector('#live-status[data-status="live"]', timeout=15_000)
    page.evaluate("window.__notReloaded = true")
    assert count(page, "started") == 0

    run = BotRun(bots.RunConfig(url=daphne_server, study=SLUG, n=N_BOTS, concurrency=N_BOTS, timeout_s=60))
    run.start()
    try:
        seen_started: list[int] = []
        wait_until(page, lambda: seen_started.append(count(page, "started")) or seen_started[-1] == N_BOTS, 90,
                   "every bot to have started")
        wait_until(page, lambda: count(page, "completed") >= 1 and page.locator("#median-trial").inner_text() != "—",
                   180, "a completed session")
        page.screenshot(path=str(screenshot_dir / "dashboard-live.png"), full_page=True)
        pushed = page.evaluate("window.__dashboard.snapshots")
    finally:
        run.stop()

    # The page follows the database: after the bots stop, its numbers converge to a fresh snapshot. The snapshot is
    # read again on every poll: cancelling the bots does not recall a request the server has already received, so
    # the database (and the page with it) may still move on after the stop.
    truth: dict = {}

    def page_shows_the_database() -> bool:
        truth.update(selectors.study_snapshot(Study.objects.get(slug=SLUG))["counts"])
        return (count(page, "started"), count(page, "completed")) == (truth["started"], truth["completed"])

    page.evaluate("window.__dashboard.ws.send(JSON.stringify({type: 'refresh'}))")
    try:
        wait_until(page, page_shows_the_database, 10, "the page to show the database's counts")
    except AssertionError as exc:
        shown = (count(page, "started"), count(page, "completed"))
        raise AssertionError(f"{exc}: the page shows {shown}, the database {truth}") from None
    assert seen_started == sorted(seen_started) and seen_started[0] < N_BOTS  # counts rose while we watched
    assert truth["started"] == N_BOTS and truth["completed"] >= 1
    assert pushed > 2  # many snapshots arrived over the socket ...
    assert page.evaluate("window.__notReloaded") is True  # ... into the same page, never reloaded
    groups = {row.get_attribute("data-group"): row for row in page.locator("#groups tbody tr").all()}
    assert set(groups) == {"delivery=prefetch", "delivery=live"}
    assert page.locator("#conditions tbody tr").count() > 0
    assert errors == []
    page.close()
