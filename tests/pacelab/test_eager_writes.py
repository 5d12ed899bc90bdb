"""Eager writes: a Twisted TCP connection sends at once when nothing is buffered, and falls back to Twisted's
buffered path, in order, for whatever the kernel does not take. Real sockets and a real (uninstalled) reactor."""

import socket

import pytest
from twisted.internet import protocol as tprotocol
from twisted.internet import tcp
from twisted.internet.selectreactor import SelectReactor

from pacelab import eager_writes


@pytest.fixture
def pair():
    """A Twisted server connection over one end of a connected socket pair, the peer socket, and the reactor."""
    eager_writes.install()
    a, b = socket.socketpair()
    a.setblocking(False)
    b.settimeout(5)
    reactor = SelectReactor()
    conn = tcp.Connection(a, tprotocol.Protocol(), reactor)
    conn.connected = True
    yield conn, b, reactor
    a.close()
    b.close()


def _drain(conn, peer, reactor, want: int) -> bytes:
    """Read ``want`` bytes from the peer, letting the connection write its buffer as a reactor would."""
    got = b""
    while len(got) < want:
        if conn in reactor.getWriters():
            conn.doWrite()
        got += peer.recv(1 << 20)
    return got


def test_install_is_idempotent_and_patches_tcp_connections():
    eager_writes.install()
    assert eager_writes.installed() and eager_writes.install() is False


def test_a_small_write_leaves_at_once_without_the_reactor(pair):
    conn, peer, reactor = pair
    conn.write(b'{"type": "frame", "seq": 0}')
    assert peer.recv(100) == b'{"type": "frame", "seq": 0}'
    assert conn not in reactor.getWriters() and not conn._tempDataLen  # nothing buffered, nothing registered


def test_what_the_kernel_does_not_take_is_buffered_and_later_writes_queue_behind_it(pair):
    conn, peer, reactor = pair
    big = bytes(range(256)) * 40_000  # 10 MB: more than any socket buffer
    conn.write(big)
    assert conn in reactor.getWriters() and conn._tempDataLen > 0  # the rest waits for the reactor
    conn.write(b"after")  # must not jump the queue
    assert _drain(conn, peer, reactor, len(big) + 5) == big + b"after"


def test_a_closing_or_lost_connection_takes_twisteds_path(pair):
    conn, peer, reactor = pair
    conn.disconnecting = True
    conn.write(b"late")
    assert conn._tempDataLen == 4 and conn in reactor.getWriters()  # buffered, sent before the close as before
    conn.disconnecting = False
    conn.connected = False
    conn.write(b"lost")  # Twisted drops writes to a lost connection
    assert conn._tempDataLen == 4
