"""Toolsets and the read-only mode chosen by the endpoint's URL path (``/mcp/x/<toolsets>``,
``/mcp/x/<toolsets>/readonly``, ``/mcp/readonly``), beside the query and the headers, on the
demo; and what OAuth makes of those URLs: each path is a protected resource (RFC 9728) named
by its own metadata, and a token is good at the URL it is bound to and the URLs under it
(RFC 8707, the toolkit's prefix rule), which serve the same tools or fewer, never more."""

from __future__ import annotations

import datetime
import secrets
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from mcp_endpoint.models import APIKey
from mcp_endpoint.sites import site
from tests.mcp_client import MCPClient

pytestmark = pytest.mark.django_db

ORIGIN = "http://testserver"


@pytest.fixture
def user() -> Any:
    return get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")


@pytest.fixture
def key(user: Any) -> str:
    _, raw = APIKey.objects.create_key(user=user, scopes="read write", name="paths")
    return raw


def token_for(user: Any, *paths: str) -> str:
    application = Application.objects.create(
        name="paths",
        user=user,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    raw = secrets.token_urlsafe(32)
    AccessToken.objects.create(
        user=user,
        application=application,
        token=raw,
        scope="read write",
        expires=timezone.now() + datetime.timedelta(hours=1),
        resource=[ORIGIN + p for p in paths],
    )
    return raw


def tool_names(client: Client, url: str, bearer: str) -> list[str]:
    result = MCPClient(client, url, bearer).result("tools/list")
    return [t["name"] for t in result["tools"]]


def of_toolsets(*toolsets: str, read_only: bool = False) -> list[str]:
    return [
        t.name
        for t in site.tools
        if t.toolset in toolsets and (t.read_only or not read_only) and t.unavailable() is None
    ]


def test_the_path_chooses_toolsets_and_read_only(client: Client, key: str) -> None:
    assert tool_names(client, "/mcp/x/tasks", key) == of_toolsets("tasks")
    assert tool_names(client, "/mcp/x/tasks/", key) == of_toolsets("tasks")
    assert tool_names(client, "/mcp/x/tasks,projects", key) == of_toolsets("tasks", "projects")
    assert tool_names(client, "/mcp/x/tasks/readonly", key) == of_toolsets("tasks", read_only=True)
    everything = site.toolsets()
    assert tool_names(client, "/mcp/readonly", key) == of_toolsets(*everything, read_only=True)
    assert "create_task" not in tool_names(client, "/mcp/readonly", key)


def test_the_query_and_headers_narrow_the_path_never_widen_it(client: Client, key: str) -> None:
    assert tool_names(client, "/mcp/x/tasks,projects?toolsets=tasks", key) == of_toolsets("tasks")
    narrowed = MCPClient(client, "/mcp/x/tasks", key)
    response = narrowed.request("tools/list", headers={"MCP-Read-Only": "1"})
    names = [t["name"] for t in response.json()["result"]["tools"]]
    assert names == of_toolsets("tasks", read_only=True)
    # A tool outside the path's toolsets is refused when called by name.
    refused = MCPClient(client, "/mcp/x/tasks", key).result(
        "tools/call", {"name": "list_projects", "arguments": {}}
    )
    assert refused["structuredContent"]["error"]["code"] == "toolset_not_served"
    # A write at a read-only path is refused.
    write = MCPClient(client, "/mcp/readonly", key).result(
        "tools/call", {"name": "create_project", "arguments": {"name": "P"}}
    )
    assert write["structuredContent"]["error"]["code"] == "read_only"


def test_an_unknown_toolset_in_the_path_is_a_400(client: Client, key: str) -> None:
    response = MCPClient(client, "/mcp/x/nowhere", key).request("tools/list")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602
    assert "nowhere" in response.json()["error"]["message"]
    other = client.post("/mcp/x/tasks/writable", "{}", content_type="application/json")
    assert other.status_code == 404


def test_each_path_names_its_own_protected_resource(client: Client) -> None:
    for path in ("/mcp/x/tasks", "/mcp/x/tasks/readonly", "/mcp/readonly"):
        response = client.post(path, "{}", content_type="application/json")
        assert response.status_code == 401
        challenge = response["WWW-Authenticate"]
        metadata_url = f"{ORIGIN}/.well-known/oauth-protected-resource{path}"
        assert f'resource_metadata="{metadata_url}"' in challenge
        document = client.get(metadata_url.removeprefix(ORIGIN))
        assert document.status_code == 200
        assert document.json()["resource"] == ORIGIN + path
    # The query chooses toolsets, not the resource: its metadata is the endpoint's.
    response = client.post("/mcp?toolsets=tasks", "{}", content_type="application/json")
    assert f'{ORIGIN}/.well-known/oauth-protected-resource/mcp"' in response["WWW-Authenticate"]


def test_a_token_holds_at_its_url_and_under_it(client: Client, user: Any) -> None:
    endpoint_token = token_for(user, "/mcp")
    for url in ("/mcp", "/mcp?toolsets=tasks", "/mcp/x/tasks", "/mcp/readonly"):
        assert tool_names(client, url, endpoint_token), url
    tasks_token = token_for(user, "/mcp/x/tasks")
    assert tool_names(client, "/mcp/x/tasks", tasks_token) == of_toolsets("tasks")
    assert tool_names(client, "/mcp/x/tasks/readonly", tasks_token)
    # Not where it would serve more, or other toolsets.
    for url in ("/mcp", "/mcp?toolsets=tasks", "/mcp/x/projects", "/mcp/x/tasks,projects"):
        response = MCPClient(client, url, tasks_token).request("tools/list")
        assert response.status_code == 401, url
        assert 'error="invalid_token"' in response["WWW-Authenticate"]
