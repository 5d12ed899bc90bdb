"""Studies for the browser tests, set up the way a researcher sets them up: a study file loaded and opened, bots
that complete it, the researcher's login. Plain functions (no fixtures): each test module's fixtures call them.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from studyapp import services
from studyapp.bots import runner as bots
from studyapp.design import studyfile
from studyapp.models import Session, Study


def study_file(tmp_path: Path, doc: dict, name: str) -> dict:
    """``doc`` written as ``<name>.yaml`` (JSON is YAML) and read back as the researcher's study file is read."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return studyfile.load_study(path)


def open_study(doc: dict, owner) -> Study:
    """The study of ``doc`` loaded for ``owner`` and opened to participants."""
    study, _ = services.study_load(doc=doc, owner=owner)
    return services.study_set_state(study=study, state="open")


def without_panel_links(doc: dict) -> dict:
    """No end page may send the browser off the machine: the panel's return links are dropped."""
    for link in (doc.get("recruitment") or {}).values():
        if isinstance(link, dict):
            link.pop("url", None)
    return doc


def complete_with_bots(study: Study, base_url: str, n: int, **config) -> Study:
    """``n`` bots complete ``study`` over HTTP and the playback websocket of the server at ``base_url``, all at
    once (``config``: more bots.RunConfig fields). They run on a thread of their own: Playwright's loop owns this
    one."""
    out: list = []
    run = bots.RunConfig(url=base_url, study=study.slug, n=n, concurrency=n, timeout_s=60, **config)
    thread = threading.Thread(target=lambda: out.append(bots.run_sync(run)), daemon=True)
    thread.start()
    thread.join(240)
    assert out, "the bots did not finish"
    assert Session.objects.filter(study=study, state=Session.State.COMPLETED).count() == n
    study.refresh_from_db()
    return study


def log_in(page, base: str, username: str, password: str) -> None:
    """Log in on the login page and land on the dashboard."""
    page.goto(f"{base}/accounts/login/?next=/dashboard/")
    page.fill('input[name="username"]', username)
    page.fill('input[name="password"]', password)
    page.click('button[type="submit"]')
    page.wait_for_url(f"{base}/dashboard/")
