"""Writes of the dashboard: create or update a study from its text, change its state, copy, share, preview.

Validation first (every problem with its path, nothing written), then one call into ``studyapp.services``.
A study file that arrives through the browser may not name trace files on the server's disk: the server
would read (and reveal the existence of) arbitrary paths. Such studies are loaded with ``manage.py load_study``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction

from dashboard.access import EDITOR, VIEWER
from studyapp import events, services
from studyapp.design import studyfile
from studyapp.design.studyfile import Problem, StudyFileError
from studyapp.models import Session, Study, StudyMember

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
ACTIONS = {  # action: (new state, states it may start from)
    "open": (Study.State.OPEN, {Study.State.DRAFT, Study.State.PAUSED}),
    "pause": (Study.State.PAUSED, {Study.State.OPEN}),
    "close": (Study.State.CLOSED, {Study.State.OPEN, Study.State.PAUSED}),
}


class ActionRefused(Exception):
    """A state change or copy that cannot be done; the message says why (shown to the researcher)."""


def _trace_file_problems(node: Any, path: list) -> list[Problem]:
    out: list[Problem] = []
    if isinstance(node, dict):
        trace = node.get("trace")
        if isinstance(trace, dict) and "file" in trace:
            out.append(Problem(studyfile.format_path([*path, "trace", "file"]),
                               "trace files cannot be uploaded through the dashboard: use a bundled trace, or "
                               "load the study with manage.py load_study"))
        for key, value in node.items():
            out.extend(_trace_file_problems(value, [*path, key]))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.extend(_trace_file_problems(value, [*path, i]))
    return out


def study_text_validate(text: str) -> dict:
    """The validated study document of ``text``; ``StudyFileError`` lists every problem with its path."""
    doc = studyfile.parse_yaml(text, "study file")
    refused = _trace_file_problems(doc, [])
    if refused:
        raise StudyFileError(studyfile.sort_problems([*refused, *studyfile.schema_problems(doc)]))
    problems = studyfile.validate(doc, base_dir=None)
    if problems:
        raise StudyFileError(problems)
    return doc


def study_create(*, text: str, owner) -> Study:
    """A new study from its file text, owned by ``owner``; refuses an id that is taken."""
    doc = study_text_validate(text)
    if Study.objects.filter(slug=doc["id"]).exists():
        raise StudyFileError([Problem("id", f"a study with the id {doc['id']!r} already exists: choose another id")])
    study, created = services.study_load(doc=doc, owner=owner)
    if not created:  # created by someone else between the check and the load
        raise StudyFileError([Problem("id", f"a study with the id {doc['id']!r} already exists: choose another id")])
    return study


def study_update(*, study: Study, text: str) -> Study:
    """A new version of ``study`` from edited text; the id must stay the same (sessions keep their plans)."""
    doc = study_text_validate(text)
    if doc["id"] != study.slug:
        raise StudyFileError([Problem("id", f"must stay {study.slug!r}: to start a new study, copy this one")])
    updated, _ = services.study_load(doc=doc, owner=study.owner)
    events.study_changed(updated.pk)
    return updated


def study_action(*, study: Study, action: str) -> Study:
    """Open, pause or close; a transition that makes no sense is refused (closing is final: copy to rerun)."""
    if action not in ACTIONS:
        raise ActionRefused(f"unknown action {action!r}")
    state, sources = ACTIONS[action]
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.state not in sources:
            raise ActionRefused(f"a {locked.state} study cannot be {state}")
        study = services.study_set_state(study=locked, state=state)
        events.study_changed(study.pk)
    return study


def study_copy(*, study: Study, slug: str, by) -> Study:
    """A new draft study with the same spec under ``slug``, owned by ``by`` (no sessions, no members)."""
    if not SLUG.match(slug or ""):
        raise ActionRefused("the new id must be a lowercase slug (a-z, 0-9, '-', '_'; at most 63 characters)")
    doc = copy.deepcopy(study.spec)
    doc["id"] = slug
    with transaction.atomic():
        if Study.objects.filter(slug=slug).exists():
            raise ActionRefused(f"a study with the id {slug!r} already exists")
        new, created = services.study_load(doc=doc, owner=by)
        if not created:
            raise ActionRefused(f"a study with the id {slug!r} already exists")
    return new


def study_share(*, study: Study, username: str, role: str) -> StudyMember:
    """Give ``username`` the role ``editor`` or ``viewer`` on ``study`` (changing an existing role)."""
    if role not in (EDITOR, VIEWER):
        raise ActionRefused(f"role: must be {EDITOR} or {VIEWER}")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ActionRefused(f"no user {username!r}")
    if user.pk == study.owner_id:
        raise ActionRefused(f"{username} owns {study.slug}")
    member, _ = StudyMember.objects.update_or_create(study=study, user=user, defaults={"role": role})
    return member


def study_unshare(*, study: Study, username: str) -> int:
    return StudyMember.objects.filter(study=study, user__username=username).delete()[0]


def preview_start(*, study: Study, language: str, earlier: list[str]) -> Session:
    """A new preview session (never counted or analysed); the researcher's earlier previews (their ``earlier``
    tokens) are discarded with everything they recorded."""
    for old in Session.objects.filter(token__in=earlier, study=study, preview=True):
        services.session_preview_discard(session=old)
    session, _ = services.session_enter(study=study, panel={}, language=language, preview=True)
    return session
