"""Toolsets a model enables as it goes (:mod:`mcp_endpoint.dynamic_toolsets`), on the
generated product (1,050 tools): ``enable_toolset`` is offered, and ``tools.listChanged``
announced, only where the client hears the change; enabling adds the toolset's tools to
``tools/list`` within the budget, says so on the call's own stream (legacy), and keeps
what was enabled per session or per caller."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings

from mcp_endpoint.models import APIKey
from tests.test_host_generated import BUDGET, MODERN, Connection

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.urls("tests.hosts.generated.urls"),
]

SSE = {"Accept": "application/json, text/event-stream"}
LIST_CHANGED = "notifications/tools/list_changed"


@pytest.fixture
def key() -> str:
    user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
    _, raw = APIKey.objects.create_key(user=user, scopes="read write", name="dynamic")
    return raw


def events(response: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages of an answer, in order (one, unless it is an SSE stream)."""
    if response["Content-Type"] == "application/json":
        return [response.json()]
    assert response["Content-Type"].startswith("text/event-stream"), response["Content-Type"]
    body = b"".join(response.streaming_content).decode()
    return [
        json.loads(line[len("data:") :])
        for line in body.splitlines()
        if line.startswith("data:") and line[len("data:") :].strip()
    ]


def names(connection: Connection, **headers: str) -> list[str]:
    return [t["name"] for t in connection.pages(**headers)[1]]


def enable(connection: Connection, toolset: str, **headers: str) -> list[dict[str, Any]]:
    response = connection.post(
        "tools/call", {"name": "enable_toolset", "arguments": {"toolset": toolset}}, **headers
    )
    assert response.status_code == 200, response
    return events(response)


def test_a_legacy_client_that_reads_streams_enables_a_toolset(client: Client, key: str) -> None:
    connection = Connection(client, key)
    init = connection.result("initialize", {"protocolVersion": "2025-11-25"}, **SSE)
    assert init["capabilities"]["tools"] == {"listChanged": True}
    assert names(connection, **SSE) == ["search_tools", "call_tool", "enable_toolset"]

    notification, answer = enable(connection, "warehouses", **SSE)
    assert notification == {"jsonrpc": "2.0", "method": LIST_CHANGED, "params": {}}
    result = answer["result"]
    assert not result["isError"], result
    added = result["structuredContent"]["tools"]
    assert "list_warehouses" in added and "create_warehouse" in added
    assert result["structuredContent"]["enabled"] == ["warehouses"]

    size, tools = connection.pages(**SSE)
    assert size <= BUDGET, size
    listed = [t["name"] for t in tools]
    assert listed[:3] == ["search_tools", "call_tool", "enable_toolset"]
    assert set(listed[3:]) == set(added)
    # In full: a client validates the results against the output schemas it is given.
    assert all("outputSchema" in t for t in tools if t["name"] == "list_warehouses")
    # The enabled tool runs as a direct call.
    created = connection.call("create_warehouse", {"name": "Dock 9", "quantity": 1})
    assert not created["isError"], created

    # Enabling it again changes nothing, and so says nothing.
    response = connection.post(
        "tools/call", {"name": "enable_toolset", "arguments": {"toolset": "warehouses"}}, **SSE
    )
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"]["structuredContent"]["enabled"] == ["warehouses"]


def test_a_client_that_cannot_hear_is_not_offered_it(client: Client, key: str) -> None:
    legacy = Connection(client, key)
    init = legacy.result("initialize", {"protocolVersion": "2025-11-25"})
    assert init["capabilities"]["tools"] == {"listChanged": False}
    assert names(legacy) == ["search_tools", "call_tool"]
    response = legacy.post(
        "tools/call", {"name": "enable_toolset", "arguments": {"toolset": "warehouses"}}
    )
    assert response.json()["error"]["code"] == -32602
    # The 2026-07-28 era hears changes on listen streams, which this server (WSGI) ends at
    # once: nothing is announced, nothing offered, whatever the client accepts.
    modern = Connection(client, key, "modern")
    discover = modern.result("server/discover", **SSE)
    assert discover["capabilities"]["tools"] == {"listChanged": False}
    assert names(modern, **SSE) == ["search_tools", "call_tool"]
    # call_tool still runs every tool, for clients that never re-list.
    listed = legacy.call("call_tool", {"name": "list_warehouses", "arguments": {}})
    assert not listed["isError"], listed


def test_a_small_list_never_changes(client: Client, key: str) -> None:
    # A toolset small enough is listed in full: nothing to enable, no change to announce.
    connection = Connection(client, key, url="/mcp?toolsets=warehouses")
    init = connection.result("initialize", {"protocolVersion": "2025-11-25"}, **SSE)
    assert init["capabilities"]["tools"] == {"listChanged": False}
    assert "enable_toolset" not in names(connection, **SSE)


def test_dynamic_toolsets_can_be_switched_off(client: Client, key: str) -> None:
    with override_settings(MCP_ENDPOINT={**settings.MCP_ENDPOINT, "DYNAMIC_TOOLSETS": False}):
        connection = Connection(client, key)
        init = connection.result("initialize", {"protocolVersion": "2025-11-25"}, **SSE)
        assert init["capabilities"]["tools"] == {"listChanged": False}
        assert names(connection, **SSE) == ["search_tools", "call_tool"]


def test_what_was_enabled_stays_within_the_budget(client: Client, key: str) -> None:
    connection = Connection(client, key)
    toolsets = ["warehouses", "shelves", "carriers", "invoices", "receipts", "vendors", "buyers"]
    dropped: list[str] = []
    for toolset in toolsets:
        *_, answer = enable(connection, toolset, **SSE)
        data = answer["result"]["structuredContent"]
        dropped += data["dropped"]
        assert data["enabled"][-1] == toolset
        size, _ = connection.pages(**SSE)
        assert size <= BUDGET, (toolset, size)
    # The earliest left to make room, in the order they were enabled.
    assert dropped and dropped == toolsets[: len(dropped)]


def test_a_toolset_over_the_budget_is_refused(client: Client, key: str) -> None:
    small = {**settings.MCP_ENDPOINT, "TOOLS_LIST_BUDGET_BYTES": 4 * 1024}
    with override_settings(MCP_ENDPOINT=small):
        connection = Connection(client, key)
        [answer] = enable(connection, "warehouses", **SSE)
        result = answer["result"]
        assert result["isError"]
        assert result["structuredContent"]["error"]["code"] == "toolset_too_large"
        assert "enable_toolset" in names(connection, **SSE)
        assert len(names(connection, **SSE)) == 3


def test_an_unknown_or_unserved_toolset_is_an_argument_error(client: Client, key: str) -> None:
    connection = Connection(client, key)
    [answer] = enable(connection, "nowhere", **SSE)
    assert answer["result"]["structuredContent"]["error"]["code"] == "invalid_arguments"
    # Read-only: the tools it may enable are the reads.
    read_only = Connection(client, key, url="/mcp?read_only=1")
    *_, answer = enable(read_only, "warehouses", **SSE)
    assert "create_warehouse" not in answer["result"]["structuredContent"]["tools"]
    assert "list_warehouses" in answer["result"]["structuredContent"]["tools"]


def test_without_sessions_it_is_kept_per_caller(client: Client, key: str) -> None:
    enable(Connection(client, key), "warehouses", **SSE)
    # The same key, another connection: the same list (as a client caches it per caller).
    assert "list_warehouses" in names(Connection(client, key), **SSE)
    user = get_user_model().objects.create_user("peter", "peter@example.com", "pw-peter-123")
    _, other = APIKey.objects.create_key(user=user, scopes="read write", name="other")
    assert "list_warehouses" not in names(Connection(client, other), **SSE)


def test_in_a_session_it_is_kept_per_session(client: Client, key: str) -> None:
    with override_settings(MCP_ENDPOINT={**settings.MCP_ENDPOINT, "SESSIONS": True}):
        first, second = Connection(client, key), Connection(client, key)
        ids = []
        for connection in (first, second):
            response = connection.post("initialize", {"protocolVersion": "2025-11-25"}, **SSE)
            ids.append(response["Mcp-Session-Id"])
        headers = [{**SSE, "Mcp-Session-Id": i, "MCP-Protocol-Version": "2025-11-25"} for i in ids]
        notification, _ = enable(first, "warehouses", **headers[0])
        assert notification["method"] == LIST_CHANGED
        assert "list_warehouses" in names(first, **headers[0])
        assert "list_warehouses" not in names(second, **headers[1])


def test_the_modern_era_is_never_sent_it_on_the_call(client: Client, key: str) -> None:
    # A 2026-07-28 client is told on its listen stream only (tests/test_dynamic_toolsets_live.py).
    connection = Connection(client, key, "modern")
    assert connection.era == "modern" and MODERN
    response = connection.post(
        "tools/call", {"name": "enable_toolset", "arguments": {"toolset": "warehouses"}}, **SSE
    )
    assert response.json()["error"]["code"] == -32602
