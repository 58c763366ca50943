"""MCP Apps through the real URL: the demo's task board, its tools' metadata, the page
served with its policy, and the checks of an app. ``tests/test_ui_browser.py`` runs the
board in Chromium."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_endpoint import ui
from mcp_endpoint.endpoint import Endpoint
from project.tracker.models import Project
from tests.conftest import MCPClient

pytestmark = pytest.mark.django_db

BOARD = "ui://task-tracker/task-board"
LEGACY = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str, project: Project) -> MCPClient:
    return mcp_client(alice_key)


def test_the_extension_is_declared(rpc: MCPClient) -> None:
    assert rpc.result("initialize", LEGACY)["capabilities"]["extensions"][ui.EXTENSION] == {}


def test_the_list_tools_point_at_the_board(rpc: MCPClient) -> None:
    tools = {t["name"]: t for t in rpc.result("tools/list", {})["tools"]}
    for name in ("list_tasks", "overdue_tasks"):
        assert tools[name]["_meta"] == {"ui": {"resourceUri": BOARD}}
    assert "_meta" not in tools["get_task"]


def test_the_board_is_served_with_its_policy(rpc: MCPClient) -> None:
    listed = next(r for r in rpc.result("resources/list", {})["resources"] if r["uri"] == BOARD)
    assert listed["mimeType"] == "text/html;profile=mcp-app"
    assert listed["name"] == "Task board"
    (contents,) = rpc.result("resources/read", {"uri": BOARD})["contents"]
    assert contents["mimeType"] == "text/html;profile=mcp-app"
    assert contents["text"].startswith("<!DOCTYPE html>")
    assert "ui/initialize" in contents["text"]
    # Inline script and style only: no origin to reach, none to load from.
    assert contents["_meta"] == {"ui": {"csp": {}, "prefersBorder": True}}


def test_the_board_needs_the_read_scope(
    mcp_client: Callable[..., MCPClient], alice: Any, project: Project
) -> None:
    from tests.conftest import make_key

    rpc = mcp_client(make_key(alice, "write"))
    uris = {r["uri"] for r in rpc.result("resources/list", {})["resources"]}
    assert BOARD not in uris


def test_an_app_only_tool_is_marked_for_the_app() -> None:
    endpoint = Endpoint("ui-app-only")

    @endpoint.tool
    def refresh_board() -> str:
        return "ok"

    endpoint.app("ui://x/board", html="<!DOCTYPE html><p>x</p>", app_only_tools=["refresh_board"])
    tool = endpoint.tools.get("refresh_board")
    assert tool is not None
    assert tool.describe()["_meta"] == {
        "ui": {"resourceUri": "ui://x/board", "visibility": ["app"]}
    }
    assert ui.check(endpoint) == []


@pytest.mark.parametrize(
    ("uri", "options", "problem"),
    [
        ("https://x/board", {}, "not a ui:// URI"),
        ("ui://x/board", {"tools": ["nope"]}, "lacks: nope"),
        ("ui://x/board", {"csp": {"scriptDomains": ["https://cdn"]}}, "does not define"),
    ],
)
def test_e143_an_app_that_cannot_be_served(uri: str, options: Any, problem: str) -> None:
    endpoint = Endpoint("ui-e143")
    endpoint.app(uri, html="<!DOCTYPE html>", **options)
    (error,) = ui.check(endpoint)
    assert error.id == "mcp_endpoint.E143"
    assert problem in error.msg
