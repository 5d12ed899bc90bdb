"""The pure cores stay pure: import-linter's contracts (``[tool.importlinter]`` in pyproject.toml) hold, they break
on a forbidden import, and every listed core loads without Django settings, Django or Celery.

The contracts read the source (every ``import`` statement, also those inside functions); the load test runs the
imports, so it also catches what a static graph does not see, such as a package ``__init__`` that loads Celery.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACTS = {c["id"]: c for c in CONFIG["contracts"]}
CORES: list[str] = CONTRACTS["pure-cores"]["source_modules"]


def _modules_of(name: str) -> list[str]:
    """A core module, or every module of a core package."""
    path = ROOT / name.replace(".", "/")
    if not path.is_dir():
        return [name]
    return sorted(".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
                  for f in path.rglob("*.py"))


CORE_MODULES = [m for core in CORES for m in _modules_of(core)]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
# frameworks a pure import must not load (the first three are what pacelab/__init__.py used to pull in)
HEAVY = ("django", "celery", "kombu", "channels", "daphne", "twisted", "redis")

pytestmark = pytest.mark.timeout(300)


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    # grimp finds the root packages through the import system: the copy under test comes first on the path
    env["PYTHONPATH"] = str(cwd)
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=240)


def _copy_tree(dest: Path) -> Path:
    for pkg in CONFIG["root_packages"]:
        shutil.copytree(ROOT / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__", "data", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")
    return dest


def test_the_import_contracts_hold():
    run = _lint(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in run.stdout


# Modules that import no framework but are not cores: package __init__s, configuration, set-up tools, and the
# Twisted and Autobahn patches that only a Daphne process installs.
NOT_CORES = {"pacelab.settings", "pacelab.eager_writes", "pacelab.lazy_ws_logs", "playback.vendor_o200k"}


def test_every_module_that_imports_no_framework_is_listed_as_a_core():
    """The list of cores is explicit, so a new pure module must join it (or NOT_CORES, saying why)."""
    import grimp

    graph = grimp.build_graph(*CONFIG["root_packages"], include_external_packages=True, cache_dir=None)
    roots = set(CONFIG["root_packages"])
    frameworks = [m for m in ("django", "channels", "celery", "daphne", "twisted", "redis") if m in graph.modules]
    unlisted = []
    for module in sorted(graph.modules):
        if module.split(".")[0] not in roots or module in roots or graph.is_module_squashed(module):
            continue
        if any(part in ("management", "migrations") for part in module.split(".")):
            continue
        if any(graph.chain_exists(importer=module, imported=f) for f in frameworks):
            continue
        if module in NOT_CORES or any(module == c or module.startswith(c + ".") for c in CORES):
            continue
        if graph.find_children(module):  # a package: its modules are judged one by one
            continue
        unlisted.append(module)
    assert unlisted == [], ("these modules import no framework: add them to the pure-cores contract in "
                            f"pyproject.toml (or to NOT_CORES here, saying why): {unlisted}")


def test_a_forbidden_import_in_a_core_breaks_the_contract(tmp_path):
    tree = _copy_tree(tmp_path)
    stream = tree / "playback" / "core" / "stream.py"
    leak = "\n\ndef _leak():\n    from playback.models import Trace  # an import inside a function counts too\n"
    stream.write_text(stream.read_text() + leak)
    run = _lint(tree)
    assert run.returncode == 1, run.stdout + run.stderr
    # the core itself breaks, and so do those that import it (the analysis cores read streams, and
    # studyapp/design/adaptive/__init__.py loads its stimuli): each report names the chain
    assert "Contracts: 1 kept, 3 broken." in run.stdout, run.stdout
    broken = run.stdout.split("Broken contracts")[1]
    assert "Pure cores import no django" in broken and "analysis cores import no ORM" in broken
    assert "playback.core is not allowed to import playback.models" in broken  # the contract names the package
    assert "playback.core.stream -> playback.models (l." in broken


def test_loading_celery_from_a_package_init_breaks_the_contract(tmp_path):
    """Celery's usual recipe (``from pacelab.celery import app`` in ``pacelab/__init__.py``) loads Django for every
    import of ``pacelab.jsonb``; the light-packages contract refuses it."""
    tree = _copy_tree(tmp_path)
    (tree / "pacelab" / "__init__.py").write_text("from pacelab.celery import app as celery_app\n")
    run = _lint(tree)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "pacelab -> pacelab.celery" in run.stdout, run.stdout
    assert "Contracts: 3 kept, 1 broken." in run.stdout


def test_playback_importing_studyapp_breaks_the_contract(tmp_path):
    tree = _copy_tree(tmp_path)
    (tree / "playback" / "selectors.py").write_text(
        (tree / "playback" / "selectors.py").read_text() + "\nfrom studyapp import models as _study  # noqa\n")
    run = _lint(tree)
    assert run.returncode == 1
    assert "playback.selectors -> studyapp.models" in run.stdout, run.stdout


def test_the_cores_load_without_django_settings():
    """Each core in a fresh interpreter with no DJANGO_SETTINGS_MODULE: Django, Celery and Channels stay unloaded.
    Prints the import times (``-s`` shows them)."""
    code = (
        "import importlib, json, sys, time\n"
        f"heavy = {HEAVY!r}\n"
        "t0 = time.perf_counter()\n"
        "for name in sys.argv[1:]:\n"
        "    importlib.import_module(name)\n"
        "elapsed = time.perf_counter() - t0\n"
        "print(json.dumps({'ms': elapsed * 1000, 'loaded': sorted({m.split('.')[0] for m in sys.modules} & set(heavy)),"
        " 'modules': len(sys.modules)}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL")}

    def load(*names: str) -> dict:
        run = subprocess.run([sys.executable, "-X", "frozen_modules=on", "-c", code, *names], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=240)
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout)

    # the three the issue timed
    named = ["playback.core.protocol", "studyapp.design.studyfile", "studyapp.journey.responses"]
    load(*named)  # warm the file cache: the first run after an edit also compiles
    three = min((load(*named) for _ in range(3)), key=lambda r: r["ms"])
    every = load(*CORE_MODULES)
    assert three["loaded"] == [], three
    assert every["loaded"] == [], every
    print(f"\npure import without Django: {', '.join(named)}: {three['ms']:.0f} ms ({three['modules']} modules); "
          f"all {len(CORE_MODULES)} core modules: {every['ms']:.0f} ms ({every['modules']} modules)")
