"""Send websocket frames at once instead of on the next turn of the event loop (Twisted TCP transports).

Twisted's ``FileDescriptor.write`` only buffers: it registers the socket for writability (``epoll_ctl``), the
reactor's next loop turn calls ``doWrite``, which sends and unregisters it (``epoll_ctl`` again). For a live
stream that is three system calls and an extra loop turn per frame, about a third of the Daphne process's
time at 200 streams (py-spy; docs/deploy.md). asyncio's own transports try ``send()`` first and only buffer
what the kernel did not take; ``install()`` gives Twisted's TCP connections the same behaviour.

Only the case where nothing is waiting in the buffers is changed (so order is kept), and only while the
connection is open, not closing and not TLS (Twisted's TLS layer writes through its own buffers); anything
else — a partial send, a full socket buffer, an error — takes Twisted's own path with whatever was not sent, so
back-pressure, producers and connection loss work as before.
"""

from __future__ import annotations

from typing import Any

_INSTALLED = "_pacelab_eager_writes"


def install() -> bool:
    """Patch ``twisted.internet.tcp.Connection.write`` once; returns False when it already was."""
    from twisted.internet import tcp

    if getattr(tcp.Connection, _INSTALLED, False):
        return False
    buffered_write = tcp.Connection.write

    def write(self: Any, data: bytes) -> None:
        if (type(data) is bytes and data and self.connected and not self.disconnecting
                and not getattr(self, "TLS", False) and not self._writeDisconnected and not self._tempDataLen
                and self.offset == len(self.dataBuffer)):
            sent = self.writeSomeData(data)
            if type(sent) is int and sent > 0:
                if sent == len(data):
                    return
                data = data[sent:]
        buffered_write(self, data)

    write.__doc__ = "Send at once when nothing is buffered; otherwise Twisted's buffered write."
    tcp.Connection.write = write
    setattr(tcp.Connection, _INSTALLED, True)
    return True


def installed() -> bool:
    from twisted.internet import tcp

    return bool(getattr(tcp.Connection, _INSTALLED, False))
