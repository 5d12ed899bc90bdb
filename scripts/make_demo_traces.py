#!/usr/bin/env python
"""Regenerate playback/data/traces/demo-traces.jsonl from playback.core.demo (deterministic: same bytes each run)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playback.core.demo import demo_traces, traces_dir  # noqa: E402
from playback.core.importers.pacelab_jsonl import dump_jsonl  # noqa: E402

if __name__ == "__main__":
    out = dump_jsonl(demo_traces(), traces_dir() / "demo-traces.jsonl")
    print(out)
