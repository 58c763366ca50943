"""Resumable streams (legacy sessions): event ids, ``Last-Event-ID``, replay from the cache.

In a session, a streamed answer starts with a priming event (an id, empty data and
``retry``) and every event carries an id. A client whose stream broke, or whose tool
closed it to make the client poll, sends ``GET`` with ``Last-Event-ID`` and gets the rest:
in process through Django's test client, then across two server processes sharing Redis.
"""

from __future__ import annotations

import http.client
import json
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tests.conftest import MCPClient
from tests.live_server import HOST, LiveServer, UvicornServer, require_redis
from tests.test_modern import FIXTURE
from tests.test_sessions import LEGACY, SSE, in_session, initialize
from tests.test_streaming import modern_call
from tests.test_subscriptions import end_stream

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_cache")]


def sse_events(raw: bytes) -> list[dict[str, Any]]:
    """Each SSE event of a body: its id, retry and JSON data (None for a priming event)."""
    events = []
    for block in raw.decode().split("\n\n"):
        fields: dict[str, Any] = {}
        data = []
        for line in block.splitlines():
            name, _, value = line.partition(":")
            if name == "data":
                data.append(value.strip())
            elif name in {"id", "retry"}:
                fields[name] = value.strip()
        if not data and not fields:
            continue  # a comment (keep-alive) or nothing
        fields["data"] = json.loads("".join(data)) if "".join(data) else None
        events.append(fields)
    return events


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient]) -> MCPClient:
    return mcp_client(None, FIXTURE)


def call(rpc: MCPClient, session_id: str, name: str, token: str | None = None) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return rpc.request("tools/call", params, headers=in_session(session_id, Accept=SSE))


def resume(client: Client, session_id: str | None, last_event_id: str) -> Any:
    headers = {"Last-Event-ID": last_event_id, "Accept": "text/event-stream"}
    if session_id is not None:
        headers.update(in_session(session_id))
    return client.get(FIXTURE, headers=headers)


def body_of(response: Any) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/event-stream"
    return sse_events(b"".join(response.streaming_content))


def test_a_stream_in_a_session_is_primed_and_every_event_has_an_id(rpc: MCPClient) -> None:
    session_id = initialize(rpc)
    events = body_of(call(rpc, session_id, "test_tool_with_progress", token="t"))
    priming, *rest = events
    assert priming["data"] is None and priming["retry"] == "1000"
    stream, _, first = priming["id"].partition(".")
    assert first == "0"
    assert [e["id"] for e in rest] == [f"{stream}.{n}" for n in range(1, 5)]
    assert rest[-1]["data"]["result"]["isError"] is False


def test_a_broken_stream_resumes_after_the_last_event(rpc: MCPClient, client: Client) -> None:
    session_id = initialize(rpc)
    events = body_of(call(rpc, session_id, "test_tool_with_progress", token="t"))
    # The client saw the first progress event, then lost the connection.
    replayed = body_of(resume(client, session_id, events[1]["id"]))
    assert [e["id"] for e in replayed] == [e["id"] for e in events[2:]]
    assert [e["data"] for e in replayed] == [e["data"] for e in events[2:]]


def test_a_tool_that_closes_its_stream_is_answered_on_the_resumed_one(
    rpc: MCPClient, client: Client
) -> None:
    session_id = initialize(rpc)
    events = body_of(call(rpc, session_id, "test_reconnection"))
    assert [e["data"] for e in events] == [None]  # only the priming event, then the close
    replayed = body_of(resume(client, session_id, events[0]["id"]))
    assert len(replayed) == 1
    assert replayed[0]["data"]["id"] == rpc.next_id
    assert "resumed stream" in replayed[0]["data"]["result"]["content"][0]["text"]
    # Resuming after the answer ends at once, with nothing more.
    assert body_of(resume(client, session_id, replayed[0]["id"])) == []


def test_modern_streams_carry_no_ids(rpc: MCPClient) -> None:
    message, headers = modern_call("test_tool_with_progress", token="p")
    events = sse_events(b"".join(rpc.post(message, headers=headers).streaming_content))
    assert events and all("id" not in e and "retry" not in e for e in events)


# -- held to the credential ---------------------------------------------------------------------


def resume_with(client: Client, key: str, session_id: str, last_event_id: str) -> Any:
    headers = {"Last-Event-ID": last_event_id, "Accept": "text/event-stream"}
    return client.get(
        FIXTURE, headers={"Authorization": f"Bearer {key}", **in_session(session_id), **headers}
    )


@pytest.mark.django_db(transaction=True)
def test_resumed_streams_count_against_the_streams_per_credential(
    mcp_client: Callable[..., MCPClient], client: Client, alice_key: str, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "STREAMS_PER_CREDENTIAL": 2}
    rpc = mcp_client(alice_key, FIXTURE)
    session_id = initialize(rpc)
    event_id = stream_of(rpc, session_id)
    held = [resume_with(client, alice_key, session_id, event_id) for _ in range(2)]
    assert [r.status_code for r in held] == [200, 200]
    over = [resume_with(client, alice_key, session_id, event_id) for _ in range(40)]
    assert {r.status_code for r in over} == {429}
    # The answer a new stream over the cap gets.
    assert over[0].json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32000,
            "message": "Too Many Requests: at most 2 open streams per credential; close one first",
            "data": {"limit": 2},
        },
    }
    next(iter(held[0].streaming_content))
    end_stream(held[0])  # a stream that ends frees its place
    again = resume_with(client, alice_key, session_id, event_id)
    assert again.status_code == 200
    for response in (held[1], again):
        end_stream(response)


@pytest.mark.parametrize("change", ["revoke", "scope", "deactivate"])
def test_a_resumed_stream_ends_once_its_credential_no_longer_holds(
    mcp_client: Callable[..., MCPClient], client: Client, alice_key: str, alice: Any, change: str
) -> None:
    from mcp_endpoint.models import APIKey

    rpc = mcp_client(alice_key, FIXTURE)
    session_id = initialize(rpc)
    events = body_of(call(rpc, session_id, "test_tool_with_progress", token="t"))
    assert body_of(resume_with(client, alice_key, session_id, events[1]["id"]))
    response = resume_with(client, alice_key, session_id, events[1]["id"])
    assert response.status_code == 200
    key = APIKey.objects.get(user=alice)
    if change == "revoke":
        key.revoke()
    elif change == "scope":
        key.scope = "write"
        key.save()
    else:
        alice.is_active = False
        alice.save()
    replayed = sse_events(b"".join(response.streaming_content))
    if change == "scope":
        # Scopes decide what a stream may read; a call's own stream reads no resource.
        assert len(replayed) == len(events) - 2
    else:
        assert replayed == []


# -- refused ------------------------------------------------------------------------------------


def refused(response: Any, status: int) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == -32600
    assert body["id"] is None


def stream_of(rpc: MCPClient, session_id: str) -> str:
    events = body_of(call(rpc, session_id, "test_tool_with_progress", token="t"))
    event_id: str = events[0]["id"]
    return event_id


def test_resume_needs_the_session_header(rpc: MCPClient, client: Client) -> None:
    event_id = stream_of(rpc, initialize(rpc))
    refused(resume(client, None, event_id), 400)


def test_resume_with_an_unknown_session_is_404(rpc: MCPClient, client: Client) -> None:
    event_id = stream_of(rpc, initialize(rpc))
    refused(resume(client, "no-such-session", event_id), 404)


@pytest.mark.parametrize("bad", ["", "garbage", "abc.def", "short.1", "a" * 80 + ".1"])
def test_a_malformed_last_event_id_is_400(rpc: MCPClient, client: Client, bad: str) -> None:
    refused(resume(client, initialize(rpc), bad), 400)


def test_another_sessions_stream_is_404(rpc: MCPClient, client: Client) -> None:
    event_id = stream_of(rpc, initialize(rpc))
    refused(resume(client, initialize(rpc), event_id), 404)


def test_an_unknown_stream_is_404(rpc: MCPClient, client: Client) -> None:
    refused(resume(client, initialize(rpc), "AAAAAAAAAAAAAAAA.3"), 404)


def test_without_sessions_get_stays_405(client: Client, alice_key: str) -> None:
    # The product's /mcp has sessions off: nothing to resume, GET is not served.
    response = client.get(
        "/mcp", headers={"Authorization": f"Bearer {alice_key}", "Last-Event-ID": "x.1"}
    )
    assert response.status_code == 405
    assert response.json()["error"]["code"] == -32000


# -- two processes, one Redis ---------------------------------------------------------------------


def raw(port: int, method: str, body: Any = None, headers: dict[str, str] | None = None) -> Any:
    connection = http.client.HTTPConnection(HOST, port, timeout=20)
    data = json.dumps(body).encode() if body is not None else None
    connection.request(method, FIXTURE, body=data, headers={
        "Content-Type": "application/json", **(headers or {})})  # fmt: skip
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, payload


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, int]]:
    redis_url = require_redis()
    workdir: Path = tmp_path_factory.mktemp("resume-two")
    env = {
        "SQLITE_PATH": str(workdir / "shared.sqlite3"),
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"mcp-resume-{secrets.token_hex(6)}",
        "DATABASE_URL": "",
    }
    with (
        UvicornServer(workdir / "a", workers=1, env=env) as first,
        LiveServer(
            workdir / "b", workers=1, env=env, migrate=False, share_database=first
        ) as second,
    ):
        yield first.port, second.port


@pytest.mark.e2e
def test_a_stream_opened_on_one_process_resumes_on_another(two_servers: tuple[int, int]) -> None:
    resume_across(*two_servers)


def resume_across(a: int, b: int) -> None:
    """The fixture's reconnection tool called on port ``a``, its stream resumed on ``b``."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}}}  # fmt: skip
    status, headers, _ = raw(a, "POST", init)
    assert status == 200
    session = headers["mcp-session-id"]
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "test_reconnection", "arguments": {}}}  # fmt: skip
    status, headers, body = raw(a, "POST", message, in_session(session, Accept=SSE))
    assert status == 200 and headers["content-type"] == "text/event-stream"
    (priming,) = sse_events(body)
    status, headers, body = raw(b, "GET", None, in_session(session, **{
        "Last-Event-ID": priming["id"], "Accept": "text/event-stream"}))  # fmt: skip
    assert status == 200, body
    (answer,) = sse_events(body)
    assert answer["data"]["id"] == 2
    assert answer["data"]["result"]["isError"] is False
