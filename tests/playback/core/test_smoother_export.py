"""A variant as code: the pacelab-smoother.js call and, for the AI SDK preset, the smoothStream call."""

from playback.core.smoother_export import ai_sdk_call, module_snippet


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
    assert 'chunking: new RegExp("[.!?]\\\\s+", "m")' in rx
