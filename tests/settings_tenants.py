"""The suite's settings serving the tenants host (:mod:`tests.hosts.tenants`) at the root of
the site, with the product's API middleware, for the end-to-end test of tool calls through
the product's request path (``tests/test_host_tenants_live.py``)."""

from __future__ import annotations

from tests.hosts.tenants import API_MIDDLEWARE
from tests.settings import *  # noqa: F403
from tests.settings import MIDDLEWARE

ROOT_URLCONF = "tests.hosts.tenants.urls"
MIDDLEWARE = [*MIDDLEWARE, *API_MIDDLEWARE]
