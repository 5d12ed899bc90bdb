"""A playground variant as code a chat client can use: a call of ``static/js/pacelab-smoother.js`` (PaceLab's
player strategies as one dependency-free ES module) with the variant's strategy and options, and, for the
``ai-sdk-smooth`` preset, the equivalent Vercel AI SDK ``smoothStream({...})`` call (a RegExp chunking as a
``/source/flags`` literal, a segmenter as ``new Intl.Segmenter(locale, ...)``). No Django import.
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


LINE_BREAKS = {"\n": "\\n", "\r": "\\r", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def regexp_literal(source: str, flags: str = "") -> str:
    """``/source/flags`` as JavaScript reads it back to the same RegExp: an unescaped ``/`` is escaped (``\\/``
    means ``/`` in and out of a class, with and without the u flag), line breaks are written as escapes, and an
    empty source is ``(?:)`` (``//`` would start a comment)."""
    out = []
    escaped = False
    for c in source:
        if escaped:
            if c in LINE_BREAKS:  # an escaped line break is the line break: write its escape instead
                out[-1] = LINE_BREAKS[c]
            else:
                out.append(c)
            escaped = False
        elif c == "\\":
            out.append(c)
            escaped = True
        elif c == "/":
            out.append("\\/")
        else:
            out.append(LINE_BREAKS.get(c, c))
    return f"/{''.join(out) or '(?:)'}/{''.join(sorted(flags.replace('g', '')))}"


def ai_sdk_call(strategy: str, options: Mapping[str, Any]) -> str | None:
    """The ``smoothStream({...})`` call equivalent to an ``ai-sdk-smooth`` variant, else None."""
    if strategy != "ai-sdk-smooth":
        return None
    parts = []
    if "delayInMs" in options:
        parts.append(f"delayInMs: {_js(options['delayInMs'])}")
    chunking = options.get("chunking", "word")
    if chunking == "segmenter":
        locale = _js(options["locale"]) if options.get("locale") else "undefined"  # undefined: the browser's
        parts.append(f"chunking: new Intl.Segmenter({locale}, {{ granularity: 'word' }})")
    elif chunking == "regexp":
        parts.append(f"chunking: {regexp_literal(options.get('regexp', ''), options.get('flags', ''))}")
    elif isinstance(chunking, Mapping) and "regexp" in chunking:
        parts.append(f"chunking: {regexp_literal(chunking['regexp'], chunking.get('flags', 'm'))}")
    elif chunking != "word":
        parts.append(f"chunking: {AI_SDK_CHUNKING.get(str(chunking), _js(chunking))}")
    call = f"smoothStream({{ {', '.join(parts)} }})" if parts else "smoothStream()"
    return ("import { smoothStream, streamText } from 'ai';\n\n"
            f"const result = streamText({{ model, prompt, experimental_transform: {call} }});\n")
