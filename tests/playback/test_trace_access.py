"""Traces are their owner's unless shared, like studies (issue 41, item 7): another researcher gets 404 for a private
trace on every page that reads traces, the site's library and shared traces are everyone's, and no page shows where
on the server a trace file was."""

from io import StringIO

import pytest
from django.core.management import call_command

from playback.models import Trace

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    return {name: django_user_model.objects.create_user(name, password=f"pw-{name}-123456")
            for name in ("alice", "bob")}


def _import(path, *args) -> list[Trace]:
    call_command("import_traces", str(path), *args, stdout=StringIO(), stderr=StringIO())
    return list(Trace.objects.order_by("-id"))


def _client(client, user):
    client.force_login(user)
    return client


def test_a_private_trace_is_its_owners_only(people, data_dir, client):
    mine = _import(data_dir / "openai_sse-timed-reasoning.sse", "--owner", "alice")[0]
    assert mine.imported_by == people["alice"] and not mine.shared
    bob = _client(client, people["bob"])
    assert bob.get(f"/streams/traces/{mine.pk}/").status_code == 404
    assert f"/streams/traces/{mine.pk}/" not in bob.get("/streams/").content.decode()
    page = bob.get("/playground/", {"src": "trace", "id": mine.pk}, follow=True)
    assert f"no trace {mine.pk} that you may use" in page.content.decode()
    alice = _client(client, people["alice"])
    assert alice.get(f"/streams/traces/{mine.pk}/").status_code == 200


def test_shared_and_library_traces_are_everyones_and_no_page_shows_a_server_path(people, data_dir, client, tmp_path):
    src = tmp_path / "secret-dir" / "capture.sse"
    src.parent.mkdir()
    src.write_bytes((data_dir / "openai_sse-timed-reasoning.sse").read_bytes())
    shared = _import(src, "--owner", "alice", "--shared")[0]
    library = _import(data_dir / "anthropic_sse-timed-thinking.sse")[0]
    assert library.imported_by is None
    bob = _client(client, people["bob"])
    listing = bob.get("/streams/").content.decode()
    for trace in (shared, library):
        page = bob.get(f"/streams/traces/{trace.pk}/").content.decode()
        assert f"/streams/traces/{trace.pk}/" in listing
        assert str(tmp_path) not in page and str(data_dir) not in page
    assert str(tmp_path) not in listing and "secret-dir" not in listing


def test_the_same_file_imported_by_two_researchers_is_each_ones_own(people, data_dir):
    a = _import(data_dir / "openai_sse-timed-reasoning.sse", "--owner", "alice")[0]
    b = _import(data_dir / "openai_sse-timed-reasoning.sse", "--owner", "bob")[0]
    assert a.pk != b.pk and a.content_hash == b.content_hash
    again = _import(data_dir / "openai_sse-timed-reasoning.sse", "--owner", "bob")[0]
    assert again.pk == b.pk  # de-duplicated per owner
