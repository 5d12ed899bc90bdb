"""Hand-built arrival shapes for the preset tests (tests/browser/test_presets.py): when each piece of text arrives.

The benchmark and the playground use the named patterns of ``playback.core.arrivals``; these shapes stay for
the preset tests, which check documented properties on edge shapes the named patterns do not have (an 800-char
hex blob with no boundary at all, a trickle followed by one dump of the rest, 40-char pieces every ~13 ms).
Each is a builder ``(seed) -> frames`` (``{seq, t_ms, text, channel, tokens}``, content only), made from the
bundled texts with PaceLab's synthetic timing models (``playback.core.synth``) or by hand.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from playback.core import synth
from playback.core.texts import bundled_text
from playback.core.timing import TimingSpec

Frames = list[dict]
Builder = Callable[[int], Frames]
PATTERNS: dict[str, Builder] = {}
DEFAULT_CHARS = 1200


def register(name: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        PATTERNS[name] = fn
        return fn
    return deco


def frames_of(pieces: list[tuple[float, str]]) -> Frames:
    return [{"seq": i, "t_ms": round(float(t), 3), "text": s, "channel": "content", "tokens": 1}
            for i, (t, s) in enumerate(pieces) if s]


def english(chars: int = DEFAULT_CHARS) -> str:
    text = bundled_text("en-long-streaming")
    start = text.index("## Tokens are not words")
    return text[start : start + chars]


def chinese(chars: int = 600) -> str:
    return bundled_text("zh-long-streaming")[:chars]


def synthetic(text: str, timing: TimingSpec, seed: int, tokenizer: str = "cl100k_base") -> Frames:
    stream = synth.synthesize(text, tokenizer, timing, seed=seed)
    return frames_of([(p.t_ms, p.text) for p in stream.pieces if p.channel == "content"])


@register("steady")
def steady(seed: int = 0) -> Frames:
    """A steady API: 40 tokens/s, 400 ms TTFT, mild gamma jitter."""
    return synthetic(english(), TimingSpec(ttft_ms=400, rate=40, jitter="gamma", jitter_cv=0.3), seed)


@register("stalls")
def stalls(seed: int = 0) -> Frames:
    """40 tokens/s with exponential stalls (0.5/s, mean 600 ms)."""
    return synthetic(english(), TimingSpec(ttft_ms=400, rate=40, jitter="gamma", jitter_cv=0.3,
                                           stall_rate_per_s=0.5, stall_ms=600, stall_dist="exponential"), seed)


@register("bursts")
def bursts(seed: int = 0) -> Frames:
    """Proxy-buffered: 40 tokens/s delivered 12 tokens at a time."""
    return synthetic(english(), TimingSpec(ttft_ms=400, rate=40, burst_size=12), seed)


@register("fast-dump")
def fast_dump(seed: int = 0) -> Frames:
    """A fast provider: about 3000 chars/s in 40-char pieces every ~13 ms."""
    rng = random.Random(seed)
    text = english()
    out, t = [], 300.0
    for i in range(0, len(text), 40):
        out.append((t, text[i : i + 40]))
        t += rng.uniform(8, 18)
    return frames_of(out)


@register("end-dump")
def end_dump(seed: int = 0) -> Frames:
    """A slow trickle (8 tokens/s for 1.5 s) then the whole rest at once."""
    head = synthetic(english(), TimingSpec(ttft_ms=400, rate=8), seed)
    cut = next(i for i, f in enumerate(head) if f["t_ms"] > 1900)
    rest = "".join(f["text"] for f in head[cut:])
    return frames_of([(f["t_ms"], f["text"]) for f in head[:cut]] + [(2600.0, rest)])


@register("cjk")
def cjk(seed: int = 0) -> Frames:
    """Chinese at 30 tokens/s (o200k pieces, one or two characters each)."""
    return synthetic(chinese(), TimingSpec(ttft_ms=400, rate=30, jitter="gamma", jitter_cv=0.3), seed,
                     tokenizer="o200k_base")


@register("blob")
def blob(seed: int = 0) -> Frames:
    """A boundary-less blob (a hex digest), 4 chars per piece at 50 pieces/s."""
    rng = random.Random(seed)
    alphabet = "0123456789abcdef"
    text = "".join(rng.choice(alphabet) for _ in range(800))
    return frames_of([(300.0 + 20.0 * (i // 4), text[i : i + 4]) for i in range(0, len(text), 4)])


def build(name: str, seed: int = 0) -> Frames:
    if name not in PATTERNS:
        raise KeyError(f"unknown arrival pattern {name!r}; known: {', '.join(PATTERNS)}")
    return PATTERNS[name](seed)
