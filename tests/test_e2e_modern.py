"""The official Python SDK against a real server: input from the user, progress, sessions.

The host runs under gunicorn with legacy sessions on (``DEMO_MCP_SESSIONS=1``) and the
product's confirmation of destructive tools. The SDK client in its default ``auto`` mode
negotiates 2026-07-28 and answers the confirmation as an input-required round; in
``legacy`` mode it negotiates 2025-11-25, gets a session, and answers the same question
as a request the server sends during the call. A client without an elicitation handler
is never asked. Progress reaches the SDK's callback in both eras, through the SSE answer.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from tests.live_server import DemoHost, LiveServer, manage
from tests.test_e2e_sdk import Exchange, create_key

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


@dataclass
class Host(DemoHost):
    def url(self, path: str = "/mcp") -> str:
        return self.server.url(path)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp_path_factory.mktemp("e2e-modern")
    env = {
        "DEMO_MCP_SESSIONS": "1",
        "CACHE_KEY_PREFIX": f"mcp_e2e_modern_{secrets.token_hex(4)}",
        "DATABASE_URL": "",
    }
    with LiveServer(workdir, workers=2, env=env) as server:
        manage(server.env, "seed_demo")
        yield Host(server, create_key(server.env, "alice", "read write"))


class StreamingExchange(Exchange):
    """Records like :class:`Exchange`, but leaves an SSE body to the client as it streams.

    (Reading a whole stream in the hook would hold back a request the server sends during
    the call until the call ended, which it never would.)
    """

    async def on_response(self, response: httpx2.Response) -> None:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            self.entries.append(
                {"status": response.status_code, "content-type": "text/event-stream", "body": ""}
            )
            return
        await super().on_response(response)


def run(
    url: str,
    key: str | None,
    mode: str,
    scenario: Any,
    **client_options: Any,
) -> Exchange:
    exchange = StreamingExchange()

    async def main() -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx2.AsyncClient(
            headers=headers,
            event_hooks={"request": [exchange.on_request], "response": [exchange.on_response]},
            timeout=30,
        ) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode=mode, **client_options) as client:
                await scenario(client)

    try:
        anyio.run(main)
    except BaseException as exc:
        raise AssertionError(f"mode={mode!r} failed: {exc!r}\nHTTP exchange:\n{exchange}") from exc
    return exchange


def answering(confirm: bool, asked: list[Any]) -> Any:
    async def callback(context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="accept", content={"confirm": confirm})

    return callback


def declining(asked: list[Any]) -> Any:
    async def callback(context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        return ElicitResult(action="decline")

    return callback


def results(exchange: Exchange) -> list[dict[str, Any]]:
    found = []
    for entry in exchange.entries:
        if "status" in entry and entry["body"]:
            for line in entry["body"].splitlines():
                text = line[5:].strip() if line.startswith("data:") else line
                if text.startswith("{"):
                    found.append(json.loads(text))
    return found


# -- confirming a delete ------------------------------------------------------------------------


@pytest.mark.parametrize("confirm", [True, False])
def test_auto_mode_confirms_through_an_input_required_round(host: Host, confirm: bool) -> None:
    pk = host.new_task()
    asked: list[Any] = []
    outcome: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        assert client.protocol_version == MODERN
        outcome["result"] = await client.call_tool("delete_task", {"id": pk})

    exchange = run(
        host.url(), host.key, "auto", scenario, elicitation_callback=answering(confirm, asked)
    )
    result = outcome["result"]
    assert len(asked) == 1
    assert "Delete task: the task “Delete me”" in asked[0].message
    assert result.is_error is (not confirm), result
    if not confirm:
        assert result.structured_content["error"]["code"] == "not_confirmed"
    assert host.task_exists(pk) is (not confirm)
    kinds = [r["result"].get("resultType") for r in results(exchange) if "result" in r]
    assert kinds.count("input_required") == 1, exchange
    calls = [b for b in exchange.bodies() if b.get("method") == "tools/call"]
    assert len(calls) == 2  # the first call, and its retry with the answer and the state
    assert "requestState" in calls[1]["params"] and "inputResponses" in calls[1]["params"]
    assert "initialize" not in exchange.methods()


@pytest.mark.parametrize("confirm", [True, False])
def test_legacy_mode_confirms_through_a_request_in_the_session(host: Host, confirm: bool) -> None:
    pk = host.new_task()
    asked: list[Any] = []
    outcome: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        assert client.protocol_version == LEGACY
        outcome["result"] = await client.call_tool("delete_task", {"id": pk})

    exchange = run(
        host.url(), host.key, "legacy", scenario, elicitation_callback=answering(confirm, asked)
    )
    assert len(asked) == 1
    assert outcome["result"].is_error is (not confirm)
    assert host.task_exists(pk) is (not confirm)
    sent = [b for b in exchange.bodies() if isinstance(b, dict)]
    # The client's answer to the server's elicitation/create went back as a POST.
    assert any("result" in b and "method" not in b for b in sent), exchange
    assert not any(r.get("result", {}).get("resultType") for r in results(exchange))


@pytest.fixture(scope="module")
def sessionless_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    """The demo with legacy sessions turned off (the library's default)."""
    workdir: Path = tmp_path_factory.mktemp("e2e-sessionless")
    env = {
        "DEMO_MCP_SESSIONS": "0",
        "CACHE_KEY_PREFIX": f"mcp_e2e_sessionless_{secrets.token_hex(4)}",
        "DATABASE_URL": "",
    }
    with LiveServer(workdir, workers=1, env=env) as server:
        manage(server.env, "seed_demo")
        yield Host(server, create_key(server.env, "alice", "read write"))


def test_legacy_mode_without_sessions_is_refused_and_nothing_is_deleted(
    sessionless_host: Host,
) -> None:
    # The SDK declares elicitation at initialize, but with sessions off nothing keeps that:
    # the server cannot ask, so it refuses rather than delete unconfirmed.
    host = sessionless_host
    pk = host.new_task()
    asked: list[Any] = []
    outcome: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        assert client.protocol_version == LEGACY
        outcome["result"] = await client.call_tool("delete_task", {"id": pk})

    exchange = run(host.url(), host.key, "legacy", scenario, elicitation_callback=declining(asked))
    result = outcome["result"]
    assert asked == []
    assert result.is_error is True, result
    error = result.structured_content["error"]
    assert error["code"] == "confirmation_unavailable"
    assert "2026-07-28" in error["message"] and "SESSIONS" in error["message"]
    assert host.task_exists(pk)
    assert not any("mcp-session-id" in e.get("headers", {}) for e in exchange.entries)


def test_legacy_mode_in_a_session_declines_and_nothing_is_deleted(host: Host) -> None:
    # The demo's way: sessions on, so the same client is asked, and its "decline" holds.
    pk = host.new_task()
    asked: list[Any] = []
    outcome: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        outcome["result"] = await client.call_tool("delete_task", {"id": pk})

    run(host.url(), host.key, "legacy", scenario, elicitation_callback=declining(asked))
    assert len(asked) == 1
    assert outcome["result"].is_error is True
    assert outcome["result"].structured_content["error"]["code"] == "not_confirmed"
    assert host.task_exists(pk)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_client_without_elicitation_is_never_asked(host: Host, mode: str) -> None:
    pk = host.new_task()
    outcome: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        outcome["result"] = await client.call_tool("delete_task", {"id": pk})

    exchange = run(host.url(), host.key, mode, scenario)
    assert outcome["result"].is_error is False
    assert not host.task_exists(pk)
    assert not any(
        r.get("result", {}).get("resultType") == "input_required" for r in results(exchange)
    )
    assert not any(r.get("method") == "elicitation/create" for r in results(exchange))


def test_legacy_mode_gets_and_uses_a_session(host: Host) -> None:
    async def scenario(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert "delete_task" in {t.name for t in tools}

    exchange = run(host.url(), host.key, "legacy", scenario)
    issued = [e for e in exchange.entries if "status" in e]
    assert issued[0]["status"] == 200
    requests = [e for e in exchange.entries if "request" in e]
    # Every request after initialize carried the session the server issued.
    assert all("mcp-session-id" in e["headers"] for e in requests[1:]), exchange


# -- the fixture's multi round-trip tools and progress, through the SDK ------------------------


def test_auto_mode_drives_several_rounds(host: Host) -> None:
    answers = iter([{"name": "Alice"}, {"color": "blue"}])
    outcome: dict[str, Any] = {}

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content=next(answers))

    async def scenario(client: Client) -> None:
        outcome["result"] = await client.call_tool("test_input_required_result_multi_round", {})

    run(host.url("/conformance/mcp"), None, "auto", scenario, elicitation_callback=elicit)
    assert outcome["result"].content[0].text == "state-ok: Alice likes blue"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_progress_reaches_the_sdk(host: Host, mode: str) -> None:
    seen: list[tuple[float, float | None]] = []
    outcome: dict[str, Any] = {}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async def scenario(client: Client) -> None:
        outcome["result"] = await client.call_tool(
            "test_tool_with_progress", {}, progress_callback=on_progress
        )

    exchange = run(host.url("/conformance/mcp"), None, mode, scenario)
    assert seen == [(0, 100), (50, 100), (100, 100)], exchange
    assert outcome["result"].content[0].text == "Tool with progress executed successfully"
    streamed = [e for e in exchange.entries if e.get("content-type") == "text/event-stream"]
    assert streamed, exchange


def test_auto_mode_sampling_and_roots(host: Host) -> None:
    from mcp.types import CreateMessageResult, ListRootsResult, Root, TextContent

    outcome: dict[str, Any] = {}

    async def sample(context: Any, params: Any) -> CreateMessageResult:
        return CreateMessageResult(
            role="assistant",
            content=TextContent(type="text", text="Hello there!"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri="file:///tmp/project", name="project")])

    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Alice"})

    async def scenario(client: Client) -> None:
        outcome["result"] = await client.call_tool("test_input_required_result_multiple_inputs", {})

    run(
        host.url("/conformance/mcp"),
        None,
        "auto",
        scenario,
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=roots,
    )
    assert outcome["result"].content[0].text == "Hello there! Alice (1 roots)"
