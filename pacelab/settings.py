"""Settings, read once from the environment (django-environ).

Two modes:
- *embedded* (no ``DATABASE_URL``/``REDIS_URL``): SQLite under ``var/``, the in-memory channel layer, and
  background work (analysis, imports) run in-process on a worker thread.
- *production* (``DATABASE_URL`` and ``REDIS_URL`` set): PostgreSQL, channels_redis, Celery on Redis.

Nothing secret lives in the repository: ``SECRET_KEY`` comes from the environment, or in the embedded mode from
a key generated once into ``var/secret_key``.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()
VAR_DIR = Path(env.str("PACELAB_VAR_DIR", default=str(BASE_DIR / "var")))

DATABASE_URL = env.str("DATABASE_URL", default="")
REDIS_URL = env.str("REDIS_URL", default="")
PRODUCTION = bool(DATABASE_URL and REDIS_URL)
MODE = "production" if PRODUCTION else "embedded"


def _embedded_secret_key() -> str:
    """A key generated on first use and kept in var/ (never committed)."""
    path = VAR_DIR / "secret_key"
    if path.exists():
        return path.read_text().strip()
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    path.write_text(key)
    path.chmod(0o600)
    return key


if "SECRET_KEY" in env.ENVIRON:
    SECRET_KEY = env.str("SECRET_KEY")
elif PRODUCTION:
    raise environ.ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL and REDIS_URL are set")
else:
    SECRET_KEY = _embedded_secret_key()

DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# Request bodies: Daphne refuses a body over MAX_REQUEST_BODY_BYTES before holding it (pacelab/body_limit.py; the
# largest legitimate upload is a 512 KiB study file); Django's own limit is the same; a participant's submit is
# refused over PARTICIPANT_SUBMIT_MAX_BYTES by its Content-Length, before the view reads it. JSON answers (413).
MAX_REQUEST_BODY_BYTES = env.int("MAX_REQUEST_BODY_BYTES", default=2 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_REQUEST_BODY_BYTES
PARTICIPANT_SUBMIT_MAX_BYTES = env.int("PARTICIPANT_SUBMIT_MAX_BYTES", default=256 * 1024)
# Reverse proxies whose X-Forwarded-For/-Proto are believed (addresses or networks, e.g. "127.0.0.1,10.0.0.0/8").
# Empty (the default): the TCP peer is the client and forwarded headers are dropped (pacelab/proxy.py).
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # intcomma: counts in the analysis report
    "channels",
    "pacelab",  # PaceLabConfig.ready loads the Celery app
    "playback",
    "studyapp",
    "analysis",
    "axes",
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A database outage: participants get a 503 "reconnecting" (JSON or a self-reloading page), not an error page.
    "pacelab.db_outage.DatabaseOutageMiddleware",
    # Last: turns a locked-out login (django-axes) into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "pacelab.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
ASGI_APPLICATION = "pacelab.asgi.application"
WSGI_APPLICATION = None

DATABASES = {
    "default": env.db_url(
        "DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'pacelab.sqlite3'}"
    )
}
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Under ASGI every request runs in a thread of its own, so persistent per-thread connections would pile up
# (Django's docs: disable them under ASGI). PostgreSQL gets a connection pool instead, which also checks each
# connection before lending it, so the site heals by itself after a PostgreSQL restart.
DATABASES["default"]["CONN_MAX_AGE"] = 0
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": env.int("DB_POOL_MIN", default=1),
        "max_size": env.int("DB_POOL_MAX", default=20),
        "timeout": env.float("DB_POOL_TIMEOUT", default=10.0),
    }  # no "check" here: with CONN_HEALTH_CHECKS Django passes ConnectionPool.check_connection itself
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # SQLite: wait for the writer instead of failing with "database is locked". IMMEDIATE transactions take the
    # write lock at BEGIN, so the busy timeout applies (a deferred transaction that reads, then writes, fails at
    # once when another writer is active); WAL lets readers go on while one writer commits.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        timeout=20, transaction_mode="IMMEDIATE", init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
    # An SQLite connection is a file handle, not a server process, so persistent connections cannot pile up;
    # a thread's connection closes with the thread. Kept open, the one thread that runs every websocket's
    # database calls (Channels' database_sync_to_async) does not reopen the file and re-register Django's SQL
    # functions for each message, which was most of its work when hundreds of sockets bind at once.
    DATABASES["default"]["CONN_MAX_AGE"] = 60
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py 8 reads with a 5 s socket timeout by default, the same as channels_redis's 5 s
                # BZPOPMIN: an idle consumer's receive then fails with TimeoutError and the socket closes with
                # 1011 (redis-py #4091). The read timeout must exceed the blocking pop's.
                "hosts": [{"address": REDIS_URL, "socket_timeout": 15}],
                # Only notifications travel here (the database is the record): a small capacity and a short
                # expiry keep a slow consumer from hoarding memory; see docs/deploy.md.
                "capacity": env.int("CHANNEL_CAPACITY", default=200),
                "expiry": env.int("CHANNEL_EXPIRY", default=30),
            },
        }
    }
    CACHES = {"default": {"BACKEND": "pacelab.cache.ResilientRedisCache", "LOCATION": REDIS_URL,
                          "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 2}}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Sessions survive a Redis restart: the database is the record.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# Celery: production runs tasks on workers; the embedded mode runs them on an in-process thread.
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default=REDIS_URL or "cache+memory://")
CELERY_TASK_ALWAYS_EAGER = not bool(REDIS_URL)
# Job rows are the record and nobody reads Celery results: without this, sending a task subscribes to its result
# on Redis first, and during a Redis outage that retries for ~20 s, holding up the request that enqueued it.
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = False  # opted into per task (idempotent tasks only)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Login throttling (django-axes 8): the axes backend comes first and refuses a locked-out username+IP pair
# before any password is checked; it needs the request, which Django's login views pass.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
# Counted per address and per username (issue 41): one address cannot try many usernames, and many addresses (a
# botnet, or forged forwarded headers) cannot try one username more than AXES_FAILURE_LIMIT times per cool-off.
# The price: anyone can lock a username for the cool-off; `manage.py axes_reset_username NAME` lifts it.
AXES_LOCKOUT_PARAMETERS = ["ip_address", "username"] if env.bool("AXES_LOCKOUT_BY_USERNAME", default=True) \
    else ["ip_address"]
# The client's address is REMOTE_ADDR, resolved from forwarded headers only for TRUSTED_PROXIES (pacelab/proxy.py).
AXES_CLIENT_IP_CALLABLE = "pacelab.proxy.remote_addr"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "dashboard/locked_out.html"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:list"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
SERVE_STATIC = env.bool("SERVE_STATIC", default=not PRODUCTION)
# /streams/player-test/: the standalone player test page (docs/rendering.md), for development and the browser tests;
# not served to the public in production unless asked for
PLAYER_TEST_PAGE = env.bool("PLAYER_TEST_PAGE", default=DEBUG or not PRODUCTION)
# Production: WhiteNoise serves STATIC_ROOT (after collectstatic; the scripts are ES modules importing each other
# by plain names, so no hashed-name storage) unless the reverse proxy does (STATIC_BY_PROXY=1,
# deploy/nginx/pacelab.conf). pacelab/static.py says which at start.
STATIC_BY_PROXY = env.bool("STATIC_BY_PROXY", default=False)
if not SERVE_STATIC and not STATIC_BY_PROXY:
    MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                      "whitenoise.middleware.WhiteNoiseMiddleware")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
    "loggers": {"pacelab": {"level": "INFO"}, "playback": {"level": "INFO"}, "studyapp": {"level": "INFO"}},
}

# Security headers. The Content-Security-Policy allows only this origin's scripts (no inline script, no eval);
# participant and dashboard pages keep their data in <script type="application/json"> blocks.
from csp.constants import NONE, SELF  # noqa: E402

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Behind a TLS-terminating proxy (docs/deploy.md): HTTPS=true turns on the cookie and transport settings.
HTTPS = env.bool("HTTPS", default=False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=HTTPS)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Periodic work (celery beat in production; `manage.py sweep_sessions` by hand or cron otherwise).
# Each on PACELAB_TASK_QUEUE, where the workers listen.
PACELAB_TASK_QUEUE = env.str("PACELAB_TASK_QUEUE", default="celery")
# A running analysis beats every ANALYSIS_HEARTBEAT_S; silent for ANALYSIS_LOST_AFTER_S its worker is taken for
# lost ("worker lost, restarting") and the run is sent again by the sweep every ANALYSIS_SWEEP_S
# (analysis/heartbeat.py).
ANALYSIS_HEARTBEAT_S = env.float("ANALYSIS_HEARTBEAT_S", default=5.0)
ANALYSIS_LOST_AFTER_S = env.float("ANALYSIS_LOST_AFTER_S", default=20.0)
ANALYSIS_SWEEP_S = env.float("ANALYSIS_SWEEP_S", default=15.0)
_ON_QUEUE = {"options": {"queue": PACELAB_TASK_QUEUE}}
CELERY_BEAT_SCHEDULE = {
    "sweep-sessions": {"task": "studyapp.tasks.sweep_sessions", "schedule": 60.0, **_ON_QUEUE},
    "requeue-stale-jobs": {"task": "analysis.tasks.requeue_stale_jobs", "schedule": 60.0, **_ON_QUEUE},
    "recover-lost-analyses": {"task": "analysis.tasks.recover_lost_analyses", "schedule": ANALYSIS_SWEEP_S,
                              **_ON_QUEUE},
}

# PaceLab
PACELAB_TOKENIZER_DIR = env.str("PACELAB_TOKENIZER_DIR", default=str(VAR_DIR / "tokenizers"))
