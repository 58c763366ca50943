"""The APIView host (:mod:`tests.hosts.apiview`): generic views and a plain ``APIView``,
registered by class and URL name, each HTTP method a tool; REST and MCP agree."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from mcp_endpoint.endpoint import Endpoint, endpoints
from tests.hosts.parity import CREDENTIAL_KINDS, check_each
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import SnippetViewSet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.apiview.urls")]

TOOLS = {
    "list_snippets": "GET",
    "create_snippet": "POST",
    "get_snippet": "GET",
    "replace_snippet": "PUT",
    "update_snippet": "PATCH",
    "delete_snippet": "DELETE",
    "get_snippet_stats": "GET",
}


@pytest.fixture
def owner() -> Any:
    user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
    Snippet.objects.create(title="hello", code="print(1)", owner=user)
    Snippet.objects.create(title="gem", code="puts 1", language="ruby", owner=user)
    return user


def snapshot() -> list[Any]:
    return list(Snippet.objects.order_by("pk").values_list("pk", "title", "code", "language"))


def test_each_method_is_a_tool() -> None:
    from tests.hosts.apiview.urls import endpoint

    tools = {t.name: t for t in endpoint.tools}
    assert set(tools) == set(TOOLS)
    for name, method in TOOLS.items():
        assert tools[name].spec is not None and tools[name].spec.method == method
    assert [m.id for m in endpoint.check() if m.is_serious()] == []
    assert tools["get_snippet_stats"].output_schema is not None
    assert "languages" in tools["get_snippet_stats"].output_schema["properties"]


def operations(pk: int) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        ("list_snippets", "GET", "/list/", {}),
        ("create_snippet", "POST", "/list/", {"code": "x = 1"}),
        ("create_snippet", "POST", "/list/", {"code": "x", "language": "cobol"}),
        ("get_snippet", "GET", f"/api/items/{pk}/", {"id": pk}),
        ("get_snippet", "GET", "/api/items/999999/", {"id": 999999}),
        ("replace_snippet", "PUT", f"/api/items/{pk}/", {"id": pk, "code": "y"}),
        ("update_snippet", "PATCH", f"/api/items/{pk}/", {"id": pk, "title": "t"}),
        ("delete_snippet", "DELETE", f"/api/items/{pk}/", {"id": pk}),
        ("get_snippet_stats", "GET", "/stats/", {}),
    ]


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
def test_rest_and_mcp_agree(kind: str, client: Client, owner: Any) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    pk = Snippet.objects.order_by("id").first().pk  # type: ignore[union-attr]
    check_each(client, credential, operations(pk), snapshot=snapshot)


def test_an_apiview_given_as_a_viewset_is_a_clear_error() -> None:
    from tests.hosts.apiview.urls import SnippetStats

    endpoint = Endpoint("apiview-errors")
    try:
        with pytest.raises(ImproperlyConfigured, match=r"register_view\(SnippetStats, url_name"):
            endpoint.register_viewset(SnippetStats)
        with pytest.raises(ImproperlyConfigured, match="is not a DRF viewset"):
            endpoint.register_viewset(dict)
        with pytest.raises(ImproperlyConfigured, match="is a viewset"):
            endpoint.register_view(SnippetViewSet, url_name="snippet-list")
        with pytest.raises(ImproperlyConfigured, match="is not a DRF APIView"):
            endpoint.register_view(dict, url_name="snippet-list")
        assert len(endpoint.tools) == 0
    finally:
        endpoints.discard(endpoint)


def test_an_unknown_url_name_is_a_check_error() -> None:
    from tests.hosts.apiview.urls import SnippetStats

    endpoint = Endpoint("apiview-unrouted")
    try:
        endpoint.register_view(SnippetStats, url_name="no-such-name")
        errors = [m for m in endpoint.check() if m.is_serious()]
        assert [e.id for e in errors][:1] == ["mcp_endpoint.E021"]
        assert "'no-such-name'" in errors[0].msg
    finally:
        endpoints.discard(endpoint)
