"""The platform runs on its declared dependencies alone.

`scripts/demo` installs the project without the `dev` extra, so a platform module (anything a researcher runs:
views, consumers, tasks, management commands) that imports a package declared only under `dev`, or not declared at
all and present only as some other package's requirement, works in the test suite and fails, now or after an
upgrade, on a researcher's machine. This is how `manage.py run_bots` once lost `websockets`. deptry does the import
check (configured under `[tool.deptry]` in pyproject.toml); the packaging and licence rules are the project's own.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PLATFORM_PACKAGES = {p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]}


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def test_every_import_is_a_declared_runtime_dependency_and_every_runtime_dependency_is_used():
    # missing (DEP001), unused (DEP002), transitive (DEP003) and dev-only (DEP004) dependencies of platform code
    run = subprocess.run(
        [sys.executable, "-m", "deptry", ".", "--no-ansi"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_platform_packages_include_every_django_app_of_the_project():
    from django.conf import settings

    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    assert local_apps <= PLATFORM_PACKAGES


def test_the_gpl_references_are_development_dependencies_only():
    main = _names(PYPROJECT["project"]["dependencies"])
    dev = _names(PYPROJECT["project"]["optional-dependencies"]["dev"])
    assert {"psignifit", "questplus"} <= dev - main
