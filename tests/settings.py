"""Settings for the test suite: the demo host's, plus the small host apps of ``tests/hosts``.

Each host app has its own URLconf and endpoint; a test selects it with
``@pytest.mark.urls(...)``. Their models have no migrations: the test database creates
their tables directly.
"""

from __future__ import annotations

from project.settings import *  # noqa: F403
from project.settings import INSTALLED_APPS

INSTALLED_APPS = [
    *INSTALLED_APPS,
    "rest_framework.authtoken",
    "tests.hosts.tutorial",
]
