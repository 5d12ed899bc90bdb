"""Rebuilding stream pieces from a generated text and recorded chunk times.

vLLM, SGLang and AIPerf record *when* each streamed chunk (SSE message) arrived, and the whole generated text,
but not which text each chunk carried. To replay such a trace we cut the text into tokens with the model's
tokenizer and spread them over the recorded chunks, one piece per chunk, so the recorded cadence (TTFT, chunk
gaps, stalls) is kept exactly and only the split of text between chunks is reconstructed.

Distribution rule (the same for text units and for token counts):

- ``n >= chunks``: as even as possible, every chunk gets at least one (counts differ by at most one, the
  larger counts spread evenly along the stream).
- ``n < chunks``: the first and last unit sit on the first and last chunk (so TTFT and end time stay as
  recorded), the others are spread evenly between; chunks that get no unit stay as pieces with empty text
  (they still carry their share of the token count), so the chunk count and times are always preserved.

Token counts follow the recorded output token count when there is one (so ``sum(piece.tokens)`` equals it);
otherwise the tokenizer's count. The module also holds the small JSON readers and field checks the
benchmark-result importers share, so that every one reports a broken file the same way. No Django import.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Iterator, Sequence
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any

import ijson
import numpy as np

from playback.core import tokenizers
from playback.core.importers.base import TraceFormatError
from playback.core.stream import Piece
from playback.core.tokenizers import Tokenizer

FALLBACK_TOKENIZER = "char"


def spread(total: int, slots: int) -> list[int]:
    """How many of ``total`` items go to each of ``slots`` ordered slots (see the module rule)."""
    return np.diff(spread_bounds(total, slots)).tolist()


def spread_bounds(total: int, slots: int) -> np.ndarray:
    """The module rule as running bounds (``slots + 1`` of them, from 0 to ``total``): slot ``j`` gets the items
    ``bounds[j]:bounds[j + 1]``. ``spread`` gives the counts; one arithmetic for both import paths."""
    if slots <= 0:
        raise ValueError(f"slots must be >= 1, got {slots}")
    if total < 0:
        raise ValueError(f"total must be >= 0, got {total}")
    if total >= slots:
        return np.arange(slots + 1, dtype=np.int64) * total // slots
    bounds = np.zeros(slots + 1, dtype=np.int64)
    if total == 1:
        bounds[1:] = 1
    elif total > 1:
        step = (slots - 1) / (total - 1)
        at = np.floor(np.arange(total, dtype=np.int64) * step + 0.5).astype(np.int64)
        np.bincount(at, minlength=slots).cumsum(out=bounds[1:])
    return bounds


def _notes(tok: Tokenizer, units: int, chunks: int, recorded: int | None) -> list[str]:
    """What is approximate in a re-derivation: fewer tokens (or recorded output tokens) than chunks."""
    notes = []
    if units < chunks:
        notes.append(f"tokenizer {tok.name} gave {units} tokens for {chunks} recorded chunks: "
                     f"{chunks - units} chunks carry no text")
    if recorded is not None and recorded < chunks:
        notes.append(f"recorded {recorded} output tokens for {chunks} chunks: some carry 0 tokens")
    return notes


def rederive(
    text: str,
    chunk_times_ms: Sequence[float],
    output_tokens: int | None,
    tokenizer: str | Tokenizer,
) -> tuple[list[Piece], list[str]]:
    """One piece per recorded chunk, carrying the tokens of ``text`` the chunk is taken to have delivered.

    Returns the pieces and notes on anything approximate (fewer tokens than chunks). Joined piece text
    equals ``text``; piece times are ``chunk_times_ms``; piece token counts sum to ``output_tokens`` when
    given. ``ValueError`` for times that are negative, not finite or going backwards.
    """
    chunks = len(chunk_times_ms)
    if chunks == 0:
        raise ValueError("no chunk times")
    if not all(map(math.isfinite, chunk_times_ms)) or min(chunk_times_ms) < 0:
        raise ValueError(f"chunk times must be finite and >= 0, got {list(chunk_times_ms)!r}")
    if any(map(operator.gt, chunk_times_ms, chunk_times_ms[1:])):
        raise ValueError("chunk times go backwards")
    tok = tokenizers.get(tokenizer) if isinstance(tokenizer, str) else tokenizer
    units = tok.pieces(text) if text else []

    unit_counts = spread(len(units), chunks)
    notes = _notes(tok, len(units), chunks, output_tokens)
    token_total = len(units) if output_tokens is None else output_tokens
    token_counts = spread(token_total, chunks)

    if len(units) == chunks:
        texts = units
    else:
        bounds = list(accumulate(unit_counts, initial=0))
        texts = ["".join(units[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]
    times = map(float, chunk_times_ms)
    return list(map(Piece, texts, times, repeat("content"), token_counts)), notes


def rederive_columns(
    texts: Sequence[str],
    chunk_times: Sequence[np.ndarray],
    output_tokens: Sequence[int | None],
    tok: Tokenizer,
) -> list[tuple[np.ndarray, np.ndarray, list[str]]]:
    """``rederive`` for many requests at once, in columns: ``(cuts, tokens, notes)`` per request, where piece
    ``k`` is ``text[cuts[k]:cuts[k + 1]]`` with ``tokens[k]`` tokens at ``chunk_times[k]`` (checked by the caller:
    finite, >= 0, never falling). The same split as ``rederive``; each distinct text is tokenised once, and all
    of them in batches (``Tokenizer.piece_ends``), with no string per token."""
    index: dict[str, int] = {}
    which = [index.setdefault(t, len(index)) for t in texts]
    ends, counts = tok.piece_ends(list(index))
    firsts = np.concatenate(([0], np.cumsum(counts)))
    bounds_of: dict[int, np.ndarray] = {}  # per distinct text: 0 and its piece ends (int32: a quarter of the bytes)
    out: list[tuple[np.ndarray, np.ndarray, list[str]]] = []
    for k, times, recorded in zip(which, chunk_times, output_tokens, strict=True):
        ends0 = bounds_of.get(k)
        if ends0 is None:
            ends0 = bounds_of[k] = np.concatenate(([0], ends[firsts[k] : firsts[k + 1]])).astype(np.int32)
        units, chunks = len(ends0) - 1, len(times)
        notes = _notes(tok, units, chunks, recorded)
        cuts = ends0 if units == chunks else ends0[spread_bounds(units, chunks)]
        token_bounds = spread_bounds(units if recorded is None else recorded, chunks)
        token_counts = (token_bounds[1:] - token_bounds[:-1]).astype(np.int32)
        out.append((cuts, token_counts, notes))
    return out


def chunk_times_array(ttft_s: float, gaps_s: Sequence[float], scale_ms: float = 1000.0) -> np.ndarray:
    """``chunk_times_ms`` as a numpy array: the same additions in the same order, so the same floats."""
    times = np.empty(len(gaps_s) + 1, dtype=np.float64)
    times[0] = ttft_s
    times[1:] = gaps_s
    times.cumsum(out=times)
    if abs(float(times[-1])) * scale_ms < _HUGE:  # the usual case, without the cost of ``errstate`` per request
        times *= scale_ms
    else:
        with np.errstate(over="ignore"):  # an overflow is inf, as in ``chunk_times_ms``; ``finite_times`` names it
            times *= scale_ms
    return times


_HUGE = 1e300


def tokenizer_for(model_id: str) -> tuple[Tokenizer, list[str]]:
    """The tokenizer for a model id (``playback.core.tokenizers.for_model``), with notes on any fallback.

    A model with no recorded id gets what ``for_model`` assumes for unknown models; a tokenizer whose
    vocabulary is not installed falls back to ``char`` (one token per character).
    """
    notes: list[str] = []
    for_model = getattr(tokenizers, "for_model", None)
    if for_model is None:  # older tokenizers module without the model lookup
        name = FALLBACK_TOKENIZER
        notes.append(f"no model-to-tokenizer lookup: text split per character ({name} tokenizer)")
    else:
        name = str(for_model(model_id))
        if not model_id:
            notes.append(f"no model recorded: tokenizer {name} assumed")
    try:
        return tokenizers.get(name), notes
    except LookupError as e:
        notes.append(f"tokenizer {name} unavailable ({e}): text split per character")
        return tokenizers.get(FALLBACK_TOKENIZER), notes


def chunk_times_ms(ttft_s: float, gaps_s: Sequence[float], scale_ms: float = 1000.0) -> list[float]:
    """Chunk arrival times in ms: the first at TTFT, then TTFT plus the running sum of the gaps."""
    times = [float(ttft_s) * scale_ms]
    acc = float(ttft_s)
    for g in gaps_s:
        acc += g
        times.append(acc * scale_ms)
    return times


def finite_times(times: list[float], path: Path, where: str, name: str) -> list[float]:
    """``times`` from ``chunk_times_ms``, refused when their running sum overflows (each gap was finite, the sum of
    a few near 1e308 is not): a clear error naming the field, not a failure later in the import. The times never
    fall (gaps are >= 0), so an overflow anywhere shows in the last one."""
    if not math.isfinite(times[-1]):
        raise TraceFormatError(path, where, name, "the chunk times (TTFT plus the running sum of the gaps) overflow: "
                               "a gap is far too large")
    return times


_KANA = re.compile("[\u3040-\u30ff]")
_HANGUL = re.compile("[\uac00-\ud7af]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_CJK_ANY = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_NOT_LETTER = re.compile(r"[\W\d_]")  # the complement of letters ``[^\W\d_]``: fewer matches to count


def guess_language(text: str) -> str:
    """``zh``/``ja``/``ko`` when the script says so cheaply; ``""`` otherwise (Latin scripts: not guessed)."""
    sample = text[:2000]
    if not _CJK_ANY.search(sample):
        return ""
    letters = len(sample) - len(_NOT_LETTER.findall(sample))
    if not letters:
        return ""
    if len(_KANA.findall(sample)) * 10 >= letters:
        return "ja"
    if len(_HANGUL.findall(sample)) * 3 >= letters:
        return "ko"
    if len(_HAN.findall(sample)) * 3 >= letters:
        return "zh"
    return ""


# --- reading and checking benchmark result files (shared by the benchmark-result importers) --------------


def load_json(path: Path) -> Any:
    """The one JSON document in ``path``; a ``TraceFormatError`` with line and column when it is not JSON."""
    return _parse(path, path.read_bytes(), many=False)[0]


def iter_json_documents(path: Path) -> Iterator[tuple[int, Any, bool]]:
    """``(number, document, several)`` for every JSON document in ``path``, as ``load_json_documents`` reads
    them but parsed while the file is read (``ijson``): neither the file's text nor more than two documents
    are held at once. ``several`` says whether the file has more than one (known before the first is given).
    A file ``ijson`` does not take as plain JSON (a BOM, ``NaN``, a syntax error) is read by
    ``load_json_documents`` from the document it stopped at, so what is accepted and the errors (with line and
    column) are the standard parser's."""
    docs = _streamed_documents(path)
    first = next(docs, _NONE)
    if first is _NONE:
        raise TraceFormatError(path, "", "", "file is empty")
    second = next(docs, _NONE)
    several = second is not _NONE
    yield 0, first, several
    del first
    if several:
        yield 1, second, several
        del second
        for number, doc in enumerate(docs, start=2):
            yield number, doc, several


_NONE = object()


def _streamed_documents(path: Path) -> Iterator[Any]:
    done = 0
    try:
        with path.open("rb") as fh:
            for doc in ijson.items(fh, "", multiple_values=True, use_float=True):
                done += 1
                yield doc
        return
    except (ijson.JSONError, ValueError):  # UnicodeDecodeError is a ValueError
        pass
    yield from load_json_documents(path)[done:]


def load_json_documents(path: Path) -> list[Any]:
    """Every JSON document in ``path``: one, or several written one after another (JSON Lines, appends)."""
    return _parse(path, path.read_bytes(), many=True)


def _parse(path: Path, raw: bytes, many: bool) -> list[Any]:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TraceFormatError(path, f"byte {e.start}", "", "file is not UTF-8 text") from None
    if not many:
        try:
            return [json.loads(text)]
        except json.JSONDecodeError as e:
            raise _json_error(path, e) from None
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos, end = 0, len(text)
    while True:
        while pos < end and text[pos] in " \t\r\n":
            pos += 1
        if pos >= end:
            break
        try:
            obj, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise _json_error(path, e) from None
        docs.append(obj)
    if not docs:
        raise TraceFormatError(path, "", "", "file is empty")
    return docs


def _json_error(path: Path, e: json.JSONDecodeError) -> TraceFormatError:
    return TraceFormatError(path, f"line {e.lineno} column {e.colno}", "", f"invalid JSON: {e.msg}")


def number(value: Any, path: Path, where: str, name: str) -> float:
    """``value`` as a finite, non-negative float, or a ``TraceFormatError`` naming the field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TraceFormatError(path, where, name, f"must be a number, got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise TraceFormatError(path, where, name, f"must be finite, got {value!r}")
    if f < 0:
        raise TraceFormatError(path, where, name, f"must be >= 0, got {value!r}")
    return f


def count(value: Any, path: Path, where: str, name: str) -> int:
    """``value`` as a non-negative whole number (``27.0`` is accepted), or a ``TraceFormatError``."""
    f = number(value, path, where, name)
    if f != int(f):
        raise TraceFormatError(path, where, name, f"must be a whole number, got {value!r}")
    return int(f)


def numbers(value: Any, path: Path, where: str, name: str) -> list[float]:
    """A list of finite, non-negative numbers; the error names the offending element (``itls[3]``)."""
    if not isinstance(value, list):
        raise TraceFormatError(path, where, name, f"must be a list of numbers, got {type(value).__name__}")
    # Fast path for the usual all-float list (bool is excluded: its type is not int); else find the culprit.
    if _PLAIN_NUMBERS.issuperset(map(type, value)) and all(map(math.isfinite, value)):
        if not value or min(value) >= 0:
            return value
    return [number(v, path, where, f"{name}[{i}]") for i, v in enumerate(value)]


_PLAIN_NUMBERS = frozenset((float, int))


def first_of(indices: list[int], limit: int = 10) -> str:
    """``3, 7, 9`` or ``3, 7, 9, ... (12 in all)``: request numbers for a note, kept short."""
    shown = ", ".join(str(i) for i in indices[:limit])
    return shown if len(indices) <= limit else f"{shown}, ... ({len(indices)} in all)"


def load_json_lines(path: Path) -> list[tuple[int, Any]]:
    """``(line number, document)`` for every non-blank line of a JSON Lines file."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TraceFormatError(path, f"byte {e.start}", "", "file is not UTF-8 text") from None
    out: list[tuple[int, Any]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise TraceFormatError(path, f"line {n} column {e.colno}", "", f"invalid JSON: {e.msg}") from None
    if not out:
        raise TraceFormatError(path, "", "", "file is empty")
    return out


def head_text(head: bytes) -> str:
    """The sniffed head as text without leading whitespace or BOM (a cut multi-byte character is dropped)."""
    return head.decode("utf-8", errors="ignore").lstrip("\ufeff \t\r\n")
