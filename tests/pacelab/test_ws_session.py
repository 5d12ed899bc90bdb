"""Websocket sessions: the session is in the scope, read from the cookie, and outgoing frames are not wrapped."""

import asyncio
from importlib import import_module

import pytest
from django.conf import settings

from pacelab.ws_session import ReadOnlySessionMiddleware, WebsocketAuthStack


def _capture():
    seen = {}

    async def inner(scope, receive, send):
        seen.update(scope=scope, send=send)

    return seen, inner


async def test_the_session_comes_from_the_cookie_and_send_is_handed_through_untouched():
    seen, inner = _capture()

    async def send(message):
        pass

    await ReadOnlySessionMiddleware(inner)({"type": "websocket", "cookies": {settings.SESSION_COOKIE_NAME: "k" * 32}},
                                          None, send)
    assert seen["send"] is send  # no per-message wrapper: live frames go straight to the server
    assert seen["scope"]["session"]._session_key == "k" * 32


async def test_without_a_cookie_the_session_is_empty_and_a_missing_cookie_middleware_is_an_error():
    seen, inner = _capture()
    await ReadOnlySessionMiddleware(inner)({"type": "websocket", "cookies": {}}, None, None)
    assert seen["scope"]["session"].session_key is None
    with pytest.raises(ValueError, match="CookieMiddleware"):
        await ReadOnlySessionMiddleware(inner)({"type": "websocket"}, None, None)


@pytest.mark.django_db(transaction=True)
async def test_the_stack_resolves_the_logged_in_user_from_the_session_cookie(django_user_model):
    from asgiref.sync import sync_to_async

    user = await sync_to_async(django_user_model.objects.create_user)("ws-reader", password="x")

    def login():
        store = import_module(settings.SESSION_ENGINE).SessionStore()
        store["_auth_user_id"] = str(user.pk)
        store["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        store["_auth_user_hash"] = user.get_session_auth_hash()
        store.create()
        return store.session_key

    key = await sync_to_async(login)()
    seen, inner = _capture()

    async def send(message):
        pass

    cookie = f"{settings.SESSION_COOKIE_NAME}={key}".encode()
    await WebsocketAuthStack(inner)({"type": "websocket", "headers": [(b"cookie", cookie)]}, None, send)
    resolved = await sync_to_async(lambda: seen["scope"]["user"].pk)()
    assert resolved == user.pk and seen["send"] is send


async def test_a_socket_without_a_session_cookie_is_anonymous_without_waiting_for_the_database_thread():
    import threading

    from asgiref.sync import sync_to_async

    seen, inner = _capture()
    release = threading.Event()
    # occupy the thread that runs every websocket's database calls: resolving the user must not queue behind it
    busy = asyncio.ensure_future(sync_to_async(release.wait, thread_sensitive=True)(5))
    try:
        await asyncio.wait_for(WebsocketAuthStack(inner)({"type": "websocket", "headers": []}, None, None), 1)
    finally:
        release.set()
        await busy
    assert seen["scope"]["user"].is_anonymous
