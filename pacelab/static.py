"""Who serves ``/static/``: Django's finders (embedded mode, ``SERVE_STATIC``), WhiteNoise from ``STATIC_ROOT``
(production, the default), or the reverse proxy (``STATIC_BY_PROXY=1``; deploy/nginx/pacelab.conf).

Production without any of them served no scripts at all, and participant pages did nothing (issue 41); so
WhiteNoise is the default, and the choice is said at start (``python -m pacelab.static``, run by scripts/serve,
and the log of every Daphne process).
"""

from __future__ import annotations


def server(*, serve_static: bool, by_proxy: bool) -> str:
    """``finders``, ``proxy`` or ``whitenoise``."""
    if serve_static:
        return "finders"
    return "proxy" if by_proxy else "whitenoise"


def describe() -> str:
    from django.conf import settings

    how = server(serve_static=settings.SERVE_STATIC, by_proxy=settings.STATIC_BY_PROXY)
    if how == "finders":
        return (f"static files: Django serves {settings.STATIC_URL} from the app folders "
                "(SERVE_STATIC=1; not for production)")
    if how == "proxy":
        return (f"static files: the reverse proxy must serve {settings.STATIC_URL} from {settings.STATIC_ROOT} "
                "(STATIC_BY_PROXY=1; Daphne answers 404 there)")
    return f"static files: WhiteNoise serves {settings.STATIC_URL} from {settings.STATIC_ROOT} (collectstatic)"


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pacelab.settings")
    django.setup()
    print(describe())
