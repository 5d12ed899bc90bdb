"""Production settings pass Django's deployment checks, and pages carry the security headers."""

import os
import secrets
import subprocess
import sys

import pytest
from procs import ROOT


def test_check_deploy_is_clean_with_production_settings():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"} | {
        "DATABASE_URL": "postgres://u:p@127.0.0.1:5432/x", "REDIS_URL": "redis://127.0.0.1:6379/0",
        "SECRET_KEY": secrets.token_urlsafe(60), "HTTPS": "true", "ALLOWED_HOSTS": "study.example.org"}
    res = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "no issues" in res.stdout


@pytest.mark.django_db
def test_pages_send_a_content_security_policy_without_inline_script(client):
    response = client.get("/accounts/login/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
