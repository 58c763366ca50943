"""Toolsets a model enables as it goes, end to end: the generated product (1,050 tools)
under uvicorn on loopback, and the official Python SDK as the client. A legacy client hears
``notifications/tools/list_changed`` on the answer of its ``enable_toolset`` call, a
2026-07-28 client on its ``subscriptions/listen`` stream; each then lists the toolset's
tools and calls one directly, its result validated against the output schema it was
listed. The same server under gunicorn (WSGI, which holds no listen stream) announces no
change to a 2026-07-28 client and offers it no ``enable_toolset``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ToolsListChanged
from mcp.types import ToolListChangedNotification

from tests.live_server import LiveServer, UvicornServer, run_script

pytestmark = pytest.mark.e2e

SEED = """
import json
from django.contrib.auth import get_user_model
from mcp_endpoint.models import APIKey
user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
keys = [APIKey.objects.create_key(user=user, scopes="read write", name=f"dynamic {n}")[1]
        for n in range(3)]
print(json.dumps(keys))
"""


@dataclass
class Host:
    server: LiveServer
    keys: list[str]

    def url(self) -> str:
        return self.server.url("/hosts/generated/mcp")


def serve(kind: type[LiveServer], tmp: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp.mktemp(f"dynamic-{kind.__name__}")
    root = Path(__file__).resolve().parent.parent
    # The generated product's thousand tools are built as the worker starts, as in the
    # demo: built by the first request instead, they outlast the SDK's wait for
    # server/discover on a loaded machine, and the client falls back to 2025-11-25.
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.hosts.settings",
        "PYTHONPATH": str(root),
        "DEMO_WARM_UP": "1",
    }
    with kind(workdir, workers=1, env=env) as server:
        output = run_script(server.env, SEED)
        yield Host(server, json.loads(output.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def asgi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    yield from serve(UvicornServer, tmp_path_factory)


@pytest.fixture(scope="module")
def wsgi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    yield from serve(LiveServer, tmp_path_factory)


def run(
    host: Host,
    key: str,
    mode: str,
    session: Callable[[Client, list[Any]], Awaitable[Any]],
) -> Any:
    heard: list[Any] = []

    async def handler(message: Any) -> None:
        heard.append(message)

    async def main() -> Any:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as http:
            transport = streamable_http_client(host.url(), http_client=http)
            async with Client(transport, mode=mode, message_handler=handler) as client:
                return await session(client, heard)

    return anyio.run(main)


async def names(client: Client) -> list[str]:
    found, cursor = [], None
    while True:
        page = await client.list_tools(cursor=cursor)
        found += [tool.name for tool in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            return found


def test_a_legacy_client_hears_the_change_on_its_call(asgi: Host) -> None:
    async def session(client: Client, heard: list[Any]) -> dict[str, Any]:
        before = await names(client)
        enabled = await client.call_tool("enable_toolset", {"toolset": "warehouses"})
        after = await names(client)
        listed = await client.call_tool("list_warehouses", {})
        return {
            "listChanged": client.server_capabilities.tools.list_changed,  # type: ignore[union-attr]
            "before": before,
            "enabled": enabled,
            "after": after,
            "heard": [type(m) for m in heard],
            "listed": listed,
        }

    seen = run(asgi, asgi.keys[0], "legacy", session)
    assert seen["listChanged"] is True
    assert seen["before"] == ["search_tools", "call_tool", "enable_toolset"]
    assert not seen["enabled"].is_error, seen["enabled"]
    assert ToolListChangedNotification in seen["heard"]
    assert {"list_warehouses", "create_warehouse"} <= set(seen["after"])
    assert not seen["listed"].is_error and "results" in seen["listed"].structured_content


def test_a_modern_client_hears_the_change_on_its_listen_stream(asgi: Host) -> None:
    async def session(client: Client, heard: list[Any]) -> dict[str, Any]:
        before = await names(client)  # cached by the client until it hears otherwise
        async with client.listen(tools_list_changed=True) as sub:
            honoured = sub.honored.tools_list_changed
            enabled = await client.call_tool("enable_toolset", {"toolset": "shelves"})
            with anyio.fail_after(20):
                event = await sub.__anext__()
            after = await names(client)
        listed = await client.call_tool("list_shelves", {})
        return {
            "listChanged": client.server_capabilities.tools.list_changed,  # type: ignore[union-attr]
            "version": client.protocol_version,
            "honoured": honoured,
            "before": before,
            "enabled": enabled,
            "event": event,
            "after": after,
            "listed": listed,
        }

    # "auto" asks server/discover, which says what the server announces.
    seen = run(asgi, asgi.keys[1], "auto", session)
    assert seen["version"] == "2026-07-28"
    assert seen["listChanged"] is True and seen["honoured"] is True
    assert seen["before"] == ["search_tools", "call_tool", "enable_toolset"]
    assert not seen["enabled"].is_error, seen["enabled"]
    assert isinstance(seen["event"], ToolsListChanged)
    assert {"list_shelves", "create_shelf"} <= set(seen["after"])
    assert not seen["listed"].is_error and "results" in seen["listed"].structured_content


def test_without_listen_streams_a_modern_client_keeps_two_tools(wsgi: Host) -> None:
    async def session(client: Client, heard: list[Any]) -> dict[str, Any]:
        listed = await names(client)
        reached = await client.call_tool("call_tool", {"name": "list_carriers", "arguments": {}})
        return {
            "listChanged": client.server_capabilities.tools.list_changed,  # type: ignore[union-attr]
            "version": client.protocol_version,
            "listed": listed,
            "reached": reached,
        }

    seen = run(wsgi, wsgi.keys[2], "auto", session)
    assert seen["version"] == "2026-07-28"
    assert not seen["listChanged"]
    assert seen["listed"] == ["search_tools", "call_tool"]
    assert not seen["reached"].is_error, seen["reached"]
