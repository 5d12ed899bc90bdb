"""An open Daphne websocket protocol writing into memory, for the fast-send tests and benchmarks/ws_send.py.

Not a test module. Built by Daphne's own ``WebSocketFactory``, so it is the protocol a real Daphne serves (the
tests fail if Daphne or Autobahn change what the fast path relies on); the transport is Twisted's in-memory
``StringTransport``, so what is written can be read back and no system call is timed.
"""

from __future__ import annotations

from typing import Any

from autobahn.websocket.protocol import WebSocketProtocol
from daphne.server import Server
from daphne.ws_protocol import WebSocketFactory
from twisted.internet.testing import StringTransport


class DaphneServer:
    """What ``Server.handle_reply`` reads of Daphne's server: its connections (and its header check)."""

    check_headers_type = staticmethod(Server.check_headers_type)

    def __init__(self) -> None:
        self.connections: dict = {}


def open_protocol(server_name: str = "test", **options: Any
                  ) -> tuple[WebSocketProtocol, StringTransport, DaphneServer]:
    """A Daphne websocket protocol from Daphne's own factory, opened (no extension negotiated), writing into an
    in-memory transport; ``options`` are Autobahn protocol options over null origins allowed and a 1 MiB message
    limit. Returns the protocol, its transport and the server it is registered with (for
    ``Server.handle_reply(server, protocol, message)``, Daphne's ASGI send)."""
    server = DaphneServer()
    factory = WebSocketFactory(server, server=server_name)
    factory.setProtocolOptions(**{"allowNullOrigin": True, "maxMessagePayloadSize": 1 << 20, **options})
    proto = factory.buildProtocol(None)
    transport = StringTransport()
    proto.makeConnection(transport)
    proto.client_addr = ["127.0.0.1", 50000]
    proto.state = WebSocketProtocol.STATE_OPEN
    proto._perMessageCompress = None
    server.connections[proto] = {}
    return proto, transport, server
