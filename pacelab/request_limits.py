"""A view's own body limit, checked before the view reads the body (the server-wide one is pacelab/body_limit.py)."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse


def too_large(request: HttpRequest, limit: int) -> JsonResponse | None:
    """A JSON 413 when the body is over ``limit``: judged by its ``Content-Length`` without reading it, or, when no
    length was given, by reading it; ``None`` when the view may read it."""
    try:
        size = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        size = 0
    if not size:
        try:
            size = len(request.body)
        except RequestDataTooBig:
            size = limit + 1
    if size <= limit:
        return None
    return JsonResponse({"ok": False, "code": "too_large",
                         "error": f"request body too large: the limit is {limit} bytes"}, status=413)
