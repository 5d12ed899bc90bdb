"""A variant as code: the pacelab-smoother.js call and, for the AI SDK preset, the smoothStream call."""

import pytest

from playback.core.smoother_export import ai_sdk_call, module_snippet, regexp_literal


def test_the_module_snippet_names_the_strategy_and_every_option():
    code = module_snippet("chat-ui-smooth", {"maxBufferedMs": 300, "floorCharsPerSec": 25})
    assert 'import { createSmoother } from "./pacelab-smoother.js";' in code
    assert 'strategy: "chat-ui-smooth",' in code
    assert "options: { floorCharsPerSec: 25, maxBufferedMs: 300 }," in code
    assert "options" not in module_snippet("token", {})


def test_only_the_ai_sdk_preset_has_a_smooth_stream_call_with_its_chunking():
    assert ai_sdk_call("chat-ui-smooth", {}) is None
    assert "smoothStream()" in ai_sdk_call("ai-sdk-smooth", {})
    assert "smoothStream({ delayInMs: 20, chunking: 'line' })" in ai_sdk_call(
        "ai-sdk-smooth", {"delayInMs": 20, "chunking": "line"})
    seg = ai_sdk_call("ai-sdk-smooth", {"chunking": "segmenter", "locale": "zh"})
    assert "chunking: new Intl.Segmenter(\"zh\", { granularity: 'word' })" in seg
    rx = ai_sdk_call("ai-sdk-smooth", {"chunking": {"regexp": "[.!?]\\s+"}})
    assert "chunking: /[.!?]\\s+/m" in rx


def test_a_regexp_chunking_is_exported_as_a_regexp_literal_and_a_locale_as_the_segmenters():
    rx = ai_sdk_call("ai-sdk-smooth", {"chunking": "regexp", "regexp": "[.!?]\\s+", "flags": "i", "delayInMs": 30})
    assert "smoothStream({ delayInMs: 30, chunking: /[.!?]\\s+/i })" in rx
    seg = ai_sdk_call("ai-sdk-smooth", {"chunking": "segmenter"})
    assert "chunking: new Intl.Segmenter(undefined, { granularity: 'word' })" in seg  # the browser's locale
    code = module_snippet("ai-sdk-smooth", {"chunking": "regexp", "regexp": "[.!?]\\s+"})
    assert 'options: { chunking: "regexp", regexp: "[.!?]\\\\s+" },' in code


@pytest.mark.parametrize(("source", "flags", "literal"), [
    ("[.!?]\\s+", "", "/[.!?]\\s+/"),
    ("a/b", "", "/a\\/b/"),  # an unescaped slash would end the literal
    ("a\\/b", "", "/a\\/b/"),  # an escaped one stays as it is
    ("[/]", "", "/[\\/]/"),
    ("x\ny", "", "/x\\ny/"),  # a line break cannot stand in a literal
    ("x\\\ny", "", "/x\\ny/"),  # nor an escaped one
    ("", "mi", "/(?:)/im"),  # // would be a comment
    ("a", "gm", "/a/m"),  # the strategy drops g, so does the export
])
def test_regexp_literals_read_back_to_the_same_regexp(source, flags, literal):
    assert regexp_literal(source, flags) == literal
