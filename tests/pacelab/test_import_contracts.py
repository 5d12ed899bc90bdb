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
sys.path.insert(0, str(ROOT / "benchmarks"))
import import_time  # noqa: E402 - benchmarks/import_time.py: the cores' imports timed in fresh interpreters

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
CONTRACTS = {c["id"]: c for c in CONFIG["contracts"]}
CORES: list[str] = CONTRACTS["pure-cores"]["source_modules"]


CORE_MODULES = [m for core in CORES for m in import_time.modules_of(core)]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

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
NOT_CORES = {"pacelab.settings", "pacelab.eager_writes", "playback.vendor_o200k"}


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
    """Each core in a fresh interpreter with no DJANGO_SETTINGS_MODULE (benchmarks/import_time.py): Django, Celery
    and Channels stay unloaded. Prints the import times (``-s`` shows them)."""
    # the three the issue timed
    named = ["playback.core.protocol", "studyapp.design.studyfile", "studyapp.journey.responses"]
    three = import_time.best_of(named, 3)  # after a run that warms the file cache and compiles
    every = import_time.measure(CORE_MODULES)
    assert three["frameworks"] == [], three
    assert every["frameworks"] == [], every
    print(f"\npure import without Django: {', '.join(named)}: {three['ms']:.0f} ms ({three['modules']} modules); "
          f"all {len(CORE_MODULES)} core modules: {every['ms']:.0f} ms ({every['modules']} modules)")


def test_each_core_alone_loads_no_framework_and_the_probe_would_see_one():
    """Core by core, so a failure names the core; and the probe itself sees a framework where there is one (the
    Celery app sets Django's settings and loads both)."""
    loaded = {core: import_time.measure(import_time.modules_of(core))["frameworks"] for core in CORES}
    assert loaded == {core: [] for core in CORES}
    assert {"celery", "django"} <= set(import_time.measure(["pacelab.celery"])["frameworks"])


def test_the_import_time_benchmark_prints_a_row_per_core_against_the_django_baseline():
    def bench(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "benchmarks/import_time.py", "--repeat", "1", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=240)

    run = bench("--json", "studyapp.journey")
    assert run.returncode == 0, run.stdout + run.stderr
    found = json.loads(run.stdout)["rows"]
    rows = {r["core"]: r for r in found}
    assert list(rows) == [import_time.BASELINE, "studyapp.journey", import_time.TOGETHER]
    assert {"celery", "django"} <= set(rows[import_time.BASELINE]["frameworks"])  # what the cores no longer load
    assert rows[import_time.BASELINE]["x_setup"] == 1
    for name in ("studyapp.journey", import_time.TOGETHER):
        row = rows[name]
        assert row["frameworks"] == [] and row["ms"] > 0 and row["cpu_ms"] > 0 and row["files"] > 1, row
        assert row["x_setup"] == pytest.approx(row["cpu_ms"] / rows[import_time.BASELINE]["cpu_ms"], abs=0.01)
    # the printed table: a header, then a row per core named in its first column, frameworks in its last
    lines = import_time.table(found)
    assert [line.split("  ")[0] for line in lines] == ["core", *rows]
    assert lines[0].endswith("frameworks") and lines[2].endswith("  -") and "django" in lines[1]
    refused = bench("playback.views")
    assert refused.returncode == 2 and "'playback.views' is not a pure core" in refused.stderr
