"""manage.py tokenizers [--rate 50]: what "N tokens/s" means in characters/s for each tokenizer."""

from django.core.management.base import BaseCommand

from playback.core import tokenizers, tokenstats


class Command(BaseCommand):
    help = "Characters and words per token of every tokenizer on the bundled English and Chinese texts."

    def add_arguments(self, parser):
        parser.add_argument("--rate", type=float, default=50.0, help="tokens/s to translate (default 50)")

    def handle(self, *args, **opts):
        names = tokenizers.available()
        missing = [n for n in tokenizers.names() if n not in names]
        rows = tokenstats.granularity(names, tokens_per_second=opts["rate"])
        self.stdout.write(tokenstats.format_table(rows))
        for name in missing:
            try:
                tokenizers.get(name)
            except tokenizers.TokenizerUnavailable as exc:
                self.stdout.write(f"unavailable: {name}: {exc}")
