"""The standalone player test page (static/js/playback/testpage.js); plain HTML, no database access.

A development tool: served in the embedded mode, with ``DEBUG``, or when ``PLAYER_TEST_PAGE`` is set (the browser
tests set it); a production site answers 404.
"""

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render


def player_test(request: HttpRequest) -> HttpResponse:
    if not settings.PLAYER_TEST_PAGE:
        raise Http404("the player test page is off (PLAYER_TEST_PAGE)")
    return render(request, "playback/player_test.html")
