"""ensure_researcher makes a researcher, not a staff account (the Django admin has nothing for researchers)."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command


@pytest.mark.django_db
def test_ensure_researcher_creates_a_non_staff_account_and_is_idempotent(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("ensure_researcher", "--username", "rita", stdout=out)
    call_command("ensure_researcher", "--username", "rita", stdout=StringIO())
    user = get_user_model().objects.get(username="rita")
    assert not user.is_staff and not user.is_superuser
    password = out.getvalue().split("password: ")[1].strip()
    assert user.check_password(password)
