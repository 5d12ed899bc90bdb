"""Which address is the client's (pacelab/proxy.py): the TCP peer, unless it is a configured proxy; then the
right-most forwarded hop that is not a configured proxy. Forwarded headers of anyone else are dropped."""

import asyncio

import pytest

from pacelab.proxy import TrustedProxyMiddleware, client_address, parse_networks

TRUSTED = parse_networks(["127.0.0.1", "10.0.0.0/8"])


@pytest.mark.parametrize(("peer", "xff", "client"), [
    ("203.0.113.9", ["1.2.3.4"], "203.0.113.9"),  # not a proxy: its header means nothing
    ("127.0.0.1", ["1.2.3.4"], "1.2.3.4"),
    ("127.0.0.1", ["6.6.6.6, 1.2.3.4"], "1.2.3.4"),  # "<spoofed>, <real>": the right-most untrusted hop
    ("127.0.0.1", ["6.6.6.6, 1.2.3.4, 10.1.2.3"], "1.2.3.4"),  # behind two proxies of ours
    ("127.0.0.1", ["6.6.6.6", "1.2.3.4"], "1.2.3.4"),  # two header lines: one list, in order
    ("127.0.0.1", ["6.6.6.6, not-an-ip"], "127.0.0.1"),  # garbage from the last proxy: believe the proxy only
    ("127.0.0.1", [], "127.0.0.1"),
    ("127.0.0.1", ["10.0.0.5"], "10.0.0.5"),  # nothing but proxies: the farthest one
    ("127.0.0.1", ["[2001:db8::1]:4711"], "2001:db8::1"),
])
def test_the_client_is_the_rightmost_untrusted_hop(peer, xff, client):
    assert client_address(peer, xff, TRUSTED) == client


def test_no_proxy_is_trusted_by_default():
    assert client_address("127.0.0.1", ["1.2.3.4"], parse_networks([])) == "127.0.0.1"


def test_a_bad_trusted_proxies_entry_is_named():
    with pytest.raises(ValueError, match="TRUSTED_PROXIES: 'localhost'"):
        parse_networks(["127.0.0.1", "localhost"])


def _through(scope: dict, trusted) -> dict:
    seen = {}

    async def inner(scope, receive, send):
        seen.update(scope)

    asyncio.run(TrustedProxyMiddleware(inner, trusted)(scope, None, None))
    return seen


def test_the_middleware_drops_forwarded_headers_from_strangers_and_resolves_them_from_proxies():
    headers = [(b"host", b"x"), (b"x-forwarded-for", b"6.6.6.6"), (b"x-forwarded-proto", b"https")]
    stranger = _through({"type": "http", "client": ["203.0.113.9", 5000], "headers": headers}, TRUSTED)
    assert stranger["client"] == ["203.0.113.9", 5000] and stranger["headers"] == [(b"host", b"x")]
    proxied = _through({"type": "websocket", "client": ["127.0.0.1", 5000], "headers": headers}, TRUSTED)
    assert proxied["client"][0] == "6.6.6.6" and proxied["headers"] == headers
