"""Settings for the test suite: the demo host's, plus every host app in ``tests/hosts/``."""

from __future__ import annotations

from project.settings import *  # noqa: F403
from project.settings import INSTALLED_APPS
from tests.hosts import host_apps

INSTALLED_APPS = [*INSTALLED_APPS, "rest_framework.authtoken", *host_apps()]
ROOT_URLCONF = "tests.urls"

# The test client serves no static files from a collectstatic folder (there is none);
# live servers run the demo's own settings, where WhiteNoise serves what collectstatic made.
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True

# Streamed calls write from worker threads while the test's own transaction is still open
# on the shared test database: with IMMEDIATE that transaction holds SQLite's write lock
# and the workers would wait for it. The demo's live servers keep IMMEDIATE.
DATABASES["default"].get("OPTIONS", {}).pop("transaction_mode", None)  # noqa: F405
