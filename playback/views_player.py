"""The standalone player test page (static/js/playback/testpage.js); plain HTML, no database access."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def player_test(request: HttpRequest) -> HttpResponse:
    return render(request, "playback/player_test.html")
