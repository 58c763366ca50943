"""The tutorial-shaped host (:mod:`tests.hosts.tutorial`): every tool, every credential kind,
REST and MCP agree; a session-only view refuses API keys through both; a ``read``
credential cannot write through either."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework import renderers
from rest_framework.decorators import action
from rest_framework.response import Response

from mcp_endpoint.endpoint import Endpoint, endpoints
from tests.conftest import MCPClient
from tests.hosts.parity import CREDENTIAL_KINDS, Credential, api_key, call_rest
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.parity import OPERATIONS, check_operation, each_operation
from tests.hosts.tutorial.views import SnippetViewSet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.tutorial.urls")]

User = get_user_model()


@pytest.fixture
def owner() -> Any:
    return User.objects.create_user("olive", "olive@example.com", "pw-olive-123")


@pytest.fixture
def stranger() -> Any:
    return User.objects.create_user("sam", "sam@example.com", "pw-sam-123")


@pytest.fixture
def snippets(owner: Any, stranger: Any) -> dict[str, int]:
    first = Snippet.objects.create(title="hello", code="print('hello')", owner=owner)
    Snippet.objects.create(title="loop", code="for i in x: pass", owner=owner)
    theirs = Snippet.objects.create(title="ruby", code="puts 1", language="ruby", owner=stranger)
    return {"mine": first.pk, "theirs": theirs.pk}


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
@each_operation
def test_rest_and_mcp_agree(
    kind: str,
    operation: tuple[str, str, str, dict[str, Any]],
    client: Client,
    owner: Any,
    snippets: dict[str, int],
) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    rest, answer = check_operation(client, credential, operation, snippets, "/mcp")
    method = operation[1]
    if method != "GET" and "write" not in credential.scopes:
        # Scopes mean what they say: a read credential writes through neither side.
        assert rest.status_code == 403
        assert "write" in rest.json()["detail"]
        assert answer["structuredContent"]["error"]["code"] == "insufficient_scope"


def test_the_html_action_is_a_text_tool(
    client: Client, owner: Any, snippets: dict[str, int]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read").bearer)
    tool = next(t for t in rpc.result("tools/list")["tools"] if t["name"] == "highlight_snippet")
    assert "outputSchema" not in tool
    result = rpc.call("highlight_snippet", {"id": snippets["mine"]})
    assert result["isError"] is False
    assert result["content"] == [{"type": "text", "text": "<pre>print(&#x27;hello&#x27;)</pre>"}]


def test_the_hyperlinks_are_the_rest_apis(
    client: Client, owner: Any, snippets: dict[str, int]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read").bearer)
    got = rpc.call("get_snippet", {"id": snippets["mine"]})["structuredContent"]
    rest = call_rest(client, rpc.key, "GET", f"/snippets/{snippets['mine']}/", {}).json()
    assert got["url"] == rest["url"] == f"http://testserver/snippets/{snippets['mine']}/"
    assert got["highlight"] == rest["highlight"]
    assert got["highlight"].startswith(f"http://testserver/snippets/{snippets['mine']}/highlight")


# -- a view for browser sessions only ----------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
def test_a_session_only_view_refuses_keys_and_tokens_through_both(
    kind: str, client: Client, owner: Any, snippets: dict[str, int]
) -> None:
    credential: Credential = CREDENTIAL_KINDS[kind](owner)
    rest = call_rest(client, credential.bearer, "GET", "/users/", {})
    assert rest.status_code == 403
    rpc = MCPClient(client, "/mcp", credential.bearer)
    listed = {t["name"] for t in rpc.result("tools/list")["tools"]}
    assert not {"list_users", "get_user"} & listed
    for tool, arguments in (("list_users", {}), ("get_user", {"id": owner.pk})):
        result = rpc.call(tool, arguments)
        assert result["isError"] is True
        error = result["structuredContent"]["error"]
        assert error["code"] == "permission_denied"
        assert error["message"].startswith("This action accepts browser sessions only")


def test_a_session_still_reads_the_session_only_view(client: Client, owner: Any) -> None:
    client.force_login(owner)
    rest = client.get("/users/")
    assert rest.status_code == 200
    assert [u["username"] for u in rest.json()] == ["olive"]


def test_a_key_with_a_browser_session_beside_it_is_still_a_key(
    client: Client, owner: Any, stranger: Any
) -> None:
    """The MCP request carries a session cookie of another user: the session-only view
    sees that session's user, exactly as REST would, never the key's."""
    client.force_login(stranger)
    rpc = MCPClient(client, "/mcp", api_key(owner, "read").bearer)
    result = rpc.call("list_users")
    assert result["isError"] is False
    rest = call_rest(client, rpc.key, "GET", "/users/", {})
    assert rest.status_code == 200
    assert result["structuredContent"] == {"results": rest.json()}


def test_every_tool_is_covered() -> None:
    from tests.hosts.tutorial.urls import endpoint

    names = {t.name for t in endpoint.tools}
    assert names == {o[0] for o in OPERATIONS} | {"list_users", "get_user"}


def test_tools_list_hides_writes_from_a_read_credential(
    client: Client, owner: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    for kind in ("key_read", "oauth_read"):
        rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS[kind](owner).bearer)
        listed = {t["name"] for t in rpc.result("tools/list")["tools"]}
        assert listed == {"list_snippets", "get_snippet", "highlight_snippet"}


# -- checks ----------------------------------------------------------------------------------


class PDFRenderer(renderers.BaseRenderer):
    media_type = "application/pdf"
    format = "pdf"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> Any:
        return b"%PDF-1.4"


class PrintableSnippetViewSet(SnippetViewSet):
    """Snippets that can be printed."""

    @action(detail=True, renderer_classes=[PDFRenderer])
    def printable(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        return Response(b"%PDF-1.4")


def test_w030_a_viewset_that_takes_none_of_the_endpoints_credentials() -> None:
    from tests.hosts.tutorial.urls import endpoint

    found = [m for m in endpoint.check() if m.id == "mcp_endpoint.W030"]
    assert len(found) == 1
    assert found[0].msg.startswith("UserViewSet accepts browser sessions only")
    assert "API keys or OAuth access tokens" in found[0].msg
    assert found[0].hint


def test_an_action_that_renders_a_file_is_a_tool(client: Client, owner: Any) -> None:
    """Once left out (W032); now its result is the file (see tests/test_host_files.py)."""
    endpoint = Endpoint("printable", server_name="printable")
    try:
        endpoint.register_viewset(PrintableSnippetViewSet, basename="snippet")
        assert [m for m in endpoint.check() if m.id == "mcp_endpoint.W032"] == []
        tool = endpoint.tools.get("printable_snippet")
        assert tool is not None and tool.unavailable() is None
        assert tool.output_schema is None
    finally:
        endpoints.discard(endpoint)
