"""The shape of the bearer tokens this site hands out (participant sessions, playbacks: ``token_urlsafe(32)``).

Anything else is refused before it reaches the database: a token with a NUL or a stray character could never match,
and PostgreSQL refuses NUL in a text parameter outright, which would turn a forged link into a server error.
"""

from __future__ import annotations

import re
from typing import Any

_SHAPE = re.compile(r"[A-Za-z0-9_-]{20,64}")


def token_shaped(value: Any) -> bool:
    """True when ``value`` could be one of our tokens (URL-safe base64, 20–64 characters)."""
    return isinstance(value, str) and _SHAPE.fullmatch(value) is not None
