"""manage.py synth_stream --text FILE --tokenizer T --rate R --ttft MS [...]: make a synthetic stream.

Or ``--arrival NAME`` (``playback.core.arrivals``, docs/arrival-patterns.md): the pattern's timing model, with its
sample text and tokenizer unless ``--text``/``--tokenizer`` are given; ``--ttft`` and ``--seed`` still apply, the
other timing flags are refused with it (the pattern is a whole timing model).

Writes the stream as a PaceLab JSONL trace to ``--out`` (or standard output) and prints its metrics; with
``--save-as NAME`` also stores it as a named stimulus, with the spec that reproduces it exactly.
"""

import sys
from dataclasses import replace
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from playback.core import arrivals, metrics, synth, texts, tokenizers
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
        parser.add_argument("--text", help="text file, '-' for stdin, or a bundled text name (required unless "
                                           "--arrival)")
        parser.add_argument("--tokenizer", help=f"one of: {', '.join(tokenizers.names())} (required unless --arrival)")
        parser.add_argument("--rate", type=float, help="tokens/s (or chars/s with --rate-unit; required unless "
                                                       "--arrival)")
        parser.add_argument("--ttft", type=float, help="time to first token, ms (required unless --arrival)")
        parser.add_argument("--arrival", help=f"a named arrival pattern: {', '.join(arrivals.names())}")
        parser.add_argument("--rate-unit", choices=RATE_UNITS, default=None, help="default: tokens")
        parser.add_argument("--jitter", choices=JITTERS, default=None, help="default: gamma when --jitter-cv > 0")
        parser.add_argument("--jitter-cv", type=float, default=None)
        parser.add_argument("--stall-rate", type=float, default=None, help="stalls per second (Poisson)")
        parser.add_argument("--stall-ms", type=float, default=None, help="mean stall duration, ms")
        parser.add_argument("--stall-dist", choices=STALL_DISTS, default=None, help="default: fixed")
        parser.add_argument("--burst", type=int, default=None, help="tokens released together")
        parser.add_argument("--ramp-ms", type=float, default=None)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--language", default="")
        parser.add_argument("--out", help="write the stream as a PaceLab JSONL trace here (default: stdout)")
        parser.add_argument("--save-as", help="also store it as a stimulus with this name")

    def handle(self, *args, **o):
        timing_flags = ("rate", "rate_unit", "jitter", "jitter_cv", "stall_rate", "stall_ms", "stall_dist", "burst",
                        "ramp_ms")
        if o["arrival"]:
            try:
                pattern = arrivals.get(o["arrival"])
            except arrivals.UnknownPattern as exc:
                raise CommandError(f"--arrival: {exc}") from None
            given = [f"--{f.replace('_', '-')}" for f in timing_flags if o[f] is not None]
            if given:
                raise CommandError(f"{', '.join(given)}: the arrival pattern {pattern.name!r} sets the timing "
                                   "(only --ttft and --seed apply with --arrival)")
            o["text"] = o["text"] or pattern.text
            o["tokenizer"] = o["tokenizer"] or pattern.tokenizer
        else:
            for flag in ("text", "tokenizer", "rate", "ttft"):
                if o[flag] is None:
                    raise CommandError(f"--{flag}: required (or give --arrival with a pattern name)")
        text = read_text(o["text"])
        try:
            if o["arrival"]:
                spec = pattern.timing if o["ttft"] is None else replace(pattern.timing, ttft_ms=o["ttft"])
            else:
                cv = o["jitter_cv"] or 0.0
                spec = TimingSpec(
                    ttft_ms=o["ttft"], rate=o["rate"], rate_unit=o["rate_unit"] or "tokens",
                    jitter=o["jitter"] or ("gamma" if cv > 0 else "none"), jitter_cv=cv,
                    stall_rate_per_s=o["stall_rate"] or 0.0, stall_ms=o["stall_ms"] or 0.0,
                    stall_dist=o["stall_dist"] or "fixed", burst_size=1 if o["burst"] is None else o["burst"],
                    ramp_ms=o["ramp_ms"] or 0.0,
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
            spec_doc = {"kind": "synthetic", "text": o["text"], "tokenizer": o["tokenizer"],
                        "timing": spec.to_dict(), "seed": o["seed"]}
            if o["arrival"]:
                spec_doc["arrival"] = o["arrival"]
            services.stimulus_save(name=o["save_as"], stream=stream, owner=None, spec=spec_doc)
        m = metrics.compute(stream)
        self.stderr.write(
            f"{len(stream.pieces)} pieces, {m.output_tokens} tokens, TTFT {m.ttft_ms:.0f} ms, "
            f"{m.tokens_per_s or 0:.2f} tokens/s, {m.chars_per_s or 0:.1f} chars/s, end to end {m.e2e_ms:.0f} ms"
        )
