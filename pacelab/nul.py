"""Finding the NUL character (U+0000) in decoded JSON or YAML.

PostgreSQL stores NUL in neither ``text`` nor ``jsonb``, so anything that reaches the database from outside
(submissions, study files, traces) is checked first and refused with the path of the offending value, instead of
failing later as a database error.
"""

from __future__ import annotations

from typing import Any


def nul_paths(value: Any, path: str = "") -> list[str]:
    """Paths (``a.b[2]``) of the strings and keys in ``value`` that contain NUL; empty when there are none."""
    if isinstance(value, str):
        return [path] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and "\x00" in key:
                found.append(here)
            found.extend(nul_paths(item, here))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found.extend(nul_paths(item, f"{path}[{i}]"))
    return found
