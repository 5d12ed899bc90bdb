"""Fault-test fixtures: a short live-delivery study and a scripted participant that can switch servers."""

import sys
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

sys.path.insert(0, str(Path(__file__).resolve().parent))  # fault_client

from study_builders import study as build_study  # noqa: E402

from studyapp import services  # noqa: E402
from studyapp.models import Study  # noqa: E402


def live_study_doc(slug: str) -> dict:
    """Consent, environment, instructions, two live-paced trials of 60 characters at 20 and 40 chars/s, debrief."""
    doc = build_study(id=slug, render={"delivery": "live"},
                      factors=[{"name": "rate", "sets": "rate", "levels": [20, 40]}],
                      blocks=[{"id": "accept", "type": "main", "stimulus": "coffee", "design": {"factorial": ["rate"]},
                               "task": {"type": "acceptability", "question": {"en": "OK?", "zh-hans": "可以吗？"}}}])
    doc["stimuli"]["coffee"]["max_chars"] = 60
    return doc


@pytest.fixture
def live_study(transactional_db) -> Study:
    owner = get_user_model().objects.create_user(f"faults-{uuid.uuid4().hex[:6]}", password="x" * 12)
    study, _ = services.study_load(doc=live_study_doc("faults-live"), owner=owner)
    return services.study_set_state(study=study, state="open")


@pytest.fixture
def fault_env(service_env) -> dict[str, str]:
    service_env["CONN_MAX_AGE"] = "0"  # see tests/studyapp/bots/test_runner.py
    return service_env
