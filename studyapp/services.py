"""Writes of the study layer: loading studies, entering, moving through and leaving a session, answers.

Every write that a participant triggers goes through ``session_submit``: it locks the session row, checks that
the submission is for the current step, stores the answer under the client's idempotency key and advances the
step, all in one transaction; the caller acknowledges only after it returns (after commit). A retry with the
same ``client_id`` finds the stored answer and is acknowledged again, never stored twice.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from playback.models.delivery import Playback
from playback.services.delivery import playback_create
from studyapp import events
from studyapp.design import counterbalance
from studyapp.design import plan as design
from studyapp.journey import responses
from studyapp.journey import steps as journey
from studyapp.journey.responses import ResponseError
from studyapp.models import Answer, Decline, PageVisit, Session, Study, Trial, TrialPlayback

LIVE_STATES = (Session.State.ACTIVE,)


class StudyUnavailable(Exception):
    """A participant cannot enter: ``reason`` is one of not_open, paused, closed, full, missing_panel_id."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class SubmitRefused(Exception):
    """A submission that changes nothing; ``code`` for the client (stale_step, invalid, not_active, not_shown)."""

    def __init__(self, code: str, message: str, current_step: int | None = None) -> None:
        self.code = code
        self.message = message
        self.current_step = current_step
        super().__init__(message)


@dataclass
class SubmitResult:
    client_id: str
    step: int
    state: str
    next_step: int
    duplicate: bool = False
    flags: list[str] = field(default_factory=list)


# --- studies -------------------------------------------------------------------------------------------------


def spec_hash(doc: dict) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _title(doc: dict) -> str:
    title = doc.get("title", doc["id"])
    return journey.localize(title, "en") if isinstance(title, dict) else str(title)


@transaction.atomic
def study_load(*, doc: dict, owner) -> tuple[Study, bool]:
    """Create or update the study ``doc['id']`` (already validated); atomic. Returns (study, created).

    A study that already has sessions keeps them: their plans were fixed when they started.
    """
    study = Study.objects.select_for_update().filter(slug=doc["id"]).first()
    if study is None:
        return Study.objects.create(slug=doc["id"], title=_title(doc), owner=owner, spec=doc,
                                    spec_hash=spec_hash(doc)), True
    if study.spec_hash != spec_hash(doc):
        study.spec, study.spec_hash, study.title = doc, spec_hash(doc), _title(doc)
        study.version += 1
        study.save()
    return study, False


def study_set_state(*, study: Study, state: str) -> Study:
    if state not in Study.State.values:
        raise ValueError(f"state: must be one of {', '.join(Study.State.values)}")
    Study.objects.filter(pk=study.pk).update(state=state)
    study.refresh_from_db()
    return study


# --- entering ------------------------------------------------------------------------------------------------


def _preview_session(study: Study, language: str) -> Session:
    language = language if language in study.spec.get("languages", ["en"]) else study.spec["languages"][0]
    group = design.groups(study.spec)[0].id
    seed = secrets.randbits(62)
    plan = journey.build_plan(study.spec, seed=seed, group=group, row=0, language=language)
    with transaction.atomic():
        session = Session.objects.create(study=study, token=secrets.token_urlsafe(32), group=group, seed=seed,
                                         language=language, preview=True, excluded=True,
                                         plan={"steps": plan.steps, "row": 0, "version": study.version})
        _create_trials(session, plan)
    return session


def session_preview_discard(*, session: Session) -> None:
    """Delete a preview session and everything it recorded (previews record no data)."""
    if session.preview:
        session.delete()


def _group_counts(study: Study) -> tuple[dict[str, int], dict[str, int]]:
    rows = (Session.objects.filter(study=study, preview=False).values("group")
            .annotate(done=Count("id", filter=Q(state=Session.State.COMPLETED)),
                      live=Count("id", filter=Q(state__in=LIVE_STATES))))
    return {r["group"]: r["done"] for r in rows}, {r["group"]: r["live"] for r in rows}


def _create_trials(session: Session, plan: journey.Plan) -> None:
    step_of = {s["trial"]: i for i, s in enumerate(plan.steps) if s["kind"] == "trial"}
    Trial.objects.bulk_create([
        Trial(session=session, index=t.index, step=step_of[t.index], block=t.block, kind=t.type,
              condition=t.condition, spec=t.to_dict(), practice=t.practice, attention=bool(t.attention_check))
        for t in plan.trials
    ])


def session_enter(*, study: Study, panel: dict[str, str], language: str = "en",
                  preview: bool = False) -> tuple[Session, bool]:
    """The session for this entry: the existing one for a returning panel id, else a new one in the least
    filled group. Raises ``StudyUnavailable``. Returns (session, created).

    A ``preview`` session (a researcher trying the study, in any state) is never counted, assigned to a quota
    or analysed; ``session_preview_discard`` deletes it."""
    if preview:
        return _preview_session(study, language), True
    pid = responses.panel_value(panel.get("participant")) or None
    if pid:
        existing = Session.objects.filter(study=study, panel_pid=pid).first()
        if existing:
            return existing, False
    if study.state != Study.State.OPEN:
        raise StudyUnavailable("paused" if study.state == Study.State.PAUSED else
                               "closed" if study.state == Study.State.CLOSED else "not_open")
    recruitment = study.spec.get("recruitment") or {}
    if recruitment.get("require_params") and not pid:
        raise StudyUnavailable("missing_panel_id")
    language = language if language in study.spec.get("languages", ["en"]) else study.spec["languages"][0]
    limits = study.spec.get("limits") or {}
    quotas = limits.get("quotas") or {}
    groups = [g.id for g in design.groups(study.spec)]
    try:
        with transaction.atomic():
            Study.objects.select_for_update().get(pk=study.pk)  # one assignment at a time per study
            done, live = _group_counts(study)
            group = counterbalance.assign_group(groups, done, live, quotas=quotas.get("groups"),
                                                overall_quota=quotas.get("overall"))
            if group is None:
                raise StudyUnavailable("full")
            row = done.get(group, 0) + live.get(group, 0)
            seed = secrets.randbits(62)
            plan = journey.build_plan(study.spec, seed=seed, group=group, row=row, language=language)
            session = Session.objects.create(
                study=study, token=secrets.token_urlsafe(32), panel_pid=pid,
                panel_study_id=responses.panel_value(panel.get("study")),
                panel_session_id=responses.panel_value(panel.get("session")),
                group=group, seed=seed, language=language, plan={"steps": plan.steps, "row": row,
                                                                  "version": study.version})
            _create_trials(session, plan)
            events.study_changed(study.pk)
    except IntegrityError:
        if pid:  # the same panel id entered twice at once: the other request created it
            return Session.objects.get(study=study, panel_pid=pid), False
        raise
    return session, True


# --- re-entering ----------------------------------------------------------------------------------------------

_CROCKFORD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "ABCDEFGHJKMNPQRSTVWXYZ0123456789")


def resume_code(session: Session) -> str:
    """The code a participant is shown on their pages, to continue the session in another browser.

    Derived from the session token with the site's secret (nothing stored): 8 characters of Crockford's
    base32 (no I, L, O, U), shown as ``XXXX-XXXX``; 40 bits, so guessing one over HTTP is hopeless.
    """
    digest = salted_hmac("pacelab.studyapp.resume_code", session.token, algorithm="sha256").digest()
    code = base64.b32encode(digest[:5]).decode().translate(_CROCKFORD)
    return f"{code[:4]}-{code[4:]}"


def _normalised_code(code: str) -> str:
    """What a participant typed, the way Crockford's alphabet reads it (case, dashes, spaces, I/L as 1, O as 0)."""
    cleaned = "".join(ch for ch in str(code or "").upper() if ch.isalnum())
    cleaned = cleaned.translate(str.maketrans("ILO", "110"))
    return f"{cleaned[:4]}-{cleaned[4:]}" if len(cleaned) == 8 else cleaned


def session_may_resume(session: Session, *, cookie_token: str | None = None, panel_session_id: str = "",
                       code: str = "") -> bool:
    """Whether an entry that names this session's panel id proves it is the same participant.

    The panel id alone proves nothing (it is in exports and bots' ids are predictable). Any one of these does:
    the browser's cookie for this session; the panel's per-attempt session id (Prolific's ``SESSION_ID``) equal
    to the one the session started with; the resume code shown on the participant's pages.
    """
    if cookie_token and hmac.compare_digest(str(cookie_token), session.token):
        return True
    given = responses.panel_value(panel_session_id)
    if session.panel_session_id and given and hmac.compare_digest(given, session.panel_session_id):
        return True
    return bool(code) and hmac.compare_digest(_normalised_code(code), resume_code(session))


# --- where the participant is --------------------------------------------------------------------------------


def session_touch(*, session: Session) -> Session:
    """Note activity, expire the session if its time limit passed, materialise an adaptive trial that is due,
    and record entering the current page."""
    now = timezone.now()
    step = session.plan["steps"][session.step] if session.state == Session.State.ACTIVE else {}
    if "adaptive" in step:
        from studyapp import adaptive_trials

        with transaction.atomic():
            session = Session.objects.select_for_update().select_related("study").get(pk=session.pk)
            adaptive_trials.materialize(session)
    limit = (session.study.spec.get("limits") or {}).get("time_limit_min")
    if session.state == Session.State.ACTIVE and limit and now - session.started_at > timedelta(minutes=limit):
        Session.objects.filter(pk=session.pk, state=Session.State.ACTIVE).update(
            state=Session.State.TIMED_OUT, finished_at=now)
        session.refresh_from_db()
        return session
    Session.objects.filter(pk=session.pk).update(last_seen_at=now)
    if session.state == Session.State.ACTIVE:
        kind = session.plan["steps"][session.step]["kind"]
        if not PageVisit.objects.filter(session=session, step=session.step, left_at__isnull=True).exists():
            PageVisit.objects.create(session=session, step=session.step, kind=kind, entered_at=now)
    return session


def trial_show(*, session: Session, trial: Trial) -> list[Playback]:
    """Playbacks for showing ``trial`` now. Showing it again before an answer (a refresh or reconnect while the
    stream played) records an interruption: the trial starts again from the beginning."""
    from studyapp import stimuli

    now = timezone.now()
    with transaction.atomic():
        t = Trial.objects.select_for_update().get(pk=trial.pk)
        if t.plays > 0 and t.status == Trial.Status.PENDING:
            t.interruptions = [*t.interruptions, {"at": now.isoformat(), "after_plays": t.plays}]
        t.plays += 1
        t.shown_at = t.shown_at or now
        t.save(update_fields=["plays", "interruptions", "shown_at"])
    playbacks = []
    for position, (spec, stream) in enumerate(stimuli.trial_streams(session.study, t)):
        playback = playback_create(stream=stream, mode=spec.delivery, config=spec.render_config())
        TrialPlayback.objects.create(trial=t, playback=playback, position=position, showing=t.plays)
        playbacks.append(playback)
    return playbacks


# --- submissions ---------------------------------------------------------------------------------------------


def _finish(session: Session, state: str) -> None:
    session.state = state
    session.finished_at = timezone.now()


def session_submit(*, session_token: str, client_id: str, step: Any, payload: dict) -> SubmitResult:
    """Store the answer to the current step and move on; idempotent by ``client_id``."""
    if not isinstance(client_id, str) or not 8 <= len(client_id) <= 64 or not client_id.isprintable():
        raise SubmitRefused("invalid", "client_id: must be a string of 8 to 64 printable characters")
    if not isinstance(payload, dict):
        raise SubmitRefused("invalid", "payload: must be an object")
    try:
        responses.no_nul(payload)
    except ResponseError as exc:
        raise SubmitRefused("invalid", str(exc)) from None
    if isinstance(step, bool) or not isinstance(step, int):
        raise SubmitRefused("invalid", f"step: must be an integer, got {step!r}")
    with transaction.atomic():
        session = Session.objects.select_for_update().select_related("study").get(token=session_token)
        prior = Answer.objects.filter(session=session, client_id=client_id).first()
        if prior is not None:
            return SubmitResult(client_id, prior.step, session.state, session.step, duplicate=True)
        if session.state != Session.State.ACTIVE:
            raise SubmitRefused("not_active", f"this session is {session.state}", session.step)
        if step != session.step:
            raise SubmitRefused("stale_step", f"step: {step!r} is not the current step ({session.step})",
                                session.step)
        current = session.plan["steps"][session.step]
        try:
            result = _apply(session, current, client_id, payload)
        except ResponseError as exc:
            raise SubmitRefused("invalid", str(exc), session.step) from None
        events.study_changed(session.study_id)
        if result.state == Session.State.DECLINED:
            return result
        PageVisit.objects.filter(session=session, step=result.step, left_at__isnull=True).update(
            left_at=timezone.now())
        session.save()
    return result


def _store(session: Session, client_id: str, key: str, value: Any, *, trial: Trial | None = None,
           rt: float | None = None, comment: str = "") -> None:
    Answer.objects.create(session=session, trial=trial, step=session.step, key=key, client_id=client_id,
                          value=value, response_ms=rt, comment=comment)


def _apply(session: Session, current: dict, client_id: str, payload: dict) -> SubmitResult:
    kind = current["kind"]
    step = session.step
    spec = session.study.spec
    flags: list[str] = []
    if kind == "consent":
        consent = payload.get("consent")
        if not isinstance(consent, bool):
            raise ResponseError("consent: must be true or false")
        # The consent page checks the device against the study's limits before anything is recorded: a device
        # the study refuses ends here, like a decline, whichever button was pressed.
        refusal = None
        if payload.get("environment") is not None:
            refusal = responses.environment_refusal(spec.get("limits") or {}, responses.environment(payload))
        if not consent or refusal:
            # Declining ends politely and keeps nothing beyond the fact of the decline (and why).
            reason = Decline.Reason.DEVICE if refusal else Decline.Reason.DECLINED
            _forget_before_consent(session, reason)
            return SubmitResult(client_id, step, Session.State.DECLINED, step, flags=[reason])
        _store(session, client_id, "consent", True)
    elif kind == "environment":
        env = responses.environment(payload)
        session.environment = env
        _store(session, client_id, "environment", env)
        refusal = responses.environment_refusal(spec.get("limits") or {}, env)
        if refusal:
            session.flags = [*session.flags, f"screened out: {refusal}"]
            _finish(session, Session.State.SCREENED_OUT)
            return SubmitResult(client_id, step, session.state, step, flags=[refusal])
    elif kind == "trial":
        ended = _apply_trial(session, current, client_id, payload, flags)
        if ended is not None:
            return ended
    elif kind == "questionnaire":
        answers = responses.questionnaire_answers(spec.get("questionnaire") or [], payload.get("answers"))
        _store(session, client_id, "questionnaire", answers)
    elif kind in ("instructions", "block_intro", "message", "break", "debrief"):
        _store(session, client_id, kind, {"continue": True})
    else:
        raise ResponseError(f"step {kind!r} takes no submission")
    session.step = step + 1
    if session.plan["steps"][session.step]["kind"] == "complete":
        _finish(session, Session.State.COMPLETED)
    elif "adaptive" in session.plan["steps"][session.step]:
        from studyapp import adaptive_trials

        adaptive_trials.materialize(session)  # the next level, or skip what a finished procedure leaves
    return SubmitResult(client_id, step, session.state, session.step, flags=flags)


def _apply_trial(session: Session, current: dict, client_id: str, payload: dict,
                 flags: list[str]) -> SubmitResult | None:
    """Store a trial's answer (and its attention check's verdict, into ``flags``); a result when it ends the
    session (too many failed checks), else None."""
    step, spec = session.step, session.study.spec
    trial = Trial.objects.select_for_update().get(session=session, index=current["trial"])
    if trial.plays == 0:
        raise SubmitRefused("not_shown", "this trial has not been shown yet", step)
    value = responses.trial_value(trial.spec, payload)
    rt = responses.response_ms(payload)
    text = responses.comment(trial.spec, payload)
    passed = responses.attention_passed(trial.spec, value)
    if passed is not None:
        value["attention_passed"] = passed
    _store(session, client_id, "trial", value, trial=trial, rt=rt, comment=text)
    trial.status, trial.answered_at = Trial.Status.ANSWERED, timezone.now()
    trial.save(update_fields=["status", "answered_at"])
    if passed is False:
        flags.append(f"failed attention check {trial.spec['attention_check']}")
        session.flags = [*session.flags, flags[-1]]
        rules = spec.get("attention_checks") or {}
        failures = sum(1 for f in session.flags if f.startswith("failed attention check"))
        if rules.get("on_fail") == "screen_out" and failures > int(rules.get("max_failures", 0)):
            _finish(session, Session.State.SCREENED_OUT)
            return SubmitResult(client_id, step, session.state, step, flags=flags)
    return None


def _forget_before_consent(session: Session, reason: str) -> None:
    """Before consent nothing identifying is kept: the session goes (panel ids with it), a ``Decline`` row says
    only that someone left, and why."""
    if not session.preview:  # a researcher's preview records nothing, not even a decline
        Decline.objects.create(study=session.study, reason=reason)
    session.delete()


def session_consented(session: Session) -> bool:
    return Answer.objects.filter(session=session, key="consent").exists()


def session_withdraw(*, session: Session) -> Session | None:
    """Withdraw at any step: the study says whether the data are deleted or kept and excluded. Before consent
    the session is forgotten like a decline and ``None`` is returned."""
    policy = (session.study.spec.get("recruitment") or {}).get("withdrawal", "keep_excluded")
    with transaction.atomic():
        s = Session.objects.select_for_update().select_related("study").get(pk=session.pk)
        if s.state != Session.State.ACTIVE:
            return s
        if not s.preview and not session_consented(s):
            _forget_before_consent(s, Decline.Reason.WITHDRAWN)
            events.study_changed(s.study_id)
            return None
        if policy == "delete":
            s.answers.all().delete()
            s.trials.all().delete()
            s.environment = {}
        s.excluded = True
        _finish(s, Session.State.WITHDRAWN)
        s.save()
        events.study_changed(s.study_id)
    return s


def sessions_expire(*, now=None) -> int:
    """Mark active sessions past their study's time limit as timed out (the sweep; returns how many)."""
    now = now or timezone.now()
    n = 0
    for study in Study.objects.filter(sessions__state=Session.State.ACTIVE).distinct():
        limit = (study.spec.get("limits") or {}).get("time_limit_min")
        if limit:
            expired = Session.objects.filter(study=study, state=Session.State.ACTIVE,
                                             started_at__lt=now - timedelta(minutes=limit)).update(
                state=Session.State.TIMED_OUT, finished_at=now)
            if expired:
                events.study_changed(study.pk)
            n += expired
    return n
