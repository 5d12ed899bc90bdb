"""What PostgreSQL's jsonb (and text) store unchanged, checked before anything from outside reaches them.

- NUL (U+0000): stored in neither text nor jsonb; ``nul_paths`` finds it in decoded JSON or YAML, so submissions,
  study files and traces are refused with the path of the offending value instead of failing as a database error.
- Large numbers: Python writes floats of 1e16 and more in exponent form, which jsonb reads back as an integer
  that is not the float that was sent. ``MAX_EXACT_NUMBER`` (1e15: in milliseconds, 31,000 years) bounds the
  numbers that clients may send where no tighter bound applies.
"""

from __future__ import annotations

from typing import Any

MAX_EXACT_NUMBER = 1e15


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
