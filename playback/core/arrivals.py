"""Named arrival patterns: realistic, seeded ways a chat answer's text reaches the client.

A client smoother is only as good as the arrivals it is tuned on. Each pattern here is a complete
``TimingSpec`` (built from the synthetic timing model's parts: rate, jitter, stalls, bursts, pauses, flush;
see ``playback.core.synth``) with a tokenizer and a sample text, so that a study, the playground and
``manage.py synth_stream`` can all say ``arrival: proxy-bursts`` and mean the same stream for the same seed.

Six patterns are **timing** models (any text can be streamed with them; their sample text is the English chat
answer). Three are **text** kinds: the timing is the steady API's, and what differs is the text itself, which
the pattern brings with it (Chinese text cut by a Chinese-heavy vocabulary, an answer built around a code
block, a base64 blob with no word boundaries for 640 characters). docs/arrival-patterns.md shows each one's
arrival curve. No numpy, no Django (synthesis is in ``playback.core.synth``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from playback.core.timing import TimingSpec

Kind = Literal["timing", "text"]
DEFAULT_TEXT = "en-chat-coffee"
DEFAULT_TOKENIZER = "cl100k_base"


class UnknownPattern(KeyError):
    """No arrival pattern of that name; ``str()`` lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True, slots=True)
class ArrivalPattern:
    """One named arrival pattern: its timing, its sample text and tokenizer, and what defines it."""

    name: str
    kind: Kind
    summary: str
    timing: TimingSpec
    text: str = DEFAULT_TEXT
    tokenizer: str = DEFAULT_TOKENIZER

    def study_params(self) -> dict[str, Any]:
        """The stimulus parameters ``arrival: <name>`` stands for in a study file: every timing field (the
        pattern is a whole timing model), plus the text and tokenizer for a text kind."""
        params = self.timing.to_dict()
        if self.kind == "text":
            params.update(text=self.text, tokenizer=self.tokenizer)
        return params


_STEADY = {"ttft_ms": 600.0, "rate": 45.0, "jitter": "gamma", "jitter_cv": 0.35}

PATTERNS: dict[str, ArrivalPattern] = {p.name: p for p in (
    ArrivalPattern(
        "steady-api", "timing",
        "A healthy hosted API: 45 tokens/s with gamma jitter (CV 0.35) after a 600 ms TTFT.",
        TimingSpec(**_STEADY)),
    ArrivalPattern(
        "fast-dump", "timing",
        "A fast provider: about 3,000 characters/s in 4-token network chunks; the answer lands in a blink.",
        TimingSpec(ttft_ms=350.0, rate=3000.0, rate_unit="chars", jitter="gamma", jitter_cv=0.5, burst_size=4)),
    ArrivalPattern(
        "proxy-bursts", "timing",
        "The steady API behind a buffering proxy: what arrived is released every 400 ms, in bursts.",
        TimingSpec(**_STEADY, flush="interval", flush_ms=400.0)),
    ArrivalPattern(
        "long-stalls", "timing",
        "40 tokens/s interrupted by exactly two long stalls (lognormal, mean 2.5 s, CV 0.25) at random places.",
        TimingSpec(ttft_ms=600.0, rate=40.0, jitter="gamma", jitter_cv=0.3, stall_count=2, stall_ms=2500.0,
                   stall_dist="lognormal", stall_cv=0.25)),
    ArrivalPattern(
        "dump-at-end", "timing",
        "No streaming at all: a proxy (or a non-streaming API) holds the answer and delivers it whole at the end.",
        TimingSpec(ttft_ms=600.0, rate=45.0, flush="end")),
    ArrivalPattern(
        "keepalive-gaps", "timing",
        "40 tokens/s, going quiet for 1.5 s after every 1.2 s of text while only keep-alives flow.",
        TimingSpec(ttft_ms=600.0, rate=40.0, jitter="gamma", jitter_cv=0.3, pause_every_ms=1200.0,
                   pause_ms=1500.0)),
    ArrivalPattern(
        "cjk", "text",
        "Chinese text (zh-chat-tea, qwen3.6 tokens of 1 to 2 characters) at the steady API's timing, 35 tokens/s.",
        TimingSpec(**{**_STEADY, "rate": 35.0}), text="zh-chat-tea", tokenizer="qwen3.6"),
    ArrivalPattern(
        "code-block", "text",
        "An answer built around a fenced Python block (short tokens, indentation, newlines) at the steady timing.",
        TimingSpec(**_STEADY), text="en-sample-code"),
    ArrivalPattern(
        "blob", "text",
        "A boundary-less blob: 640 base64 characters and a hex hash, no space for a word splitter to wait for.",
        TimingSpec(**_STEADY), text="en-sample-blob"),
)}


def names() -> list[str]:
    """The pattern names, timing models first, in the order the documentation shows them."""
    return list(PATTERNS)


def get(name: str) -> ArrivalPattern:
    """The pattern called ``name``; ``UnknownPattern`` lists the known ones."""
    try:
        return PATTERNS[name]
    except KeyError:
        raise UnknownPattern(f"unknown arrival pattern {name!r}; known: {', '.join(PATTERNS)}") from None
