"""Researchers see only their studies: a stranger gets 404 everywhere, a viewer only watches, every form has
CSRF, the live socket refuses strangers, and logins are throttled (django-axes)."""

import re

import pytest
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.urls import URLPattern, reverse

from dashboard import urls as dashboard_urls
from pacelab.asgi import application
from studyapp.models import Study, StudyMember

pytestmark = pytest.mark.django_db

SLUG_ROUTES = [p for p in dashboard_urls.urlpatterns if isinstance(p, URLPattern) and "slug" in p.pattern.converters]
OTHER_ROUTES = [p for p in dashboard_urls.urlpatterns if p not in SLUG_ROUTES]


EXAMPLE_PARTS = {"run": 1, "name": "report.html"}  # a route's other parts: any value; access is decided first


def study_urls(slug: str) -> list[str]:
    return [reverse(f"dashboard:{p.name}",
                    kwargs={"slug": slug, **{k: EXAMPLE_PARTS[k] for k in p.pattern.converters if k != "slug"}})
            for p in SLUG_ROUTES]


def test_every_dashboard_route_is_covered_by_this_walk():
    assert len(SLUG_ROUTES) >= 8 and all(p.name for p in dashboard_urls.urlpatterns)
    assert {p.name for p in OTHER_ROUTES} == {"list", "create"}


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_stranger_gets_404_on_every_url_of_someone_elses_study(study, client_of, method):
    bob = client_of("bob")
    for url in study_urls(study.slug):
        response = getattr(bob, method)(url, {"action": "close", "slug": "stolen", "text": "x",
                                              "username": "bob", "role": "editor"})
        assert response.status_code == 404, url
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT and not Study.objects.filter(slug="stolen").exists()
    assert not StudyMember.objects.filter(study=study, user__username="bob").exists()


def test_a_missing_study_and_a_foreign_study_answer_the_same(study, client_of):
    bob = client_of("bob")
    foreign = bob.get(reverse("dashboard:detail", kwargs={"slug": study.slug}))
    missing = bob.get(reverse("dashboard:detail", kwargs={"slug": "no-such-study"}))
    assert foreign.status_code == missing.status_code == 404


def test_the_study_list_shows_own_and_shared_studies_with_roles_and_nothing_else(study, client_of):
    assert study.slug not in client_of("bob").get(reverse("dashboard:list")).content.decode()
    for name, role in [("alice", "Owner"), ("vera", "Viewer"), ("ed", "Editor")]:
        html = client_of(name).get(reverse("dashboard:list")).content.decode()
        row = re.search(rf'<tr data-slug="{study.slug}">(.*?)</tr>', html, re.S)
        assert row and f'<td class="role">{role}</td>' in row.group(1), name


def test_anonymous_visitors_are_sent_to_the_login_page(study):
    anon = Client()
    for url in study_urls(study.slug) + [reverse("dashboard:list"), reverse("dashboard:create")]:
        response = anon.get(url)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login")), url


def test_a_viewer_can_watch_but_not_change_copy_share_or_upload(study, client_of):
    vera = client_of("vera")
    for name in ("detail", "snapshot", "spec"):
        assert vera.get(reverse(f"dashboard:{name}", kwargs={"slug": study.slug})).status_code == 200, name
    detail = vera.get(reverse("dashboard:detail", kwargs={"slug": study.slug})).content.decode()
    assert 'data-action="open"' not in detail and reverse("dashboard:edit", kwargs={"slug": study.slug}) not in detail
    refused = [
        vera.post(reverse("dashboard:state", kwargs={"slug": study.slug}), {"action": "open"}),
        vera.get(reverse("dashboard:edit", kwargs={"slug": study.slug})),
        vera.post(reverse("dashboard:edit", kwargs={"slug": study.slug}), {"text": "id: alice-study"}),
        vera.get(reverse("dashboard:copy", kwargs={"slug": study.slug})),
        vera.post(reverse("dashboard:copy", kwargs={"slug": study.slug}), {"slug": "vera-copy"}),
        vera.post(reverse("dashboard:share", kwargs={"slug": study.slug}), {"username": "bob", "role": "editor"}),
    ]
    assert [r.status_code for r in refused] == [403] * len(refused)
    study.refresh_from_db()
    assert (study.state, study.version) == (Study.State.DRAFT, 1)
    assert not Study.objects.filter(slug="vera-copy").exists()
    assert not StudyMember.objects.filter(study=study, user__username="bob").exists()


def test_an_editor_may_change_state_but_not_share(study, client_of):
    ed = client_of("ed")
    assert ed.post(reverse("dashboard:state", kwargs={"slug": study.slug}), {"action": "open"}).status_code == 302
    study.refresh_from_db()
    assert study.state == Study.State.OPEN
    assert ed.get(reverse("dashboard:share", kwargs={"slug": study.slug})).status_code == 403


def test_every_post_without_a_csrf_token_is_refused(study, researchers):
    alice = Client(enforce_csrf_checks=True)
    alice.force_login(researchers["alice"])
    for url in study_urls(study.slug) + [reverse("dashboard:create")]:
        response = alice.post(url, {"action": "open", "slug": "csrf-copy", "username": "bob", "role": "viewer"})
        assert response.status_code == 403, url
    study.refresh_from_db()
    assert study.state == Study.State.DRAFT and not Study.objects.filter(slug="csrf-copy").exists()


def test_every_post_form_on_every_page_carries_a_csrf_token(study, researchers):
    alice = Client(enforce_csrf_checks=True)
    alice.force_login(researchers["alice"])
    pages = [reverse("dashboard:list"), reverse("dashboard:create")] + [
        reverse(f"dashboard:{n}", kwargs={"slug": study.slug}) for n in ("detail", "edit", "copy", "share")]
    forms = 0
    for url in pages:
        html = alice.get(url).content.decode()
        for form in re.findall(r'<form[^>]*method="post".*?</form>', html, re.S):
            forms += 1
            assert 'name="csrfmiddlewaretoken"' in form, url
    assert forms >= 10
    # and a form posted with its token works
    html = alice.get(reverse("dashboard:detail", kwargs={"slug": study.slug})).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = alice.post(reverse("dashboard:state", kwargs={"slug": study.slug}),
                          {"action": "open", "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.state == Study.State.OPEN


async def _socket(client: Client, slug: str, origin: str = "http://127.0.0.1"):
    headers = [(b"origin", origin.encode())]
    if settings.SESSION_COOKIE_NAME in client.cookies:
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        headers.append((b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()))
    communicator = WebsocketCommunicator(application, f"/ws/dashboard/{slug}/", headers=headers)
    connected, _ = await communicator.connect()
    return communicator, connected


@pytest.mark.django_db(transaction=True)
async def test_the_live_socket_refuses_strangers_and_anonymous_with_4404(study, client_of, db_thread):
    for client in (client_of("bob"), Client()):
        communicator, connected = await _socket(client, study.slug)
        assert connected
        assert await communicator.receive_output(timeout=3) == {"type": "websocket.close", "code": 4404}
        await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_live_socket_sends_a_viewer_a_snapshot_at_once(study, client_of, db_thread):
    communicator, connected = await _socket(client_of("vera"), study.slug)
    assert connected
    snapshot = await communicator.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot" and snapshot["study"]["slug"] == study.slug
    assert snapshot["counts"]["started"] == 0 and snapshot["overall_quota"] == 10
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_the_live_socket_refuses_a_foreign_origin(study, client_of, db_thread):
    communicator, connected = await _socket(client_of("alice"), study.slug, origin="https://evil.example")
    assert not connected
    await communicator.disconnect()  # ends the denier, which otherwise waits for a disconnect forever


def _login(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


def test_logins_are_throttled_after_the_failure_limit(researchers, password):
    client = Client()
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        assert _login(client, "alice", "wrong-password").status_code == 200  # the form again, with an error
    assert _login(client, "alice", "wrong-password").status_code == 429  # the limit is reached
    locked = _login(client, "alice", password)  # even the right password is refused now
    assert locked.status_code == 429 and "_auth_user_id" not in client.session
    assert b"Too many failed logins" in locked.content
    other = Client(REMOTE_ADDR="10.0.0.2")  # another researcher from another address is not locked out
    assert _login(other, "bob", password).status_code == 302 and "_auth_user_id" in other.session
    same_address = Client()  # but the address that guessed is, for every username (password spraying)
    assert _login(same_address, "bob", password).status_code == 429


def test_a_login_after_a_few_failures_succeeds_and_resets_the_count(researchers, password):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(client, "alice", "wrong-password")
    assert _login(client, "alice", password).status_code == 302
    client.logout()
    assert _login(client, "alice", "wrong-password").status_code == 200  # counting starts again
