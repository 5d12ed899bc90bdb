"""manage.py synth_stream --text FILE --tokenizer T --rate R --ttft MS [...]: make a synthetic stream.

Writes the stream as a PaceLab JSONL trace to ``--out`` (or standard output) and prints its metrics; with
``--save-as NAME`` also stores it as a named stimulus, with the spec that reproduces it exactly.
"""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from playback.core import metrics, synth, texts, tokenizers
from playback.core.importers.pacelab_jsonl import dump_jsonl, trace_line
from playback.core.stream import StreamMeta
from playback.core.timing import JITTERS, RATE_UNITS, STALL_DISTS, TimingSpec, TimingSpecError
from playback.services import streams as services


def read_text(source: str) -> str:
    """A file path, ``-`` for standard input, or the name of a bundled demo text."""
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    if path.exists():
        return path.read_text(encoding="utf-8")
    bundled = texts.bundled_texts()
    if source in bundled:
        return bundled[source][1]
    raise CommandError(f"--text: no file {source!r} and no bundled text of that name "
                       f"(bundled: {', '.join(sorted(bundled))})")


class Command(BaseCommand):
    help = "Synthesise a stream from a text, a tokenizer and a timing model (seeded, deterministic)."

    def add_arguments(self, parser):
        parser.add_argument("--text", required=True, help="text file, '-' for stdin, or a bundled text name")
        parser.add_argument("--tokenizer", required=True, help=f"one of: {', '.join(tokenizers.names())}")
        parser.add_argument("--rate", type=float, required=True, help="tokens/s (or chars/s with --rate-unit)")
        parser.add_argument("--ttft", type=float, required=True, help="time to first token, ms")
        parser.add_argument("--rate-unit", choices=RATE_UNITS, default="tokens")
        parser.add_argument("--jitter", choices=JITTERS, default=None, help="default: gamma when --jitter-cv > 0")
        parser.add_argument("--jitter-cv", type=float, default=0.0)
        parser.add_argument("--stall-rate", type=float, default=0.0, help="stalls per second (Poisson)")
        parser.add_argument("--stall-ms", type=float, default=0.0, help="mean stall duration, ms")
        parser.add_argument("--stall-dist", choices=STALL_DISTS, default="fixed")
        parser.add_argument("--burst", type=int, default=1, help="tokens released together")
        parser.add_argument("--ramp-ms", type=float, default=0.0)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--language", default="")
        parser.add_argument("--out", help="write the stream as a PaceLab JSONL trace here (default: stdout)")
        parser.add_argument("--save-as", help="also store it as a stimulus with this name")

    def handle(self, *args, **o):
        text = read_text(o["text"])
        jitter = o["jitter"] or ("gamma" if o["jitter_cv"] > 0 else "none")
        try:
            spec = TimingSpec(
                ttft_ms=o["ttft"], rate=o["rate"], rate_unit=o["rate_unit"], jitter=jitter,
                jitter_cv=o["jitter_cv"], stall_rate_per_s=o["stall_rate"], stall_ms=o["stall_ms"],
                stall_dist=o["stall_dist"], burst_size=o["burst"], ramp_ms=o["ramp_ms"],
            )
            stream = synth.synthesize(text, o["tokenizer"], spec, seed=o["seed"],
                                      meta=StreamMeta(language=o["language"]))
        except (TimingSpecError, KeyError, tokenizers.TokenizerUnavailable) as exc:
            raise CommandError(str(exc).strip("'\"")) from exc
        if o["out"]:
            dump_jsonl([stream], o["out"])
        else:
            self.stdout.write(trace_line(stream).rstrip("\n"))
        if o["save_as"]:
            services.stimulus_save(name=o["save_as"], stream=stream, owner=None, spec={
                "kind": "synthetic", "text": o["text"], "tokenizer": o["tokenizer"], "timing": spec.to_dict(),
                "seed": o["seed"]})
        m = metrics.compute(stream)
        self.stderr.write(
            f"{len(stream.pieces)} pieces, {m.output_tokens} tokens, TTFT {m.ttft_ms:.0f} ms, "
            f"{m.tokens_per_s or 0:.2f} tokens/s, {m.chars_per_s or 0:.1f} chars/s, end to end {m.e2e_ms:.0f} ms"
        )
