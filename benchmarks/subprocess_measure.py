"""One measurement of a benchmark in fresh subprocesses, shared by the benchmarks that compare a job with
``json.load`` of the same file (``stream_core.py``, ``scoring.py``).

The benchmark script is run again as ``SCRIPT --child KIND --arg ARG [extra...]``, twice: untraced (wall time,
peak RSS) and with ``--traced`` (the ``tracemalloc`` peak), so peaks do not mix and imports are not shared. The
child prints one JSON line with ``wall_s``, ``traced_peak_b``, ``rss_kb``, ``rss_before_kb`` and what else it
reports (``what``, ``n``...), which is passed through.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_OWN = ("wall_s", "traced_peak_b", "rss_kb", "rss_before_kb")


def measure(script: str | Path, kind: str, arg: str, *extra: str) -> dict:
    """Run ``kind`` of ``script`` in two fresh subprocesses (untraced, traced) and merge their results:
    ``wall_s``, ``rss_mb``, ``rss_delta_mb`` (growth of the peak during the job), ``traced_peak_mb`` and the
    child's other keys."""
    out: dict = {}
    for traced in (False, True):
        cmd = [sys.executable, str(Path(script).resolve()), "--child", kind, "--arg", arg, *extra]
        proc = subprocess.run(cmd + (["--traced"] if traced else []), capture_output=True, text=True, cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"{kind} failed:\n{proc.stderr.strip()}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if traced:
            out["traced_peak_mb"] = res["traced_peak_b"] / 2**20
        else:
            out.update(wall_s=res["wall_s"], rss_mb=res["rss_kb"] / 1024,
                       rss_delta_mb=(res["rss_kb"] - res["rss_before_kb"]) / 1024,
                       **{k: v for k, v in res.items() if k not in _OWN})
    return out
