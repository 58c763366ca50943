"""Settings for the test suite: the demo host's, plus every host app in ``tests/hosts/``.

Each host app has its own URL conf and endpoint; a test selects it with
``@pytest.mark.urls(...)`` (``tests/hosts/settings.py`` mounts them all at once, for the
commands that run on an empty database). A host app with models has migrations: on
PostgreSQL an app without them cannot have a foreign key to one with them (its tables are
made before the others').
"""

from __future__ import annotations

import os

from project.settings import *  # noqa: F403
from project.settings import CACHES, INSTALLED_APPS, MCP_ENDPOINT, find_spec
from tests.hosts import host_apps

INSTALLED_APPS = [*INSTALLED_APPS, "rest_framework.authtoken", *host_apps()]
# The test client serves no static files from a collectstatic folder (there is none);
# live servers run the demo's own settings, where WhiteNoise serves what collectstatic made.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
# Each test client builds its middleware again, and WhiteNoise would list every file the
# finders know (the admin's, the account pages') each time: about a fifth of an
# in-process test's CPU. It looks a static path up when one is requested instead.
WHITENOISE_AUTOREFRESH = True
# The demo turns sessions and delete confirmation on; the suite starts from the library's
# defaults, and the tests of those features turn them on themselves.
MCP_ENDPOINT = {**MCP_ENDPOINT, "SESSIONS": False, "CONFIRM_DESTRUCTIVE_TOOLS": False}
# Each worker's memory of keys (on by default where the cache is Redis) is off for the
# unit tests: many of them change a key or a user with QuerySet.update(), which sends no
# signal, inside a transaction that never commits. tests/test_key_memory.py turns it on;
# the live servers of the end-to-end tests run with it on wherever REDIS_URL is set.
MCP_ENDPOINT["KEY_MEMORY_SECONDS"] = 0
# The call log's spool (on in the demo) is off for the unit tests, which read a call's row
# right after the call; tests/test_callspool.py turns it on, and the live servers of the
# end-to-end tests run with it, each in a folder of its own.
MCP_ENDPOINT["LOG_SPOOL_DIR"] = None

# Under pytest-xdist each test process ("gw0", "gw1", ...) has a cache of its own: a file
# cache folder, or a Redis key prefix (which also names its pub/sub channel), so that one
# process's cache.clear() between tests never empties another's. pytest-django gives
# each one its own test database.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
if CACHES["default"]["BACKEND"] == "mcp_endpoint.redis_cache.RedisCache":
    CACHES["default"]["BACKEND"] = "tests.cache.OwnPrefixRedisCache"
    CACHES["default"]["KEY_PREFIX"] = f"{CACHES['default']['KEY_PREFIX']}-{WORKER}"
else:
    CACHES["default"]["LOCATION"] = f"{CACHES['default']['LOCATION']}-tests-{WORKER}"

# Streamed calls write from worker threads while the test's own transaction is still open
# on the shared test database: with IMMEDIATE that transaction holds SQLite's write lock
# and the workers would wait for it. The demo's live servers keep IMMEDIATE.
DATABASES["default"].get("OPTIONS", {}).pop("transaction_mode", None)  # noqa: F405

# Long-running tools run at once, in the request, in the library's unit tests; the live
# servers of the end-to-end tests use the demo's database backend and a real worker.
TASKS = {
    "default": {
        "BACKEND": (
            "django.tasks.backends.immediate.ImmediateBackend"
            if find_spec("django.tasks") is not None
            else "django_tasks.backends.immediate.ImmediateBackend"
        )
    }
}
