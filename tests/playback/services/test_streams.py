"""Storing traces and stimuli: atomic, de-duplicated by content, metrics stored with each stream."""

import pytest

from playback.core import importers, synth
from playback.core.timing import TimingSpec
from playback.models import Stimulus, Trace
from playback.services import streams as services

pytestmark = pytest.mark.django_db


def test_importing_a_file_stores_each_stream_with_its_metrics(data_dir):
    outcome = services.traces_import(paths=[data_dir / "vllm-bench-detailed.json"])
    result = importers.load(data_dir / "vllm-bench-detailed.json")
    assert outcome.created == len(result.streams) + len(result.seeds) > 0
    first = Trace.objects.filter(kind=Trace.Kind.STREAM).first()
    assert first.format == "vllm" and first.source_file == "vllm-bench-detailed.json"
    assert first.metrics["ttft_ms"] > 0 and "itl_cv" in first.metrics


def test_reimporting_the_same_trace_does_not_duplicate_it(data_dir):
    a = services.traces_import(paths=[data_dir / "genai-perf-profile_export.json"])
    b = services.traces_import(paths=[data_dir / "genai-perf-profile_export.json"])
    assert a.created > 0
    assert (b.created, b.duplicates) == (0, a.created)
    assert Trace.objects.count() == a.created
    assert sorted(b.trace_ids) == sorted(a.trace_ids)


def test_a_broken_file_imports_nothing_not_even_the_good_files_before_it(data_dir, tmp_path):
    broken = tmp_path / "zz-broken.jsonl"
    broken.write_text('{"pacelab_trace": 1, "id": "x", "pieces": [[5, "a"], [1, "b"]]}\n')
    with pytest.raises(importers.TraceFormatError, match="zz-broken.jsonl"):
        services.traces_import(paths=[data_dir / "genai-perf-profile_export.json", broken])
    assert Trace.objects.count() == 0


def test_the_shipped_demo_traces_import_as_replayable_streams():
    from playback.core.demo import trace_files

    outcome = services.traces_import(paths=trace_files())
    assert outcome.created == 5
    assert set(Trace.objects.values_list("kind", flat=True)) == {"stream"}


def test_summary_only_formats_are_stored_as_timing_seeds(tmp_path):
    path = tmp_path / "llmperf_individual_responses.json"
    path.write_text('[{"ttft_s": 0.5, "inter_token_latency_s": 0.02, "number_output_tokens": 100, '
                    '"end_to_end_latency_s": 2.5, "request_output_throughput_token_per_s": 40.0, '
                    '"number_input_tokens": 50, "error_code": null, "error_msg": ""}]')
    services.traces_import(paths=[path], format="llmperf")
    trace = Trace.objects.get()
    assert trace.kind == Trace.Kind.SEED and trace.metrics["ttft_ms"] == pytest.approx(500.0)


def test_a_stimulus_is_saved_once_per_name_and_updated_in_place():
    spec = TimingSpec(ttft_ms=300, rate=20)
    s1 = synth.synthesize("Hello there, friend.", "word", spec)
    services.stimulus_save(name="greeting", stream=s1, spec={"timing": spec.to_dict()})
    s2 = synth.synthesize("Hello there, friend.", "word", TimingSpec(ttft_ms=300, rate=10))
    stim = services.stimulus_save(name="greeting", stream=s2, spec={})
    assert Stimulus.objects.count() == 1
    assert stim.metrics["tokens_per_s"] == pytest.approx(10.0)
    assert stim.content_hash == s2.content_hash()
