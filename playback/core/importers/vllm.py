"""vLLM serving-benchmark results: ``vllm bench serve --save-result [--save-detailed]`` and the older
``benchmarks/benchmark_serving.py``.

With ``--save-detailed`` the JSON holds per-request arrays (``ttfts`` in s, ``itls`` in s per SSE message,
``generated_texts``, ``output_lens``, ``errors``); chunk texts are not saved, so each request's pieces are
re-derived from its generated text (see ``rederive``). Without it the file holds run averages only: they
become a ``TimingSeed`` and nothing is replayable. SGLang's ``bench_serving`` writes the same arrays, so
``load_runs`` and ``streams_from_arrays`` are shared with ``sglang``. Request numbers in errors and notes are
array indices.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from playback.core.columns import StreamColumns, StreamList
from playback.core.importers.base import SUMMARY_ONLY_NOTE, ImportResult, TimingSeed, TraceFormatError
from playback.core.importers.rederive import (
    chunk_times_array,
    count,
    finite_times,
    first_of,
    guess_language,
    head_text,
    iter_json_documents,
    number,
    numbers,
    rederive_columns,
    tokenizer_for,
)
from playback.core.stream import StreamMeta

REQUIRED_ARRAYS = ("ttfts", "itls", "generated_texts", "output_lens")
OPTIONAL_ARRAYS = ("errors", "input_lens")


def has_arrays(doc: dict[str, Any]) -> bool:
    return any(k in doc for k in REQUIRED_ARRAYS)


def _check_arrays(path: Path, arrays: dict[str, Any], where_prefix: str) -> None:
    """Every per-request array present (the optional ones may be absent), a list, as long as ``ttfts``."""
    for name in REQUIRED_ARRAYS:
        if name not in arrays:
            raise TraceFormatError(path, where_prefix, name, "missing (the other per-request arrays are present)")
        if not isinstance(arrays[name], list):
            raise TraceFormatError(path, where_prefix, name, f"must be a list, got {type(arrays[name]).__name__}")
    n = len(arrays["ttfts"])
    for name in (*REQUIRED_ARRAYS, *OPTIONAL_ARRAYS):
        value = arrays.get(name)
        if value is None and name in OPTIONAL_ARRAYS:
            continue
        if not isinstance(value, list):
            raise TraceFormatError(path, where_prefix, name, f"must be a list, got {type(value).__name__}")
        if len(value) != n:
            raise TraceFormatError(path, where_prefix, name, f"has {len(value)} entries but ttfts has {n}")


@dataclass
class _Requests:
    """A run's requests to import (array index, text, chunk times in ms, recorded output tokens), in order, and
    the numbers of those skipped: marked failed by the benchmark, or with no text or TTFT 0."""

    index: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    times: list[np.ndarray] = field(default_factory=list)
    lens: list[int | None] = field(default_factory=list)
    marked: list[int] = field(default_factory=list)
    empty: list[int] = field(default_factory=list)


def _requests(path: Path, arrays: dict[str, Any], where_prefix: str) -> _Requests:
    """Each request checked, in order (the first broken one raises, naming it and the field); the ``itls``
    entries are consumed (set to ``None``) as they become chunk times, to keep peak memory down."""
    errors = arrays.get("errors")
    ttfts, itls, texts, lens = (arrays[k] for k in REQUIRED_ARRAYS)
    out = _Requests()
    for i in range(len(ttfts)):
        where = f"{where_prefix} request {i}".strip()
        if errors is not None and errors[i]:
            out.marked.append(i)
            continue
        ttft = number(ttfts[i], path, where, "ttfts")
        text = texts[i]
        if text is not None and not isinstance(text, str):
            raise TraceFormatError(path, where, "generated_texts", f"must be a string, got {type(text).__name__}")
        if not text or ttft == 0:
            out.empty.append(i)
            continue
        gaps = numbers(itls[i], path, where, "itls")
        out.lens.append(None if lens[i] is None else count(lens[i], path, where, "output_lens"))
        out.times.append(finite_times(chunk_times_array(ttft, gaps), path, where, "itls"))
        itls[i] = None
        out.index.append(i)
        out.texts.append(text)
    return out


def streams_from_arrays(
    path: Path,
    fmt: str,
    arrays: dict[str, Any],
    *,
    model: str,
    tokenizer_model: str,
    id_prefix: str,
    where_prefix: str,
) -> tuple[StreamList, list[str]]:
    """Streams from per-request arrays (vLLM/SGLang layout), skipping requests the benchmark marked failed.

    A request is failed when its ``errors`` entry is non-empty, its generated text is empty, or its TTFT is
    0 (how both benchmarks record a request that never produced text). Anything else that is malformed raises.
    The ``itls`` entries are consumed (set to ``None``) as they are used, to keep peak memory down. Each distinct
    text is tokenised once, all in batches, and the streams are held in columns (``playback.core.columns``),
    each built as a ``Stream`` when it is read.
    """
    _check_arrays(path, arrays, where_prefix)
    tok, tok_notes = tokenizer_for(tokenizer_model or model)
    source = f"{fmt}:{path.name}"
    req = _requests(path, arrays, where_prefix)
    streams = StreamList()
    languages: dict[str, str] = {}
    derived = rederive_columns(req.texts, req.times, req.lens, tok)
    for i, text, times, out, (cuts, tokens, extra) in zip(req.index, req.texts, req.times, req.lens, derived,
                                                           strict=True):
        notes = (
            *tok_notes,
            f"pieces re-derived from generated_text with tokenizer {tok.name} over {len(times)} recorded chunks",
            *extra,
        )
        language = languages.get(text)
        if language is None:
            language = languages[text] = guess_language(text)
        meta = StreamMeta(source=source, model=model, tokenizer=tok.name, language=language, notes=notes)
        streams.append(StreamColumns(text, cuts, times, tokens, meta, f"{id_prefix}{i}", out).check())
    marked, empty = req.marked, req.empty
    notes: list[str] = []
    label = f"{where_prefix}: " if where_prefix else ""
    if marked:
        notes.append(f"{label}skipped {len(marked)} requests with a recorded error: {first_of(marked)}")
    if empty:
        notes.append(f"{label}skipped {len(empty)} failed requests (no text or TTFT 0): {first_of(empty)}")
    if tok_notes:
        notes.extend(f"{label}{t}" for t in tok_notes)
    return streams, notes


def _optional_number(doc: dict[str, Any], key: str, path: Path, where: str) -> float | None:
    value = doc.get(key)
    return None if value is None else number(value, path, where, key)


class VllmImporter:
    name = "vllm"
    description = "vLLM `vllm bench serve --save-result [--save-detailed]` / benchmark_serving.py result JSON"

    def sniff(self, head: bytes, path: Path) -> bool:
        text = head_text(head)
        if not text.startswith("{") or '"experiments"' in text or '"service_kind"' in text:
            return False
        if any(m in text for m in ('"sharegpt_output_len"', '"random_range_ratio"', '"mean_e2e_latency_ms"')):
            return False  # SGLang
        has_timing = '"ttfts"' in text or '"mean_ttft_ms"' in text
        return has_timing and any(m in text for m in ('"model_id"', '"tokenizer_id"', '"mean_e2el_ms"'))

    def load(self, path: Path) -> ImportResult:
        # several runs when written with --append-result
        return load_runs(path, self.name, model_of=lambda doc: str(doc.get("model_id") or doc.get("model") or ""),
                         arrays_of=lambda doc: doc if has_arrays(doc) else None,
                         tokenizer_of=lambda doc, model: str(doc.get("tokenizer_id") or model),
                         summary_why="saved without --save-detailed: no per-request ttfts/itls/generated_texts")


def load_runs(path: Path, fmt: str, *, model_of: Callable[[dict[str, Any]], str],
              arrays_of: Callable[[dict[str, Any]], dict[str, Any] | None],
              tokenizer_of: Callable[[dict[str, Any], str], str], summary_why: str) -> ImportResult:
    """Every run of a vLLM- or SGLang-style result file (one JSON document per run): its per-request arrays as
    streams, or, where it has none (``arrays_of`` gives None), its averages as one timing seed saying
    ``summary_why``. The formats differ only in where they keep the model, the arrays and the tokenizer."""
    path = Path(path)
    result = ImportResult(format=fmt, path=str(path))
    for r, doc, several in iter_json_documents(path):
        where = f"run {r}" if several else ""
        if not isinstance(doc, dict):
            raise TraceFormatError(path, where, "", f"expected a JSON object, got {type(doc).__name__}")
        model = model_of(doc)
        id_prefix = f"{fmt}:{r}:" if several else f"{fmt}:"
        arrays = arrays_of(doc)
        if arrays is None:
            add_summary_only(result, path, doc, where, id_prefix, model, summary_why)
            continue
        streams, notes = streams_from_arrays(path, fmt, arrays, model=model, tokenizer_model=tokenizer_of(doc, model),
                                             id_prefix=id_prefix, where_prefix=where)
        result.streams.extend(streams)
        result.notes.extend(notes)
    return result


def add_summary_only(result: ImportResult, path: Path, doc: dict[str, Any], where: str, id_prefix: str,
                     model: str, why: str) -> None:
    """Record a run without per-request arrays as one timing seed, with a note saying why it cannot be replayed
    (shared by the vLLM and SGLang importers)."""
    result.seeds.append(summary_seed(path, doc, result.format, where, f"{id_prefix}run", model))
    result.notes.append(f"{where + ': ' if where else ''}{SUMMARY_ONLY_NOTE} ({why})")


def summary_seed(path: Path, doc: dict[str, Any], fmt: str, where: str, seed_id: str, model: str) -> TimingSeed:
    """Run averages as a seed. ``tokens_per_s`` is the per-request decode rate 1000 / mean TPOT, not the
    run's output throughput (which adds up concurrent requests)."""
    e2e_key = "mean_e2el_ms" if "mean_e2el_ms" in doc else "mean_e2e_latency_ms"
    ttft = _optional_number(doc, "mean_ttft_ms", path, where)
    tpot = _optional_number(doc, "mean_tpot_ms", path, where)
    itl = _optional_number(doc, "mean_itl_ms", path, where)
    e2e = _optional_number(doc, e2e_key, path, where)
    if ttft is None and itl is None and e2e is None:
        raise TraceFormatError(path, where, "mean_ttft_ms", "missing, and no per-request arrays either")
    completed = _optional_number(doc, "completed", path, where)
    total_out = _optional_number(doc, "total_output_tokens", path, where)
    out = round(total_out / completed) if completed and total_out is not None else None
    return TimingSeed(
        id=seed_id,
        ttft_ms=ttft,
        tokens_per_s=1000.0 / tpot if tpot else None,
        output_tokens=out,
        e2e_ms=e2e,
        itl_mean_ms=itl,
        model=model,
        source=f"{fmt}:{path.name}",
    )


IMPORTER = VllmImporter()
