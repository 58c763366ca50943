"""The suite's settings with every host app's URLs (and so every host's endpoint) loaded,
for ``manage.py check`` and ``migrate`` on an empty database (``tests/test_hosts.py``)."""

from __future__ import annotations

from tests.settings import *  # noqa: F403

ROOT_URLCONF = "tests.hosts.urls"
