"""Simulated tidy frames (columns of analysis.tables.codebook) with known effects, for pipeline/figure/report tests.

Not a test module. Participants have a rate threshold ~ Normal(25, 5) tokens/s (+6 with a 2 s TTFT), rate
ratings rise with the strategy (token < smooth), and a qwen stream is picked over cl100k 80 % of the time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SPEC = {
    "id": "sim-study",
    "title": {"en": "Simulated study"},
    "factors": [
        {"name": "rate", "sets": "rate", "levels": [10, 15, 25, 40, 60]},
        {"name": "ttft", "sets": "ttft_ms", "levels": [300, 2000]},
        {"name": "delivery", "sets": "delivery", "assignment": "between", "levels": ["prefetch", "live"]},
        {"name": "strategy", "sets": "strategy", "levels": ["token", "smooth"]},
        {"name": "indicator", "sets": "indicator", "levels": ["none", "dots"]},
        {"name": "tokenizer", "sets": "tokenizer", "levels": ["cl100k_base", "qwen3.6"]},
        {"name": "passage", "levels": [{"label": "tea", "set": {"text": "zh-chat-tea"}},
                                       {"label": "subway", "set": {"text": "zh-chat-subway"}}]},
    ],
    "blocks": [
        {"id": "practice", "type": "practice", "task": {"type": "acceptability"}},
        {"id": "acceptability", "type": "main", "design": {"factorial": ["rate", "ttft", "delivery"]},
         "task": {"type": "acceptability"}},
        {"id": "ratings", "type": "main", "design": {"factorial": ["strategy", "indicator"]},
         "task": {"type": "rating", "scale": {"type": "likert", "points": 5}}},
        {"id": "tokenizers", "type": "main", "design": {"factorial": ["tokenizer", "passage"]}, "repeats": 2,
         "task": {"type": "afc", "compare": "tokenizer"}},
    ],
    "counterbalancing": {"block_order": "latin_square"},
    "exclusions": [{"rule": "failed_attention"}, {"rule": "fidelity_violated", "max_fraction": 0.2, "bound_ms": 50},
                   {"rule": "incomplete"}],
}


def _base(pid: int, group: str, block: str, index: int, kind: str, condition: str) -> dict:
    return {"study": "sim-study", "participant": pid, "group": group, "language": "en",
            "session_state": "completed", "session_excluded": False, "block": block,
            "block_practice": block == "practice", "trial_index": index, "trial_type": kind,
            "condition": condition, "response_ms": 900.0, "practice": block == "practice",
            "failed_attention": False, "attention_check": None, "excluded": False, "exclusion_reason": ""}


def frames(n: int = 10, seed: int = 0, *, slow_painter: int | None = None, inattentive: int | None = None,
           reps: int = 2) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trials, participants). ``slow_painter``: that participant's trials paint 80 ms late (fidelity rule);
    ``inattentive``: that participant fails an attention check."""
    rng = np.random.default_rng(seed)
    rows, people = [], []
    for pid in range(1, n + 1):
        delivery = "prefetch" if pid % 2 else "live"
        group = f"delivery={delivery}"
        device = "phone" if pid % 5 == 0 else "desktop"
        m = rng.normal(25, 5)
        bias = rng.normal(0, 0.3)
        idx = 0

        def fid(row, pid=pid):
            late = 80.0 if pid == slow_painter else float(rng.gamma(2.0, 5.0))
            row.update(fidelity_p95_ms=late, fidelity_p50_ms=late / 2, fidelity_violated=late > 50,
                       fidelity_bound_ms=50.0, fidelity_frames=40)
            return row

        r = _base(pid, group, "practice", idx, "acceptability", "practice:slow")
        r.update(response="yes", response_value=1.0, tokens_per_s=12.0, ttft_ms=1200.0, strategy="token")
        rows.append(fid(r))
        idx += 1
        for _ in range(reps):
            for rate in (10, 15, 25, 40, 60):
                for ttft in (300, 2000):
                    shift = 6.0 if ttft == 2000 else 0.0
                    p = 0.02 + 0.96 / (1 + np.exp(-(rate - m - shift) / 3.0))
                    y = float(rng.random() < p)
                    r = _base(pid, group, "acceptability", idx, "acceptability",
                              f"acceptability:rate={rate},ttft={ttft},delivery={delivery}")
                    r.update(f_rate=str(rate), f_ttft=str(ttft), f_delivery=delivery, tokens_per_s=float(rate),
                             ttft_ms=float(ttft) + rng.normal(0, 5), chars_per_s=4.1 * rate, e2e_ms=60000 / rate,
                             strategy="token", indicator="dots", delivery=delivery,
                             response="yes" if y else "no", response_value=y)
                    rows.append(fid(r))
                    idx += 1
        for strategy in ("token", "smooth"):
            for indicator in ("none", "dots"):
                mean = 2.5 + (1.0 if strategy == "smooth" else 0.0) + (0.3 if indicator == "dots" else 0.0) + bias
                rating = float(np.clip(np.rint(mean + rng.normal(0, 0.6)), 1, 5))
                r = _base(pid, group, "ratings", idx, "rating",
                          f"ratings:strategy={strategy},indicator={indicator}")
                r.update(f_strategy=strategy, f_indicator=indicator, strategy=strategy, indicator=indicator,
                         tokens_per_s=30.0, ttft_ms=1500.0, response=str(int(rating)), response_value=rating)
                rows.append(fid(r))
                idx += 1
        r = _base(pid, group, "ratings", idx, "rating", "attention:instructed-rating")
        passed = pid != inattentive
        r.update(attention_check="instructed-rating", attention_passed=passed, response="2" if passed else "5",
                 response_value=2.0 if passed else 5.0, strategy="token")
        r["failed_attention"] = not passed
        rows.append(fid(r))
        idx += 1
        for _ in range(2):
            for passage, ca, cb in (("tea", 30.0, 52.0), ("subway", 28.0, 45.0)):
                y = float(rng.random() < (0.2 if passage == "tea" else 0.35))
                r = _base(pid, group, "tokenizers", idx, "afc", f"tokenizers:passage={passage}")
                r.update(f_passage=passage, a_tokenizer="cl100k_base", b_tokenizer="qwen3.6", a_tokens_per_s=25.0,
                         b_tokens_per_s=25.0, a_chars_per_s=ca, b_chars_per_s=cb, a_strategy="token",
                         b_strategy="token", order="AB" if idx % 2 else "BA", response="a", response_value=y,
                         strategy="token")
                rows.append(fid(r))
                idx += 1
        people.append({"participant": pid, "study": "sim-study", "state": "completed", "group": group,
                       "language": "en", "device": device, "browser": "firefox" if pid % 3 == 0 else "chromium",
                       "flags": "", "withdrawn": False,
                       "session_excluded": False, "trials_answered": idx, "excluded": False, "exclusion_reason": ""})
    trials = pd.DataFrame(rows)
    for pid in (slow_painter, inattentive):
        if pid is not None:
            trials.loc[trials["participant"] == pid, "failed_attention"] = pid == inattentive
    return trials, pd.DataFrame(people)
