"""The simulated study designs of the end-to-end validation (``benchmarks/e2e.py``), with their known truth.

Each design is a study file (rate × TTFT acceptability, the study the issue's researcher ran: rates 4-40 tokens/s
at TTFT 200 and 1500 ms) and a population of bots (``studyapp.bots.observers.Population``; a ``Mixture`` of two for
the misspecified population). The base population: thresholds log-normal around 12 tokens/s with SD 0.10 log10
units, raised 0.12 log10 units per second of TTFT, lapse 0.03, the bots' default slope (5 per log10 unit,
SD 0.2 of its log across bots). Pure Python.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from analysis.stats.simulate import Mixture, PopulationLike
from studyapp.bots.observers import Population

RATES = [4, 6, 9, 13, 20, 28, 40]
TTFTS = [200, 1500]
REPEATS = 4


def rate_ttft_study(rates: list[float] | None = None, ttfts: list[int] | None = None, repeats: int = REPEATS
                    ) -> dict[str, Any]:
    """A schema-valid study file: yes/no acceptability over rate × TTFT, each cell ``repeats`` times."""
    return {
        "version": 1, "id": "e2e-rate-ttft", "title": {"en": "End-to-end validation: rate x TTFT"},
        "languages": ["en"],
        "texts": {"consent": {"en": "A simulated study."}, "instructions": {"en": "Answer each question."},
                  "debrief": {"en": "Thank you."}},
        "stimuli": {"answer": {"text": "en-chat-coffee", "max_chars": 240, "tokenizer": "cl100k_base",
                               "ttft_ms": 500, "rate": 25, "seed": 1}},
        "factors": [{"name": "rate", "sets": "rate", "levels": list(rates or RATES)},
                    {"name": "ttft", "sets": "ttft_ms", "levels": list(ttfts or TTFTS)}],
        "blocks": [{"id": "acceptability", "type": "main", "stimulus": "answer",
                    "design": {"factorial": ["rate", "ttft"]}, "repeats": repeats,
                    "task": {"type": "acceptability",
                             "question": {"en": "Would this speed be acceptable to you in a chat assistant?"}}}],
        "exclusions": [{"rule": "failed_attention"}, {"rule": "incomplete"}],
    }


BASE = Population(threshold=12.0, threshold_sd=0.10, ttft_shift=0.12, lapse=0.03)


@dataclass(frozen=True)
class Design:
    """One row group of the table: a study, a population and how many participants."""

    name: str
    participants: int
    population: PopulationLike
    study: dict
    note: str


def designs() -> dict[str, Design]:
    study = rate_ttft_study()
    out = [
        Design("n20", 20, BASE, study, "base population, 20 participants"),
        Design("n40", 40, BASE, study, "base population, 40 participants"),
        Design("n80", 80, BASE, study, "base population, 80 participants"),
        Design("lapse.02", 40, replace(BASE, lapse=0.02), study, "lapse 0.02"),
        Design("lapse.06", 40, replace(BASE, lapse=0.06), study, "lapse 0.06"),
        Design("sd.05", 40, replace(BASE, threshold_sd=0.05), study, "threshold SD 0.05 log10"),
        Design("sd.20", 40, replace(BASE, threshold_sd=0.20), study, "threshold SD 0.20 log10"),
        # the 75 % point at TTFT 1.5 s (about 38.6 tokens/s) just inside the top level (40)
        Design("edge", 40, replace(BASE, threshold=22.0), study, "75 % point near the top level"),
        # misspecified observer: a Weibull core (asymmetric) where the analysis fits a logistic
        Design("weibull", 40, replace(BASE, function="weibull"), study, "Weibull observers, logistic fit"),
        # misspecified population: two groups (thresholds 8 and 18 tokens/s), not one normal
        Design("mixture", 40, Mixture((replace(BASE, threshold=8.0, threshold_sd=0.06),
                                       replace(BASE, threshold=18.0, threshold_sd=0.06)), (0.5, 0.5)),
               study, "two populations (8 and 18 tokens/s), 50/50"),
    ]
    return {d.name: d for d in out}
