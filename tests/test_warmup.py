"""``mcp_endpoint.warmup.warm_up``: the tools of every endpoint a URL conf mounts are built
before a request needs them, host endpoints that never joined the checks' set included;
an endpoint whose tools need a database that is not there is left to its first request.

Each test mounts a new endpoint in a URL conf of its own (a module object as
``ROOT_URLCONF``), so that nothing another test built counts here.
"""

from __future__ import annotations

import asyncio
import logging
import types
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import OperationalError
from django.urls import clear_url_caches, include, path
from rest_framework.routers import SimpleRouter

from mcp_endpoint.endpoint import endpoints
from mcp_endpoint.warmup import mounted_endpoints, warm_up
from tests.hosts import host_endpoint
from tests.hosts.tutorial.views import SnippetSerializer, SnippetViewSet


@pytest.fixture
def mounted(settings: Any) -> Iterator[Any]:
    """A host's endpoint (left out of ``endpoints``, as host endpoints are) with the
    tutorial's snippets, mounted under ``nested/`` in this test's own URL conf."""
    router = SimpleRouter()
    router.register("snippets", SnippetViewSet, basename="warm-snippet")
    endpoint = host_endpoint("warmup-test")
    endpoint.register_router(router)
    inner = types.ModuleType("warmup_test_inner_urls")
    inner.urlpatterns = [path("", include(router.urls)), path("mcp", endpoint.urls)]  # type: ignore[attr-defined]
    conf = types.ModuleType("warmup_test_urls")
    conf.urlpatterns = [path("nested/", include(inner))]  # type: ignore[attr-defined]
    settings.ROOT_URLCONF = conf
    clear_url_caches()
    yield endpoint
    clear_url_caches()


@pytest.mark.django_db
def test_every_tool_of_a_mounted_endpoint_is_built(mounted: Any) -> None:
    assert mounted not in endpoints  # found in the URL conf, not in the checks' set
    assert not [t for t in mounted.tools if t.ready()]  # nothing built yet
    assert mounted in mounted_endpoints()

    built = warm_up()

    assert built["warmup-test"] == len(mounted.tools) > 0
    assert all(tool.ready() for tool in mounted.tools)
    assert {tool.name for tool in mounted.tools} >= {"list_snippets", "create_snippet"}


@pytest.mark.django_db
def test_an_endpoint_whose_database_is_missing_is_left_to_its_first_request(
    mounted: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Host code that reads the database while its serializer's fields are built, before
    # the database is migrated: the build raises, nothing is kept, the server starts.
    def unmigrated(self: Any) -> Any:
        raise OperationalError("no such table: tutorial_snippet")

    monkeypatch.setattr(SnippetSerializer, "get_fields", unmigrated)
    caplog.set_level(logging.INFO, logger="mcp_endpoint.warmup")

    built = warm_up()

    assert "warmup-test" not in built
    assert not [t for t in mounted.tools if t.ready()]
    assert "'warmup-test' builds its tools on its first request" in caplog.text
    # Its first request, with the table there, builds them.
    monkeypatch.undo()
    assert all(tool.unavailable() is None for tool in mounted.tools)


@pytest.mark.django_db(transaction=True)
def test_an_asgi_server_warms_up_inside_its_event_loop(mounted: Any) -> None:
    # uvicorn imports the application (and so runs warm_up) inside its running loop,
    # where Django refuses database work; the tools are built all the same.
    async def import_application() -> dict[str, int]:
        return warm_up()

    built = asyncio.run(import_application())

    assert built["warmup-test"] == len(mounted.tools) > 0
    assert all(tool.ready() for tool in mounted.tools)
