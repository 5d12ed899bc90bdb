"""Dashboard fixtures: researchers A (owner) and B (a stranger), a viewer and an editor of A's study."""


import pytest

PASSWORD = "correct-horse-battery-9"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Test users log in many times: a fast hasher keeps the suite in seconds (production keeps the default)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
async def db_thread():
    """Close the connection ``database_sync_to_async`` opened in its worker thread, so the test database can go."""
    from channels.db import database_sync_to_async
    from django.db import connections

    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def researchers(django_user_model):
    make = django_user_model.objects.create_user
    return {name: make(name, password=PASSWORD) for name in ("alice", "bob", "vera", "ed")}


@pytest.fixture
def study(researchers):
    """Alice's study (the minimal test study, with quotas), shared with Vera (viewer) and Ed (editor)."""
    from study_builders import study as build

    from dashboard import services
    from studyapp import services as study_services

    doc = build(id="alice-study", limits={"quotas": {"overall": 10}},
                recruitment={"completion": {"code": "CDONE42", "url": "https://panel.example/done?cc=CDONE42"}})
    s, _ = study_services.study_load(doc=doc, owner=researchers["alice"])
    services.study_share(study=s, username="vera", role="viewer")
    services.study_share(study=s, username="ed", role="editor")
    return s


@pytest.fixture
def client_of(researchers):
    from django.test import Client

    def make(name: str, **kw) -> Client:
        c = Client(**kw)
        c.force_login(researchers[name])
        return c

    return make
