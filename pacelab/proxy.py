"""The client's address behind reverse proxies, believed only from the proxies the operator names.

Daphne's ``--proxy-headers`` takes the *left-most* ``X-Forwarded-For`` value from any peer, so a client that
writes its own header chooses its address, and login throttling keyed on it is bypassed (issue 41). Here the
peer's forwarded headers count only when the peer is in ``TRUSTED_PROXIES`` (off by default); the client is then
the *right-most* hop that is not itself a trusted proxy: every trusted proxy appends the address it saw, so
everything left of that hop was written by the client and is ignored. ``X-Forwarded-Proto`` from an untrusted peer
is dropped, so ``SECURE_PROXY_SSL_HEADER`` cannot be forged either.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_DROPPED_UNTRUSTED = (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-port", b"x-real-ip", b"forwarded")


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """``["127.0.0.1", "10.0.0.0/8"]`` as networks; a bad entry raises ``ValueError`` naming it."""
    out = []
    for value in values:
        value = value.strip()
        if not value:
            continue
        try:
            out.append(ipaddress.ip_network(value, strict=False))
        except ValueError as exc:
            raise ValueError(f"TRUSTED_PROXIES: {value!r} is not an address or network ({exc})") from None
    return tuple(out)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip('"')
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_trusted(address: str | None, trusted: Sequence[Network]) -> bool:
    ip = _address(address or "")
    return ip is not None and any(ip in net for net in trusted)


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: Sequence[Network]) -> str | None:
    """The client's address: ``peer`` unless it is a trusted proxy, else the right-most hop of the
    ``X-Forwarded-For`` values (in header order) that is not a trusted proxy. A malformed hop ends the walk
    there: the hop itself is what the last trusted proxy saw, and an unparsable one cannot be believed, so the
    nearest trusted proxy's address is the answer."""
    if not is_trusted(peer, trusted):
        return peer
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    current = peer
    for hop in reversed(hops):
        ip = _address(hop)
        if ip is None:
            return current
        current = str(ip)
        if not any(ip in net for net in trusted):
            return current
    return current  # every hop was a trusted proxy: the left-most one is the best known


class TrustedProxyMiddleware:
    """ASGI middleware (HTTP and websockets): sets ``scope["client"]`` from forwarded headers sent by a trusted
    proxy, and removes forwarded headers that an untrusted peer sent."""

    def __init__(self, inner: Any, trusted: Sequence[str] | Sequence[Network] = ()) -> None:
        self.inner = inner
        self.trusted = tuple(t if isinstance(t, ipaddress.IPv4Network | ipaddress.IPv6Network)
                             else ipaddress.ip_network(t, strict=False) for t in trusted)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> Any:
        if scope["type"] in ("http", "websocket"):
            scope = self.resolve(scope)
        return await self.inner(scope, receive, send)

    def resolve(self, scope: dict) -> dict:
        client = scope.get("client") or None
        peer = client[0] if client else None
        headers = scope.get("headers") or []
        if not is_trusted(peer, self.trusted):
            if any(name.lower() in _DROPPED_UNTRUSTED for name, _ in headers):
                scope = dict(scope, headers=[(n, v) for n, v in headers if n.lower() not in _DROPPED_UNTRUSTED])
            return scope
        xff = [v.decode("latin-1") for n, v in headers if n.lower() == b"x-forwarded-for"]
        address = client_address(peer, xff, self.trusted)
        if address != peer:
            scope = dict(scope, client=[address, 0])
        return scope


def remote_addr(request: Any) -> str | None:
    """django-axes' client address (``AXES_CLIENT_IP_CALLABLE``): ``REMOTE_ADDR``, which Django takes from the
    scope this middleware resolved; never a header the client could write."""
    return request.META.get("REMOTE_ADDR")
