"""Simulated acceptability frames from a known log-normal population, answered by the bots' observer model.

Not a test module. The design is issue 40's: rate 4–40 tokens/s × TTFT 200/1500 ms, thresholds log-normal
(Normal on log10 tokens/s) around ``median`` with SD ``sd`` log10 units, raised by ``ttft_shift`` log10 units per
second of TTFT, lapse ``lapse``. Each participant answers with ``studyapp.bots.observers`` (the bots' own observers),
so the truth is the bots' population.
"""

from __future__ import annotations

import math
import random

import pandas as pd
from scipy import special

from studyapp.bots.observers import Population

LEVELS = (4, 6, 8, 12, 16, 24, 32, 40)
TTFTS = (200, 1500)

SPEC = {
    "id": "lognormal-population",
    "title": {"en": "Acceptability over rate and TTFT"},
    "factors": [{"name": "rate", "sets": "rate", "levels": list(LEVELS)},
                {"name": "ttft", "sets": "ttft_ms", "levels": list(TTFTS)}],
    "blocks": [{"id": "acceptability", "type": "main", "design": {"factorial": ["rate", "ttft"]},
                "task": {"type": "acceptability"}}],
}


def population(median: float = 12.0, sd: float = 0.10, ttft_shift: float = 0.12, lapse: float = 0.03) -> Population:
    return Population(threshold=median, threshold_sd=sd, ttft_shift=ttft_shift, lapse=lapse, guess=0.0)


def true_point(pop: Population, ttft_ms: float, share: float = 0.75) -> float:
    """The rate at which ``share`` of the population accepts at ``ttft_ms`` (ignoring the lapse)."""
    u = math.log10(pop.threshold) + pop.ttft_shift * ttft_ms / 1000 + float(special.ndtri(share)) * pop.threshold_sd
    return 10**u


def frames(n: int = 80, seed: int = 0, *, pop: Population | None = None, repeats: int = 2,
           levels=LEVELS, ttfts=TTFTS) -> pd.DataFrame:
    """Trial rows (participant, block, trial_type, condition, f_rate, f_ttft, response_value, ...)."""
    pop = pop or population()
    rng = random.Random(seed)
    rows = []
    for pid in range(1, n + 1):
        bot = pop.draw(rng)
        for _ in range(repeats):
            for rate in levels:
                for ttft in ttfts:
                    p = bot.observer(ttft / 1000).p_yes(rate)
                    y = float(rng.random() < p)
                    rows.append({"participant": pid, "block": "acceptability", "trial_type": "acceptability",
                                 "condition": f"acceptability:rate={rate},ttft={ttft}", "f_rate": str(rate),
                                 "f_ttft": str(ttft), "tokens_per_s": float(rate), "ttft_ms": float(ttft),
                                 "response": "yes" if y else "no", "response_value": y})
    return pd.DataFrame(rows)
