"""Re-deriving pieces from generated text and chunk times: conservation rules and edge cases."""

from __future__ import annotations

import math
import re
from itertools import accumulate

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playback.core import tokenizers
from playback.core.importers.rederive import (
    chunk_times_array,
    chunk_times_ms,
    guess_language,
    rederive,
    rederive_columns,
    spread,
    spread_bounds,
    tokenizer_for,
)


@given(total=st.integers(0, 400), slots=st.integers(1, 120))
def test_spread_conserves_the_total(total, slots):
    counts = spread(total, slots)
    assert len(counts) == slots
    assert sum(counts) == total
    assert all(c >= 0 for c in counts)


@given(total=st.integers(1, 400), slots=st.integers(1, 120))
def test_spread_gives_every_slot_one_and_differs_by_at_most_one_when_enough(total, slots):
    if total < slots:
        total, slots = slots, total
    counts = spread(total, slots)
    assert min(counts) >= 1
    assert max(counts) - min(counts) <= 1


@given(slots=st.integers(2, 120), data=st.data())
def test_spread_with_too_few_pins_first_and_last_slot(slots, data):
    total = data.draw(st.integers(2, slots - 1)) if slots > 2 else 0
    counts = spread(total, slots)
    assert all(c in (0, 1) for c in counts)
    if total >= 2:
        assert counts[0] == 1 and counts[-1] == 1


def test_spread_of_one_item_goes_to_the_first_slot():
    assert spread(1, 4) == [1, 0, 0, 0]


def test_spread_rejects_no_slots():
    with pytest.raises(ValueError):
        spread(3, 0)


def test_chunk_times_start_at_ttft_and_add_the_gaps():
    assert chunk_times_ms(0.25, [0.0625, 0.125, 0.25]) == [250.0, 312.5, 437.5, 687.5]
    assert chunk_times_ms(125.0, [25.0], scale_ms=1.0) == [125.0, 150.0]


def test_rederive_keeps_chunk_times_text_and_recorded_token_count():
    text = "Hello there, how are you today?"
    times = [250.0, 312.5, 437.5, 687.5]
    pieces, notes = rederive(text, times, 8, "qwen3.6")
    assert [p.t_ms for p in pieces] == times
    assert "".join(p.text for p in pieces) == text
    assert sum(p.tokens for p in pieces) == 8
    assert all(p.text for p in pieces)
    assert notes == []


def test_rederive_without_recorded_count_uses_the_tokenizer_count():
    text = "Hello there, how are you today?"
    pieces, _ = rederive(text, [10.0, 20.0, 30.0], None, "qwen3.6")
    assert sum(p.tokens for p in pieces) == tokenizers.get("qwen3.6").count(text)


def test_rederive_token_count_may_differ_from_the_tokenizer_count():
    pieces, _ = rederive("Hello there", [10.0, 20.0], 7, "char")
    assert [p.tokens for p in pieces] == [3, 4]
    assert "".join(p.text for p in pieces) == "Hello there"


def test_fewer_tokens_than_chunks_keeps_every_chunk_and_notes_it():
    # "ab" is 2 char tokens over 5 chunks: text on the first and last chunk, 3 chunks carry no text.
    times = [100.0, 110.0, 120.0, 130.0, 140.0]
    pieces, notes = rederive("ab", times, 5, "char")
    assert [p.t_ms for p in pieces] == times
    assert [p.text for p in pieces] == ["a", "", "", "", "b"]
    assert [p.tokens for p in pieces] == [1, 1, 1, 1, 1]
    assert any("2 tokens for 5 recorded chunks" in n for n in notes)


def test_fewer_recorded_tokens_than_chunks_is_noted():
    pieces, notes = rederive("abcd", [1.0, 2.0, 3.0, 4.0], 2, "char")
    assert sum(p.tokens for p in pieces) == 2
    assert any("2 output tokens for 4 chunks" in n for n in notes)


def test_token_ending_mid_character_gives_an_empty_piece_that_still_counts():
    text = "你好，世界。"
    units = tokenizers.get("cl100k_base").pieces(text)
    assert "" in units  # cl100k splits one of these characters over two tokens
    times = [float(i) for i in range(len(units))]
    pieces, _ = rederive(text, times, len(units), "cl100k_base")
    assert [p.text for p in pieces] == units
    assert all(p.tokens == 1 for p in pieces)


@pytest.mark.parametrize(
    "times",
    [[], [10.0, 5.0], [-1.0, 2.0], [0.0, math.nan], [0.0, math.inf]],
)
def test_rederive_rejects_bad_chunk_times(times):
    with pytest.raises(ValueError):
        rederive("abc", times, 3, "char")


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(min_size=1, max_size=80),
    gaps=st.lists(st.floats(0, 500, allow_nan=False), max_size=40),
    ttft=st.floats(0, 5000, allow_nan=False),
    extra=st.integers(-3, 30),
)
def test_rederive_invariants(text, gaps, ttft, extra):
    times = chunk_times_ms(ttft, gaps, scale_ms=1.0)
    output_tokens = max(0, len(times) + extra)
    pieces, _ = rederive(text, times, output_tokens, "cl100k_base")
    assert len(pieces) == len(times)
    assert "".join(p.text for p in pieces) == text
    assert sum(p.tokens for p in pieces) == output_tokens
    assert all(b.t_ms >= a.t_ms for a, b in zip(pieces, pieces[1:], strict=False))
    assert pieces[0].text or tokenizers.get("cl100k_base").pieces(text)[0] == ""


def test_tokenizer_for_a_known_model_has_no_notes():
    tok, notes = tokenizer_for("Qwen/Qwen3.6-27B")
    assert tok.name == tokenizers.for_model("Qwen/Qwen3.6-27B")
    assert notes == []


def test_tokenizer_for_no_model_says_what_it_assumed():
    tok, notes = tokenizer_for("")
    assert notes and tok.name in notes[0] and "no model recorded" in notes[0]


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("只要文字持续出现。", "zh"),
        ("ストリーミングは速い", "ja"),
        ("스트리밍은 빠르다", "ko"),
        ("plain English", ""),
        ("", ""),
    ],
)
def test_guess_language_only_names_scripts_it_can_tell(text, lang):
    assert guess_language(text) == lang


@given(total=st.integers(0, 400), slots=st.integers(1, 120))
def test_spread_bounds_are_the_running_sums_of_spread(total, slots):
    assert spread_bounds(total, slots).tolist() == list(accumulate(spread(total, slots), initial=0))


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(min_size=1, max_size=80),
    gaps=st.lists(st.floats(0, 500, allow_nan=False), max_size=40),
    ttft=st.floats(0, 5000, allow_nan=False),
    extra=st.one_of(st.none(), st.integers(-3, 30)),
    tokenizer=st.sampled_from(["cl100k_base", "qwen3.6", "char", "word"]),
)
def test_rederive_in_columns_gives_the_same_pieces_as_rederive(text, gaps, ttft, extra, tokenizer):
    tok = tokenizers.get(tokenizer)
    times = chunk_times_ms(ttft, gaps)
    assert chunk_times_array(ttft, gaps).tolist() == times  # the same floats, bit for bit
    recorded = None if extra is None else max(0, len(times) + extra)
    pieces, notes = rederive(text, times, recorded, tok)
    # twice in one batch, beside another text: each distinct text is tokenised once
    derived = rederive_columns([text, "other text", text], [np.array(times)] * 3, [recorded] * 3, tok)
    for cuts, tokens, col_notes in (derived[0], derived[2]):
        bounds = cuts.tolist()
        assert [text[a:b] for a, b in zip(bounds, bounds[1:])] == [p.text for p in pieces]
        assert tokens.tolist() == [p.tokens for p in pieces]
        assert col_notes == notes


@given(st.text(max_size=300))
def test_letters_are_counted_by_their_complement(text):
    assert len(text) - len(re.findall(r"[\W\d_]", text)) == len(re.findall(r"[^\W\d_]", text))
