"""The requests of serving-trace files, measured by the stream core, for scoring (nothing is stored).

Reads any file ``import_traces`` reads (``playback.core.importers``: vLLM bench, GenAI-Perf, AIPerf, SGLang, LLMPerf,
SSE captures, PaceLab JSONL), computes each stream's metrics (``playback.core.metrics``) and hands them to
``analysis.stats.scoring`` by the names the model uses. A file that records only summaries (no stream to measure) is
refused, naming it. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.stats import score_arrays
from analysis.stats.scoring import Requests, requests_from_metrics
from playback.core import importers, metrics


class TraceInputError(ValueError):
    """A trace file that cannot be scored; ``str()`` names the file (and the request and field, if known)."""


@dataclass
class Loaded:
    requests: Requests = field(default_factory=Requests.empty)  # columns (``scoring.Requests``)
    files: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_requests(paths: Sequence[str | Path], model: Mapping[str, Any], fmt: str | None = None,
                  fast: bool = True) -> Loaded:
    """Every request of every file (directories expanded), measured; raises ``TraceInputError``. ``fast``: files of
    per-request arrays are measured from their arrays (``analysis.stats.score_arrays``),
    the rest through the importer."""
    out = Loaded()
    try:
        files = importers.expand_paths(paths)
    except OSError as exc:
        raise TraceInputError(str(exc)) from None
    if not files:
        raise TraceInputError(f"{', '.join(map(str, paths))}: no trace files found")
    for f in files:
        if not f.exists():
            raise TraceInputError(f"{f}: no such file")
        if fast:
            try:
                found = fmt or importers.detect(f)
                requests, skipped = score_arrays.load(f, found, dict(model))
            except (score_arrays.NotFast, importers.TraceFormatError, OSError):
                pass
            else:
                out.requests = Requests.concat([out.requests, requests]) if len(out.requests) else requests
                out.files.append({"path": str(f), "format": found, "requests": len(requests)})
                if skipped:
                    out.notes.append(f"{f.name}: skipped {skipped} failed requests (a recorded error, no text or "
                                     f"TTFT 0)")
                continue
        try:
            result = importers.load(f, fmt)
        except importers.TraceFormatError as exc:
            raise TraceInputError(str(exc)) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise TraceInputError(f"{f}: cannot read it ({exc})") from None
        if not result.streams:
            raise TraceInputError(f"{f}: {result.format} file with no per-request streams to measure "
                                  f"({'; '.join(result.notes) or 'summary only'})")
        measured = [metrics.compute(s) for s in result.streams]
        prompts = [s.meta.prompt for s in result.streams]
        found_requests = Requests.of(requests_from_metrics(model, measured, prompts))
        out.requests = Requests.concat([out.requests, found_requests]) if len(out.requests) else found_requests
        out.files.append({"path": str(f), "format": result.format, "requests": len(result.streams)})
        out.notes += [f"{f.name}: {n}" for n in dict.fromkeys(result.notes)]
    return out
