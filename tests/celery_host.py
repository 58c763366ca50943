"""A host's own subclass of the Celery task backend, named in ``TASKS`` by tests."""

from __future__ import annotations

from mcp_endpoint.celery import CeleryBackend


class HostCeleryBackend(CeleryBackend):
    """As a host that sets its own defaults on the backend would write it."""
