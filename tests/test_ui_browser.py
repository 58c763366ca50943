"""The demo's task board (an MCP App) in Chromium, hosted by the official apps SDK's host
side (``AppBridge`` from ``@modelcontextprotocol/ext-apps``, bundled with esbuild from
``tools/clients``), against a real server: the board shows what ``list_tasks`` answered,
and its "Mark done" goes back through the host to ``complete_task`` on the server.

The host's tool calls are handed to the test (``window.mcpCallTool``), which sends them to
``/mcp`` with alice's API key, as a host sends an app's calls with the user's credential.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.browser import chromium, contrast_problems
from tests.live_server import ROOT, LiveServer, manage, missing
from tests.test_e2e_sdk import create_key

pytestmark = pytest.mark.e2e

CLIENTS = ROOT / "tools" / "clients"
ESBUILD = CLIENTS / "node_modules" / ".bin" / "esbuild"
BOARD = "ui://task-tracker/task-board"
HOST_PAGE = (
    '<!DOCTYPE html><html><body><iframe id="view" title="Task board" '
    'style="width:100%;height:700px;border:0"></iframe></body></html>'
)


@pytest.fixture(scope="module")
def host_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (CLIENTS / "node_modules" / "@modelcontextprotocol" / "ext-apps").exists():
        missing("the apps SDK is not installed: run `npm ci --prefix tools/clients`")
    out = tmp_path_factory.mktemp("apps-host") / "host.js"
    subprocess.run(
        [str(ESBUILD), "apps/host.mjs", "--bundle", "--format=iife", "--platform=browser",
         f"--outfile={out}", "--log-level=warning"],
        cwd=CLIENTS, check=True, timeout=120,
    )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    with LiveServer(tmp_path_factory.mktemp("apps-server")) as live:
        manage(live.env, "seed_demo")
        yield live, create_key(live.env, "alice", "read write")


def rpc(live: LiveServer, key: str, method: str, params: dict[str, Any]) -> Any:
    response = httpx2.post(
        live.url("/mcp"),
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        headers={"Authorization": f"Bearer {key}", "MCP-Protocol-Version": "2025-11-25",
                 "Accept": "application/json, text/event-stream"},
        timeout=30,
    )  # fmt: skip
    assert response.status_code == 200, response.text
    return response.json()["result"]


def test_the_task_board_in_the_official_host(
    server: tuple[LiveServer, str], host_bundle: Path
) -> None:
    live, key = server
    tools = {t["name"]: t for t in rpc(live, key, "tools/list", {})["tools"]}
    tool = tools["list_tasks"]
    assert tool["_meta"]["ui"]["resourceUri"] == BOARD
    (page_contents,) = rpc(live, key, "resources/read", {"uri": BOARD})["contents"]
    arguments: dict[str, Any] = {}
    first = rpc(live, key, "tools/call", {"name": "list_tasks", "arguments": arguments})
    tasks = first["structuredContent"]["results"]
    target = next(t for t in tasks if t["status"] == "open")
    calls: list[str] = []

    def call_tool(name: str, args: dict[str, Any]) -> Any:
        calls.append(name)
        return rpc(live, key, "tools/call", {"name": name, "arguments": args})

    with chromium() as browser:
        page = browser.new_page()
        page.expose_function("mcpCallTool", call_tool)
        page.set_content(HOST_PAGE)
        page.add_script_tag(path=str(host_bundle))
        page.evaluate(
            "(args) => window.startHost(args)",
            {"html": page_contents["text"], "tool": tool, "toolArguments": arguments,
             "toolResult": first},
        )  # fmt: skip
        page.wait_for_function("window.hostReady === true", timeout=30_000)
        view = page.frame_locator("#view")
        card = view.locator(f'article[data-task-id="{target["id"]}"]')
        # The board shows the result: each task in the column of its status.
        assert card.locator("xpath=ancestor::section").get_attribute("data-status") == "open"
        assert view.locator("article").count() == len(tasks)
        card.get_by_role("button", name="Mark done").click()
        done_card = view.locator(
            f'section[data-status="done"] article[data-task-id="{target["id"]}"]'
        )
        done_card.wait_for(timeout=30_000)
        assert "done" in view.locator("#status").inner_text().lower()
        # Its buttons and links readable (the frame's size is the host's to set).
        assert contrast_problems(page.frames[1]) == []
    # The click went through the host to the server's tools, and then read the list again.
    assert calls == ["complete_task", "list_tasks"]
    after = rpc(live, key, "tools/call", {"name": "get_task", "arguments": {"id": target["id"]}})
    assert after["structuredContent"]["status"] == "done"
