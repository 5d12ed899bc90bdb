"""Django sessions for websockets without wrapping ``send``.

Channels' ``SessionMiddleware`` wraps every outgoing message to save the session and set its cookie, which only
an HTTP response can do: on a websocket the wrapper never acts, yet every frame of a live stream passes through
it (a few percent of a pacing process's CPU at 8,000 frames/s, benchmarks/pacing.py). Websocket consumers here
only read the session (the playback socket checks its key, ``AuthMiddleware`` loads the user), so this
middleware puts the session in the scope the way Channels does and hands ``send`` through untouched.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from channels.auth import AuthMiddleware
from channels.sessions import CookieMiddleware
from django.conf import settings
from django.contrib.auth.models import AnonymousUser


class ReadOnlySessionMiddleware:
    """Put ``scope["session"]`` (from the session cookie) in a websocket's scope; never save it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        if "session" not in scope:
            if "cookies" not in scope:
                raise ValueError("ReadOnlySessionMiddleware must run inside CookieMiddleware")
            store = import_module(settings.SESSION_ENGINE).SessionStore
            scope = dict(scope, session=store(scope["cookies"].get(settings.SESSION_COOKIE_NAME)))
        return await self.inner(scope, receive, send)


class CookielessAnonymousAuthMiddleware(AuthMiddleware):
    """Channels' ``AuthMiddleware``, except that a socket without a session cookie is anonymous at once.

    Channels resolves the user in the one thread that runs every websocket's database calls; a socket with no
    session key cannot have a user, and when hundreds of participants connect at once that queue is also where
    their playbacks bind (waiting in it past Daphne's handshake timeout drops the connection).
    """

    async def resolve_scope(self, scope: dict) -> None:
        if scope["session"].session_key is None:
            scope["user"]._wrapped = AnonymousUser()
            return
        await super().resolve_scope(scope)


def WebsocketAuthStack(inner: Any) -> Any:  # noqa: N802 - named like Channels' AuthMiddlewareStack
    """Channels' ``AuthMiddlewareStack`` for websockets: cookies, a read-only session, the user."""
    return CookieMiddleware(ReadOnlySessionMiddleware(CookielessAnonymousAuthMiddleware(inner)))
