"""Each render strategy declares its options in its own module; the playground validates against them."""

from __future__ import annotations

import re

import pytest

from playback.core import playground, strategy_options


def test_every_playground_strategy_has_a_declaration_and_the_presets_declare_their_documented_options():
    declared = strategy_options.declared()
    assert set(playground.STRATEGIES) <= set(declared)
    assert {"delayInMs", "chunking"} <= set(declared["ai-sdk-smooth"])
    assert {"maxBufferedMs", "floorCharsPerSec"} <= set(declared["chat-ui-smooth"])
    assert {"startSpeed", "endSpeed"} <= set(declared["accelerating"])
    assert set(declared["typewriter"]) == {"charsPerSec"}
    assert declared["token"] == {}
    chunking = declared["ai-sdk-smooth"]["chunking"]
    assert chunking.type == "choice" and chunking.default == "word" and "segmenter" in chunking.choices
    assert declared["chat-ui-smooth"]["maxBufferedMs"].default == 400


def test_values_are_typed_and_defaults_left_out():
    parsed = strategy_options.parse("chat-ui-smooth", {"maxBufferedMs": "250", "headroom": "1.1", "tauMs": ""})
    assert parsed.errors == []
    assert parsed.options == {"maxBufferedMs": 250.0}  # headroom is the default; empty is absent
    parsed = strategy_options.parse("smooth", {"maxChars": "12"})
    assert parsed.options == {"maxChars": 12} and isinstance(parsed.options["maxChars"], int)


@pytest.mark.parametrize(("strategy", "given", "message"), [
    ("typewriter", {"charsPerSec": "0"}, "a.opt.charsPerSec: must be a number > 0 and <= 100000, got '0'"),
    ("typewriter", {"charsPerSec": "fast"}, "a.opt.charsPerSec: must be a number > 0 and <= 100000, got 'fast'"),
    ("smooth", {"minChars": "1.5"}, "a.opt.minChars: must be a whole number >= 1 and <= 1000, got '1.5'"),
    ("ai-sdk-smooth", {"chunking": "sentence"},
     "a.opt.chunking: must be one of word, line, segmenter, regexp, got 'sentence'"),
    ("token", {"delayInMs": "5"}, "a.opt.delayInMs: not an option of token (its options: none)"),
    ("accelerating", {"startSpeed": "30"}, "a.opt.endSpeed: must be >= startSpeed (30), got 24"),
])
def test_bad_values_are_named_with_the_allowed_range(strategy, given, message):
    parsed = strategy_options.parse(strategy, given, "a.opt.")
    assert parsed.errors == [message]
    assert parsed.options == {}


def test_a_module_without_a_declaration_has_no_options():
    assert strategy_options.read_declaration("export function createStrategy() {}") == {}


@pytest.mark.parametrize(("source", "message"), [
    pytest.param("export const OPTIONS = {\n  a: 1\n};\n", "x.js: OPTIONS must be strict JSON",
                 id="it-must-be-strict-json"),
    pytest.param('export const OPTIONS = {"c": {"type": "choice", "default": "z", "choices": ["a"]}};',
                 "x.js: option c: the default 'z' is not one of its choices", id="choices-must-hold-the-default"),
    pytest.param('export const OPTIONS = {"r": {"type": "text", "default": 1}};',
                 "x.js: option r: a text option needs a text default", id="a-text-needs-a-text-default"),
    pytest.param('export const OPTIONS = {"r": {"type": "text", "default": "", "format": "email"}};',
                 "x.js: option r: a text option needs a text default and a format",
                 id="a-text-needs-a-known-format"),
])
def test_a_bad_declaration_is_refused_naming_the_file_and_the_option(source, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        strategy_options.read_declaration(source, "x")


@pytest.mark.parametrize(("query", "variants", "params"), [
    pytest.param({"a.render": "chat-ui-smooth", "a.opt.maxBufferedMs": "200",
                  "b.render": "batch", "b.opt.intervalMs": "40"},
                 ({"maxBufferedMs": 200.0}, {"intervalMs": 40.0}),
                 {"a.opt.maxBufferedMs": "200", "b.batch_ms": "40", "b.opt.intervalMs": None},
                 id="options-and-batch-keeps-its-own-key"),
    pytest.param({"a.render": "ai-sdk-smooth", "a.opt.chunking": "regexp", "a.opt.regexp": "[.!?]\\s+",
                  "b.render": "chat-ui-smooth", "b.opt.locale": "zh"},
                 ({"chunking": "regexp", "regexp": "[.!?]\\s+"}, {"locale": "zh"}),
                 {"a.opt.regexp": "[.!?]\\s+", "a.opt.chunking": "regexp", "b.opt.locale": "zh"},
                 id="a-regexp-and-a-locale"),
])
def test_the_playground_url_carries_strategy_options_and_round_trips(query, variants, params):
    """``params``: what the URL the page links to says (None: the key is absent)."""
    result = playground.parse({"src": "demo", "n": "2", **query})
    assert result.errors == ()
    assert tuple(v.strategy_options() for v in result.config.variants) == variants
    written = playground.to_params(result.config)
    assert {key: written.get(key) for key in params} == params
    assert playground.parse(written).config == result.config


def test_a_bad_option_in_the_url_is_reported_and_the_page_still_renders_with_the_default():
    result = playground.parse({"src": "demo", "a.render": "typewriter", "a.opt.charsPerSec": "-3"})
    assert result.errors == ("a.opt.charsPerSec: must be a number > 0 and <= 100000, got '-3'",)
    assert result.config.variants[0].options == ()


def test_text_options_carry_a_regexp_and_a_locale_and_need_what_their_choice_needs():
    parsed = strategy_options.parse("ai-sdk-smooth", {"chunking": "regexp", "regexp": "[.!?]\\s+", "flags": "i"})
    assert parsed.errors == []
    assert parsed.options == {"chunking": "regexp", "regexp": "[.!?]\\s+", "flags": "i"}
    assert strategy_options.parse("ai-sdk-smooth", {"chunking": "segmenter", "locale": "zh"}).options == {
        "chunking": "segmenter", "locale": "zh"}
    assert strategy_options.parse("chat-ui-smooth", {"locale": "ja"}).options == {"locale": "ja"}
    assert strategy_options.parse("ai-sdk-smooth", {"regexp": " "}).options == {"regexp": " "}  # not stripped
    missing = strategy_options.parse("ai-sdk-smooth", {"chunking": "regexp"}, "a.opt.")
    assert missing.errors == ["a.opt.regexp: required when chunking is regexp (ai-sdk-smooth)"]
    assert missing.options == {}


@pytest.mark.parametrize(("given", "message"), [
    ({"chunking": "regexp", "regexp": "[.!?"},
     "a.opt.regexp: is not a valid regular expression (missing ] (an unterminated character class)): '[.!?'"),
    ({"regexp": "(sentence"}, "a.opt.regexp: is not a valid regular expression (missing ) (an unterminated "
                              "group)): '(sentence'"),
    ({"regexp": "*\\s"}, "a.opt.regexp: is not a valid regular expression (nothing to repeat before '*'): '*\\\\s'"),
    ({"regexp": "x" * 201}, "a.opt.regexp: must be at most 200 characters, got 201"),
    ({"flags": "g"}, "a.opt.flags: must be RegExp flags of at most 4 characters matching [imsu]*, got 'g'"),
    ({"flags": "ii"}, "a.opt.flags: a flag is repeated in 'ii'"),
    ({"locale": "zh_CN"}, "a.opt.locale: is not a language tag (such as en, zh, ja, zh-Hant), got 'zh_CN'"),
    ({"locale": "chinese!"}, "a.opt.locale: is not a language tag (such as en, zh, ja, zh-Hant), got 'chinese!'"),
    ({"locale": 7}, "a.opt.locale: must be a text, got 7"),
])
def test_a_bad_regexp_flags_or_locale_is_named_and_says_why(given, message):
    parsed = strategy_options.parse("ai-sdk-smooth", given, "a.opt.")
    assert parsed.errors == [message]
    assert "regexp" not in parsed.options and "locale" not in parsed.options


def test_every_option_a_strategy_reads_is_declared():
    """Nothing a strategy reads from `opts` is missing from its OPTIONS (isHidden is a hook for tests and
    embedders, a function, not a designer's option)."""
    for path in sorted(strategy_options.STRATEGY_DIR.glob("*.js")):
        if path.stem in ("index", "boundary"):
            continue
        read = set(re.findall(r"\bopts\.(\w+)", path.read_text(encoding="utf-8"))) - {"isHidden"}
        assert read <= set(strategy_options.specs(path.stem)), f"{path.stem}: undeclared {read}"


def test_a_text_declaration_keeps_its_length_and_format():
    spec = strategy_options.read_declaration(
        'export const OPTIONS = {"r": {"type": "text", "default": "", "maxLength": 9, "format": "regexp"}};')["r"]
    assert (spec.type, spec.max_length, spec.format) == ("text", 9, "regexp")
