"""While the database is unreachable (a PostgreSQL restart or failover), participants see "reconnecting", not an
error page.

``CONN_HEALTH_CHECKS`` heals connections after the restart; during it, a participant request fails fast with
``OperationalError``/``InterfaceError``. This middleware answers those requests with a 503: JSON for the JSON
endpoints (``/p/<token>/submit``, ``step.json``), which the page's submit code retries under the same
``client_id``, and a small page that reloads itself for participant pages. Nothing was stored, so nothing is lost.
Other paths (the dashboard, admin) keep Django's usual handling.
"""

from __future__ import annotations

import logging
import re

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import format_html
from django.utils.translation import gettext as _

log = logging.getLogger("pacelab")
RETRY_AFTER_S = 2
_PARTICIPANT = re.compile(r"^/(p/[^/]+/|s/[^/]+/)")
_JSON = re.compile(r"^/p/[^/]+/(submit|step\.json)$")


def _page() -> str:
    return format_html(
        '<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="{}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>{}</title></head>'
        '<body><main class="reconnecting" role="status"><h1>{}</h1><p>{}</p></main></body></html>',
        RETRY_AFTER_S + 1, _("Reconnecting…"), _("Reconnecting…"),
        _("The connection to the study server was interrupted. This page tries again by itself in a few seconds; "
          "your answers so far are saved."))


class DatabaseOutageMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        path = request.path_info
        if _JSON.match(path):
            log.warning("database unavailable, asked the participant to retry %s: %s", path, exception)
            response: HttpResponse = JsonResponse(
                {"ok": False, "code": "unavailable", "error": "the server cannot reach its database; retry"},
                status=503)
        elif _PARTICIPANT.match(path):
            log.warning("database unavailable, showed the reconnecting page for %s: %s", path, exception)
            response = HttpResponse(_page(), status=503, content_type="text/html; charset=utf-8")
        else:
            return None
        response["Retry-After"] = str(RETRY_AFTER_S)
        response["Cache-Control"] = "no-store"
        return response
