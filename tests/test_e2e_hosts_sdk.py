"""Every host served by gunicorn on loopback (``tests/hosts/settings.py``), rows made for
every host's models (:mod:`tests.hosts.seeding`), and the official Python SDK (``mcp``
2.3.0) as the client: it validates each structured result against the tool's advertised
``outputSchema`` and raises on one that does not match, so every result it accepts is one
a strict client accepts.

For each endpoint that takes the app's API keys, every listed read tool is called (a
detail tool for an object its list tool answered with) and every update tool (PATCH with
the lookup alone, which changes nothing); none may be refused by the SDK. The paperwork
host's results are also compared with its REST API's bodies over the same server.
"""

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
from django.urls import NoReverseMatch, reverse
from mcp_endpoint.models import APIKey
from tests.hosts import host_endpoints
from tests.hosts.seeding import seed
user = get_user_model().objects.create_superuser("sdk", "sdk@example.com", "pw-sdk-123")
seed(user)
_, key = APIKey.objects.create_key(user=user, scopes="read write", name="hosts e2e")
paths = ["/mcp"]
for endpoints in host_endpoints().values():
    for endpoint in endpoints:
        try:
            paths.append(reverse(f"{endpoint.name}:endpoint").rstrip("/"))
        except NoReverseMatch:
            pass
print(json.dumps({"key": key, "paths": paths}))
"""


@dataclass
class Hosts:
    server: LiveServer
    key: str
    paths: list[str]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosts]:
    workdir: Path = tmp_path_factory.mktemp("hosts-sdk")
    root = Path(__file__).resolve().parent.parent
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.hosts.settings",
        "PYTHONPATH": str(root),
        # A private SQLite file and file cache: nothing another run may use.
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "SQLITE_PATH": str(workdir / "db.sqlite3"),
        "CACHE_DIR": str(workdir / "cache"),
        # Every host's tools built as the worker starts, as in the demo (the generated
        # product has a thousand), not by the first request of the first host it meets.
        "DEMO_WARM_UP": "1",
    }
    with LiveServer(workdir, workers=1, env=env) as server:
        facts = json.loads(run_script(server.env, SEED).strip().splitlines()[-1])
        yield Hosts(server, facts["key"], facts["paths"])


def item_properties(schema: Any) -> frozenset[str]:
    """The property names of one object a tool answers with (an item of its list)."""
    properties = (schema or {}).get("properties", {})
    results = properties.get("results")
    if isinstance(results, dict) and isinstance(results.get("items"), dict):
        properties = results["items"].get("properties", {})
    return frozenset(properties)


@dataclass
class Outcome:
    accepted: list[str]
    refused: list[str]
    errors: list[str]


async def exercise(client: Client) -> Outcome:
    """Call every read tool, then every update tool; what the SDK accepted and refused."""
    tools = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    outcome = Outcome([], [], [])
    items: dict[frozenset[str], list[dict[str, Any]]] = {}

    async def call(tool: Any, arguments: dict[str, Any]) -> Any:
        try:
            result = await client.call_tool(tool.name, arguments)
        except RuntimeError as exc:  # the SDK's refusal of a result that fails its schema
            outcome.refused.append(f"{tool.name}: {exc}")
            return None
        (outcome.errors if result.is_error else outcome.accepted).append(tool.name)
        return result

    def lookup(tool: Any) -> dict[str, Any] | None:
        required = tool.input_schema.get("required", [])
        if not required:
            return {}
        if len(required) != 1:
            return None
        found = items.get(item_properties(tool.output_schema)) or []
        ident = next((i.get("id", i.get("pk")) for i in found if isinstance(i, dict)), None)
        return None if ident is None else {required[0]: ident}

    reads = [t for t in tools if (t.annotations and t.annotations.read_only_hint)]
    # Lists first (no required argument): their items are what detail tools are called for.
    for tool in sorted(reads, key=lambda t: bool(t.input_schema.get("required"))):
        arguments = lookup(tool)
        if arguments is None:
            continue
        result = await call(tool, arguments)
        structured = getattr(result, "structured_content", None)
        if isinstance(structured, dict) and isinstance(structured.get("results"), list):
            items.setdefault(item_properties(tool.output_schema), structured["results"])
    for tool in tools:
        if tool.name.startswith("update_"):
            arguments = lookup(tool)
            if arguments:
                await call(tool, arguments)
    return outcome


def run(hosts: Hosts, path: str, mode: str) -> Outcome | None:
    found: list[Outcome] = []

    async def main() -> None:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {hosts.key}"}, timeout=60
        ) as http:
            probe = await http.post(
                hosts.server.url(path),
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers={"Accept": "application/json, text/event-stream"},
            )
            if probe.status_code == 401:
                return  # an endpoint for the product's own credentials only
            transport = streamable_http_client(hosts.server.url(path), http_client=http)
            async with Client(transport, mode=mode) as client:
                found.append(await exercise(client))

    anyio.run(main)
    return found[0] if found else None


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_accepts_every_result_of_every_host(hosts: Hosts, mode: str) -> None:
    accepted: list[str] = []
    refused: list[str] = []
    for path in hosts.paths:
        outcome = run(hosts, path, mode)
        if outcome is None:
            continue
        accepted.extend(f"{path} {name}" for name in outcome.accepted)
        refused.extend(f"{path} {problem}" for problem in outcome.refused)
    assert refused == []
    # The demo, and the hosts' tools the app's keys may call: dozens of real results.
    assert len(accepted) > 60, accepted
    assert {"/hosts/paperwork/mcp list_tags", "/hosts/paperwork/mcp get_document"} <= set(accepted)


def test_paperwork_results_are_the_rest_bodies_over_the_wire(hosts: Hosts) -> None:
    base = "/hosts/paperwork"
    headers = {"Authorization": f"Bearer {hosts.key}", "Accept": "application/json"}
    got: dict[str, Any] = {}

    async def main() -> None:
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(hosts.server.url(f"{base}/mcp"), http_client=http)
            async with Client(transport, mode="auto") as client:
                for name, arguments in (
                    ("list_documents", {"full_content": True}),
                    ("list_tags", {"full_perms": True}),
                    ("statistics_documents", {}),
                ):
                    got[name] = (await client.call_tool(name, arguments)).structured_content
            for name, path in (
                ("list_documents", "/api/documents/?full_content=true"),
                ("list_tags", "/api/tags/?full_perms=true"),
                ("statistics_documents", "/api/documents/statistics/"),
            ):
                response = await http.get(hosts.server.url(base + path))
                assert response.status_code == 200, response.text
                assert got[name] == json.loads(response.content), name

    anyio.run(main)
    assert got["list_documents"]["count"] > 0
