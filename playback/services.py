"""Writes of stored streams: importing traces, saving stimuli."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from playback import importers, metrics
from playback.importers.base import ImportResult
from playback.models import Stimulus, Trace
from playback.stream import Stream


@dataclass
class ImportOutcome:
    created: int = 0
    duplicates: int = 0
    trace_ids: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _seed_hash(fmt: str, seed: dict[str, Any]) -> str:
    canonical = json.dumps({"format": fmt, "seed": seed}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _rows(result: ImportResult, by) -> list[Trace]:
    rows = []
    for stream in result.streams:
        rows.append(
            Trace(
                content_hash=stream.content_hash(),
                kind=Trace.Kind.STREAM,
                format=result.format,
                source_file=Path(result.path).name,
                stream_key=stream.id,
                model_name=stream.meta.model,
                tokenizer=stream.meta.tokenizer,
                language=stream.meta.language,
                data=stream.to_obj(),
                metrics=metrics.compute(stream).as_dict(),
                notes=list(stream.meta.notes),
                imported_by=by,
            )
        )
    for seed in result.seeds:
        data = asdict(seed)
        rows.append(
            Trace(
                content_hash=_seed_hash(result.format, data),
                kind=Trace.Kind.SEED,
                format=result.format,
                source_file=Path(result.path).name,
                stream_key=seed.id,
                model_name=seed.model,
                data=data,
                metrics={k: data[k] for k in ("ttft_ms", "tokens_per_s", "output_tokens", "e2e_ms")},
                notes=list(result.notes),
                imported_by=by,
            )
        )
    return rows


def traces_store(*, results: list[ImportResult], by=None) -> ImportOutcome:
    """Store parsed results atomically; a stream already stored (same content hash) is counted, not repeated."""
    outcome = ImportOutcome()
    rows: dict[str, Trace] = {}
    for result in results:
        outcome.notes.extend(result.notes)
        for row in _rows(result, by):
            rows.setdefault(row.content_hash, row)
    with transaction.atomic():
        existing = set(Trace.objects.filter(content_hash__in=list(rows)).values_list("content_hash", flat=True))
        new = [r for h, r in rows.items() if h not in existing]
        Trace.objects.bulk_create(new, ignore_conflicts=True, batch_size=500)
        stored = dict(
            Trace.objects.filter(content_hash__in=list(rows)).values_list("content_hash", "id")
        )
    outcome.created = len(new)
    outcome.duplicates = sum(len(r.streams) + len(r.seeds) for r in results) - outcome.created
    outcome.trace_ids = [stored[h] for h in rows if h in stored]
    return outcome


def traces_import(*, paths: list[str | Path], format: str | None = None, by=None) -> ImportOutcome:
    """Parse every file (all or nothing) and store the result; raises ``TraceFormatError`` on a broken file."""
    results = importers.load_many([Path(p) for p in paths], format=format)
    return traces_store(results=results, by=by)


def stimulus_save(*, name: str, stream: Stream, spec: dict[str, Any], owner=None) -> Stimulus:
    """Create or replace the owner's stimulus called ``name``."""
    stim, _ = Stimulus.objects.update_or_create(
        owner=owner,
        name=name,
        defaults={
            "spec": spec,
            "stream": stream.to_obj(),
            "content_hash": stream.content_hash(),
            "metrics": metrics.compute(stream).as_dict(),
        },
    )
    return stim
