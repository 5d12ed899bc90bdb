"""manage.py arrival_patterns [--json] [--plot FILE]: the named arrival patterns, their timing and sample text.

Lists every pattern (``playback.core.arrivals``) with its kind, its sample text and tokenizer, and the metrics of its
sample stream under ``--seed``; ``--plot`` also writes the arrival-curve figure (docs/arrival-patterns.md).
"""

import json

from django.core.management.base import BaseCommand

from playback.core import arrival_figure, arrivals, metrics


class Command(BaseCommand):
    help = "List the named arrival patterns (steady-api, proxy-bursts, ...) and optionally plot their arrivals."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", action="store_true", help="print JSON (one object per pattern)")
        parser.add_argument("--plot", help="write the arrival curves here (.svg, .png or .pdf)")

    def handle(self, *args, **o):
        rows = []
        for pattern in arrivals.PATTERNS.values():
            m = metrics.compute(arrival_figure.pattern_stream(pattern.name, o["seed"]))
            rows.append({"name": pattern.name, "kind": pattern.kind, "text": pattern.text,
                         "tokenizer": pattern.tokenizer, "summary": pattern.summary,
                         "timing": pattern.timing.to_dict(), "ttft_ms": m.ttft_ms, "e2e_ms": m.e2e_ms,
                         "chars_per_s": m.chars_per_s, "stall_count": m.stall_count})
        if o["json"]:
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=2))
        else:
            self.stdout.write(f"{'pattern':<15} {'kind':<6} {'text':<15} {'first ms':>8} {'last ms':>8} "
                              f"{'chars/s':>8} {'stalls':>6}")
            for r in rows:
                self.stdout.write(f"{r['name']:<15} {r['kind']:<6} {r['text']:<15} {r['ttft_ms']:>8.0f} "
                                  f"{r['e2e_ms']:>8.0f} {r['chars_per_s'] or 0:>8.0f} {r['stall_count']:>6}")
        if o["plot"]:
            path = arrival_figure.write(o["plot"], seed=o["seed"])
            self.stderr.write(f"wrote {path}")
