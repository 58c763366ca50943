"""The official Python SDK (``mcp`` 2.x) against the host served by gunicorn on loopback.

The host runs as a real process with two workers, on a fresh SQLite file, or on a throwaway
PostgreSQL database when ``DATABASE_URL`` is set (and Redis when ``REDIS_URL`` is). It is
seeded with ``manage.py seed_demo`` and an API key for alice; the SDK then connects once per
connection mode and does what a model's client does: list, call, read, get.
"""

from __future__ import annotations

import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import PromptReference

from tests.live_server import LiveServer, manage
from tests.test_streaming import parse_events

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
NEWEST_LEGACY = "2025-11-25"
DEMO_PROJECT = "Website relaunch"


# -- the server ---------------------------------------------------------------------------------


def create_key(env: dict[str, str], username: str, scopes: str) -> str:
    from django.core.management import get_commands

    if "mcp_key" in get_commands():
        output = manage(env, "mcp_key", "create", "--user", username, "--scopes", scopes)
    else:
        snippet = (
            "from django.contrib.auth import get_user_model\n"
            "from mcp_endpoint.models import APIKey\n"
            f"user = get_user_model().objects.get(username={username!r})\n"
            f"print(APIKey.objects.create_key(user=user, scopes={scopes!r}, name='e2e')[1])\n"
        )
        output = manage(env, "shell", "-c", snippet)
    return output.strip().splitlines()[-1]


@dataclass
class Host:
    server: LiveServer
    key: str
    project_id: int
    counts: dict[str, int]

    @property
    def mcp_url(self) -> str:
        return self.server.url("/mcp")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp_path_factory.mktemp("e2e-sdk")
    env = {"CACHE_KEY_PREFIX": f"mcp_e2e_{secrets.token_hex(4)}"}
    with LiveServer(workdir, workers=2, env=env) as server:
        manage(server.env, "seed_demo")
        key = create_key(server.env, "alice", "read write")
        facts = manage(
            server.env,
            "shell",
            "-c",
            "import json\n"
            "from django.db.models import Count\n"
            "from project.tracker.models import Project\n"
            f"p = Project.objects.get(name={DEMO_PROJECT!r})\n"
            "counts = dict(p.tasks.values_list('status').annotate(n=Count('id')))\n"
            "print(json.dumps({'id': p.pk, 'counts': counts}))\n",
        )
        found = json.loads(facts.strip().splitlines()[-1])
        yield Host(server, key, found["id"], found["counts"])


# -- the client -----------------------------------------------------------------------------------


@dataclass
class Exchange:
    """Every HTTP request and answer of one connection, to show when something fails."""

    entries: list[dict[str, Any]] = field(default_factory=list)

    async def on_request(self, request: httpx2.Request) -> None:
        self.entries.append(
            {
                "request": f"{request.method} {request.url}",
                "headers": {
                    k: v
                    for k, v in request.headers.items()
                    if k.lower().startswith("mcp-") or k.lower() in {"accept", "content-type"}
                },
                "body": request.content.decode("utf-8", "replace"),
            }
        )

    async def on_response(self, response: httpx2.Response) -> None:
        await response.aread()
        self.entries.append(
            {
                "status": response.status_code,
                "content-type": response.headers.get("content-type"),
                "body": response.text,
            }
        )

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(e["body"]) for e in self.entries if "request" in e and e["body"]]

    def methods(self) -> list[str]:
        return [b.get("method", "") for b in self.bodies() if isinstance(b, dict)]

    def __str__(self) -> str:
        shown = [{**e, "body": e["body"][:800]} for e in self.entries]
        return json.dumps(shown, indent=1)


def run_client(
    host: Host,
    mode: str,
    scenario: Callable[[Client], Awaitable[None]],
    key: str | None = None,
) -> Exchange:
    exchange = Exchange()

    async def main() -> None:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {key or host.key}"},
            event_hooks={"request": [exchange.on_request], "response": [exchange.on_response]},
            timeout=30,
        ) as http:
            transport = streamable_http_client(host.mcp_url, http_client=http)
            async with Client(transport, mode=mode) as client:
                await scenario(client)

    try:
        anyio.run(main)
    except BaseException as exc:
        raise AssertionError(f"mode={mode!r} failed: {exc!r}\nHTTP exchange:\n{exchange}") from exc
    return exchange


async def product_scenario(client: Client, host: Host) -> None:
    """What a model's client does with the task tracker, and what it must get back."""
    assert client.server_info is not None
    assert client.server_info.name == "task-tracker"
    assert client.instructions and "task tracker" in client.instructions
    capabilities = client.server_capabilities
    assert capabilities.tools is not None
    assert capabilities.resources is not None
    assert capabilities.prompts is not None

    tools = {t.name: t for t in (await client.list_tools()).tools}
    summarize = tools["summarize_project"]
    assert summarize.input_schema["required"] == ["project_id"]
    assert summarize.output_schema is not None
    assert summarize.annotations is not None and summarize.annotations.read_only_hint is True

    result = await client.call_tool("summarize_project", {"project_id": host.project_id})
    assert result.is_error is False, result
    assert result.structured_content is not None
    structured = result.structured_content
    assert structured["project_id"] == host.project_id
    assert structured["name"] == DEMO_PROJECT
    for status in ("open", "in_progress", "done"):
        assert structured[status] == host.counts.get(status, 0)
    assert result.content[0].type == "text"
    assert DEMO_PROJECT in result.content[0].text

    missing = await client.call_tool("summarize_project", {"project_id": 999_999})
    assert missing.is_error is True
    assert missing.structured_content is not None
    assert missing.structured_content["error"]["code"] == "not_found"

    invalid = await client.call_tool("summarize_project", {"project_id": "first"})
    assert invalid.is_error is True
    assert invalid.structured_content is not None
    assert invalid.structured_content["error"]["code"] == "invalid_arguments"

    resources = {str(r.uri) for r in (await client.list_resources()).resources}
    assert "tracker://guide" in resources
    guide = await client.read_resource("tracker://guide")
    [contents] = guide.contents
    assert contents.mime_type == "text/markdown"
    assert getattr(contents, "text", "").startswith("# Task tracker")

    project = await client.read_resource(f"tracker://projects/{host.project_id}")
    data = json.loads(getattr(project.contents[0], "text", "{}"))
    assert data["name"] == DEMO_PROJECT and data["owner"] == "alice"

    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert "plan_week" in prompts
    prompt = await client.get_prompt("plan_week", {"project": DEMO_PROJECT})
    [message] = prompt.messages
    assert message.role == "user"
    text = getattr(message.content, "text", "")
    assert text.startswith("I am alice.")
    assert f'in the project "{DEMO_PROJECT}"' in text

    completion = await client.complete(
        PromptReference(type="ref/prompt", name="plan_week"), {"name": "project", "value": "Web"}
    )
    assert completion.completion.values == [DEMO_PROJECT]


# -- the tests -------------------------------------------------------------------------------------


def test_legacy_mode(host: Host) -> None:
    versions: list[str] = []

    async def scenario(client: Client) -> None:
        versions.append(client.protocol_version)
        await product_scenario(client, host)

    exchange = run_client(host, "legacy", scenario)
    assert versions == [NEWEST_LEGACY]
    methods = exchange.methods()
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert "server/discover" not in methods
    # Legacy answers never carry a modern field, and no session is handed out.
    for entry in exchange.entries:
        if "status" in entry and entry["body"]:
            # A call that logs answers as SSE (the demo sends log messages to clients).
            body = entry["body"]
            messages = parse_events(body.encode()) if body.startswith(("event:", "id:")) else [
                json.loads(body)]  # fmt: skip
            for message in messages:
                result = message.get("result", {})
                assert not {"resultType", "ttlMs", "cacheScope"} & set(result), entry


def test_auto_mode_negotiates_the_modern_revision(host: Host) -> None:
    versions: list[str] = []

    async def scenario(client: Client) -> None:
        versions.append(client.protocol_version)
        await product_scenario(client, host)

    exchange = run_client(host, "auto", scenario)
    methods = exchange.methods()
    assert methods[0] == "server/discover", exchange
    # No fallback to the handshake: the server answered discover as a modern server.
    assert "initialize" not in methods, exchange
    assert versions == [MODERN], exchange
    first = exchange.entries[0]
    assert first["headers"]["mcp-protocol-version"] == MODERN
    assert first["headers"]["mcp-method"] == "server/discover"
    discover = json.loads(exchange.entries[1]["body"])["result"]
    assert discover["resultType"] == "complete"
    assert MODERN in discover["supportedVersions"]
    assert discover["cacheScope"] == "private"


def test_modern_mode_pinned(host: Host) -> None:
    async def scenario(client: Client) -> None:
        assert client.protocol_version == MODERN
        tools = (await client.list_tools()).tools
        assert "summarize_project" in {t.name for t in tools}
        result = await client.call_tool("summarize_project", {"project_id": host.project_id})
        assert result.is_error is False
        assert result.structured_content is not None
        assert result.structured_content["name"] == DEMO_PROJECT

    exchange = run_client(host, MODERN, scenario)
    assert "initialize" not in exchange.methods()
    call = next(e for e in exchange.entries if "request" in e and '"tools/call"' in e["body"])
    assert call["headers"]["mcp-name"] == "summarize_project"


def test_a_read_key_sees_no_write_tools(host: Host) -> None:
    read_key = create_key(host.server.env, "alice", "read")
    names: list[str] = []

    async def scenario(client: Client) -> None:
        names.extend(t.name for t in (await client.list_tools()).tools)

    run_client(host, "legacy", scenario, key=read_key)
    assert "summarize_project" in names
    assert not [n for n in names if n.startswith(("create_", "update_", "delete_"))]


def test_no_credential_is_challenged(host: Host) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(
        host.mcp_url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=10)
    response = caught.value
    assert response.code == 401
    challenge = response.headers["WWW-Authenticate"]
    # The metadata URL is absolute and names the server's own address.
    metadata = host.server.url("/.well-known/oauth-protected-resource/mcp")
    assert f'resource_metadata="{metadata}"' in challenge
    assert json.loads(response.read())["error"]["code"] == -32001


def test_the_sdk_reports_a_refused_key(host: Host) -> None:
    async def scenario(client: Client) -> None:
        raise AssertionError("connected with a key that does not exist")

    with pytest.raises(AssertionError) as caught:
        run_client(host, "legacy", scenario, key="mcp_00000000_" + "0" * 64)
    assert "connected with a key" not in str(caught.value)
    assert '"status": 401' in str(caught.value)
