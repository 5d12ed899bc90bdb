"""Login lockout cannot be escaped with forged forwarded headers (issue 41, item 1), against a real Daphne started
by scripts/serve as deployed: forwarded headers count only from TRUSTED_PROXIES, the client is the right-most
untrusted hop, and failures are counted per username as well as per address.

One Daphne serves both kinds of peer: it trusts 127.0.0.2 as its proxy, so a client bound to 127.0.0.2 is the
proxy and one on 127.0.0.1 is a stranger talking to Daphne directly.
"""

import re

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from procs import free_ports, serve_env, start_serve, stop

pytestmark = pytest.mark.integration
PASSWORD = "correct horse battery staple"
PROXY = "127.0.0.2"


@pytest.fixture
def served(service_env, tmp_path):
    users = get_user_model()
    for name in ("alice", "bob", "carol", "dave"):
        users.objects.create_user(name, password=PASSWORD)
    port = free_ports(1)
    env = dict(serve_env(service_env, tmp_path / "var"), TRUSTED_PROXIES=PROXY)
    proc = start_serve(["--processes", "1", "--base-port", str(port), "--no-worker", "--no-beat", "--local-trial"],
                       env, tmp_path / "serve.log", [port])
    yield f"http://127.0.0.1:{port}"
    stop(proc)


def _client(base: str, source: str = "127.0.0.1") -> httpx.Client:
    return httpx.Client(base_url=base, transport=httpx.HTTPTransport(local_address=source), timeout=30)


def _login(client: httpx.Client, username: str, password: str, xff: str | None = None) -> httpx.Response:
    page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    headers = {"X-Forwarded-For": xff} if xff else {}
    return client.post("/accounts/login/", headers=headers,
                       data={"username": username, "password": password, "csrfmiddlewaretoken": token})


def _logged_in(r: httpx.Response) -> bool:
    return r.status_code == 302 and "sessionid" in r.cookies


def test_a_forged_forwarded_for_does_not_escape_the_lockout(served):
    limit = settings.AXES_FAILURE_LIMIT
    stranger = _client(served)  # talks to Daphne directly: its X-Forwarded-For is dropped
    codes = [_login(stranger, "alice", "wrong", xff=f"198.51.100.{i}").status_code for i in range(20)]
    assert codes[:limit - 1] == [200] * (limit - 1) and set(codes[limit:]) == {429}, codes
    assert not _logged_in(_login(stranger, "alice", PASSWORD, xff="198.51.100.99"))

    # "<spoofed>, <real>" as an appending proxy sends it: the client is the right-most untrusted hop
    proxy = _client(served, PROXY)
    codes = [_login(proxy, "bob", "wrong", xff=f"198.51.100.{i}, 203.0.113.7").status_code for i in range(20)]
    assert set(codes[limit:]) == {429}, codes
    refused = _login(proxy, "bob", PASSWORD, xff="198.51.100.250, 203.0.113.7")
    assert refused.status_code == 429 and not _logged_in(refused)


def test_the_lockout_counts_per_username_across_addresses(served):
    """Real, different addresses (as a botnet has) behind the trusted proxy: the username locks all the same."""
    limit = settings.AXES_FAILURE_LIMIT
    proxy = _client(served, PROXY)
    codes = [_login(proxy, "carol", "wrong", xff=f"203.0.113.{i}").status_code for i in range(limit + 3)]
    assert set(codes[limit:]) == {429}, codes
    assert _login(proxy, "carol", PASSWORD, xff="192.0.2.50").status_code == 429
    # another researcher from yet another address is not affected
    assert _logged_in(_login(_client(served, PROXY), "dave", PASSWORD, xff="192.0.2.51"))
