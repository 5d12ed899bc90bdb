"""Specifications of tokenizer granularity statistics (playback.core.tokenstats) and the bundled texts."""

from __future__ import annotations

import pytest

from playback.core import tokenizers, tokenstats
from playback.core.texts import bundled_text, bundled_texts, texts_in
from playback.core.textunits import CJK_CHAR, count_words


def test_bundled_texts_cover_both_languages_at_chat_and_long_length():
    texts = bundled_texts()
    for language in ("en", "zh"):
        assert any(n.startswith(f"{language}-chat-") for n in texts)
        assert any(n.startswith(f"{language}-long-") for n in texts)
    for name, (language, text) in texts.items():
        assert name.startswith(f"{language}-")
        assert text.strip()


def test_bundled_text_lengths_match_their_kind():
    for name, (language, text) in bundled_texts().items():
        size = count_words(text) if language == "en" else len(CJK_CHAR.findall(text))
        if "-sample-" in name:  # an arrival pattern's sample: short, of one kind (code, blob)
            assert 20 <= len(text) <= 1500, name
        elif "-chat-" in name:
            assert (80 if language == "en" else 150) <= size <= (150 if language == "en" else 300), name
        else:
            assert size >= (600 if language == "en" else 1000), name
            assert "```" in text and "\n## " in text and "\n- " in text, name


def test_bundled_text_by_name_and_language():
    assert bundled_text("en-chat-coffee") == bundled_texts()["en-chat-coffee"][1]
    assert set(texts_in("zh")) == {n for n, (lang, _t) in bundled_texts().items() if lang == "zh"}
    with pytest.raises(KeyError, match="en-chat-coffee"):
        bundled_text("fr-chat-nothing")


def test_char_tokenizer_is_one_char_per_token_and_50_chars_per_second():
    rows = tokenstats.granularity(["char"])
    assert {r.language for r in rows} == {"en", "zh"}
    for row in rows:
        assert row.chars_per_token == 1.0
        assert row.chars_per_second == pytest.approx(50.0)


def test_word_tokenizer_is_one_word_per_token():
    for row in tokenstats.granularity(["word"]):
        assert row.words_per_token == pytest.approx(1.0)


def test_rows_sum_tokens_chars_and_words_over_the_texts_of_a_language():
    texts = {"a": ("en", "hello world"), "b": ("en", "the end"), "c": ("zh", "你好世界")}
    rows = {r.language: r for r in tokenstats.granularity(["cl100k_base"], texts, tokens_per_second=10)}
    assert rows["en"].tokens == 4 and rows["en"].chars == 18 and rows["en"].words == 4
    assert rows["en"].chars_per_second == pytest.approx(18 / 4 * 10)
    tok = tokenizers.get("cl100k_base")
    assert rows["zh"].tokens == tok.count("你好世界")
    assert rows["zh"].words == 4 and rows["zh"].texts == 1


def test_the_same_token_rate_is_a_different_chinese_reading_speed_per_tokenizer():
    rows = {(r.tokenizer, r.language): r for r in tokenstats.granularity(["cl100k_base", "qwen3.6"])}
    # Qwen's vocabulary has many multi-character Chinese tokens; cl100k often needs a token per character.
    assert rows[("qwen3.6", "zh")].chars_per_second > 1.5 * rows[("cl100k_base", "zh")].chars_per_second
    assert rows[("qwen3.6", "en")].chars_per_token > 3


def test_default_rows_cover_every_available_tokenizer():
    rows = tokenstats.granularity()
    assert [r.tokenizer for r in rows][::2] == tokenizers.available()


def test_table_has_a_line_per_row_and_aligned_columns():
    rows = tokenstats.granularity(["char", "cl100k_base"])
    table = tokenstats.format_table(rows).splitlines()
    assert len(table) == 2 + len(rows)
    assert "chars/s at 50 tok/s" in table[0]
    assert table[2].split()[:2] == ["char", "en"]
    assert table[2].split()[-1] == "50"
    assert len({len(line) for line in table[:2]}) == 1
