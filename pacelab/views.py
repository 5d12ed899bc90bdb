"""Project-level pages: the home page, the health endpoint and the site icon."""

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

FAVICON = settings.BASE_DIR / "static" / "favicon.ico"


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"mode": settings.MODE})


def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database reachability, for load balancers and the test harness."""
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT 1")
        db_ok = True
    except Exception:  # noqa: BLE001 - report, do not crash the probe
        db_ok = False
    return JsonResponse({"ok": db_ok, "mode": settings.MODE, "database": db_ok}, status=200 if db_ok else 503)


@require_GET
@cache_control(max_age=7 * 24 * 3600, public=True)
def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico``: browsers ask for it on every site whatever the page links; a 404 there is log noise."""
    return HttpResponse(FAVICON.read_bytes(), content_type="image/x-icon")
