"""The importer registry: names, detection of every sample, clear errors, and atomic loading of many files."""

import importlib.util
import shutil
from pathlib import Path

import pytest

from playback.core import importers
from playback.core.importers import (
    FORMAT_NAMES,
    TraceFormatError,
    UnknownFormatError,
    available_formats,
    detect,
    get_importer,
    load,
    load_many,
)

DATA = Path(__file__).parents[3] / "data"
MINE = ("pacelab_jsonl", "genai_perf", "anthropic_sse", "openai_sse")
# Shared samples whose names do not start with their format's name.
ALIASES = {"openai-chat-stream.sse": "openai_sse", "anthropic-messages-stream.sse": "anthropic_sse"}


def expected_format(path: Path) -> str | None:
    if path.name in ALIASES:
        return ALIASES[path.name]
    key = path.name.replace("-", "_")
    return next((name for name in FORMAT_NAMES if key.startswith(name + "_")), None)


def module_exists(name: str) -> bool:
    return importlib.util.find_spec(f"playback.core.importers.{name}") is not None


def test_format_names_are_modules_with_a_matching_importer():
    assert set(MINE) <= set(FORMAT_NAMES)
    assert {"vllm", "sglang", "aiperf", "llmperf", "guidellm"} <= set(FORMAT_NAMES)
    assert len(set(FORMAT_NAMES)) == len(FORMAT_NAMES)
    for name in available_formats():
        importer = get_importer(name)
        assert importer.name == name and importer.description


def test_available_formats_are_exactly_the_installed_modules_in_detection_order():
    assert available_formats() == tuple(n for n in FORMAT_NAMES if module_exists(n))
    assert set(MINE) <= set(available_formats())


SHARED = (
    "genai-perf-profile_export.json",
    "openai-chat-stream.sse",
    "anthropic-messages-stream.sse",
    "vllm-bench-detailed.json",
)


def test_every_sample_is_detected_as_its_format():
    """Each trace in tests/data is claimed by its own importer's sniff alone, so detection order cannot steal it.

    Companion files that are not traces on their own (e.g. AIPerf outputs.json, an LLMPerf summary) are
    claimed by no importer; the shared samples and this suite's files must all be detected.
    """
    detected = {}
    for path in sorted(p for p in DATA.iterdir() if p.is_file() and not p.name.startswith(".")):
        name = expected_format(path)
        if name is None or not module_exists(name):
            continue  # a format whose importer is not written yet
        head = path.read_bytes()[: importers.SNIFF_BYTES]
        claims = [n for n in available_formats() if get_importer(n).sniff(head, path)]
        if claims:
            assert claims == [name], path.name
            assert detect(path) == name
            detected[path.name] = name
    required = [n for n in SHARED if module_exists(expected_format(DATA / n))]
    required += [p.name for p in DATA.iterdir() if p.name.split("-")[0] in MINE]
    assert set(required) <= set(detected)
    assert ("vllm-bench-detailed.json" in detected) == module_exists("vllm")


def test_undetectable_file_names_the_file_and_lists_formats(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some text\n")
    with pytest.raises(TraceFormatError) as err:
        detect(path)
    assert str(path) in str(err.value)
    for name in available_formats():
        assert name in str(err.value)
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(TraceFormatError, match="empty file"):
        load(empty)


def test_unknown_format_name_is_a_clear_error():
    with pytest.raises(UnknownFormatError, match="unknown trace format 'csv'.*genai_perf"):
        get_importer("csv")
    with pytest.raises(UnknownFormatError):
        load(DATA / "genai-perf-profile_export.json", format="csv")


def test_explicit_format_skips_detection_and_options_reach_the_importer():
    result = load(DATA / "openai-chat-stream.sse", format="openai_sse", assume_interval_ms=5)
    assert result.format == "openai_sse" and result.streams[0].pieces[1].t_ms == 5.0
    with pytest.raises(TraceFormatError):
        load(DATA / "openai-chat-stream.sse", format="genai_perf")


def test_missing_module_is_tolerated_but_errors_inside_a_module_surface(monkeypatch):
    real = importers.importlib.import_module

    def fake(name):
        if name == "playback.core.importers.genai_perf":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        if name == "playback.core.importers.openai_sse":
            raise ModuleNotFoundError("No module named 'ijson_missing'", name="ijson_missing")
        return real(name)

    monkeypatch.setattr(importers.importlib, "import_module", fake)
    with pytest.raises(ModuleNotFoundError, match="ijson_missing"):
        available_formats()
    monkeypatch.setattr(importers.importlib, "import_module", lambda n: fake(n) if "openai" not in n else real(n))
    assert "genai_perf" not in available_formats()
    with pytest.raises(UnknownFormatError, match="not installed"):
        get_importer("genai_perf")


def test_load_many_expands_directories_sorted_recursive_without_hidden(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    shutil.copy(DATA / "genai-perf-profile_export.json", tmp_path / "b" / "z.json")
    shutil.copy(DATA / "pacelab_jsonl-two-streams.jsonl", tmp_path / "a.jsonl")
    shutil.copy(DATA / "openai_sse-timed-reasoning.sse", tmp_path / "b" / "c.sse")
    (tmp_path / ".hidden" / "junk.txt").write_text("junk")
    (tmp_path / ".DS_Store").write_text("junk")
    results = load_many([tmp_path])
    assert [Path(r.path).relative_to(tmp_path).as_posix() for r in results] == ["a.jsonl", "b/c.sse", "b/z.json"]
    assert [r.format for r in results] == ["pacelab_jsonl", "openai_sse", "genai_perf"]
    assert len(load_many([tmp_path / "a.jsonl", tmp_path, tmp_path / "a.jsonl"])) == 3  # no duplicates


def test_load_many_is_atomic_over_a_directory_with_one_broken_file(tmp_path):
    shutil.copy(DATA / "pacelab_jsonl-two-streams.jsonl", tmp_path / "1-good.jsonl")
    broken = tmp_path / "2-broken.jsonl"
    broken.write_text('{"pacelab_trace": 1, "pieces": [[5, "a"], [4, "b"]]}\n')
    shutil.copy(DATA / "genai-perf-profile_export.json", tmp_path / "3-good.json")
    got = None
    with pytest.raises(TraceFormatError) as err:
        got = load_many([tmp_path])
    assert got is None
    assert err.value.path == str(broken) and err.value.where == "line 1"


def test_directory_import_skips_companion_files_that_importers_read_beside_a_trace(tmp_path):
    import shutil

    data = Path(__file__).resolve().parents[3] / "data"
    for name in ("aiperf-profile_export.jsonl", "aiperf-profile_export_outputs.json",
                 "llmperf-Qwen-Qwen3-6-27B_550_150_individual_responses.json",
                 "llmperf-Qwen-Qwen3-6-27B_550_150_summary.json"):
        shutil.copy(data / name, tmp_path / name)
    (tmp_path / "README.md").write_text("notes about this run")
    results = importers.load_many([tmp_path])
    assert sorted(r.format for r in results) == ["aiperf", "llmperf"]
