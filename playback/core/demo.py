"""The demo data PaceLab ships: named stimuli built from the bundled texts, and the demo trace files.

Kept as plain data + a builder so ``manage.py load_demo``, ``scripts/make_demo_traces.py`` and tests share one
definition. No Django import.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from playback.core import synth, texts
from playback.core.stream import Stream, StreamMeta
from playback.core.timing import TimingSpec


@dataclass(frozen=True)
class DemoStimulus:
    name: str
    text: str
    tokenizer: str
    timing: TimingSpec
    seed: int = 1

    def build(self) -> Stream:
        language = texts.bundled_texts()[self.text][0]
        return synth.synthesize(texts.bundled_text(self.text), self.tokenizer, self.timing, seed=self.seed,
                                meta=StreamMeta(language=language))

    def spec(self) -> dict:
        return {"kind": "synthetic", "text": self.text, "tokenizer": self.tokenizer,
                "timing": self.timing.to_dict(), "seed": self.seed}


DEMO_STIMULI: tuple[DemoStimulus, ...] = (
    DemoStimulus("en-chat · 25 tok/s · steady", "en-chat-coffee", "cl100k_base", TimingSpec(ttft_ms=400, rate=25)),
    DemoStimulus("en-chat · 10 tok/s · steady", "en-chat-coffee", "cl100k_base", TimingSpec(ttft_ms=400, rate=10)),
    DemoStimulus("en-chat · 25 tok/s · jitter 0.8 + stalls", "en-chat-sleep", "cl100k_base",
                 TimingSpec(ttft_ms=700, rate=25, jitter="gamma", jitter_cv=0.8, stall_rate_per_s=0.3,
                            stall_ms=600)),
    DemoStimulus("zh-chat · 25 tok/s · cl100k_base", "zh-chat-tea", "cl100k_base", TimingSpec(ttft_ms=400, rate=25)),
    DemoStimulus("zh-chat · 25 tok/s · qwen3.6", "zh-chat-tea", "qwen3.6", TimingSpec(ttft_ms=400, rate=25)),
    DemoStimulus("zh-chat · 25 tok/s · deepseek-v4", "zh-chat-tea", "deepseek-v4", TimingSpec(ttft_ms=400, rate=25)),
    DemoStimulus("en-long · 40 tok/s · bursts of 4", "en-long-streaming", "qwen3.6",
                 TimingSpec(ttft_ms=900, rate=40, burst_size=4)),
    DemoStimulus("zh-long · 30 tok/s · slow start", "zh-long-streaming", "deepseek-v4",
                 TimingSpec(ttft_ms=1500, rate=30, ramp_ms=2000, ramp_start_fraction=0.3)),
)


def traces_dir() -> Path:
    return Path(str(resources.files("playback") / "data" / "traces"))


def trace_files() -> list[Path]:
    """The shipped demo trace files (PaceLab JSONL)."""
    return sorted(traces_dir().glob("*.jsonl"))


def reasoning_then_answer(reasoning: str, answer: str, tokenizer: str, seed: int) -> Stream:
    """A reasoning-model-style stream: thinking text first (fast), then the answer after a pause."""
    think = synth.synthesize(reasoning, tokenizer, TimingSpec(ttft_ms=350, rate=60, jitter="gamma", jitter_cv=0.3),
                             seed=seed)
    last = think.pieces[-1].t_ms if think.pieces else 0.0
    ans = synth.synthesize(answer, tokenizer, TimingSpec(ttft_ms=last + 450, rate=35, jitter="gamma",
                                                         jitter_cv=0.5, stall_rate_per_s=0.2, stall_ms=400),
                           seed=seed + 1)
    pieces = [replace(p, channel="reasoning") for p in think.pieces] + list(ans.pieces)
    return Stream(pieces=tuple(pieces), meta=replace(ans.meta, notes=(*think.meta.notes, *ans.meta.notes)))


def demo_traces() -> list[Stream]:
    """The recorded-style demo traces (synthesised; see playback/data/traces/README.md)."""
    en = texts.bundled_text("en-chat-coffee")
    zh = texts.bundled_text("zh-chat-tea")
    out = []
    s = reasoning_then_answer("The user asks about coffee. Keep it short and practical; mention grind and ratio.",
                              en, "qwen3.6", seed=11)
    out.append(replace(s, id="demo-reasoning-en", meta=replace(s.meta, source="demo", model="demo-reasoner",
                                                              language="en", prompt="How do I brew better coffee?")))
    s = reasoning_then_answer("用户在问茶。回答要简短，提到水温和时间。", zh, "deepseek-v4", seed=12)
    out.append(replace(s, id="demo-reasoning-zh", meta=replace(s.meta, source="demo", model="demo-reasoner",
                                                              language="zh", prompt="怎样泡好一杯茶？")))
    for i, (name, cv, stalls) in enumerate((("steady", 0.2, 0.0), ("jittery", 1.0, 0.0), ("stally", 0.4, 1.2))):
        s = synth.synthesize(texts.bundled_text("en-chat-sleep"), "cl100k_base",
                             TimingSpec(ttft_ms=300 + 200 * i, rate=45, jitter="lognormal", jitter_cv=cv,
                                        stall_rate_per_s=stalls, stall_ms=700, stall_dist="exponential"),
                             seed=20 + i, meta=StreamMeta(source="demo", model="demo-server", language="en",
                                                          prompt="Tips for sleeping better?"))
        out.append(replace(s, id=f"demo-{name}-en"))
    return out
