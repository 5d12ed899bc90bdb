"""A playground variant as code a chat client can use: a call of ``static/js/pacelab-smoother.js`` (PaceLab's
player strategies as one dependency-free ES module) with the variant's strategy and options, and, for the
``ai-sdk-smooth`` preset, the equivalent Vercel AI SDK ``smoothStream({...})`` call. No Django import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

AI_SDK_CHUNKING = {"word": "'word'", "line": "'line'"}


def _js(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def module_snippet(strategy: str, options: Mapping[str, Any]) -> str:
    """JavaScript using pacelab-smoother.js with ``strategy`` and ``options``."""
    lines = ['import { createSmoother } from "./pacelab-smoother.js";', "", "const smoother = createSmoother({",
             f"  strategy: {_js(strategy)},"]
    if options:
        lines.append(f"  options: {{ {', '.join(f'{k}: {_js(v)}' for k, v in sorted(options.items()))} }},")
    lines += ["  onText: (delta, text) => { answer.textContent = text; },",
              "});",
              "for await (const chunk of stream) smoother.push(chunk);  // text chunks as they arrive",
              "smoother.end();",
              "await smoother.done;"]
    return "\n".join(lines) + "\n"


def ai_sdk_call(strategy: str, options: Mapping[str, Any]) -> str | None:
    """The ``smoothStream({...})`` call equivalent to an ``ai-sdk-smooth`` variant, else None."""
    if strategy != "ai-sdk-smooth":
        return None
    parts = []
    if "delayInMs" in options:
        parts.append(f"delayInMs: {_js(options['delayInMs'])}")
    chunking = options.get("chunking", "word")
    if chunking == "segmenter":
        parts.append(f"chunking: new Intl.Segmenter({_js(options.get('locale', 'en'))}, {{ granularity: 'word' }})")
    elif isinstance(chunking, Mapping) and "regexp" in chunking:
        parts.append(f"chunking: new RegExp({_js(chunking['regexp'])}, {_js(chunking.get('flags', 'm'))})")
    elif chunking != "word":
        parts.append(f"chunking: {AI_SDK_CHUNKING.get(str(chunking), _js(chunking))}")
    call = f"smoothStream({{ {', '.join(parts)} }})" if parts else "smoothStream()"
    return ("import { smoothStream, streamText } from 'ai';\n\n"
            f"const result = streamText({{ model, prompt, experimental_transform: {call} }});\n")
