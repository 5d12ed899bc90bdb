"""Project-level pages: the home page and the health endpoint."""

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


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
