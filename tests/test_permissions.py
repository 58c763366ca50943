"""The scope policy (:mod:`mcp_endpoint.permissions`): one DRF permission decides REST and
``/mcp`` alike; the app's authentication classes only authenticate, apply the permission
to views that do not list it, and write nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from oauth2_provider.models import AccessToken
from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from mcp_endpoint.last_use import write_last_use
from mcp_endpoint.models import APIKey
from mcp_endpoint.permissions import HasScopes, lists
from mcp_endpoint.rest_framework.calling import Caller, tool_view_class
from tests.hosts.parity import CREDENTIAL_KINDS, api_key, call_rest
from tests.hosts.tutorial.parity import check_operation, each_operation, owner_with_snippets
from tests.hosts.tutorial.views import SnippetViewSet
from tests.urls_scope_policy import ListedSnippetViewSet

pytestmark = pytest.mark.django_db

READ_CANNOT_WRITE = "This action needs the scope(s) write; the credential holds read."


def rest_request(method: str, view: Any, key: str) -> Request:
    """A DRF request to ``view`` carrying ``key``, as DRF's views make it."""
    django_request = RequestFactory().generic(
        method,
        "/snippets/",
        b"{}",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    return Request(django_request, parser_context={"view": view})


@pytest.fixture
def olive() -> Any:
    return get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")


# -- a view that lists the permission ---------------------------------------------------


@pytest.mark.urls("tests.urls_scope_policy")
@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
@each_operation
def test_rest_and_mcp_agree_where_the_view_lists_it(
    kind: str, operation: tuple[str, str, str, dict[str, Any]], client: Client
) -> None:
    owner, snippets = owner_with_snippets()
    credential = CREDENTIAL_KINDS[kind](owner)
    rest, answer = check_operation(client, credential, operation, snippets, "/mcp")
    if operation[1] != "GET" and "write" not in credential.scopes:
        assert rest.status_code == 403
        assert rest.json() == {"detail": READ_CANNOT_WRITE}
        assert answer["structuredContent"]["error"]["code"] == "insufficient_scope"


def test_where_the_view_lists_it_the_authentication_only_authenticates(olive: Any) -> None:
    key = api_key(olive, "read").bearer
    request = rest_request("POST", ListedSnippetViewSet(action="create"), key)
    user, auth = APIKeyAuthentication().authenticate(request)  # type: ignore[misc]
    assert user == olive and isinstance(auth, APIKey)
    request.user, request.auth = user, auth
    policy = HasScopes()
    assert policy.has_permission(request, ListedSnippetViewSet(action="create")) is False
    assert policy.message == READ_CANNOT_WRITE


def test_where_it_does_not_the_authentication_applies_it(olive: Any) -> None:
    key = api_key(olive, "read").bearer
    with pytest.raises(PermissionDenied) as refused:
        APIKeyAuthentication().authenticate(
            rest_request("POST", SnippetViewSet(action="create"), key)
        )
    assert refused.value.detail == READ_CANNOT_WRITE
    reading = rest_request("GET", SnippetViewSet(action="list"), key)
    assert APIKeyAuthentication().authenticate(reading) is not None


def test_composed_it_is_listed() -> None:
    assert lists([(HasScopes & permissions.IsAuthenticated)()])
    assert lists([(~HasScopes)()])
    assert not lists([permissions.IsAuthenticated(), permissions.AllowAny()])


def test_a_tool_calls_view_runs_it_first_with_the_endpoints_mapping() -> None:
    policy = HasScopes({"*": ["tasks"]})
    caller = Caller(None, scope_policy=policy)
    view = tool_view_class(SnippetViewSet)(caller=caller)
    found = view.get_permissions()
    assert found[0] is policy
    assert [type(p) for p in found[1:]] == [type(p) for p in SnippetViewSet().get_permissions()]
    # A view that lists the policy keeps its own, once.
    listed = tool_view_class(ListedSnippetViewSet)(caller=caller).get_permissions()
    assert [type(p) for p in listed].count(HasScopes) == 1 and policy not in listed


@pytest.mark.urls("tests.hosts.tutorial.urls")
def test_a_credential_without_scopes_is_left_to_the_view(client: Client, olive: Any) -> None:
    client.force_login(olive)
    # A browser session carries no scopes: the view's own permissions decide.
    answer = client.post("/snippets/", {"code": "x"}, content_type="application/json")
    assert answer.status_code == 201, answer.content
    rest = call_rest(client, api_key(olive, "read").bearer, "POST", "/snippets/", {"code": "x"})
    assert rest.json() == {"detail": READ_CANNOT_WRITE}


# -- nothing written while authenticating -----------------------------------------------


def written(queries: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in queries.captured_queries if not q["sql"].startswith("SELECT")]


def test_a_keys_last_use_is_written_after_the_request(olive: Any) -> None:
    key = api_key(olive, "read").bearer
    request = rest_request("GET", SnippetViewSet(action="list"), key)
    with CaptureQueriesContext(connection) as queries:
        APIKeyAuthentication().authenticate(request)
    assert written(queries) == []
    assert APIKey.objects.get().last_used is None
    write_last_use()  # what request_finished runs, once the answer is sent
    assert APIKey.objects.get().last_used is not None


def test_a_tokens_last_use_is_written_after_the_request(olive: Any, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_ACCEPT_UNBOUND_TOKENS": True}
    token = AccessToken.objects.create(
        user=olive,
        token="a-token-for-the-last-use-0123456789",
        scope="read",
        expires=timezone.now() + timedelta(hours=1),
    )
    long_ago = timezone.now() - timedelta(days=3)
    AccessToken.objects.filter(pk=token.pk).update(updated=long_ago)
    request = rest_request("GET", SnippetViewSet(action="list"), token.token)
    with CaptureQueriesContext(connection) as queries:
        assert OAuth2TokenAuthentication().authenticate(request) is not None
    assert written(queries) == []
    assert AccessToken.objects.get(pk=token.pk).updated == long_ago
    write_last_use()  # what request_finished runs, once the answer is sent
    assert AccessToken.objects.get(pk=token.pk).updated > long_ago + timedelta(days=2)
