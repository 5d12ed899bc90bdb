"""The fast path of score_traces for per-request arrays agrees with the importer and the stream core on what the
model reads (TTFT, decode rate: so on every share), on every request of the vLLM sample and of a replicated file."""

import json
import sys
from pathlib import Path

import pytest

from analysis.stats import perception_model, scoring
from analysis.stats.demo_model import DEMO_MODEL_PATH
from analysis.stats.score_input import load_requests

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import scoring as bench  # noqa: E402

VLLM = Path(__file__).resolve().parents[2] / "data" / "vllm-bench-detailed.json"
MODEL = perception_model.load(DEMO_MODEL_PATH)


@pytest.mark.parametrize("replicated", [False, True])
def test_fast_and_full_paths_agree(tmp_path, replicated):
    path = VLLM
    if replicated:
        path = tmp_path / "rep.json"
        bench.write_file(path, 60, seed=3)
    fast, full = load_requests([path], MODEL), load_requests([path], MODEL, fast=False)
    assert [r.id for r in fast.requests] == [r.id for r in full.requests] and len(fast.requests) >= 4
    for a, b in zip(fast.requests, full.requests):
        assert a.ttft_ms == pytest.approx(b.ttft_ms, rel=1e-12)
        assert a.tokens_per_s == pytest.approx(b.tokens_per_s, rel=1e-9)
        assert a.chars_per_s == pytest.approx(b.chars_per_s, rel=0.1)
        assert a.stall_total_ms <= b.stall_total_ms + 1e-9
    sa, sb = scoring.score(MODEL, fast.requests), scoring.score(MODEL, full.requests)
    assert [r["share"] for r in sa["requests"]] == pytest.approx([r["share"] for r in sb["requests"]], abs=1e-9)
    assert sa["acceptable"] == sb["acceptable"] and sa["extrapolated"]["count"] == sb["extrapolated"]["count"]


def test_a_file_the_fast_path_does_not_take_goes_through_the_importer_which_names_the_problem(tmp_path):
    doc = json.loads(VLLM.read_text())
    doc["ttfts"][1] = "soon"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    from analysis.stats.score_input import TraceInputError

    with pytest.raises(TraceInputError, match=r"bad\.json: request 1: ttfts"):
        load_requests([path], MODEL)
