"""Schedules for the browser tests, built from the bundled sample texts with the server's word splitter."""

from __future__ import annotations

from playback.core.texts import bundled_text
from playback.core.textunits import split_words

TTFT_MS = 300.0
INTERVAL_MS = 25.0  # 40 tokens/s


def english_pieces(n: int = 300) -> list[str]:
    """n word pieces from the English long text, from a part with headings, a code block and a list."""
    text = bundled_text("en-long-streaming")
    return split_words(text[text.index("## Tokens are not words") :])[:n]


def chinese_pieces(n: int = 300) -> list[str]:
    """n single characters from the Chinese long text (headings, a numbered list, bold)."""
    return list(bundled_text("zh-long-streaming")[:n])


def schedule(pieces: list[str], ttft_ms: float = TTFT_MS, interval_ms: float = INTERVAL_MS,
             reasoning: list[str] | None = None) -> list[dict]:
    """Frames as the server sends them in prefetch mode; reasoning pieces (if any) fill the wait before TTFT."""
    frames = []
    for i, text in enumerate(reasoning or []):
        frames.append({"seq": len(frames), "t_ms": 20.0 + i * (ttft_ms - 60.0) / len(reasoning), "text": text,
                       "channel": "reasoning", "tokens": 1})
    for i, text in enumerate(pieces):
        frames.append({"seq": len(frames), "t_ms": ttft_ms + i * interval_ms, "text": text, "channel": "content",
                       "tokens": 1})
    return frames


REASONING_EN = split_words("The user asks about buffering. I should explain tokens and client rendering. ")
REASONING_ZH = list("用户问的是流式输出的感受，我先解释首字延迟。")
