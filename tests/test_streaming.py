"""Request-scoped SSE (PROTOCOL.md §8): progress and log messages stream before the result.

In process through Django's test clients (WSGI and ASGI handlers), and through real
servers: gunicorn (WSGI, sync workers) and uvicorn (ASGI), reading the stream as it comes
to show that the notifications arrive while the tool still runs, not in one piece at the
end.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import AsyncClient, Client

from tests.conftest import MCPClient
from tests.live_server import HOST, SERVERS, LiveServer
from tests.test_modern import FIXTURE, MODERN, meta

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_cache")]

SSE = "application/json, text/event-stream"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def parse_events(raw: bytes) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (``data:`` lines; comments, blanks and the priming
    event of a resumable stream, which has an id and empty data, skipped)."""
    events = []
    for block in raw.decode().split("\n\n"):
        data = [line[5:].strip() for line in block.splitlines() if line.startswith("data:")]
        if "".join(data):
            events.append(json.loads("\n".join(data)))
    return events


def modern_call(
    name: str, *, token: Any = None, log_level: str | None = None, request_id: int = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    extra: dict[str, Any] = {}
    if token is not None:
        extra["progressToken"] = token
    if log_level is not None:
        extra[LOG_LEVEL] = log_level
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}, "_meta": meta(**extra)},
    }
    headers = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        "Accept": SSE,
    }
    return message, headers


@pytest.fixture
def fixture_rpc(mcp_client: Callable[..., MCPClient]) -> MCPClient:
    return mcp_client(None, FIXTURE)


def streamed(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Accel-Buffering"] == "no"
    assert "no-cache" in response["Cache-Control"]
    assert response.streaming
    return parse_events(b"".join(response.streaming_content))


def check_progress_then_result(events: list[dict[str, Any]], token: Any, request_id: Any) -> None:
    *notes, last = events
    assert [n["method"] for n in notes] == ["notifications/progress"] * 3
    assert [n["params"] for n in notes] == [
        {"progressToken": token, "progress": 0, "total": 100},
        {"progressToken": token, "progress": 50, "total": 100},
        {"progressToken": token, "progress": 100, "total": 100},
    ]
    assert last["id"] == request_id
    assert last["result"]["content"][0]["text"] == "Tool with progress executed successfully"


# -- in process ----------------------------------------------------------------------------


def test_progress_streams_before_the_result(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_tool_with_progress", token="p-1")
    events = streamed(fixture_rpc.post(message, headers=headers))
    check_progress_then_result(events, "p-1", 1)
    assert events[-1]["result"]["resultType"] == "complete"


def test_integer_progress_token(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_tool_with_progress", token=7, request_id=3)
    check_progress_then_result(streamed(fixture_rpc.post(message, headers=headers)), 7, 3)


def test_no_event_stream_without_the_accept(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_tool_with_progress", token="p-1")
    headers["Accept"] = "application/json"
    response = fixture_rpc.post(message, headers=headers)
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"].startswith("Tool with progress")


def test_no_event_stream_without_a_progress_token(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_tool_with_progress")
    response = fixture_rpc.post(message, headers=headers)
    assert response["Content-Type"] == "application/json"
    assert not response.streaming


def test_a_silent_tool_answers_plain_json(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_simple_text", token="p-2")
    response = fixture_rpc.post(message, headers=headers)
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"].startswith("This is a simple")


def test_an_error_before_any_notification_keeps_its_status(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_missing_capability", token="p-3")
    response = fixture_rpc.post(message, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32021


def test_streaming_can_be_turned_off(fixture_rpc: MCPClient, settings: Any) -> None:
    from project.conformance import fixture

    fixture.settings.overrides["STREAMING"] = False
    fixture.settings.reload()
    try:
        message, headers = modern_call("test_tool_with_progress", token="p-1")
        response = fixture_rpc.post(message, headers=headers)
        assert response["Content-Type"] == "application/json"
    finally:
        del fixture.settings.overrides["STREAMING"]
        fixture.settings.reload()


def test_modern_logs_only_at_the_requested_level(fixture_rpc: MCPClient) -> None:
    message, headers = modern_call("test_tool_with_logging", log_level="info")
    events = streamed(fixture_rpc.post(message, headers=headers))
    logs = [e["params"] for e in events if e.get("method") == "notifications/message"]
    assert [entry["data"] for entry in logs] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert {entry["level"] for entry in logs} == {"info"}
    assert events[-1]["result"]["resultType"] == "complete"


@pytest.mark.parametrize("level", [None, "error"])
def test_no_logs_unless_asked_for(fixture_rpc: MCPClient, level: str | None) -> None:
    message, headers = modern_call("test_tool_with_logging", log_level=level)
    response = fixture_rpc.post(message, headers=headers)
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"]["content"][0]["text"].startswith("Tool with logging")


def test_legacy_session_progress_and_logs(fixture_rpc: MCPClient) -> None:
    init = fixture_rpc.request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    )
    session = {"Mcp-Session-Id": init["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
    assert fixture_rpc.request("logging/setLevel", {"level": "debug"}, session).json() == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }
    response = fixture_rpc.request(
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}},
        {**session, "Accept": SSE},
    )
    events = streamed(response)
    assert [e["method"] for e in events[:-1]] == ["notifications/message"] * 3
    assert "resultType" not in events[-1]["result"]
    response = fixture_rpc.request(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "lp"}},
        {**session, "Accept": SSE},
    )
    check_progress_then_result(streamed(response), "lp", 4)


def test_legacy_log_level_is_kept_in_the_session(fixture_rpc: MCPClient) -> None:
    init = fixture_rpc.request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    )
    session = {"Mcp-Session-Id": init["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"}
    fixture_rpc.request("logging/setLevel", {"level": "error"}, session)
    response = fixture_rpc.request(
        "tools/call",
        {"name": "test_tool_with_logging", "arguments": {}},
        {**session, "Accept": SSE},
    )
    # Nothing reached the error level, so the call ended without a notification: JSON.
    assert response["Content-Type"] == "application/json"


@pytest.mark.django_db(transaction=True)
def test_asgi_handler_streams_with_an_async_iterator() -> None:
    message, headers = modern_call("test_tool_with_progress", token="a-1")

    async def run() -> tuple[Any, bytes]:
        client = AsyncClient()
        response = await client.post(
            FIXTURE, data=json.dumps(message), content_type="application/json", headers=headers
        )
        assert response.is_async
        body = b"".join([chunk async for chunk in response.streaming_content])
        return response, body

    response, body = asyncio.run(run())
    assert response["Content-Type"] == "text/event-stream"
    check_progress_then_result(parse_events(body), "a-1", 1)


@pytest.mark.django_db(transaction=True)
def test_product_tool_call_is_plain_json_with_sse_accepted(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Any
) -> None:
    # A DRF tool reports no progress: a progress token and the SSE accept change nothing.
    # (The call runs in a worker thread, with its own database connection: the data must
    # be committed, hence a transactional test.)
    rpc = mcp_client(alice_key)
    response = rpc.request(
        "tools/call",
        {
            "name": "get_project",
            "arguments": {"id": project.pk},
            "_meta": {"progressToken": "x"},
        },
        {"Accept": SSE},
    )
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"]["structuredContent"]["name"] == "Launch"


# -- real servers ----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["gunicorn", "uvicorn"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        LiveServer]:  # fmt: skip
    workdir: Path = tmp_path_factory.mktemp(f"stream-{request.param}")
    cls = SERVERS[request.param]
    with cls(workdir, workers=2) as server:
        yield server


def read_stream(
    server: LiveServer, message: dict[str, Any], headers: dict[str, str]
) -> tuple[http.client.HTTPResponse, list[tuple[float, dict[str, Any]]]]:
    """POST and read the answer event by event, noting when each one arrived."""
    connection = http.client.HTTPConnection(HOST, server.port, timeout=30)
    body = json.dumps(message).encode()
    connection.request(
        "POST", FIXTURE, body=body, headers={"Content-Type": "application/json", **headers}
    )
    started = time.monotonic()
    response = connection.getresponse()
    arrivals: list[tuple[float, dict[str, Any]]] = []
    buffer = b""
    while True:
        line = response.readline()
        if not line:
            break
        buffer += line
        if line in (b"\n", b"\r\n"):
            for event in parse_events(buffer):
                arrivals.append((time.monotonic() - started, event))
            buffer = b""
    connection.close()
    return response, arrivals


@pytest.mark.e2e
def test_live_progress_arrives_while_the_tool_runs(live: LiveServer) -> None:
    message, headers = modern_call("test_tool_with_progress", token="live-1")
    response, arrivals = read_stream(live, message, headers)
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    check_progress_then_result([event for _, event in arrivals], "live-1", 1)
    # The tool sleeps about 50 ms between its reports: the first one is read well before
    # the result, so nothing held the stream back until the end.
    first, last = arrivals[0][0], arrivals[-1][0]
    assert last - first >= 0.08, arrivals


@pytest.mark.e2e
def test_live_legacy_session_streams_too(live: LiveServer) -> None:
    connection = http.client.HTTPConnection(HOST, live.port, timeout=30)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
    }
    connection.request(
        "POST", FIXTURE, json.dumps(init), {"Content-Type": "application/json", "Accept": SSE}
    )
    answer = connection.getresponse()
    session = answer.getheader("Mcp-Session-Id")
    answer.read()
    connection.close()
    assert session
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {
            "name": "test_tool_with_progress",
            "arguments": {},
            "_meta": {"progressToken": "legacy"},
        },
    }
    headers = {"Accept": SSE, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    response, arrivals = read_stream(live, message, headers)
    assert response.getheader("Content-Type") == "text/event-stream"
    check_progress_then_result([event for _, event in arrivals], "legacy", 2)


@pytest.mark.e2e
def test_live_client_that_leaves_cancels_quietly(live: LiveServer) -> None:
    # Close the connection after the first event; the server carries on serving others.
    message, headers = modern_call("test_tool_with_progress", token="gone")
    connection = http.client.HTTPConnection(HOST, live.port, timeout=30)
    connection.request(
        "POST",
        FIXTURE,
        body=json.dumps(message).encode(),
        headers={"Content-Type": "application/json", **headers},
    )
    response = connection.getresponse()
    assert response.readline().startswith(b"event: message")
    connection.close()
    message, headers = modern_call("test_tool_with_progress", token="next", request_id=9)
    _, arrivals = read_stream(live, message, headers)
    check_progress_then_result([event for _, event in arrivals], "next", 9)


def test_client_is_the_real_django_client(client: Client) -> None:
    # The in-process tests above go through the real URL conf and middleware.
    assert client.post(FIXTURE, data="{}", content_type="application/json").status_code == 400


@pytest.mark.e2e
def test_live_legacy_session_asks_the_client_during_the_call(live: LiveServer) -> None:
    # The tool's elicitation/create goes out on the stream; the answer comes back as a POST
    # (to whichever worker) and reaches the waiting call through the shared cache.
    def post(body: dict[str, Any], headers: dict[str, str]) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(HOST, live.port, timeout=30)
        connection.request(
            "POST", FIXTURE, json.dumps(body), {"Content-Type": "application/json", **headers}
        )
        return connection.getresponse()

    init = post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "tests", "version": "1"},
            },
        },
        {"Accept": SSE},
    )
    session = {"Mcp-Session-Id": init.getheader("Mcp-Session-Id") or "",
               "MCP-Protocol-Version": "2025-11-25"}  # fmt: skip
    init.read()
    call = post(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "test_elicitation", "arguments": {"message": "Who are you?"}},
        },
        {**session, "Accept": SSE},
    )
    assert call.getheader("Content-Type") == "text/event-stream"

    def next_event() -> dict[str, Any]:
        events: list[dict[str, Any]] = []
        while not events:  # a priming event (no data) is not a message
            block = b""
            while not block.endswith(b"\n\n"):
                line = call.readline()
                assert line, "the stream ended early"
                block += line
            events = parse_events(block)
        [event] = events
        return event

    question = next_event()
    assert question["method"] == "elicitation/create"
    assert question["params"]["message"] == "Who are you?"
    answer = {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": {"username": "ada", "email": "a@example.com"}},
    }
    posted = post(answer, session)
    assert posted.status == 202
    result = next_event()
    assert result["id"] == 2
    assert result["result"]["content"][0]["text"] == (
        'User response: action=accept, content={"email":"a@example.com","username":"ada"}'
    )
