"""Request bodies over ``MAX_REQUEST_BODY_BYTES`` are refused by Daphne itself, before they are held anywhere.

Daphne reads a whole request body (Twisted spools it to a temporary file) and then puts all of it on the
application's queue as 8 KiB messages at once, so a 300 MB POST sat in a Daphne process's memory (224 MB ->
538 MB, and it stayed) before Django could refuse it, and Django's refusal was an HTML 400 (issue 41). Here
Daphne's request class is patched (like ``pacelab.eager_writes``, only under Daphne):

- a ``Content-Length`` over the limit is answered ``413`` as soon as the headers are read, and the body that
  follows is read off the socket and dropped (so the client, still sending, gets to read the answer);
- a body without a length (chunked) is counted as it streams in and answered the same way once over the limit;
- the answer is JSON (``{"ok": false, "code": "too_large", ...}``) as the participant submit contract promises
  (docs/protocol.md); the connection is closed afterwards.

Below this limit, views refuse what is too large for them by ``Content-Length`` before reading the body
(``studyapp.views.submit``: ``PARTICIPANT_SUBMIT_MAX_BYTES``). The reverse proxy's ``client_max_body_size``
(deploy/nginx/pacelab.conf) should be the same as this limit, so the proxy refuses first.
"""

from __future__ import annotations

import json
from typing import Any

_INSTALLED = "_pacelab_body_limit"
LINGER_S = 30.0  # how long a refused client may go on sending (dropped) before the connection is cut


class _Dropped:
    """The body of a refused request: written to and forgotten."""

    closed = False

    def write(self, data: bytes) -> None:
        pass

    def read(self, size: int = -1) -> bytes:
        return b""

    def seek(self, *args: Any) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def refusal(limit: int) -> bytes:
    """The whole 413 response, JSON body included."""
    body = json.dumps({"ok": False, "code": "too_large",
                       "error": f"request body too large: the limit is {limit} bytes"}).encode()
    head = (b"HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n")
    return head + body


def install(limit: int) -> bool:
    """Patch Daphne's ``WebRequest`` once; returns False when it already was."""
    from daphne.http_protocol import WebRequest
    from twisted.internet import reactor

    if getattr(WebRequest, _INSTALLED, False):
        return False
    got_length, handle_chunk, process = WebRequest.gotLength, WebRequest.handleContentChunk, WebRequest.process

    def refuse(self: Any) -> None:
        self._pacelab_refused = True
        spooled = getattr(self, "content", None)
        if spooled is not None:
            spooled.close()  # what was spooled so far (a chunked body) goes now
        self.content = _Dropped()
        self.requestHeaders.removeHeader(b"Expect")  # no "100 Continue" after the answer
        transport = self.channel.transport
        transport.write(refusal(limit))
        # The client may still be sending: keep reading (and dropping) so that it gets to read the answer, but
        # not for ever.
        self._pacelab_linger = reactor.callLater(
            LINGER_S, lambda: transport.connected and transport.abortConnection())

    def gotLength(self: Any, length: int | None) -> None:  # noqa: N802 - Twisted's name
        self._pacelab_received = 0
        if length is not None and length > limit:
            refuse(self)
            return
        got_length(self, length)

    def handleContentChunk(self: Any, data: bytes) -> None:  # noqa: N802 - Twisted's name
        if getattr(self, "_pacelab_refused", False):
            return
        self._pacelab_received = getattr(self, "_pacelab_received", 0) + len(data)
        if self._pacelab_received > limit:
            refuse(self)
            return
        handle_chunk(self, data)

    def process_(self: Any) -> Any:
        if getattr(self, "_pacelab_refused", False):  # the whole refused body has come in: done with it
            linger = getattr(self, "_pacelab_linger", None)
            if linger is not None and linger.active():
                linger.cancel()
            self.channel.transport.loseConnection()
            return None
        return process(self)

    WebRequest.gotLength = gotLength
    WebRequest.handleContentChunk = handleContentChunk
    WebRequest.process = process_
    setattr(WebRequest, _INSTALLED, True)
    return True
