"""The researcher commands: import_traces, stream_metrics, synth_stream, tokenizers, load_demo."""

import json
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from playback.core import arrivals, importers, metrics, texts
from playback.models import Stimulus, Trace

JSON_KEYS = {"id", "ttft_ms", "tokens_per_s", "output_tokens", "chars_per_s", "itl_mean_ms", "itl_p95_ms",
             "itl_cv", "stall_count", "stall_total_ms", "e2e_ms"}


def run(*args, **kw) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO(), **kw)
    return out.getvalue()


@pytest.mark.django_db
def test_stream_metrics_json_has_the_documented_keys_and_stores_nothing(data_dir):
    rows = json.loads(run("stream_metrics", str(data_dir / "genai-perf-profile_export.json"), "--json"))
    assert rows and all(JSON_KEYS <= set(r) for r in rows)
    expected = metrics.compute(importers.load(data_dir / "genai-perf-profile_export.json").streams[0])
    assert rows[0]["ttft_ms"] == expected.ttft_ms and rows[0]["tokens_per_s"] == expected.tokens_per_s
    assert Trace.objects.count() == 0


def test_stream_metrics_table_names_the_format(data_dir):
    out = run("stream_metrics", str(data_dir / "vllm-bench-detailed.json"))
    assert "format vllm" in out and "TTFT ms" in out


def test_stream_metrics_on_a_broken_file_names_file_and_field(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pacelab_trace": 1, "id": "a", "pieces": [[1, 2]]}\n')
    with pytest.raises(CommandError, match="bad.jsonl: line 1"):
        run("stream_metrics", str(bad))


@pytest.mark.django_db
def test_import_traces_reports_new_and_already_stored(data_dir):
    path = str(data_dir / "vllm-bench-detailed.json")
    first = run("import_traces", path)
    again = run("import_traces", path, "--format", "vllm")
    n = Trace.objects.count()
    assert f"imported {n} new, 0 already stored" in first
    assert f"imported 0 new, {n} already stored" in again


@pytest.mark.django_db
def test_import_traces_on_a_broken_file_says_nothing_was_imported(data_dir, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(CommandError, match="Nothing was imported"):
        run("import_traces", str(data_dir / "vllm-bench-detailed.json"), str(bad))
    assert Trace.objects.count() == 0


def test_synth_stream_gives_exactly_the_requested_rate_and_is_reproducible(tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("Streaming answers feel faster when the first words arrive quickly. " * 5)
    outs = []
    for name in ("a.jsonl", "b.jsonl"):
        run("synth_stream", "--text", str(text), "--tokenizer", "cl100k_base", "--rate", "25", "--ttft", "400",
            "--jitter-cv", "0.5", "--seed", "3", "--out", str(tmp_path / name))
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    run("synth_stream", "--text", str(text), "--tokenizer", "cl100k_base", "--rate", "25", "--ttft", "400",
        "--out", str(tmp_path / "c.jsonl"))
    m = metrics.compute(importers.load(tmp_path / "c.jsonl").streams[0])
    assert m.ttft_ms == 400.0 and m.tokens_per_s == pytest.approx(25.0) and m.itl_cv == pytest.approx(0.0, abs=1e-9)


def test_synth_stream_refuses_a_bad_rate_naming_the_field(tmp_path):
    with pytest.raises(CommandError, match="rate"):
        run("synth_stream", "--text", "en-chat-coffee", "--tokenizer", "word", "--rate", "-1", "--ttft", "0")


@pytest.mark.django_db
def test_synth_stream_can_save_a_named_stimulus():
    run("synth_stream", "--text", "zh-chat-tea", "--tokenizer", "qwen3.6", "--rate", "30", "--ttft", "500",
        "--save-as", "tea")
    stim = Stimulus.objects.get(name="tea")
    assert stim.spec["tokenizer"] == "qwen3.6" and stim.metrics["tokens_per_s"] == pytest.approx(30.0)


def test_synth_stream_takes_a_named_arrival_pattern_with_its_sample_text(tmp_path):
    run("synth_stream", "--arrival", "dump-at-end", "--seed", "2", "--out", str(tmp_path / "d.jsonl"))
    stream = importers.load(tmp_path / "d.jsonl").streams[0]
    assert "".join(p.text for p in stream.pieces) == texts.bundled_text("en-chat-coffee")
    assert len({p.t_ms for p in stream.pieces}) == 1  # everything in the final arrival
    run("synth_stream", "--arrival", "proxy-bursts", "--text", "zh-chat-tea", "--tokenizer", "qwen3.6",
        "--ttft", "900", "--out", str(tmp_path / "b.jsonl"))
    bursts = importers.load(tmp_path / "b.jsonl").streams[0]
    assert bursts.meta.tokenizer == "qwen3.6" and bursts.pieces[0].t_ms >= 900


@pytest.mark.parametrize(("args", "message"), [
    (["--arrival", "bursty"], "--arrival: unknown arrival pattern 'bursty'; known: steady-api"),
    (["--arrival", "steady-api", "--rate", "30", "--jitter-cv", "0.2"], "--rate, --jitter-cv: the arrival pattern"),
    (["--text", "en-chat-coffee", "--tokenizer", "word", "--ttft", "0"], "--rate: required (or give --arrival"),
])
def test_synth_stream_names_the_flag_that_is_wrong_with_an_arrival_pattern(args, message):
    with pytest.raises(CommandError, match=re.escape(message)):
        run("synth_stream", *args)


def test_arrival_patterns_lists_every_pattern_and_plots_their_arrivals(tmp_path):
    rows = json.loads(run("arrival_patterns", "--json"))
    assert [r["name"] for r in rows] == arrivals.names()
    assert next(r for r in rows if r["name"] == "long-stalls")["stall_count"] == 2
    out = run("arrival_patterns", "--plot", str(tmp_path / "a.png"))
    assert "proxy-bursts" in out and (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"


def test_tokenizers_prints_chars_per_second_at_50_tokens_per_second_for_each_tokenizer():
    out = run("tokenizers")
    for name in ("cl100k_base", "qwen3.6", "deepseek-v4", "char", "word"):
        assert name in out


@pytest.mark.django_db
def test_load_demo_is_idempotent():
    first = run("load_demo")
    counts = (Trace.objects.count(), Stimulus.objects.count())
    second = run("load_demo")
    assert counts[0] == 5 and counts[1] >= 6
    assert (Trace.objects.count(), Stimulus.objects.count()) == counts
    assert "5 new" in first and "0 new, 5 already stored" in second
