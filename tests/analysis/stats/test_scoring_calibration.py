"""The exported model predicts how acceptable new stimuli are, on bots whose observer is known.

Bots with a known population (not the demo's defaults: threshold 14 tokens/s, SD 0.12 log10 units, +0.15 log10
units per second of TTFT) answer the demo study's acceptability block (rate × TTFT × delivery, 100 bots, through
the real journeys, ``analysis.stats.simulate``); the real pipeline analyses them and ``perception_model.build`` exports
the model, as ``export_model`` does. The model then scores held-out stimuli: rates and TTFTs the study never
showed, synthesised and measured with the stream core. Their true acceptability is the share of the bot population
whose own threshold the stimulus meets; held-out outcomes are 400 new bots each accepting or not. Reported: the
calibration curve (predicted share in bins against the true share and the observed acceptance), the Brier score
of the model's predictions against that of the true observer's probabilities on the same outcomes, and the
coverage of the per-request 95 % intervals: the share of held-out stimuli whose true share lies inside them.
Target: the number covered lies within the central 95 % band of Binomial(n stimuli, 0.95) (24 to 28 of 28).
The stimuli share the model's uncertainty, so misses come in groups and the band is a nominal yardstick. The
model's intervals before its uncertainty was drawn jointly (independent normals read from the fit's intervals,
the model ``build`` makes without the answers) are printed beside it for comparison, not tested.
"""

import copy
import math

import numpy as np
import pytest
from scipy import special, stats

from analysis.stats import demo_model, perception_model, scoring
from analysis.stats.scoring import Request
from playback.core import metrics, texts
from playback.core.synth import synthesize
from playback.core.timing import TimingSpec
from studyapp.bots import observers as bot_models
from studyapp.design import studyfile

TRUE = bot_models.Population(threshold=14.0, threshold_sd=0.12, ttft_shift=0.15)
RATES = (12, 18, 22, 28, 34, 45, 52)
TTFTS = (500, 900, 1300, 1700)


def acceptability_only() -> dict:
    doc = copy.deepcopy(studyfile.load_study(studyfile.demo_study_path()))
    doc["id"] = "calibration"
    doc["blocks"] = [b for b in doc["blocks"] if b["id"] in ("practice", "acceptability")]
    doc["attention_checks"]["items"] = []
    doc["counterbalancing"].pop("afc_order", None)
    assert studyfile.validate(doc) == []
    return doc


def true_share(tps: float, ttft_ms: float) -> float:
    centre = math.log10(TRUE.threshold) + TRUE.ttft_shift * ttft_ms / 1000.0
    return float(special.ndtr((math.log10(tps) - centre) / TRUE.threshold_sd))


@pytest.fixture(scope="module")
def calibration():
    model, results = demo_model.fit(acceptability_only(), population=TRUE, n=100, seed=11, created="test")
    intervals_only = perception_model.build(results, acceptability_only(), {"study": "calibration", "bots": True})
    text = texts.texts_in("en")["en-chat-coffee"][:240]
    reqs = []
    for rate in RATES:
        for ttft in TTFTS:
            m = metrics.compute(synthesize(text, "cl100k_base", TimingSpec(ttft_ms=ttft, rate=rate), seed=rate))
            reqs.append(Request(id=f"{rate}@{ttft}", level=m.tokens_per_s, second=m.ttft_ms, ttft_ms=m.ttft_ms,
                                tokens_per_s=m.tokens_per_s, chars_per_s=m.chars_per_s,
                                stall_total_ms=m.stall_total_ms))
    scored = scoring.score(model, reqs)
    pred = np.array([r["share"] for r in scored["requests"]])
    truth = np.array([true_share(r.tokens_per_s, r.ttft_ms) for r in reqs])
    # held-out bots: each accepts a stimulus when it meets the bot's own threshold at that TTFT
    rng = np.random.default_rng(2026)
    bots = [TRUE.draw(rng) for _ in range(400)]
    outcome = np.array([[r.tokens_per_s >= b.observer(r.ttft_ms / 1000.0).threshold for b in bots] for r in reqs],
                       dtype=float)
    return model, pred, truth, outcome, scored, scoring.score(intervals_only, reqs)


def inside(scored, truth) -> np.ndarray:
    lows = np.array([r["low"] for r in scored["requests"]])
    highs = np.array([r["high"] for r in scored["requests"]])
    return (lows <= truth) & (truth <= highs)


def test_predictions_track_the_true_acceptability_of_held_out_stimuli(calibration):
    model, pred, truth, _outcome, scored, _before = calibration
    assert model["simulated"] and scored["extrapolated"]["count"] == 0
    error = np.abs(pred - truth)
    rank = np.corrcoef(np.argsort(np.argsort(pred)), np.argsort(np.argsort(truth)))[0, 1]
    lows = np.array([r["low"] for r in scored["requests"]])
    highs = np.array([r["high"] for r in scored["requests"]])
    covered = inside(scored, truth)
    print("\nstimulus (rate@TTFT) | tokens/s | predicted [95 % interval] | true share")
    for r, p, lo, hi, t in zip(scored["requests"], pred, lows, highs, truth):
        print(f"  {r['id']:>9} | {r['tokens_per_s']:6.1f} | {p:.3f} [{lo:.3f}, {hi:.3f}] | {t:.3f}")
    print(f"mean |predicted - true share| {error.mean():.3f}, max {error.max():.3f}, rank correlation {rank:.3f}; "
          f"true share inside the predicted 95 % interval for {covered.mean():.0%} of {len(truth)} stimuli")
    assert error.mean() < 0.08 and rank > 0.85


def test_calibration_curve_and_brier_score_against_the_true_observer(calibration):
    _model, pred, truth, outcome, _scored, _before = calibration
    observed = outcome.mean(axis=1)
    brier_model = float(np.mean((pred[:, None] - outcome) ** 2))
    brier_true = float(np.mean((truth[:, None] - outcome) ** 2))
    brier_base = float(np.mean((outcome.mean() - outcome) ** 2))
    print(f"\nBrier score: model {brier_model:.4f}, true observer {brier_true:.4f}, base rate {brier_base:.4f}")
    print("calibration curve: bin | stimuli | mean predicted | mean true | observed")
    edges = np.linspace(0, 1, 6)
    worst = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        sel = (pred >= lo) & ((pred < hi) if hi < 1 else (pred <= hi))
        if not sel.any():
            continue
        print(f"  {lo:.1f}-{hi:.1f} | {sel.sum():2d} | {pred[sel].mean():.3f} | {truth[sel].mean():.3f} | "
              f"{observed[sel].mean():.3f}")
        if sel.sum() >= 2:
            worst = max(worst, abs(pred[sel].mean() - observed[sel].mean()))
    assert brier_model - brier_true < 0.02 and brier_model < 0.5 * brier_base
    assert worst < 0.12


def test_per_request_intervals_cover_the_true_share_of_held_out_stimuli(calibration):
    model, _pred, truth, _outcome, scored, before = calibration
    assert model["population"]["uncertainty"] == "joint draws"
    covered = inside(scored, truth)
    low = int(stats.binom.ppf(0.025, len(truth), 0.95))
    widths = np.array([r["high"] - r["low"] for r in scored["requests"]])
    old = inside(before, truth)
    old_widths = np.array([r["high"] - r["low"] for r in before["requests"]])
    print(f"\n95 % intervals: true share inside for {covered.sum()} of {len(truth)} stimuli ({covered.mean():.0%}; "
          f"target {low}-{len(truth)}, the central 95 % of Binomial({len(truth)}, 0.95)), "
          f"mean width {widths.mean():.3f}")
    print(f"before (independent normals from the fit's intervals): {old.sum()} of {len(truth)} ({old.mean():.0%}), "
          f"mean width {old_widths.mean():.3f}")
    assert covered.sum() >= low
    # an interval that covers by being useless would pass the count: the intervals stay informative
    assert widths.mean() < 0.35
