"""The platform runs on its declared dependencies alone.

`scripts/demo` installs the project without the `dev` extra, so a platform module (anything a researcher runs:
views, consumers, tasks, management commands) that imports a package declared only under `dev`, or not declared at
all and present only as some other package's requirement, works in the test suite and fails, now or after an
upgrade, on a researcher's machine. This is how `manage.py run_bots` once lost `websockets`.
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# the packages the project installs are the platform; the list is read from pyproject.toml so the two cannot drift
PLATFORM_PACKAGES = tuple(p.rstrip("*") for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"])


def _names(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(r).name) for r in requirements}


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_every_package_a_platform_module_imports_is_a_declared_runtime_dependency():
    main = _names(PYPROJECT["project"]["dependencies"])
    distributions = importlib.metadata.packages_distributions()
    first_party = set(PLATFORM_PACKAGES)
    offenders = []
    for package in PLATFORM_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for module in sorted(_top_level_imports(path) - first_party - sys.stdlib_module_names):
                dists = {canonicalize_name(d) for d in distributions.get(module, [])}
                if not dists & main:
                    offenders.append(f"{path.relative_to(ROOT)} imports {module} ({', '.join(sorted(dists)) or '?'})")
    assert not offenders, "undeclared runtime imports:\n" + "\n".join(offenders)


def test_the_platform_packages_include_every_django_app_of_the_project():
    from django.conf import settings

    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    assert local_apps <= set(PLATFORM_PACKAGES)


def test_the_gpl_references_are_development_dependencies_only():
    main = _names(PYPROJECT["project"]["dependencies"])
    dev = _names(PYPROJECT["project"]["optional-dependencies"]["dev"])
    assert {"psignifit", "questplus"} <= dev - main
