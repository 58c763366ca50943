"""Settings of the demo host: a small task tracker with a REST API and an MCP endpoint.

Everything that differs between a laptop, CI and production comes from the environment:

- ``DATABASE_URL``: ``postgres://user:password@host:port/name``; SQLite when unset.
- ``REDIS_URL``: ``redis://host:port/db`` for Django's cache; a file cache when unset, so
  that several worker processes on one machine still share throttles.
- ``DJANGO_DEBUG``, ``DJANGO_SECRET_KEY`` (``check --deploy`` refuses the demo's own),
  ``DJANGO_ALLOWED_HOSTS``.
- ``STATIC_ROOT``: where ``collectstatic`` puts the files WhiteNoise serves.
- ``DEMO_CONN_MAX_AGE``: seconds a worker keeps its database connection (60 by default);
  ``project.asgi`` sets 0, since under ASGI each request may run on a thread of its own and
  persistent connections pile up to one per thread.
- ``DEMO_API_KEY_CACHE_SECONDS``: keep validated API keys in the cache this long (0, the
  default, leaves it off); ``DEMO_KEY_MEMORY_SECONDS``: how long each worker keeps a verified
  key in its memory where the cache is Redis (60; 0 turns it off); ``DEMO_USER_THROTTLE``,
  ``DEMO_PROTOCOL_RATE``: the rate limits.
- ``DEMO_EXPORT_PACE_SECONDS``: a pause after each row of the CSV export (0 by default), so
  that a demonstration (or a test) can watch it work, cancel it or revoke its key.
- ``DEMO_TASK_HEARTBEAT_MS``: how often a task's worker says it is alive (10000).
- ``DEMO_TASK_ENGINE=celery``: long-running tools on Celery (``CELERY_BROKER_URL``,
  ``DEMO_CELERY_QUEUE``) instead of django-tasks-db.
- ``DEMO_MCP_SESSIONS=0`` turns legacy MCP sessions off (they are on;
  ``DEMO_MCP_SESSION_IDLE_SECONDS``, ``DEMO_MCP_SESSIONS_PER_CREDENTIAL`` tune them;
  ``DEMO_MCP_STREAMED_CALLS``, ``DEMO_MCP_PENDING``, ``DEMO_MCP_SINGLE_THREADED_WAIT`` set
  the per-credential caps and the wait for a client's answer under sync workers);
  ``DEMO_STREAM_KEEPALIVE_SECONDS``: between keep-alives of a quiet stream (15).
- ``DEMO_CLOCK_FILE``: a file whose seconds the sessions' clock adds to the wall clock, for
  the suite's tests of several server processes (``project/clock.py``).
- ``DEMO_WARM_UP=0``: ``project.wsgi`` and ``project.asgi`` leave each endpoint's tools to
  be built by its first request instead of as the worker starts
  (:func:`mcp_endpoint.warmup.warm_up`).
"""

from __future__ import annotations

import gc
import os
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import django
import django_stubs_ext
from corsheaders.defaults import default_headers as default_cors_headers

from mcp_endpoint.oauth import provider_settings
from project.database_url import database_from_url

# Lets the demo's classes subscript Django and DRF generics (ModelAdmin[Task]) at run time.
django_stubs_ext.monkeypatch()

# A process reads its settings as it starts, and what it builds from here until its apps
# are ready (models, admin, serializers, the libraries they import) lives as long as the
# process: the cyclic garbage collector, run every few hundred allocations, walks those
# objects again and again and finds no garbage (a tenth of a worker's start-up CPU). It
# rests until project.tracker's ready(), which sets them aside for good (gc.freeze) and
# starts it again.
gc.disable()

BASE_DIR = Path(__file__).resolve().parent.parent

# Known to everyone who reads this file: project.tracker.checks refuses it under --deploy.
DEMO_SECRET_KEY = "demo-only-secret-key-change-me-in-production-0123456789abcdef"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", DEMO_SECRET_KEY)
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
ALLOWED_HOSTS = os.environ.get(
    "DJANGO_ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver"
).split(",")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "oauth2_provider",
    "mcp_endpoint",
    "project.tracker",
]

# Long-running tools run on Django's task framework (django.tasks from Django 6.0, the
# django-tasks backport before it), on django-tasks-db's database backend: its workers
# (``manage.py db_worker``) run them, never a thread of the web worker.
if find_spec("django.tasks") is None:
    INSTALLED_APPS.append("django_tasks")
INSTALLED_APPS.append("django_tasks_db")
TASKS: dict[str, dict[str, Any]] = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# Or on Celery (the ``celery`` extra), as many products already run it: DEMO_TASK_ENGINE=celery
# with CELERY_BROKER_URL (RabbitMQ or Redis), workers started as
# ``celery -A project.celery worker -Q $DEMO_CELERY_QUEUE``.
if os.environ.get("DEMO_TASK_ENGINE") == "celery":
    TASKS = {
        "default": {
            "BACKEND": "mcp_endpoint.celery.CeleryBackend",
            "OPTIONS": {
                "APP": "project.celery.app",
                "QUEUE": os.environ.get("DEMO_CELERY_QUEUE", "mcp"),
            },
        }
    }
    CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//")
    # One task at a time per worker process: a long-running tool holds its worker.
    CELERY_WORKER_PREFETCH_MULTIPLIER = 1
    CELERY_TASK_ACKS_LATE = True

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's, the account pages') under gunicorn, where DEBUG is off.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # A database or cache outage met by a REST call or a page: 503 with Retry-After, as
    # /mcp answers it, rather than an HTML 500.
    "mcp_endpoint.outages.ServiceUnavailableMiddleware",
]

ROOT_URLCONF = "project.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "project.wsgi.application"
ASGI_APPLICATION = "project.asgi.application"


CONN_MAX_AGE = int(os.environ.get("DEMO_CONN_MAX_AGE", "60"))
DEMO_EXPORT_PACE_SECONDS = float(os.environ.get("DEMO_EXPORT_PACE_SECONDS", "0"))
# The test suite's servers (tests/live_server.py) seed and sign in the demo's users by the
# dozen, and PBKDF2's rounds cost a quarter of a second of CPU per password: they set this.
# Nothing else should.
if os.environ.get("DEMO_FAST_PASSWORD_HASHING") == "1":
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# The suite's tests of two server processes move the sessions' clock by writing seconds
# to this file instead of waiting (project/clock.py). Nothing else should set it.
DEMO_CLOCK_FILE = os.environ.get("DEMO_CLOCK_FILE", "")


def _sqlite_options() -> dict[str, object]:
    # Several worker processes write (the tool-call log, the demo's tasks). A busy
    # timeout makes a writer wait for the lock instead of failing at once. Django 5.1
    # added init_command and transaction_mode for SQLite: WAL lets readers go on while
    # one writes, and IMMEDIATE takes the write lock when a transaction begins, so two
    # transactions that both read and then write cannot deadlock (SQLite would fail one
    # with "database is locked" without waiting). 4.2 keeps SQLite's journal and
    # deferred transactions.
    options: dict[str, object] = {"timeout": 20}
    if django.VERSION >= (5, 1):
        options["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
        options["transaction_mode"] = "IMMEDIATE"
    return options


if os.environ.get("DATABASE_URL"):
    DATABASES = {
        "default": database_from_url(os.environ["DATABASE_URL"], conn_max_age=CONN_MAX_AGE)
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "CONN_MAX_AGE": CONN_MAX_AGE,
            "OPTIONS": _sqlite_options(),
        }
    }

if os.environ.get("REDIS_URL"):
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    CACHES = {
        "default": {
            # Django's Redis cache, reusing its clients (see mcp_endpoint/redis_cache.py).
            "BACKEND": "mcp_endpoint.redis_cache.RedisCache",
            "LOCATION": os.environ["REDIS_URL"],
            "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "demo"),
            # Fail fast when Redis is down: redis-py's default retries back off for seconds
            # per call, holding every request (and its worker) through an outage.
            "OPTIONS": {"retry": Retry(NoBackoff(), 1), "socket_connect_timeout": 2},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": os.environ.get("CACHE_DIR", str(BASE_DIR / ".cache" / "django")),
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = os.environ.get("STATIC_ROOT", str(BASE_DIR / ".static"))
LOGIN_URL = "/accounts/login/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "oauth2_provider.contrib.rest_framework.OAuth2Authentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # The scope policy first: a key or token with the scope "read" cannot write, on REST
    # as at /mcp, whoever its user is.
    "DEFAULT_PERMISSION_CLASSES": [
        "mcp_endpoint.permissions.HasScopes",
        "rest_framework.permissions.IsAuthenticated",
    ],
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.SearchFilter",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_PAGINATION_CLASS": "project.tracker.pagination.TaskTrackerPagination",
    # Counted with the cache's atomic incr, so the budget holds across worker processes.
    "DEFAULT_THROTTLE_CLASSES": ["mcp_endpoint.throttling.AtomicUserRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {"user": os.environ.get("DEMO_USER_THROTTLE", "2000/minute")},
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Task tracker API",
    "VERSION": "1.0.0",
    "COMPONENT_SPLIT_REQUEST": True,
}

# django-oauth-toolkit for MCP clients (S256 PKCE only, no implicit or password grant,
# open registration bounded by MCP_ENDPOINT["OAUTH_*"], client ID metadata documents,
# replayed codes revoked), with this product's scopes and token lifetimes.
OAUTH2_PROVIDER = provider_settings(
    existing={
        "SCOPES": {
            "read": "See your projects, tasks and comments",
            "write": "Create, change and delete tasks and comments in your name",
        },
        "DEFAULT_SCOPES": ["read"],
        "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
        "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
        "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    },
    # Tests fetch metadata documents from a loopback server with a fetcher of their own.
    CIMD_METADATA_FETCHER=os.environ.get(
        "DEMO_CIMD_FETCHER", "mcp_endpoint.oauth.registration.MetadataDocumentFetcher"
    ),
)

# Browser-based MCP clients (the Inspector on a loopback port, say) preflight their POSTs;
# the REST API and /mcp share this policy. The MCP headers must be allowed in, and the
# session id and the auth challenge let out.
CORS_ALLOWED_ORIGINS = [o for o in os.environ.get("DEMO_CORS_ORIGINS", "").split(",") if o]
CORS_ALLOWED_ORIGIN_REGEXES = [r"^https?://(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$"]
CORS_ALLOW_HEADERS = (
    *default_cors_headers,
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "mcp-session-id",
    "last-event-id",
)
CORS_EXPOSE_HEADERS = ["mcp-session-id", "www-authenticate"]

MCP_ENDPOINT = {
    "SERVER_NAME": "task-tracker",
    "SERVER_TITLE": "Task tracker",
    "SERVER_VERSION": "1.0.0",
    "INSTRUCTIONS_TEMPLATE": "tracker/mcp_instructions.txt",
    # Protocol messages (initialize, ping, lists) per API key or token; the work counts
    # against REST_FRAMEWORK's throttles.
    "PROTOCOL_RATE": os.environ.get("DEMO_PROTOCOL_RATE", "1200/minute"),
    "API_KEY_CACHE_SECONDS": int(os.environ.get("DEMO_API_KEY_CACHE_SECONDS", "0")),
    "KEY_MEMORY_SECONDS": int(os.environ.get("DEMO_KEY_MEMORY_SECONDS", "60")),
    # The admin's log of tool calls (one row per call). The rows of reads wait in each
    # worker's file under LOG_SPOOL_DIR and reach the table in batches (DEMO_LOG_SPOOL_DIR=""
    # writes each at once).
    "LOG_TOOL_CALLS": True,
    "LOG_SPOOL_DIR": os.environ.get("DEMO_LOG_SPOOL_DIR", str(BASE_DIR / ".cache" / "call-spool"))
    or None,
    "OAUTH_REGISTRATION_RATE": os.environ.get("DEMO_OAUTH_REGISTRATION_RATE", "20/hour"),
    # Deleting asks the user first, through clients that can show a confirmation.
    "CONFIRM_DESTRUCTIVE_TOOLS": True,
    # Legacy sessions: on (DEMO_MCP_SESSIONS=0 turns them off), so that handshake-era clients
    # can be asked to confirm a delete; they need a cache every worker shares (REDIS_URL in
    # production).
    "SESSIONS": os.environ.get("DEMO_MCP_SESSIONS", "1") == "1",
    "SESSION_IDLE_SECONDS": int(os.environ.get("DEMO_MCP_SESSION_IDLE_SECONDS", "600")),
    "SESSIONS_PER_CREDENTIAL": int(os.environ.get("DEMO_MCP_SESSIONS_PER_CREDENTIAL", "8")),
    # What one credential's calls may hold while they stream or wait on the client.
    "STREAMED_CALLS_PER_CREDENTIAL": int(os.environ.get("DEMO_MCP_STREAMED_CALLS", "8")),
    "PENDING_CLIENT_REQUESTS_PER_CREDENTIAL": int(os.environ.get("DEMO_MCP_PENDING", "4")),
    "SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT": int(
        os.environ.get("DEMO_MCP_SINGLE_THREADED_WAIT", "20")
    ),
    "STREAM_KEEPALIVE_SECONDS": int(os.environ.get("DEMO_STREAM_KEEPALIVE_SECONDS", "15")),
    # How often a task's worker says it is alive (a task whose worker is gone fails after
    # three missed); the live tests shorten it.
    "TASK_HEARTBEAT_MS": int(os.environ.get("DEMO_TASK_HEARTBEAT_MS", "10000")),
    # Clients may ask for log messages (logging/setLevel): the app's records and the
    # tracker's own, sent on a streamed call's answer.
    "LOGGING": True,
    "CLIENT_LOGGERS": ["mcp_endpoint", "project.tracker"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "errors": {"class": "logging.StreamHandler", "level": "ERROR"},
    },
    "loggers": {
        "mcp_endpoint": {"handlers": ["console"], "level": os.environ.get("MCP_LOG_LEVEL", "INFO")},
        "project.tracker": {"level": os.environ.get("MCP_LOG_LEVEL", "INFO")},
        # A request that failed with a server error says why on the console, DEBUG or not;
        # the logger's level and Django's own handlers stay as they were.
        "django.request": {"handlers": ["errors"]},
    },
}
