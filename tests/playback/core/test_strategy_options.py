"""Each render strategy declares its options in its own module; the playground validates against them."""

from __future__ import annotations

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
    ("ai-sdk-smooth", {"chunking": "sentence"}, "a.opt.chunking: must be one of word, line, segmenter, got 'sentence'"),
    ("token", {"delayInMs": "5"}, "a.opt.delayInMs: not an option of token (its options: none)"),
    ("accelerating", {"startSpeed": "30"}, "a.opt.endSpeed: must be >= startSpeed (30), got 24"),
])
def test_bad_values_are_named_with_the_allowed_range(strategy, given, message):
    parsed = strategy_options.parse(strategy, given, "a.opt.")
    assert parsed.errors == [message]
    assert parsed.options == {}


def test_a_declaration_must_be_strict_json_and_choices_must_hold_the_default():
    assert strategy_options.read_declaration("export function createStrategy() {}") == {}
    with pytest.raises(ValueError, match="x.js: OPTIONS must be strict JSON"):
        strategy_options.read_declaration("export const OPTIONS = {\n  a: 1\n};\n", "x")
    with pytest.raises(ValueError, match="the default 'z' is not one of its choices"):
        strategy_options.read_declaration(
            'export const OPTIONS = {"c": {"type": "choice", "default": "z", "choices": ["a"]}};', "x")


def test_the_playground_url_carries_options_and_batch_keeps_its_own_key():
    result = playground.parse({"src": "demo", "n": "2", "a.render": "chat-ui-smooth", "a.opt.maxBufferedMs": "200",
                               "b.render": "batch", "b.opt.intervalMs": "40"})
    assert result.errors == ()
    a, b = result.config.variants
    assert a.options == (("maxBufferedMs", 200.0),)
    assert a.strategy_options() == {"maxBufferedMs": 200.0}
    assert b.batch_ms == 40.0 and b.strategy_options() == {"intervalMs": 40.0}
    params = playground.to_params(result.config)
    assert params["a.opt.maxBufferedMs"] == "200" and params["b.batch_ms"] == "40"
    assert playground.parse(params).config == result.config


def test_a_bad_option_in_the_url_is_reported_and_the_page_still_renders_with_the_default():
    result = playground.parse({"src": "demo", "a.render": "typewriter", "a.opt.charsPerSec": "-3"})
    assert result.errors == ("a.opt.charsPerSec: must be a number > 0 and <= 100000, got '-3'",)
    assert result.config.variants[0].options == ()
