"""The generated product (:mod:`tests.hosts.generated`) served by gunicorn on loopback, and the
official Python SDK (which validates) as the client, in the legacy and the modern modes:
it is listed the two discovery tools, finds a tool, and runs reads and writes through
``call_tool``; a read-only key is refused the write; a client that picks a toolset in the
URL is listed that toolset's tools, output schemas included, and calls them directly."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import LiveServer, run_script

pytestmark = pytest.mark.e2e

SEED = """
import json
from django.contrib.auth import get_user_model
from mcp_endpoint.models import APIKey
user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
_, key = APIKey.objects.create_key(user=user, scopes="read write", name="generated e2e")
_, read = APIKey.objects.create_key(user=user, scopes="read", name="generated e2e read")
print(json.dumps({"key": key, "read": read}))
"""


@dataclass
class Host:
    server: LiveServer
    key: str
    read: str

    def url(self, path: str) -> str:
        return self.server.url(f"/hosts/generated{path}")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp_path_factory.mktemp("generated-host")
    root = Path(__file__).resolve().parent.parent
    # Its thousand tools built as the worker starts, as in the demo: not by the first
    # request, which on a loaded machine would outlast the SDK's wait for server/discover.
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.hosts.settings",
        "PYTHONPATH": str(root),
        "DEMO_WARM_UP": "1",
    }
    with LiveServer(workdir, workers=1, env=env) as server:
        output = run_script(server.env, SEED)
        facts = json.loads(output.strip().splitlines()[-1])
        yield Host(server, facts["key"], facts["read"])


def run(host: Host, key: str, mode: str, path: str, session: Any) -> Any:
    async def main() -> Any:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as http:
            transport = streamable_http_client(host.url(path), http_client=http)
            async with Client(transport, mode=mode) as client:
                return await session(client)

    return anyio.run(main)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_reaches_reads_and_writes_in_two_calls(host: Host, mode: str) -> None:
    async def session(client: Client) -> dict[str, Any]:
        listed = await client.list_tools()
        found = await client.call_tool("search_tools", {"query": "create warehouse"})
        created = await client.call_tool(
            "call_tool",
            {"name": "create_warehouse", "arguments": {"name": f"E2E {mode}", "quantity": 2}},
        )
        listing = await client.call_tool(
            "call_tool", {"name": "list_warehouses", "arguments": {"search": f"E2E {mode}"}}
        )
        return {
            "names": [t.name for t in listed.tools],
            "bytes": len(json.dumps([t.model_dump(mode="json") for t in listed.tools])),
            "found": [t["name"] for t in found.structured_content["tools"]],
            "created": (created.is_error, created.structured_content),
            "listing": (listing.is_error, listing.structured_content),
        }

    got = run(host, host.key, mode, "/mcp", session)
    # A legacy client that reads streams hears the list change, and may enable toolsets;
    # a 2026-07-28 one hears it on listen streams, which this WSGI server does not hold.
    dynamic = ["enable_toolset"] if mode == "legacy" else []
    assert got["names"] == ["search_tools", "call_tool", *dynamic]
    assert got["bytes"] <= 32 * 1024
    assert "create_warehouse" in got["found"]
    error, created = got["created"]
    assert error is False and created["name"] == f"E2E {mode}" and created["owner"] == "olive"
    error, listing = got["listing"]
    assert error is False and [r["id"] for r in listing["results"]] == [created["id"]]
    # The structured results are REST's own.
    rest = httpx2.get(
        host.url(f"/warehouses/?search=E2E+{mode}"),
        headers={"Authorization": f"Bearer {host.key}"},
        timeout=30,
    )
    assert rest.status_code == 200 and rest.json() == listing


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_with_a_read_key_is_refused_writes(host: Host, mode: str) -> None:
    async def session(client: Client) -> Any:
        found = await client.call_tool("search_tools", {"query": "create warehouse"})
        refused = await client.call_tool(
            "call_tool", {"name": "create_warehouse", "arguments": {"name": "nope"}}
        )
        return found.structured_content, refused.is_error, refused.structured_content

    found, error, refused = run(host, host.read, mode, "/mcp", session)
    assert "create_warehouse" not in [t["name"] for t in found["tools"]]
    assert error is True and refused["error"]["code"] == "unknown_tool"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_with_a_toolset_in_the_url_calls_its_tools_directly(host: Host, mode: str) -> None:
    async def session(client: Client) -> Any:
        listed = await client.list_tools()
        # The SDK validates this result against the listed output schema.
        result = await client.call_tool("list_shelves", {})
        return [t.name for t in listed.tools], listed.tools, result

    names, tools, result = run(host, host.key, mode, "/mcp?toolsets=shelves&read_only=1", session)
    assert sorted(names) == ["get_shelf", "list_shelves"]
    assert all(t.output_schema is not None for t in tools)
    assert result.is_error is False and result.structured_content["count"] >= 0
