"""Settings for the test suite: the demo host's, plus every host app in ``tests/hosts/``."""

from __future__ import annotations

from project.settings import *  # noqa: F403
from project.settings import INSTALLED_APPS
from tests.hosts import host_apps

INSTALLED_APPS = [*INSTALLED_APPS, *host_apps()]
ROOT_URLCONF = "tests.urls"
