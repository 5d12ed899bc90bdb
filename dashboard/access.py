"""Who may do what with a study: the owner, editors and viewers; everyone else does not learn it exists.

Every dashboard view, export, API and websocket fetches its study through ``study_for``: a study the user has
no role in answers 404 exactly like a study that does not exist. A member whose role is too weak for the action
(a viewer trying to open a study) gets 403: they already know the study exists.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from studyapp.models import Study, StudyMember

OWNER = "owner"
EDITOR = StudyMember.Role.EDITOR.value
VIEWER = StudyMember.Role.VIEWER.value
ROLES = (OWNER, EDITOR, VIEWER)
ALLOWED = {"view": {OWNER, EDITOR, VIEWER}, "edit": {OWNER, EDITOR}, "own": {OWNER}}


def role_of(user, study: Study) -> str | None:
    """``owner``, ``editor``, ``viewer`` or ``None`` (no access; also for anonymous users)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if study.owner_id == user.pk:
        return OWNER
    return StudyMember.objects.filter(study=study, user=user).values_list("role", flat=True).first()


def can(role: str | None, need: str) -> bool:
    if need not in ALLOWED:
        raise ValueError(f"need: must be one of {', '.join(ALLOWED)}")
    return role in ALLOWED[need]


def study_for(user, slug: str, need: str = "view") -> Study:
    """The study ``slug`` if ``user`` may ``need`` it (view, edit or own), with ``.role`` set.

    Raises ``Http404`` when the user has no role (or the study does not exist) and ``PermissionDenied`` when
    the role is too weak."""
    study = Study.objects.select_related("owner").filter(slug=slug).first()
    role = role_of(user, study) if study is not None else None
    if role is None:
        raise Http404("no such study")
    if not can(role, need):
        raise PermissionDenied(f"a {role} may not do this")
    study.role = role
    return study


def study_id_for_socket(user, slug: str) -> int | None:
    """The id of a study the user may view, else ``None`` (the socket is refused without saying why)."""
    try:
        return study_for(user, slug, "view").pk
    except (Http404, PermissionDenied):
        return None
