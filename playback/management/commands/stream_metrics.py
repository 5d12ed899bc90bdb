"""manage.py stream_metrics PATH [--format F] [--json]: metrics of every stream in a file, nothing stored."""

import json

from django.core.management.base import BaseCommand, CommandError

from playback.core import importers, metrics

JSON_KEYS = (
    "id", "ttft_ms", "ttfr_ms", "tokens_per_s", "output_tokens", "chars_per_s", "words_per_s", "itl_mean_ms",
    "itl_median_ms", "itl_p95_ms", "itl_p99_ms", "itl_cv", "stall_count", "stall_total_ms", "e2e_ms",
)
TABLE = (
    ("id", "id", "{}"), ("TTFT ms", "ttft_ms", "{:.1f}"), ("tok/s", "tokens_per_s", "{:.2f}"),
    ("tokens", "output_tokens", "{}"), ("chars/s", "chars_per_s", "{:.1f}"), ("ITL mean", "itl_mean_ms", "{:.1f}"),
    ("ITL p95", "itl_p95_ms", "{:.1f}"), ("ITL CV", "itl_cv", "{:.3f}"), ("stalls", "stall_count", "{}"),
    ("stall ms", "stall_total_ms", "{:.0f}"), ("E2E ms", "e2e_ms", "{:.1f}"),
)


def _fmt(fmt: str, value) -> str:
    return "—" if value is None else fmt.format(value)


class Command(BaseCommand):
    help = "Print the metrics of every stream in any importable trace file, without storing anything."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", choices=importers.FORMAT_NAMES, help="skip auto-detection")
        parser.add_argument("--json", action="store_true", help="print a JSON list, one object per stream")
        parser.add_argument("--stall-ms", type=float, default=metrics.DEFAULT_STALL_THRESHOLD_MS)

    def handle(self, *args, **opts):
        try:
            result = importers.load(opts["path"], format=opts["format"])
        except (importers.TraceFormatError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        rows = []
        for stream in result.streams:
            m = metrics.compute(stream, stall_threshold_ms=opts["stall_ms"]).as_dict()
            rows.append({k: m[k] for k in JSON_KEYS} | {"replayable": True})
        for seed in result.seeds:
            rows.append(
                {k: None for k in JSON_KEYS}
                | {"id": seed.id, "ttft_ms": seed.ttft_ms, "tokens_per_s": seed.tokens_per_s,
                   "output_tokens": seed.output_tokens, "e2e_ms": seed.e2e_ms, "itl_mean_ms": seed.itl_mean_ms,
                   "stall_count": None, "stall_total_ms": None, "replayable": False}
            )
        if opts["json"]:
            self.stdout.write(json.dumps(rows, ensure_ascii=False, indent=1))
            return
        self.stdout.write(f"{opts['path']}: format {result.format}, {len(rows)} stream(s)")
        for note in result.notes:
            self.stdout.write(f"note: {note}")
        cells = [[h for h, _, _ in TABLE]] + [[_fmt(f, r[k]) for _, k, f in TABLE] for r in rows]
        widths = [max(len(c[i]) for c in cells) for i in range(len(TABLE))]
        for line in cells:
            self.stdout.write("  ".join(c.rjust(w) for c, w in zip(line, widths)))
