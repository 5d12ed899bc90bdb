"""The designer playground's configuration: a stream source and 2 to 4 variants, kept in the URL query string.

A configuration is plain data (``Config``); ``parse`` reads it from query parameters and never raises: every bad
value becomes a message naming the parameter (``"b.rate: must be a number > 0, got 'fast'"``) and that field keeps
its default, so the page still renders. ``to_params`` writes only what differs from the defaults (plus the variant
count), and ``parse(to_params(c)).config == c`` for every valid ``c``: a URL restores exactly the same variants.

``variant_stream`` turns a variant into a ``Stream``, deterministically: a synthetic source (a bundled text or a
custom text) is synthesised with the variant's tokenizer and timing; a recorded stream (an imported trace or a
stored stimulus) is transformed (set TTFT, rescale the rate, inject stalls). Every variant uses the same seed, so
variants differing in one setting share their random draws. A variant may name an arrival pattern
(``playback.core.arrivals``): its timing then replaces the variant's rate, jitter, stalls and bursts (a TTFT given
still applies), and a text-kind pattern (CJK, code block, blob) plays its own sample text with its tokenizer in
that variant. Patterns time text sources only. No Django import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from playback.core import arrivals, strategy_options, synth, texts, tokenizers, transforms
from playback.core.stream import Stream, StreamMeta
from playback.core.timing import TimingSpec

SOURCE_KINDS = ("demo", "synthetic", "trace", "stimulus")
RECORDED_KINDS = ("trace", "stimulus")
STRATEGIES = ("token", "batch", "word", "line", "sentence", "smooth", "fade",
              "ai-sdk-smooth", "chat-ui-smooth", "accelerating", "typewriter")  # the last four: client presets
INDICATORS = ("none", "spinner", "dots", "shimmer", "progress", "elapsed", "reasoning", "reasoning-collapsed")
MODES = ("prefetch", "live")
JITTERS = ("none", "gamma", "lognormal")
LETTERS = "abcd"
MIN_VARIANTS, MAX_VARIANTS = 2, 4
MAX_TEXT_CHARS = 20_000
MAX_QUESTION_CHARS = 2_000
MAX_BURST = 64
DEFAULT_RATE = 25.0
DEFAULT_TTFT_MS = 400.0
STALL_DIST = "exponential"  # stalls are given by their rate and mean duration


@dataclass(frozen=True, slots=True)
class Source:
    """Where the text comes from: a bundled demo text (``name``), a custom text (``text``), or a stored
    trace / stimulus (``id``)."""

    kind: str = "demo"
    name: str = "en-chat-coffee"
    text: str = ""
    id: int | None = None

    @property
    def recorded(self) -> bool:
        return self.kind in RECORDED_KINDS


@dataclass(frozen=True, slots=True)
class Variant:
    """One way of streaming the source. ``rate``/``ttft_ms`` of ``None`` mean the default (synthetic) or keep the
    recorded value (traces, stimuli). Jitter, bursts and tokenizer apply to synthetic sources only."""

    rate: float | None = None
    ttft_ms: float | None = None
    jitter: str = "none"
    jitter_cv: float = 0.0
    stall_rate: float = 0.0
    stall_ms: float = 600.0
    burst: int = 1
    tokenizer: str = "cl100k_base"
    render: str = "token"
    batch_ms: float = 20.0
    indicator: str = "dots"
    mode: str = "prefetch"
    arrival: str = ""
    text_name: str = ""  # this variant's own bundled text (instead of the source's)
    text: str = ""  # this variant's own text (instead of the source's)
    question: str = ""  # this variant's question in the chat context (instead of the page's)
    options: tuple[tuple[str, Any], ...] = ()  # the strategy's declared options that differ from the default

    def timing(self) -> TimingSpec:
        """The synthetic timing model of this variant (its arrival pattern's, when it names one)."""
        if self.arrival:
            spec = arrivals.get(self.arrival).timing
            return spec if self.ttft_ms is None else replace(spec, ttft_ms=self.ttft_ms)
        return TimingSpec(
            ttft_ms=DEFAULT_TTFT_MS if self.ttft_ms is None else self.ttft_ms,
            rate=DEFAULT_RATE if self.rate is None else self.rate,
            jitter=self.jitter,
            jitter_cv=self.jitter_cv if self.jitter != "none" else 0.0,
            stall_rate_per_s=self.stall_rate,
            stall_ms=self.stall_ms,
            stall_dist=STALL_DIST,
            burst_size=self.burst,
        )

    def strategy_options(self) -> dict[str, Any]:
        """The options the player's strategy gets (``batch``'s interval is the ``batch_ms`` field)."""
        out = dict(self.options)
        if self.render == "batch":
            out["intervalMs"] = self.batch_ms
        return out

    @property
    def own_text(self) -> bool:
        return bool(self.text or self.text_name)

    def presentation(self) -> dict[str, Any]:
        """How the browser shows it: the playback config and delivery mode."""
        out = {"render": self.render, "batch_ms": self.batch_ms, "indicator": self.indicator, "mode": self.mode}
        if self.options:
            out["options"] = dict(self.options)
        return out


@dataclass(frozen=True, slots=True)
class Config:
    source: Source = field(default_factory=Source)
    variants: tuple[Variant, ...] = (Variant(), Variant())
    seed: int = 1
    chat: bool = False  # show the chat context: the user's question above each answer
    question: str = ""  # the question shown (empty: each demo text's own question)


DEFAULT_CONFIG = Config(
    source=Source(),
    variants=(
        Variant(rate=25.0, ttft_ms=400.0, render="token", indicator="dots", mode="prefetch"),
        Variant(rate=25.0, ttft_ms=400.0, render="smooth", indicator="spinner", mode="live"),
    ),
)


@dataclass(frozen=True, slots=True)
class ParseResult:
    config: Config
    errors: tuple[str, ...] = ()


# --- query keys ------------------------------------------------------------------------------------

# Variant attribute -> query key (after the letter: ``a.rate``).
VARIANT_KEYS: dict[str, str] = {
    "rate": "rate", "ttft_ms": "ttft", "jitter": "jitter", "jitter_cv": "cv", "stall_rate": "stalls",
    "stall_ms": "stall_ms", "burst": "burst", "tokenizer": "tok", "render": "render", "batch_ms": "batch_ms",
    "indicator": "ind", "mode": "mode", "arrival": "arrival", "text_name": "name", "text": "text",
    "question": "q",
}
OPTION_KEY = "opt"  # a strategy option: ``a.opt.delayInMs``
GLOBAL_KEYS = ("src", "name", "text", "id", "seed", "n", "chat", "q")
# The question above a bundled answer in the chat context (content, in the answer's language).
DEMO_QUESTIONS = {
    "en-chat-coffee": "Why does my pour-over coffee taste bitter?",
    "en-chat-sleep": "How can I fall asleep faster?",
    "en-long-streaming": "Why do streamed chat answers feel slow or fast?",
    "en-sample-blob": "Can you give me a test payload?",
    "en-sample-code": "How do I do this in Python?",
    "zh-chat-subway": "坐地铁怎么换乘最快？",
    "zh-chat-tea": "绿茶为什么泡出来发苦？",
    "zh-long-streaming": "为什么流式输出的回答感觉有快有慢？",
}


def number_text(value: float) -> str:
    """A float written so that ``float(text) == value`` (integers without ``.0``)."""
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def to_params(config: Config) -> dict[str, str]:
    """The query parameters of ``config``: the source, the seed, ``n`` and each variant's non-default fields."""
    params: dict[str, str] = {"src": config.source.kind}
    if config.source.kind == "demo":
        params["name"] = config.source.name
    elif config.source.kind == "synthetic":
        params["text"] = config.source.text
    else:
        params["id"] = str(config.source.id)
    params["seed"] = str(config.seed)
    params["n"] = str(len(config.variants))
    if config.chat:
        params["chat"] = "1"
    if config.question:
        params["q"] = config.question
    default = Variant()
    for letter, variant in zip(LETTERS, config.variants):
        for attr, key in VARIANT_KEYS.items():
            value = getattr(variant, attr)
            if value == getattr(default, attr) and type(value) is type(getattr(default, attr)):
                continue
            params[f"{letter}.{key}"] = number_text(value) if isinstance(value, float) else str(value)
        for name, value in variant.options:
            params[f"{letter}.{OPTION_KEY}.{name}"] = number_text(value) if isinstance(value, float) else str(value)
    return params


def to_query(config: Config) -> str:
    """``to_params`` as a URL query string (without ``?``)."""
    return urlencode(to_params(config))


class _Reader:
    """Reads typed values out of the parameters, collecting one message per bad value."""

    def __init__(self, params: Mapping[str, str]) -> None:
        self.original = params
        self.params = {k: v.strip() if isinstance(v, str) else v for k, v in params.items()}
        self.errors: list[str] = []

    def raw(self, key: str) -> str | None:
        value = self.params.get(key)
        return None if value is None or value == "" else value

    def fail(self, key: str, problem: str) -> None:
        self.errors.append(f"{key}: {problem}")

    def number(self, key: str, default: float | None, *, minimum: float, strict: bool = False,
               maximum: float | None = None) -> float | None:
        raw = self.raw(key)
        if raw is None:
            return default
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        low_ok = value > minimum if strict else value >= minimum
        if not math.isfinite(value) or not low_ok or (maximum is not None and value > maximum):
            bound = f"{'>' if strict else '>='} {number_text(float(minimum))}"
            if maximum is not None:
                bound += f" and <= {number_text(float(maximum))}"
            self.fail(key, f"must be a number {bound}, got {raw!r}")
            return default
        return value

    def integer(self, key: str, default: int, *, minimum: int, maximum: int) -> int:
        raw = self.raw(key)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            self.fail(key, f"must be a whole number from {minimum} to {maximum}, got {raw!r}")
            return default
        return value

    def choice(self, key: str, default: str, choices: tuple[str, ...] | list[str]) -> str:
        raw = self.raw(key)
        if raw is None:
            return default
        if raw not in choices:
            self.fail(key, f"must be one of {', '.join(choices)}; got {raw!r}")
            return default
        return raw


def _source(r: _Reader) -> Source:
    kind = r.choice("src", "demo", SOURCE_KINDS)
    if kind == "demo":
        name = r.choice("name", Source().name, list(texts.bundled_texts()))
        return Source(kind="demo", name=name)
    if kind == "synthetic":
        text = r.original.get("text") or ""
        if not text.strip():
            r.fail("text", "a synthetic source needs a text")
            return Source()
        if len(text) > MAX_TEXT_CHARS:
            r.fail("text", f"at most {MAX_TEXT_CHARS} characters, got {len(text)}")
            text = text[:MAX_TEXT_CHARS]
        return Source(kind="synthetic", name="", text=text)
    ident = r.integer("id", 0, minimum=1, maximum=2**63 - 1)
    if not ident:
        if r.raw("id") is None:
            r.fail("id", f"a {kind} source needs the {kind}'s id")
        return Source()
    return Source(kind=kind, name="", id=ident)


def _free_text(r: _Reader, key: str, limit: int) -> str:
    text = r.original.get(key) or ""
    if not text.strip():
        return ""
    if len(text) > limit:
        r.fail(key, f"at most {limit} characters, got {len(text)}")
        text = text[:limit]
    return text


def _options(r: _Reader, letter: str, render: str) -> tuple[tuple[str, Any], dict[str, Any]]:
    """The strategy options given for variant ``letter`` (``a.opt.<name>``), validated against ``render``'s
    declaration; returns (options, batch interval override)."""
    prefix = f"{letter}.{OPTION_KEY}."
    given = {k[len(prefix):]: v for k, v in r.params.items() if k.startswith(prefix)}
    parsed = strategy_options.parse(render, given, prefix)
    r.errors.extend(parsed.errors)
    options = dict(parsed.options)
    extra = {}
    if render == "batch" and "intervalMs" in options:  # the batch interval has its own key
        extra["batch_ms"] = float(options.pop("intervalMs"))
    return tuple(sorted(options.items())), extra


def _variant(r: _Reader, letter: str) -> Variant:
    d = Variant()
    k = {attr: f"{letter}.{key}" for attr, key in VARIANT_KEYS.items()}
    render = r.choice(k["render"], d.render, STRATEGIES)
    options, extra = _options(r, letter, render)
    jitter = r.choice(k["jitter"], d.jitter, JITTERS)
    cv = r.number(k["jitter_cv"], d.jitter_cv, minimum=0, maximum=10)
    if jitter == "none" and cv:
        r.fail(k["jitter_cv"], "must be 0 when the jitter is none (choose gamma or lognormal)")
        cv = 0.0
    return Variant(
        rate=r.number(k["rate"], None, minimum=0, strict=True, maximum=10_000),
        ttft_ms=r.number(k["ttft_ms"], None, minimum=0, maximum=600_000),
        jitter=jitter,
        jitter_cv=cv,
        stall_rate=r.number(k["stall_rate"], d.stall_rate, minimum=0, maximum=100),
        stall_ms=r.number(k["stall_ms"], d.stall_ms, minimum=0, strict=True, maximum=600_000),
        burst=r.integer(k["burst"], d.burst, minimum=1, maximum=MAX_BURST),
        tokenizer=r.choice(k["tokenizer"], d.tokenizer, tokenizers.names()),
        render=render,
        batch_ms=extra.get("batch_ms") or r.number(k["batch_ms"], d.batch_ms, minimum=0, strict=True,
                                                   maximum=10_000),
        indicator=r.choice(k["indicator"], d.indicator, INDICATORS),
        mode=r.choice(k["mode"], d.mode, MODES),
        arrival=r.choice(k["arrival"], d.arrival, arrivals.names()),
        text_name=r.choice(k["text_name"], d.text_name, list(texts.bundled_texts())),
        text=_free_text(r, k["text"], MAX_TEXT_CHARS),
        question=_free_text(r, k["question"], MAX_QUESTION_CHARS),
        options=options,
    )


def parse(params: Mapping[str, str]) -> ParseResult:
    """The configuration in ``params`` (one value per key, e.g. ``QueryDict.dict()``) and what was wrong with it.

    No parameters at all give ``DEFAULT_CONFIG``. Empty values count as absent; parameters of variants beyond
    ``n`` are ignored (a form shows all four); any other unknown parameter is reported.
    """
    if not any(v not in (None, "") for v in params.values()):
        return ParseResult(DEFAULT_CONFIG)
    r = _Reader(params)
    source = _source(r)
    seed = r.integer("seed", Config().seed, minimum=0, maximum=2**32 - 1)
    n = r.integer("n", MIN_VARIANTS, minimum=MIN_VARIANTS, maximum=MAX_VARIANTS)
    chat = r.integer("chat", 0, minimum=0, maximum=1)
    question = _free_text(r, "q", MAX_QUESTION_CHARS)
    variants = tuple(_variant(r, letter) for letter in LETTERS[:n])
    keys = set(GLOBAL_KEYS) | {f"{letter}.{key}" for letter in LETTERS for key in VARIANT_KEYS.values()}
    options = tuple(f"{letter}.{OPTION_KEY}." for letter in LETTERS)
    for key in sorted(params):
        if key not in keys and not key.startswith(options) and params[key] not in (None, ""):
            r.fail(key, "unknown parameter")
    return ParseResult(Config(source=source, variants=variants, seed=seed, chat=bool(chat), question=question),
                       tuple(r.errors))


def guess_language(text: str) -> str:
    """``"zh"`` when most of the text's letters are CJK ideographs, else ``"en"`` (for a text typed in)."""
    letters = [c for c in text if c.isalpha()]
    cjk = sum(1 for c in letters if "\u3400" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff")
    return "zh" if letters and cjk * 2 >= len(letters) else "en"


def variant_text(variant: Variant) -> tuple[str, str] | None:
    """``(language, text)`` of the variant's own text (``a.text`` before ``a.name``), or None: the source's."""
    if variant.text:
        return guess_language(variant.text), variant.text
    if variant.text_name:
        return texts.bundled_texts()[variant.text_name]
    return None


def question(config: Config, variant: Variant) -> str:
    """The user's question shown above this variant's answer in the chat context ("" when not shown)."""
    if not config.chat:
        return ""
    if variant.question or config.question:
        return variant.question or config.question
    name = variant.text_name
    if variant.arrival and arrivals.get(variant.arrival).kind == "text":
        name = arrivals.get(variant.arrival).text
    if not name and not variant.text and config.source.kind == "demo":
        name = config.source.name
    return DEMO_QUESTIONS.get(name, "")


# --- variants as streams ---------------------------------------------------------------------------


def variant_stream(variant: Variant, *, seed: int, text: str | None = None, stream: Stream | None = None,
                   language: str = "") -> Stream:
    """The stream a variant plays: ``text`` synthesised with its tokenizer and timing, or the recorded ``stream``
    with its TTFT set, its decode rate rescaled and Poisson stalls injected (each only when the variant sets it).

    Raises ``TimingSpecError`` / ``TransformError`` (both ``ValueError``) with a message naming the problem.
    """
    if (text is None) == (stream is None):
        raise ValueError("give exactly one of text (synthetic) or stream (recorded)")
    own = variant_text(variant)
    if own is not None:  # the variant's own text replaces the source's (and makes it a text variant)
        (language, text), stream = own, None
    if text is not None:
        tokenizer = variant.tokenizer
        if variant.arrival and arrivals.get(variant.arrival).kind == "text":
            pattern = arrivals.get(variant.arrival)
            (language, text), tokenizer = texts.bundled_texts()[pattern.text], pattern.tokenizer
        return synth.synthesize(text, tokenizer, variant.timing(), seed=seed, meta=StreamMeta(language=language))
    if variant.arrival:
        raise ValueError(f"arrival: the pattern {variant.arrival!r} times a text source; a trace or stimulus keeps "
                         "its recorded arrivals")
    out = stream
    if variant.ttft_ms is not None:
        out = transforms.set_ttft(out, variant.ttft_ms, clamp=True)
    if variant.rate is not None:
        out = transforms.rescale_rate(out, variant.rate)
    if variant.stall_rate > 0:
        out = transforms.inject_stalls(out, rate_per_s=variant.stall_rate, duration_ms=variant.stall_ms,
                                       seed=seed, dist=STALL_DIST)
    return out


def variant_spec(config: Config, index: int) -> dict[str, Any]:
    """The stimulus spec that reproduces variant ``index``: its recipe (synthetic text + tokenizer + timing + seed,
    or source + transforms + seed), how it was presented, and the playground query that shows it again."""
    variant = config.variants[index]
    source = config.source
    spec: dict[str, Any]
    if source.recorded and not variant.own_text:
        steps: list[dict[str, Any]] = []
        if variant.ttft_ms is not None:
            steps.append({"set_ttft": {"ttft_ms": variant.ttft_ms, "clamp": True}})
        if variant.rate is not None:
            steps.append({"rescale_rate": {"tokens_per_s": variant.rate}})
        if variant.stall_rate > 0:
            steps.append({"inject_stalls": {"rate_per_s": variant.stall_rate, "duration_ms": variant.stall_ms,
                                            "dist": STALL_DIST, "seed": config.seed}})
        spec = {"kind": "transformed", "source": {source.kind: source.id}, "transforms": steps,
                "seed": config.seed}
    else:
        spec = {"kind": "synthetic", "tokenizer": variant.tokenizer, "timing": variant.timing().to_dict(),
                "seed": config.seed}
        pattern = arrivals.get(variant.arrival) if variant.arrival else None
        if pattern is not None and pattern.kind == "text":
            spec.update(text=pattern.text, tokenizer=pattern.tokenizer)
        elif variant.text:
            spec["custom_text"] = variant.text
        elif variant.text_name:
            spec["text"] = variant.text_name
        elif source.kind == "demo":
            spec["text"] = source.name
        else:
            spec["custom_text"] = source.text
        if pattern is not None:
            spec["arrival"] = pattern.name
    spec["presentation"] = variant.presentation()
    spec["playground"] = {"query": to_query(config), "variant": LETTERS[index]}
    return spec
