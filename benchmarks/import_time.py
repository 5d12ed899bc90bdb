"""How long the pure cores take to import without Django, per package, and that no framework comes with them.

    .venv/bin/python benchmarks/import_time.py                  # every core of the pure-cores contract
    .venv/bin/python benchmarks/import_time.py --repeat 5 analysis.stats studyapp.design
    .venv/bin/python benchmarks/import_time.py --detail playback.core   # its 15 slowest imports (-X importtime)

The cores are those of import-linter's ``pure-cores`` contract in pyproject.toml (the list a new pure module joins).
Each core is imported in a fresh interpreter with no ``DJANGO_SETTINGS_MODULE``, ``DATABASE_URL`` or ``REDIS_URL``
(a package with every one of its modules), the best of ``--repeat`` runs after one that warms the file cache and
the bytecode. Columns:

- ``cpu ms``: CPU time of the imports in that interpreter (its start-up not counted), the best of the runs: on a
  shared machine the CPU time holds still where the wall time (``wall ms``, of the same run) follows the load;
- ``modules``: what ``sys.modules`` holds afterwards (the interpreter's own ~60 included);
- ``libraries``: the heavy scientific libraries that came with it (allowed: numpy, scipy, pandas, matplotlib);
- ``frameworks``: django, channels, celery, ... loaded (must be ``-``: the command exits 1 otherwise).

The baseline row, measured the same way in the same run, is what a pure import cost while ``pacelab/__init__.py``
loaded the Celery app: ``django.setup()`` with PaceLab's settings and the Celery app. ``x setup`` is each row's CPU
time over the baseline's.
tests/pacelab/test_import_contracts.py runs ``measure`` too and asserts that no framework is loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What a pure import must not load (the first three are what pacelab/__init__.py used to pull in).
FRAMEWORKS = ("django", "celery", "kombu", "channels", "daphne", "twisted", "redis")
LIBRARIES = ("numpy", "scipy", "pandas", "matplotlib")
BASELINE = "django.setup() + Celery app"
TOGETHER = "all of them together"

_PROBE = """\
import importlib, json, sys, time
frameworks, libraries, setup = json.loads(sys.argv[1])
t0, c0 = time.perf_counter(), time.process_time()
if setup:
    import django
    django.setup()
    importlib.import_module("pacelab.celery")
for name in sys.argv[2:]:
    importlib.import_module(name)
ms, cpu_ms = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
roots = {m.split(".")[0] for m in sys.modules}
print(json.dumps({"ms": ms, "cpu_ms": cpu_ms, "modules": len(sys.modules),
                  "frameworks": sorted(roots & set(frameworks)), "libraries": sorted(roots & set(libraries))}))
"""


def cores() -> list[str]:
    """The cores of the ``pure-cores`` import-linter contract, as pyproject.toml lists them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "pure-cores")
    return list(contract["source_modules"])


def modules_of(name: str) -> list[str]:
    """A core module, or every module of a core package (its ``__init__`` first)."""
    path = ROOT / name.replace(".", "/")
    if not path.is_dir():
        return [name]
    return sorted(".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for f in path.rglob("*.py"))


def clean_env() -> dict[str, str]:
    """This environment without Django's settings or any service: what a pure import must live with."""
    drop = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL")
    return {k: v for k, v in os.environ.items() if k not in drop}


def measure(names: list[str], *, setup: bool = False, timeout: float = 240) -> dict:
    """Import ``names`` in a fresh interpreter without Django settings: {ms, modules, frameworks, libraries}.
    ``setup``: run ``django.setup()`` and load the Celery app first (the baseline; it sets its own settings)."""
    env = clean_env() | ({"DJANGO_SETTINGS_MODULE": "pacelab.settings"} if setup else {})
    run = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([FRAMEWORKS, LIBRARIES, setup]), *names],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if run.returncode != 0:
        raise RuntimeError(f"importing {' '.join(names) or 'django'} failed:\n{run.stderr}")
    return json.loads(run.stdout)


def best_of(names: list[str], repeat: int, *, setup: bool = False) -> dict:
    measure(names, setup=setup)  # warm: the first run after an edit also compiles
    return min((measure(names, setup=setup) for _ in range(repeat)), key=lambda r: r["cpu_ms"])


def detail(name: str, top: int = 15) -> list[tuple[int, int, str]]:
    """The ``top`` imports with the largest cumulative time (µs) when importing ``name`` (``-X importtime``)."""
    code = "import importlib, sys\nfor n in sys.argv[1:]: importlib.import_module(n)"
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *modules_of(name)], cwd=ROOT,
                         env=clean_env(), capture_output=True, text=True, timeout=240, check=True)
    rows = []
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, module = (part.strip() for part in line.removeprefix("import time:").split("|"))
        rows.append((int(cumulative_us), int(self_us), module.strip()))
    return sorted(rows, reverse=True)[:top]


def rows(names: list[str], repeat: int) -> list[dict]:
    """The baseline, then one row per core, then every core together: {core, files, ms, x_setup, modules,
    libraries, frameworks}."""
    base = best_of([], repeat, setup=True)
    every = [m for name in names for m in modules_of(name)]
    runs = [(BASELINE, 0, base)]
    runs += [(name, len(modules_of(name)), best_of(modules_of(name), repeat)) for name in names]
    runs.append((TOGETHER, len(every), best_of(every, repeat)))
    return [{"core": name, "files": files, "ms": round(r["ms"], 1), "cpu_ms": round(r["cpu_ms"], 1),
             "x_setup": round(r["cpu_ms"] / base["cpu_ms"], 3),
             "modules": r["modules"], "libraries": r["libraries"], "frameworks": r["frameworks"]}
            for name, files, r in runs]


def table(found: list[dict]) -> list[str]:
    width = max(len(r["core"]) for r in found)
    head = f"{'core':<{width}}  {'files':>5}  {'cpu ms':>7}  {'x setup':>7}  {'wall ms':>7}  {'modules':>7}"
    lines = [f"{head}  {'libraries':<20}  frameworks"]
    for r in found:
        lines.append(f"{r['core']:<{width}}  {r['files'] or '':>5}  {r['cpu_ms']:>7.1f}  {r['x_setup']:>7.2f}  "
                     f"{r['ms']:>7.1f}  {r['modules']:>7}  {', '.join(r['libraries']) or '-':<20}  "
                     f"{', '.join(r['frameworks']) or '-'}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cores", nargs="*", help="cores to time (default: every core of the pure-cores contract)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row, the best is shown (default 3)")
    parser.add_argument("--detail", metavar="CORE", help="instead: the 15 slowest imports of one core")
    parser.add_argument("--json", action="store_true", help="the rows as JSON instead of the table")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    known = cores()
    for name in [*args.cores, *([args.detail] if args.detail else [])]:
        if not any(name == c or name.startswith(c + ".") for c in known):
            parser.error(f"{name!r} is not a pure core (the pure-cores contract in pyproject.toml lists {known})")
    if args.detail:
        print(f"{'cumulative ms':>13}  {'self ms':>7}  module   (python -X importtime, {args.detail})")
        for cumulative, own, module in detail(args.detail):
            print(f"{cumulative / 1000:>13.1f}  {own / 1000:>7.1f}  {module}")
        return 0
    found = rows(args.cores or known, args.repeat)
    pure = all(not r["frameworks"] for r in found[1:])
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"repeat": args.repeat, "load_average": load, "rows": found}, indent=1))
    else:
        print(f"import time of the pure cores without Django settings (best of {args.repeat}; "
              f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")
        print("\n".join(table(found)))
    if not pure:
        print("a core loaded a framework: see the frameworks column", file=sys.stderr)
    return 0 if pure else 1


if __name__ == "__main__":
    sys.exit(main())
