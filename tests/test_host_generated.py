"""The generated product (:mod:`tests.hosts.generated`, 200 viewsets, 1,050 tools): what a
client loads of ``tools/list`` by default stays within 32 KiB in both eras, and every
operation is two calls away (``search_tools``, then ``call_tool``), under the checks a
direct call or REST runs: a key's scopes, the view's permissions, the read-only mode,
the toolsets a client picked, the call log; the results are REST's."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from mcp_endpoint.models import APIKey, ToolCall
from tests.hosts.generated.models import MODELS
from tests.hosts.generated.urls import endpoint
from tests.mcp_client import MCPClient

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.generated.urls")]

BUDGET = 32 * 1024
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1.0.0"},
}
Warehouse = MODELS["warehouse"]


class Connection:
    """One client of the generated host's endpoint, in one era, at one URL."""

    def __init__(self, client: Client, key: str, era: str = "legacy", url: str = "/mcp") -> None:
        self.rpc = MCPClient(client, url, key)
        self.era = era
        self.next_id = 0

    def post(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        self.next_id += 1
        params = dict(params or {})
        sent = dict(headers)
        if self.era == "modern":
            params["_meta"] = META
            sent |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
            if method == "tools/call":
                sent["Mcp-Name"] = params["name"]
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self.rpc.post(message, headers=sent)

    def result(self, method: str, params: dict[str, Any] | None = None, **headers: str) -> Any:
        response = self.post(method, params, **headers)
        assert response.status_code == 200, response.content
        body = response.json()
        assert "result" in body, body
        return body["result"]

    def pages(self, **headers: str) -> tuple[int, list[dict[str, Any]]]:
        """Every page of tools/list as a client fetches it by default: the bytes of all
        the answers together, and the tools."""
        size, tools, cursor = 0, [], None
        while True:
            response = self.post("tools/list", {"cursor": cursor} if cursor else {}, **headers)
            assert response.status_code == 200, response.content
            size += len(response.content)
            result = response.json()["result"]
            tools += result["tools"]
            cursor = result.get("nextCursor")
            if not cursor:
                return size, tools

    def call(self, name: str, arguments: dict[str, Any], **headers: str) -> dict[str, Any]:
        result: dict[str, Any] = self.result(
            "tools/call", {"name": name, "arguments": arguments}, **headers
        )
        return result

    def search(self, query: str, **arguments: Any) -> list[dict[str, Any]]:
        found = self.call("search_tools", {"query": query, **arguments})
        assert not found.get("isError"), found
        tools: list[dict[str, Any]] = found["structuredContent"]["tools"]
        return tools

    def reach(self, query: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Two calls: find ``name`` by ``query``, then run it with ``call_tool``."""
        names = [t["name"] for t in self.search(query)]
        assert name in names, (query, names)
        return self.call("call_tool", {"name": name, "arguments": arguments})


def key_for(user: Any, scopes: str = "read write") -> str:
    _, key = APIKey.objects.create_key(user=user, scopes=scopes, name="generated")
    return key


@pytest.fixture
def olive() -> Any:
    return get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")


@pytest.fixture
def staff() -> Any:
    return get_user_model().objects.create_user(
        "stella", "stella@example.com", "pw-stella-123", is_staff=True
    )


def rest(client: Client, path: str, key: str) -> Any:
    response = client.get(path, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.content
    return response.json()


def test_the_host_is_large() -> None:
    assert len(endpoint.tools) >= 1000
    assert len(endpoint.toolsets()) >= 200


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_client_loads_at_most_32_kib_by_default(client: Client, olive: Any, era: str) -> None:
    size, tools = Connection(client, key_for(olive), era).pages()
    assert size <= BUDGET, size
    assert [t["name"] for t in tools] == ["search_tools", "call_tool"]
    for tool in tools:
        assert set(tool["annotations"]) >= {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }
    # The toolsets are named where a model reads first.
    assert "archived_warehouses" in tools[0]["description"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_reads_and_writes_are_two_calls_away(
    client: Client, olive: Any, staff: Any, era: str
) -> None:
    connection = Connection(client, key_for(olive), era)
    created = connection.reach(
        "create warehouse", "create_warehouse", {"name": "North", "quantity": 3, "price": "9.50"}
    )
    assert not created.get("isError"), created
    row = Warehouse.objects.get(name="North")
    assert row.owner == olive and row.quantity == 3
    assert created["structuredContent"] == rest(client, f"/warehouses/{row.pk}/", key_for(olive))

    listed = connection.reach("list my warehouses", "list_warehouses", {"search": "Nor"})
    assert listed["structuredContent"] == rest(client, "/warehouses/?search=Nor", key_for(olive))

    Warehouse.objects.filter(pk=row.pk).update(status="retired")
    restored = connection.reach(
        "restore archived warehouse", "restore_archived_warehouse", {"id": str(row.pk)}
    )
    assert restored["structuredContent"]["status"] == "active", restored


def test_a_custom_post_action_is_destructive_unless_declared(client: Client, olive: Any) -> None:
    [restore] = [
        t
        for t in Connection(client, key_for(olive)).search("restore archived shelf")
        if t["name"] == "restore_archived_shelf"
    ]
    assert restore["annotations"]["destructiveHint"] is True
    assert restore["annotations"]["readOnlyHint"] is False


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_views_permissions_refuse_through_call_tool(
    client: Client, olive: Any, staff: Any, era: str
) -> None:
    # Only staff change the team's records: REST says 403, and so does call_tool.
    record = Warehouse.objects.create(name="Shared", owner=staff)
    rest_answer = client.patch(
        f"/team-warehouses/{record.pk}/",
        data=json.dumps({"name": "Mine"}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key_for(olive)}"},
    )
    assert rest_answer.status_code == 403
    refused = Connection(client, key_for(olive), era).reach(
        "update team warehouse", "update_team_warehouse", {"id": record.pk, "name": "Mine"}
    )
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["code"] == "permission_denied", refused
    record.refresh_from_db()
    assert record.name == "Shared"
    allowed = Connection(client, key_for(staff), era).call(
        "call_tool", {"name": "update_team_warehouse", "arguments": {"id": record.pk, "name": "Ok"}}
    )
    assert not allowed.get("isError"), allowed


def test_a_read_key_is_never_shown_or_run_a_write(client: Client, olive: Any) -> None:
    connection = Connection(client, key_for(olive, "read"))
    found = connection.search("create warehouse", limit=20)
    assert found and all(t["annotations"]["readOnlyHint"] for t in found)
    refused = connection.call(
        "call_tool", {"name": "create_warehouse", "arguments": {"name": "Sneaky"}}
    )
    assert refused["isError"] is True
    assert refused["structuredContent"]["error"]["code"] == "unknown_tool"
    # Called directly, the same tool names the scope it lacks, as before.
    direct = connection.call("create_warehouse", {"name": "Sneaky"})
    assert direct["structuredContent"]["error"]["code"] == "insufficient_scope"
    assert not Warehouse.objects.filter(name="Sneaky").exists()


def test_call_tool_refuses_what_does_not_exist_and_bad_arguments(
    client: Client, olive: Any
) -> None:
    connection = Connection(client, key_for(olive))
    unknown = connection.call("call_tool", {"name": "drop_database", "arguments": {}})
    assert unknown["structuredContent"]["error"]["code"] == "unknown_tool"
    for bad in ({}, {"name": 3}, {"name": "list_warehouses", "arguments": []}, {"nme": "x"}):
        answer = connection.call("call_tool", bad)
        assert answer["isError"] is True and answer["structuredContent"]["error"]["code"] == (
            "invalid_arguments"
        ), bad
    inner = connection.call("call_tool", {"name": "get_warehouse", "arguments": {"idd": 1}})
    assert inner["structuredContent"]["error"]["code"] == "invalid_arguments"
    wrong = connection.call("search_tools", {"toolset": "nowhere"})
    assert wrong["structuredContent"]["error"]["code"] == "invalid_arguments"
    too_many = connection.call("search_tools", {"limit": 500})
    assert too_many["isError"] is True


def test_a_call_through_call_tool_is_logged_as_the_tool(client: Client, olive: Any) -> None:
    with override_settings(MCP_ENDPOINT={"LOG_TOOL_CALLS": True}):
        Connection(client, key_for(olive)).call(
            "call_tool", {"name": "list_shelves", "arguments": {}}
        )
    assert list(ToolCall.objects.values_list("tool", flat=True)) == ["list_shelves"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_client_picks_toolsets_by_url_or_header(client: Client, olive: Any, era: str) -> None:
    key = key_for(olive)
    by_url = Connection(client, key, era, "/mcp?toolsets=warehouses,archived_warehouses")
    size, tools = by_url.pages()
    assert size <= BUDGET
    names = {t["name"] for t in tools}
    assert names == {
        "list_warehouses",
        "get_warehouse",
        "create_warehouse",
        "update_warehouse",
        "replace_warehouse",
        "delete_warehouse",
        "list_archived_warehouses",
        "get_archived_warehouse",
        "restore_archived_warehouse",
    }
    # Small enough to carry its output schemas.
    assert all("outputSchema" in t for t in tools if t["name"].startswith(("list", "get")))
    _, by_header = Connection(client, key, era).pages(**{"MCP-Toolsets": "shelves"})
    assert {t["name"] for t in by_header} == {
        f"{verb}_shel{end}"
        for verb, end in [
            ("list", "ves"),
            ("get", "f"),
            ("create", "f"),
            ("update", "f"),
            ("replace", "f"),
            ("delete", "f"),
        ]
    }
    # A tool outside the toolsets picked is not run.
    outside = by_url.call("list_shelves", {})
    assert outside["structuredContent"]["error"]["code"] == "toolset_not_served"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_read_only_mode_lists_and_runs_reads_only(client: Client, olive: Any, era: str) -> None:
    key = key_for(olive)
    connection = Connection(client, key, era, "/mcp?toolsets=warehouses&read_only=1")
    _, tools = connection.pages()
    assert {t["name"] for t in tools} == {"list_warehouses", "get_warehouse"}
    refused = connection.call("create_warehouse", {"name": "No"})
    assert refused["structuredContent"]["error"]["code"] == "read_only"
    _, compact = Connection(client, key, era).pages(**{"MCP-Read-Only": "true"})
    call_tool = compact[1]
    assert call_tool["annotations"]["readOnlyHint"] is True
    connection = Connection(client, key, era)
    through = connection.call(
        "call_tool",
        {"name": "create_warehouse", "arguments": {"name": "No"}},
        **{"MCP-Read-Only": "1"},
    )
    assert through["structuredContent"]["error"]["code"] == "unknown_tool"
    assert not Warehouse.objects.filter(name="No").exists()


@pytest.mark.parametrize(
    ("url", "headers", "says"),
    [
        ("/mcp?toolsets=nowhere", {}, "Unknown toolset(s): nowhere"),
        ("/mcp?toolsets=Bad%20Name", {}, "Invalid toolsets"),
        ("/mcp?read_only=perhaps", {}, "Invalid read_only"),
        ("/mcp", {"MCP-Toolsets": "shelves,,nowhere"}, "Unknown toolset(s): nowhere"),
        ("/mcp", {"MCP-Read-Only": "2"}, "Invalid read_only"),
    ],
)
def test_a_malformed_choice_is_a_clear_error(
    client: Client, olive: Any, url: str, headers: dict[str, str], says: str
) -> None:
    response = Connection(client, key_for(olive), url=url).post("tools/list", {}, **headers)
    assert response.status_code == 400
    assert says in response.json()["error"]["message"]


def test_descriptions_leave_implementation_notes_out(client: Client, olive: Any) -> None:
    connection = Connection(client, key_for(olive))
    found = connection.search("warehouses", limit=20)
    assert found
    for tool in found:
        text = tool["description"]
        for note in ("N+1", "select_related", "queryset", "Cached", "mixin"):
            assert note not in text, (tool["name"], text)
    [listing] = [t for t in found if t["name"] == "list_warehouses"]
    assert "Your warehouses." in listing["description"]
