"""Researcher pages for stored streams: a list with metrics, and one trace's pieces."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from playback import selectors
from playback.models import Trace


@login_required
def stream_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "playback/stream_list.html",
        {"traces": selectors.traces_for(request.user)[:500], "stimuli": selectors.stimuli_for(request.user)},
    )


@login_required
def trace_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trace = get_object_or_404(selectors.traces_for(request.user), pk=pk)  # someone else's: 404, as unknown
    pieces = trace.data.get("pieces", [])[:2000] if trace.kind == Trace.Kind.STREAM else []
    return render(request, "playback/trace_detail.html", {"trace": trace, "pieces": pieces})
