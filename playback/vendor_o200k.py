"""Install the ``o200k_base`` vocabulary at set-up time, from the npm package ``js-tiktoken``.

OpenAI's ``o200k_base.tiktoken`` is not on PyPI, and nothing may download at run time. The npm package
``js-tiktoken`` carries the same ranks in a compressed JSON form (``dist/ranks/o200k_base.js``: lines of
``! <first rank> <base64 token> <base64 token> ...``). This module, run once by ``scripts/test`` and
``scripts/demo``, packs the pinned version with ``npm pack``, expands the ranks into a standard ``.tiktoken``
file (``<base64 token> <rank>`` per line, by rank) and checks its SHA-256 against the checksum tiktoken itself
pins for OpenAI's file, so the result is byte-identical to the official vocabulary.

    python -m playback.vendor_o200k [--dest DIR] [--quiet]

Idempotent: a file already present with the right checksum is left alone. The default directory is
``<repo>/var/tokenizers`` (``PACELAB_TOKENIZER_DIR`` overrides it, as it does for the tokenizer).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

JS_TIKTOKEN_VERSION = "1.0.21"
FILENAME = "o200k_base.tiktoken"
# SHA-256 of OpenAI's o200k_base.tiktoken; equal to the ``expected_hash`` in tiktoken_ext/openai_public.py.
SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
RANKS_MEMBER = "package/dist/ranks/o200k_base.js"
ENV_DIR = "PACELAB_TOKENIZER_DIR"


class VendorError(RuntimeError):
    """The vocabulary could not be produced or did not match the pinned checksum."""


def default_dir() -> Path:
    """Where tokenizer files live: ``$PACELAB_TOKENIZER_DIR`` or ``<repo>/var/tokenizers``."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / "var" / "tokenizers"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def ranks_js_to_tiktoken(js_source: str) -> bytes:
    """Expand js-tiktoken's compressed ranks module into the bytes of a ``.tiktoken`` file."""
    try:
        data = json.loads(js_source[js_source.index("{") : js_source.rindex("}") + 1])
        lines = data["bpe_ranks"]
    except (ValueError, KeyError) as e:
        raise VendorError(f"unexpected js-tiktoken ranks format: {e}") from e
    ranks: dict[str, int] = {}
    for line in lines.split("\n"):
        if not line:
            continue
        _marker, first, *tokens = line.split(" ")
        start = int(first)
        for i, token in enumerate(tokens):
            ranks[token] = start + i
    ordered = sorted(ranks.items(), key=lambda kv: kv[1])
    return "".join(f"{token} {rank}\n" for token, rank in ordered).encode("ascii")


def _npm_pack(workdir: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError("npm is not installed (Debian: apt-get install npm)")
    spec = f"js-tiktoken@{JS_TIKTOKEN_VERSION}"
    proc = subprocess.run(
        [npm, "pack", spec, "--silent", "--pack-destination", str(workdir)],
        cwd=workdir, capture_output=True, text=True, timeout=300,
    )
    if proc.returncode != 0:
        raise VendorError(f"npm pack {spec} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    tarballs = list(workdir.glob("js-tiktoken-*.tgz"))
    if len(tarballs) != 1:
        raise VendorError(f"npm pack {spec} produced {tarballs!r}")
    return tarballs[0]


def vendor(dest: Path | None = None) -> Path:
    """Make sure ``dest/o200k_base.tiktoken`` exists with the pinned checksum; return its path."""
    dest = Path(dest) if dest is not None else default_dir()
    target = dest / FILENAME
    if target.is_file() and sha256_of(target) == SHA256:
        return target
    with tempfile.TemporaryDirectory(prefix="pacelab-o200k-") as tmp:
        tarball = _npm_pack(Path(tmp))
        with tarfile.open(tarball, "r:gz") as tar:
            member = tar.extractfile(RANKS_MEMBER)
            if member is None:
                raise VendorError(f"{RANKS_MEMBER} missing from {tarball.name}")
            content = ranks_js_to_tiktoken(member.read().decode("utf-8"))
    actual = hashlib.sha256(content).hexdigest()
    if actual != SHA256:
        raise VendorError(
            f"o200k_base from js-tiktoken@{JS_TIKTOKEN_VERSION} has SHA-256 {actual}, expected {SHA256}"
        )
    dest.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    partial.write_bytes(content)
    os.replace(partial, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install the o200k_base vocabulary from npm js-tiktoken.")
    parser.add_argument("--dest", type=Path, default=None, help=f"directory (default: {default_dir()})")
    parser.add_argument("--quiet", action="store_true", help="print nothing on success")
    args = parser.parse_args(argv)
    try:
        path = vendor(args.dest)
    except VendorError as e:
        print(f"vendor_o200k: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"o200k_base: {path} (sha256 {SHA256[:12]}…)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
