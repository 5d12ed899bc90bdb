"""docs/getting-started.md works as written: every ```sh block runs in order in one shell, on a fresh home and
state directory (embedded mode), each command exits 0, and the ```text block right after an ```sh block lists
lines its output contains (``…`` stands for any text). The ```yaml block whose first line is ``# ~/PATH`` is
the file the researcher saves there. The install block (```text, it clones and downloads) is the only step
not run: the test runs in the checkout it installs."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from procs import ROOT

pytestmark = pytest.mark.integration

DOC = Path(ROOT) / "docs" / "getting-started.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)


@dataclass
class Step:
    kind: str  # "sh" or "file"
    lines: list[str]
    expected: list[str] = field(default_factory=list)
    path: str = ""


def steps(text: str) -> list[Step]:
    """The doc's runnable steps in order: shell blocks (with the output block after them) and files to save."""
    out: list[Step] = []
    last_end, last_sh = 0, None
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        between = text[last_end:m.start()]
        if lang == "sh":
            commands, pending = [], ""
            for line in body.splitlines():
                if line.rstrip().endswith("\\"):
                    pending += line.rstrip()[:-1] + " "
                    continue
                line = pending + line
                pending = ""
                if line.strip() and not line.strip().startswith("#"):
                    commands.append(line)
            last_sh = Step("sh", commands)
            out.append(last_sh)
        elif lang == "text" and last_sh is not None and not between.strip():
            last_sh.expected = [x for x in body.splitlines() if x.strip()]
            last_sh = None
        elif lang == "yaml" and body.startswith("# ~/"):
            out.append(Step("file", body.splitlines(), path=body.splitlines()[0][2:].strip()))
            last_sh = None
        else:
            last_sh = None
        last_end = m.end()
    return out


def _matches(expected: str, output: str) -> bool:
    parts = [re.escape(p) for p in expected.split("…")]
    return any(re.search(".*".join(parts), line) for line in output.splitlines())


def test_the_walk_through_extracts_its_commands_and_files():
    found = steps(DOC.read_text(encoding="utf-8"))
    commands = [c for s in found if s.kind == "sh" for c in s.lines]
    for name in ("prepare", "validate_study", "load_study", "run_bots", "analyze", "export", "plan_study"):
        assert any(f"manage.py {name}" in c for c in commands), name
    assert [s.path for s in found if s.kind == "file"] == ["~/chat-speed/chat-speed.yaml"]
    assert sum(bool(s.expected) for s in found) >= 5


@pytest.mark.timeout(1200)  # the whole walk-through: bots, an analysis, a first plan
def test_every_command_of_the_getting_started_guide_runs_as_written(tmp_path):
    found = steps(DOC.read_text(encoding="utf-8"))
    script = ["cd " + str(ROOT)]
    n = 0
    for step in found:
        if step.kind == "file":
            script.append(f"cat > {step.path} <<'PACELAB_DOC_EOF'\n" + "\n".join(step.lines) + "\nPACELAB_DOC_EOF")
            continue
        for command in step.lines:
            script += [f"echo '@@begin {n}'", f"{{ {command} ; }} 2>&1", f"echo \"@@rc {n} $?\""]
            n += 1
    dropped = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "PACELAB_VAR_DIR",
               "DJANGO_SETTINGS_MODULE", "CELERY_BROKER_URL")
    env = {k: v for k, v in os.environ.items() if k not in dropped} | {"HOME": str(tmp_path)}
    done = subprocess.run(["bash", "-c", "\n".join(script)], env=env, capture_output=True, text=True, timeout=1200)
    outputs: dict[int, str] = {}
    codes: dict[int, int] = {}
    current = None
    for line in done.stdout.splitlines():
        if line.startswith("@@begin "):
            current = int(line.split()[1])
            outputs[current] = ""
        elif line.startswith("@@rc "):
            _, k, rc = line.split()
            codes[int(k)] = int(rc)
        elif current is not None:
            outputs[current] += line + "\n"
    assert len(codes) == n, done.stdout + done.stderr
    k = 0
    for step in found:
        if step.kind != "sh":
            continue
        block = ""
        for command in step.lines:
            assert codes[k] == 0, f"{command!r} exited {codes[k]}:\n{outputs[k]}"
            assert "Traceback" not in outputs[k], outputs[k]
            block += outputs[k]
            k += 1
        for line in step.expected:
            assert _matches(line, block), f"{line!r} not in the output of {step.lines}:\n{block}"
    # what the guide says it leaves behind
    assert (tmp_path / "chat-speed" / "tryout-export" / "trials.parquet").exists()
    assert (tmp_path / "chat-speed" / "tryout" / "analysis" / "1" / "report.html").exists()
    assert (tmp_path / "chat-speed" / "state" / "pacelab.sqlite3").exists()
