"""Specifications of the named arrival patterns (playback.core.arrivals) and the timing parts they are built from
(stall_count, pauses, flush in playback.core.timing / playback.core.synth): each pattern is seeded and deterministic,
and each has the property that defines it."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from playback.core import arrival_figure, arrivals, metrics, synth
from playback.core.textunits import CJK_CHAR, count_chars
from playback.core.timing import TimingSpec, TimingSpecError
from studyapp.design import plan as design
from studyapp.design import studyfile

SEEDS = range(12)


def stream(name: str, seed: int = 0):
    return arrival_figure.pattern_stream(name, seed)


def arrival_times(s) -> np.ndarray:
    """The distinct times at which visible text arrives (what a client receives as separate chunks)."""
    return np.unique([p.t_ms for p in s.pieces if p.text])


def gaps(s) -> np.ndarray:
    return np.diff(arrival_times(s))


# --- every pattern ---------------------------------------------------------------------------------------------

def test_there_are_nine_patterns_six_timing_models_and_three_text_kinds():
    kinds = {p.name: p.kind for p in arrivals.PATTERNS.values()}
    assert kinds == {"steady-api": "timing", "fast-dump": "timing", "proxy-bursts": "timing", "long-stalls": "timing",
                     "dump-at-end": "timing", "keepalive-gaps": "timing", "cjk": "text", "code-block": "text",
                     "blob": "text"}


@pytest.mark.parametrize("name", arrivals.names())
def test_a_pattern_is_deterministic_under_its_seed_and_the_whole_text_arrives(name):
    pattern = arrivals.get(name)
    first, again = stream(name, 3), stream(name, 3)
    assert first.to_json() == again.to_json()
    assert "".join(p.text for p in first.pieces) == arrival_figure.texts.bundled_text(pattern.text)
    times = [p.t_ms for p in first.pieces]
    assert times == sorted(times)
    if name != "dump-at-end":  # everything else draws something from the seed (jitter, stall places, phase)
        assert stream(name, 4).to_json() != first.to_json()


def test_an_unknown_pattern_names_the_known_ones():
    with pytest.raises(arrivals.UnknownPattern, match="unknown arrival pattern 'steady'.*steady-api"):
        arrivals.get("steady")


# --- each pattern's defining property -------------------------------------------------------------------------

@pytest.mark.parametrize("seed", SEEDS)
def test_steady_api_runs_at_about_45_tokens_per_second_without_a_gap_a_reader_would_call_a_stall(seed):
    s = stream("steady-api", seed)
    m = metrics.compute(s)
    assert m.ttft_ms == 600
    assert 40 <= m.tokens_per_s <= 50
    assert m.stall_count == 0 and gaps(s).max() < 250


@pytest.mark.parametrize("seed", SEEDS)
def test_fast_dump_delivers_thousands_of_characters_per_second_in_multi_token_chunks(seed):
    s = stream("fast-dump", seed)
    m = metrics.compute(s)
    chars = count_chars("".join(p.text for p in s.pieces))
    rate = chars / ((m.e2e_ms - m.ttft_ms) / 1000)
    assert 1500 <= rate <= 6000
    assert m.e2e_ms - m.ttft_ms < 500
    assert all(p.tokens == 4 for p in s.pieces[:-1])


@pytest.mark.parametrize("seed", SEEDS)
def test_proxy_bursts_arrive_only_on_the_proxys_400_ms_ticks_each_carrying_many_tokens(seed):
    s = stream("proxy-bursts", seed)
    times = arrival_times(s)
    steps = np.diff(times) / 400.0
    assert len(times) >= 4
    assert np.allclose(steps, np.round(steps)) and np.round(steps).min() >= 1  # bursts, whole ticks apart
    tokens_per_burst = sum(p.tokens for p in s.pieces) / len(times)
    assert tokens_per_burst >= 10  # 45 tokens/s x 0.4 s = 18 on average
    assert times[0] >= 600  # the proxy holds the first token until its next tick


@pytest.mark.parametrize("seed", SEEDS)
def test_long_stalls_has_exactly_two_pauses_of_seconds_and_steady_flow_otherwise(seed):
    g = gaps(stream("long-stalls", seed))
    long = g[g >= 1000]
    # two stalls of about 2.5 s each; two drawn into the same inter-token gap show as one of about 5 s
    assert 1 <= len(long) <= 2 and 2 * 1000 <= long.sum() <= 2 * 5000
    assert g[g < 1000].max() < 250


def test_long_stalls_places_its_stalls_by_the_seed_mostly_apart():
    where = [tuple(np.flatnonzero(gaps(stream("long-stalls", seed)) >= 1000)) for seed in SEEDS]
    assert len(set(where)) > len(SEEDS) // 2
    assert sum(len(w) == 2 for w in where) > len(SEEDS) // 2


def test_dump_at_end_has_every_character_in_one_final_arrival_when_generation_ends():
    s = stream("dump-at-end")
    assert len(arrival_times(s)) == 1
    n = sum(p.tokens for p in s.pieces)
    assert s.pieces[0].t_ms == pytest.approx(600 + (n - 1) / 45 * 1000)  # what the model took to generate it


@pytest.mark.parametrize("seed", SEEDS)
def test_keepalive_gaps_go_quiet_for_1_5_s_after_every_1_2_s_of_text(seed):
    s = stream("keepalive-gaps", seed)
    g = gaps(s)
    quiet = g[g >= 1500]
    assert len(quiet) >= 2
    assert np.all(quiet < 1500 + 250)  # the pause plus at most one ordinary inter-token gap
    m = metrics.compute(s)
    generation = m.e2e_ms - m.ttft_ms - 1500 * len(quiet)
    assert len(quiet) == int(np.ceil(generation / 1200)) - 1


def test_cjk_is_chinese_text_cut_by_a_chinese_vocabulary_into_one_or_two_characters_per_token():
    s = stream("cjk")
    text = "".join(p.text for p in s.pieces)
    assert len(CJK_CHAR.findall(text)) / len(text) > 0.6
    assert s.meta.tokenizer == "qwen3.6"
    assert 1.0 <= count_chars(text) / sum(p.tokens for p in s.pieces) <= 2.0


def test_code_block_is_an_answer_around_a_fenced_indented_block():
    text = "".join(p.text for p in stream("code-block").pieces)
    block = re.search(r"```python\n(.*?)```", text, re.S)
    assert block and block.group(1).count("\n        ") >= 5


def test_blob_has_hundreds_of_characters_without_a_word_boundary():
    text = "".join(p.text for p in stream("blob").pieces)
    assert max(map(len, re.split(r"\s+", text))) >= 600
    assert re.search(r"\b[0-9a-f]{64}\b", text)


# --- the timing parts ------------------------------------------------------------------------------------------

def test_pause_delays_count_the_whole_periods_strictly_before_each_time():
    t = np.array([0.0, 999.0, 1000.0, 1000.5, 2500.0])
    assert synth.pause_delays(t, 1000.0, 300.0).tolist() == [0, 0, 0, 300, 600]


def test_flush_ticks_move_each_time_to_the_first_tick_at_or_after_it():
    t = np.array([0.0, 50.0, 100.0, 101.0, 990.0])
    assert synth.flush_ticks(t, 400.0, 100.0).tolist() == [100, 100, 100, 500, 1300]


@pytest.mark.parametrize(("changes", "field", "problem"), [
    ({"stall_count": -1, "stall_ms": 10}, "stall_count", ">= 0"),
    ({"stall_count": 1.5}, "stall_count", "integer"),
    ({"stall_count": 2}, "stall_ms", "> 0 when stall_count"),
    ({"stall_count": 2, "stall_ms": 100, "stall_rate_per_s": 1}, "stall_count", "either"),
    ({"pause_every_ms": 1000}, "pause_ms", "together"),
    ({"pause_ms": 1000}, "pause_every_ms", "together"),
    ({"flush": "interval"}, "flush_ms", "> 0"),
    ({"flush": "end", "flush_ms": 100}, "flush_ms", "only used"),
    ({"flush": "sometimes"}, "flush", "must be one of"),
])
def test_the_new_timing_fields_are_validated_naming_the_field(changes, field, problem):
    with pytest.raises(TimingSpecError, match=problem) as info:
        TimingSpec(**changes)
    assert info.value.field == field


def test_every_pattern_timing_round_trips_through_json_and_old_specs_still_load():
    for pattern in arrivals.PATTERNS.values():
        assert TimingSpec.from_json(pattern.timing.to_json()) == pattern.timing
        assert not pattern.timing.is_constant
    old = {"ttft_ms": 500.0, "rate": 25.0, "jitter": "none"}  # a spec stored before these fields existed
    assert TimingSpec.from_dict(old) == TimingSpec()
    assert synth.synth_params(synth.synthesize("a b c", "word", TimingSpec(), seed=1))[0] == TimingSpec()


def test_the_flush_phase_is_drawn_after_the_old_draws_so_a_flush_only_moves_pieces_to_their_tick():
    # new draws come after the old ones: existing stimuli keep their streams bit for bit
    spec = TimingSpec(rate=30, jitter="gamma", jitter_cv=0.5, stall_rate_per_s=0.5, stall_ms=400)
    base = synth.synthesize("one two three four five six seven eight nine ten " * 4, "word", spec, seed=5)
    flushed = synth.synthesize("one two three four five six seven eight nine ten " * 4, "word",
                              replace(spec, flush="interval", flush_ms=200.0), seed=5)
    for before, after in zip(base.pieces, flushed.pieces):
        assert after.t_ms >= before.t_ms and after.t_ms - before.t_ms < 200


# --- where patterns are named ---------------------------------------------------------------------------------

def test_the_study_schema_lists_exactly_the_patterns_and_arrival_is_a_parameter():
    enum = studyfile.schema()["$defs"]["params"]["properties"]["arrival"]["enum"]
    assert enum == arrivals.names()
    assert "arrival" in design.PARAM_KEYS
    for pattern in arrivals.PATTERNS.values():
        assert set(pattern.study_params()) <= set(design.PARAM_KEYS)


def test_the_figure_draws_one_panel_per_pattern(tmp_path):
    path = arrival_figure.write(tmp_path / "arrivals.svg")
    svg = path.read_text()
    for name in arrivals.names():
        assert f"{name} (" in svg
    assert arrival_figure.write(tmp_path / "arrivals.svg").read_text() == svg  # reproducible file


def test_the_arrival_curve_counts_characters_at_each_distinct_time():
    s = stream("proxy-bursts")
    t, c = arrival_figure.arrival_curve(s)
    assert t[0] == 0 and c[0] == 0 and c[-1] == count_chars("".join(p.text for p in s.pieces))
    assert len(t) == len(arrival_times(s)) + 1
    assert json.dumps(c)  # plain ints
