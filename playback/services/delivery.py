"""Writes (and the one authorising read) of playback delivery: create a playback, find it for a socket, record
its start, end and paint batches, and summarise its timing fidelity.

The consumer calls each of these once per message through ``database_sync_to_async``.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from pacelab.tokens import token_shaped
from playback.core import fidelity, pacer
from playback.core.protocol import MODES, Clock, PaintEntry
from playback.core.stream import Stream
from playback.models.delivery import PaintReport, Playback

RENDER_KEYS = ("render", "indicator", "pacer", "fidelity_bound_ms")


def _check_config(config: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(config, dict):
        raise ValueError("config: must be an object")
    if config.get("pacer", pacer.DEFAULT_PACER) not in pacer.PACERS:
        raise ValueError(f"config.pacer: {config['pacer']!r} is not one of {pacer.PACERS} "
                         "(absolute and naive are for benchmarks)")
    bound = config.get("fidelity_bound_ms")
    if bound is not None and (not isinstance(bound, int | float) or isinstance(bound, bool) or bound <= 0):
        raise ValueError("config.fidelity_bound_ms: must be a positive number")
    return dict(config)


def playback_create(
    *, stream: Stream | dict[str, Any], mode: str = "prefetch", config: dict[str, Any] | None = None,
    owner=None, session_key: str = "", stimulus=None,
) -> Playback:
    """A new playback of ``stream`` with a fresh unguessable token; ``ValueError`` for a bad mode or config."""
    if mode not in MODES:
        raise ValueError(f"mode: {mode!r} is not one of {MODES}")
    obj = stream.to_obj() if isinstance(stream, Stream) else Stream.from_obj(stream).to_obj()
    return Playback.objects.create(stream=obj, mode=mode, config=_check_config(config or {}), owner=owner,
                                   session_key=session_key or "", stimulus=stimulus)


def playback_for_socket(*, token: str, user=None, session_key: str | None = None) -> Playback | None:
    """The playback this socket may drive, or ``None`` (unknown token, or someone else's playback: the caller
    must not tell the two apart)."""
    playback = Playback.objects.filter(token=token).first() if token_shaped(token) else None
    if playback is None:
        return None
    if playback.owner_id is not None and (user is None or not user.is_authenticated or user.pk != playback.owner_id):
        return None
    if playback.session_key and playback.session_key != (session_key or ""):
        return None
    return playback


def playback_started(*, playback: Playback) -> None:
    Playback.objects.filter(pk=playback.pk).update(started_at=timezone.now())


def playback_ended(*, playback: Playback, reason: str, result: pacer.PaceResult | None = None) -> None:
    """Record how the trial ended and, for live delivery, the server's send lateness."""
    pacing: dict[str, Any] = {}
    if result is not None:
        late = result.lateness()
        pacing = {"sent": result.sent, "p50_ms": fidelity.percentile(late, 50) if late else None,
                  "p99_ms": fidelity.percentile(late, 99) if late else None, "max_ms": max(late) if late else None}
    Playback.objects.filter(pk=playback.pk).update(ended_at=timezone.now(), end_reason=reason, pacing=pacing)


def paint_batch_record(
    *, playback: Playback, batch: int, entries: list[PaintEntry] | tuple[PaintEntry, ...], clock: Clock | None
) -> dict[str, Any]:
    """Store one paint batch once; a repeated batch number is acknowledged again without storing anything.

    Returns the acknowledgement: ``{"batch", "stored", "entries"}`` (``stored`` is false for a repeat).
    """
    defaults = {
        "entries": [e.to_obj() for e in entries],
        "clock_offset_ms": clock.offset_ms if clock else None,
        "clock_uncertainty_ms": clock.uncertainty_ms if clock else None,
        "clock_rtt_ms": clock.rtt_ms if clock else None,
    }
    try:
        with transaction.atomic():
            report, created = PaintReport.objects.get_or_create(playback=playback, batch=batch, defaults=defaults)
    except IntegrityError:  # a concurrent retry won the race
        report, created = PaintReport.objects.get(playback=playback, batch=batch), False
    return {"batch": batch, "stored": created, "entries": len(report.entries)}


def playback_fidelity(*, playback: Playback, bound_ms: float | None = None) -> fidelity.Fidelity:
    """The fidelity summary over every stored paint batch of a playback."""
    bound = bound_ms or playback.config.get("fidelity_bound_ms") or fidelity.DEFAULT_BOUND_MS
    entries = [e for report in playback.paint_reports.order_by("batch") for e in report.entries]
    return fidelity.summarize(entries, bound_ms=bound)
