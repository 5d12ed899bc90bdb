"""The playground as a designer's lab: each variant may have its own text and question, and the chat context
shows the user's question above each answer."""

from __future__ import annotations

from playback.core import playground, texts
from playback.core.playground import Config, Source, Variant


def test_each_variant_can_have_its_own_text_and_language():
    config = playground.parse({"src": "demo", "name": "en-chat-coffee", "n": "3", "b.name": "zh-chat-tea",
                               "c.text": "def f(x):\n    return x * 2\n"}).config
    a, b, c = config.variants
    assert b.text_name == "zh-chat-tea" and c.text.startswith("def f")
    text, language = texts.bundled_text("en-chat-coffee"), "en"
    streams = [playground.variant_stream(v, seed=1, text=text, language=language) for v in config.variants]
    assert "".join(p.text for p in streams[0].pieces) == text
    assert "".join(p.text for p in streams[1].pieces) == texts.bundled_text("zh-chat-tea")
    assert streams[1].meta.language == "zh"
    assert "".join(p.text for p in streams[2].pieces) == c.text
    assert playground.parse(playground.to_params(config)).config == config


def test_a_typed_text_takes_its_language_from_its_letters():
    assert playground.guess_language("绿茶为什么发苦？因为水太烫。") == "zh"
    assert playground.guess_language("Why is my tea bitter? 因为") == "en"


def test_a_variant_text_plays_even_over_a_recorded_source_and_its_spec_says_so():
    config = Config(source=Source(kind="trace", name="", id=3), variants=(Variant(text_name="zh-chat-tea"),
                                                                          Variant()))
    spec = playground.variant_spec(config, 0)
    assert spec["kind"] == "synthetic" and spec["text"] == "zh-chat-tea"
    assert playground.variant_spec(config, 1)["kind"] == "transformed"


def test_the_chat_context_shows_each_answers_question_only_when_on():
    off = playground.parse({"src": "demo", "name": "en-chat-coffee", "b.name": "zh-chat-tea"}).config
    assert [playground.question(off, v) for v in off.variants] == ["", ""]
    on = playground.parse({"src": "demo", "name": "en-chat-coffee", "b.name": "zh-chat-tea", "chat": "1"}).config
    assert playground.question(on, on.variants[0]) == playground.DEMO_QUESTIONS["en-chat-coffee"]
    assert playground.question(on, on.variants[1]) == playground.DEMO_QUESTIONS["zh-chat-tea"]
    own = playground.parse({"src": "demo", "chat": "1", "q": "Why?", "b.q": "为什么？"}).config
    assert [playground.question(own, v) for v in own.variants] == ["Why?", "为什么？"]
    assert playground.parse(playground.to_params(own)).config == own


def test_every_demo_text_has_a_question():
    assert set(playground.DEMO_QUESTIONS) == set(texts.bundled_texts())


def test_bad_variant_texts_are_named():
    result = playground.parse({"src": "demo", "a.name": "nope", "b.q": "x" * (playground.MAX_QUESTION_CHARS + 1)})
    assert result.errors[0].startswith("a.name: must be one of ")
    assert result.errors[1] == f"b.q: at most {playground.MAX_QUESTION_CHARS} characters, got 2001"
