"""GenAI-Perf profile_export.json: response times and texts become pieces; broken files are named precisely."""

import json
from pathlib import Path

import pytest

from playback.core.importers import TraceFormatError, load
from playback.core.importers.genai_perf import IMPORTER
from playback.core.metrics import compute

DATA = Path(__file__).parents[3] / "data"
SAMPLE = DATA / "genai-perf-profile_export.json"
VARIANTS = DATA / "genai_perf-reasoning-completions.json"


def test_sample_ttft_skips_role_only_first_response_and_usage_gives_tokens():
    doc = json.loads(SAMPLE.read_text())
    first = doc["experiments"][0]["requests"][0]
    stream = load(SAMPLE, "genai_perf").streams[0]
    m = compute(stream)
    assert stream.id == "exp0/req0"
    assert stream.meta.model == "deepseek-v4-pro" and stream.meta.prompt == "Explain streaming."
    assert stream.pieces[0].text == "" and stream.pieces[0].t_ms == 60.0  # the role-only response
    assert m.ttft_ms == 310.0  # (…310000000 - …000000000) ns / 1e6, the first response with text
    # the last text response is the 25th (index 24); then the usage chunk and [DONE]
    assert m.e2e_ms == pytest.approx((first["response_timestamps"][24] - first["timestamp"]) / 1e6)
    assert m.output_tokens == 27
    assert m.tokens_per_s == pytest.approx(26 / ((762.483267 - 310.0) / 1000))
    assert stream.text.startswith("A streamed answer")


def test_every_request_of_every_experiment_is_imported():
    result = load(SAMPLE)
    assert [s.id for s in result.streams] == ["exp0/req0", "exp0/req1", "exp0/req2"]
    assert [s.output_tokens for s in result.streams] == [27, 18, 12]


def test_reasoning_content_and_merged_responses():
    stream = load(VARIANTS).streams[0]
    m = compute(stream)
    assert stream.meta.prompt == "What is 2+2?"  # the last user message's text parts
    assert m.ttfr_ms == 100.0 and m.ttft_ms == 500.0
    assert stream.reasoning_text == "Add them."
    # one response held two chunks: one piece carrying two tokens
    assert [(p.text, p.tokens) for p in stream.channel("content") if p.text] == [("Four.", 2)]
    # completion_tokens (12) has no reasoning breakdown: content tokens come from the chunks
    assert stream.output_tokens is None and m.output_tokens == 2


def test_completions_endpoint_text_chunks():
    stream = load(VARIANTS).streams[1]
    assert stream.id == "exp1/req0" and stream.meta.prompt == "Once upon"
    assert [(p.t_ms, p.text) for p in stream.pieces] == [(50.0, " a"), (75.5, " time")]


def test_triton_text_output(tmp_path):
    doc = {
        "service_kind": "triton",
        "endpoint": "",
        "experiments": [
            {
                "experiment": {"mode": "concurrency", "value": 1},
                "requests": [
                    {
                        "timestamp": 1_000,
                        "request_inputs": {"text_input": "Say it"},
                        "response_timestamps": [3_001_000, 5_001_000],
                        "response_outputs": [{"text_output": "I"}, {"text_output": " like"}],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "triton.json"
    path.write_text(json.dumps(doc))
    stream = load(path).streams[0]
    assert [(p.t_ms, p.text) for p in stream.pieces] == [(3.0, "I"), (5.0, " like")]
    assert stream.meta.prompt == "Say it"


def test_streamed_error_is_a_failed_request_in_the_notes(tmp_path):
    doc = json.loads(SAMPLE.read_text())
    doc["experiments"][0]["requests"][1]["response_outputs"][3] = {"response": 'data: {"error": "boom"}\n\n'}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    result = load(path)
    assert [s.id for s in result.streams] == ["exp0/req0", "exp0/req2"]
    assert result.notes == ["experiments[0].requests[1]: request failed (boom); not imported"]


def _broken(tmp_path: Path, mutate) -> Path:
    doc = json.loads(SAMPLE.read_text())
    req = doc["experiments"][0]["requests"][2]
    mutate(req)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    ("mutate", "field", "problem"),
    [
        (lambda r: r.pop("response_timestamps"), "response_timestamps", "missing"),
        (lambda r: r.update(timestamp="soon"), "timestamp", "expected a time"),
        (lambda r: r["response_timestamps"].__setitem__(4, "x"), "response_timestamps[4]", "expected a time"),
        (lambda r: r["response_timestamps"].__setitem__(4, 1), "response_timestamps[4]", "earlier than"),
        (lambda r: r["response_timestamps"].__setitem__(0, r["timestamp"] - 1), "response_timestamps[0]", "request"),
        (lambda r: r["response_outputs"].pop(), "response_outputs", "outputs for"),
        (lambda r: r["response_outputs"][2].update(response="data: {nope\n\n"), "data", "invalid JSON"),
        (lambda r: r["request_inputs"].update(payload="{"), "request_inputs.payload", "invalid JSON"),
    ],
)
def test_broken_request_names_file_request_and_field(tmp_path, mutate, field, problem):
    path = _broken(tmp_path, mutate)
    with pytest.raises(TraceFormatError) as err:
        IMPORTER.load(path)
    assert err.value.path == str(path)
    assert err.value.where.startswith("experiments[0].requests[2]")
    assert err.value.field == field
    assert problem in err.value.problem


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(SAMPLE.read_text()[:500])
    with pytest.raises(TraceFormatError, match=r"cut\.json: line \d+, column \d+: invalid JSON"):
        IMPORTER.load(path)


def test_sniff_claims_profile_exports_only():
    assert IMPORTER.sniff(SAMPLE.read_bytes()[:65536], SAMPLE)
    assert not IMPORTER.sniff((DATA / "vllm-bench-detailed.json").read_bytes(), SAMPLE)
    assert not IMPORTER.sniff(b'{"experiments": 1}', SAMPLE)
