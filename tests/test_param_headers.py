"""``x-mcp-header`` (2026-07-28): arguments a client repeats in ``Mcp-Param-*`` headers.

The header and the body must agree (base64-encoded values decoded first, integers compared
as numbers); a disagreement is refused with HTTP 400 and ``-32020`` before the tool runs,
so nothing is written (the call log stays empty). Legacy requests are never checked.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from mcp_endpoint.models import ToolCall
from tests.conftest import MCPClient
from tests.test_modern import MODERN, meta

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.urls_testing")]

TOOL = "route_by_header"


@pytest.fixture(autouse=True)
def _log_calls(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": True}


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key, "/test-mcp")


def call(rpc: MCPClient, arguments: dict[str, Any], headers: dict[str, str]) -> Any:
    message = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": TOOL, "arguments": arguments, "_meta": meta()},
    }
    base = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": TOOL}
    return rpc.post(message, headers={**base, **headers})


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def test_the_schema_keeps_the_marks(rpc: MCPClient) -> None:
    tools = {t["name"]: t for t in rpc.result("tools/list")["tools"]}
    properties = tools[TOOL]["inputSchema"]["properties"]
    assert properties["region"]["x-mcp-header"] == "Region"
    assert properties["shard"]["x-mcp-header"] == "Shard"


@pytest.mark.parametrize(
    ("arguments", "headers"),
    [
        ({"region": "eu"}, {"Mcp-Param-Region": "eu"}),
        ({"region": "Zürich"}, {"Mcp-Param-Region": b64("Zürich")}),
        ({"region": "eu", "shard": 7}, {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "07"}),
        (
            {"region": "eu", "dry_run": True},
            {"mcp-param-region": "eu", "MCP-PARAM-DRY-RUN": "true"},
        ),
        # Without the closing "?=" the value is literal text, not base64.
        ({"region": "=?base64?ZXU="}, {"Mcp-Param-Region": "=?base64?ZXU="}),
    ],
)
def test_matching_headers_are_served(
    rpc: MCPClient, arguments: dict[str, Any], headers: dict[str, str]
) -> None:
    response = call(rpc, arguments, headers)
    assert response.status_code == 200, response.content
    assert response.json()["result"]["isError"] is False
    assert ToolCall.objects.count() == 1


@pytest.mark.parametrize(
    ("arguments", "headers", "header"),
    [
        ({"region": "eu"}, {}, "Mcp-Param-Region"),
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}, "Mcp-Param-Region"),
        ({"region": "eu"}, {"Mcp-Param-Region": "EU"}, "Mcp-Param-Region"),
        ({"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVsbG8?="}, "Mcp-Param-Region"),
        ({"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, "Mcp-Param-Region"),
        (
            {"region": "eu", "shard": 7},
            {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "seven"},
            "Mcp-Param-Shard",
        ),
        (
            {"region": "eu", "dry_run": False},
            {"Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "true"},
            "Mcp-Param-Dry-Run",
        ),
        # A header for an argument the body does not carry: a proxy routed on a lie.
        ({"region": "eu"}, {"Mcp-Param-Region": "eu", "Mcp-Param-Shard": "3"}, "Mcp-Param-Shard"),
    ],
)
def test_disagreeing_headers_are_refused_before_the_tool_runs(
    rpc: MCPClient, arguments: dict[str, Any], headers: dict[str, str], header: str
) -> None:
    response = call(rpc, arguments, headers)
    assert response.status_code == 400
    body = response.json()
    assert body["id"] == 9
    assert body["error"]["code"] == -32020
    assert body["error"]["data"] == {"header": header}
    assert ToolCall.objects.count() == 0


def test_legacy_requests_are_not_checked(rpc: MCPClient) -> None:
    response = rpc.request(
        "tools/call",
        {"name": TOOL, "arguments": {"region": "eu"}},
        headers={"Mcp-Param-Region": "us"},
    )
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is False
