"""Small host apps, one per shape of DRF product, each with its own URL conf and endpoint.

A test selects a host with ``@pytest.mark.urls("tests.hosts.<name>.urls")``.
"""

from __future__ import annotations

from typing import Any

from mcp_endpoint.endpoint import Endpoint, endpoints


def host_endpoint(name: str, **settings: Any) -> Endpoint:
    """An endpoint for one host's URL conf, left out of the project-wide system checks.

    The project's checks run against the project's URL conf, which does not mount the
    hosts; a host's checks are its endpoint's own (``endpoint.check()``), run by its tests
    under its URL conf.
    """
    endpoint = Endpoint(name, settings={"SERVER_NAME": name, **settings})
    endpoints.discard(endpoint)
    return endpoint
