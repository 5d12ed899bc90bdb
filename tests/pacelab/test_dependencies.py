"""The platform runs on its declared dependencies alone.

`scripts/demo` installs the project without the `dev` extra, so a platform module (anything a researcher runs:
views, consumers, tasks, management commands) that imports a package declared only under `dev` works in the
test suite and fails on a researcher's machine. This is how `manage.py run_bots` once lost `websockets`.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PLATFORM_PACKAGES = ("pacelab", "studyapp", "playback", "analysis", "dashboard")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    main = {_normalise(Requirement(r).name) for r in project["dependencies"]}
    dev = {_normalise(Requirement(r).name) for r in project["optional-dependencies"]["dev"]}
    return main, dev - main


def _top_level_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_platform_module_imports_a_package_declared_only_for_development():
    main, dev_only = _declared()
    assert "psignifit" in dev_only, "the GPLv3 references must stay test-time only"
    distributions = importlib.metadata.packages_distributions()
    offenders = []
    for package in PLATFORM_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for module in _top_level_imports(path):
                dists = {_normalise(d) for d in distributions.get(module, [])}
                if dists & dev_only and not dists & main:
                    offenders.append(f"{path.relative_to(ROOT)} imports {module} ({', '.join(sorted(dists))})")
    assert offenders == []


def test_the_bots_websocket_client_is_a_runtime_dependency():
    main, _ = _declared()
    assert "websockets" in main
    assert "websockets" in _top_level_imports(ROOT / "studyapp" / "bots.py")
