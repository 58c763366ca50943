"""Optional legacy sessions (PROTOCOL.md §8): issued, shared, bound, capped, expired, ended.

In process through Django's test client, then with two real server processes that share a
Redis cache and a database: a session opened on one is used, refused and ended on the
other.
"""

from __future__ import annotations

import http.client
import json
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from mcp_endpoint.sessions import SessionStore
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key
from tests.live_server import HOST, LiveServer, manage, require_redis, run_script

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_cache")]

LEGACY = "2025-11-25"
SSE = "application/json, text/event-stream"


@pytest.fixture
def sessions_on(settings: Any) -> dict[str, Any]:
    # As the demo runs: sessions, and deletes confirmed by the user.
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SESSIONS": True,
        "CONFIRM_DESTRUCTIVE_TOOLS": True,
    }
    return settings.MCP_ENDPOINT  # type: ignore[no-any-return]


def initialize(rpc: MCPClient, capabilities: dict[str, Any] | None = None) -> str:
    response = rpc.request(
        "initialize",
        {
            "protocolVersion": LEGACY,
            "capabilities": capabilities or {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    )
    assert response.status_code == 200, response.content
    assert response.json()["result"]["protocolVersion"] == LEGACY
    session_id: str = response["Mcp-Session-Id"]
    return session_id


def in_session(session_id: str, **extra: str) -> dict[str, str]:
    return {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LEGACY, **extra}


def refused(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert body["error"]["code"] == -32600
    error: dict[str, Any] = body["error"]
    return error


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


class Clock:
    """A wall clock that moves only when told to, for the session store to read."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock by which sessions idle out, moved by the test instead of waiting."""
    moved = Clock()
    monkeypatch.setattr(SessionStore, "clock", moved)
    return moved


# -- off by default ----------------------------------------------------------------------------


def test_off_by_default(rpc: MCPClient, client: Client, alice_key: str) -> None:
    response = rpc.request("initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    assert "Mcp-Session-Id" not in response
    assert rpc.request("tools/list").status_code == 200  # no header needed
    deleted = client.delete("/mcp", headers={"Authorization": f"Bearer {alice_key}"})
    assert deleted.status_code == 405
    assert deleted["Allow"] == "POST, OPTIONS"


# -- on --------------------------------------------------------------------------------------


@pytest.mark.usefixtures("sessions_on")
def test_initialize_issues_a_session(rpc: MCPClient) -> None:
    session_id = initialize(rpc)
    assert 40 <= len(session_id) <= 64
    assert all(0x21 <= ord(c) <= 0x7E for c in session_id)
    assert initialize(rpc) != session_id  # a new one each time
    response = rpc.request("tools/list", headers=in_session(session_id))
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response  # only initialize hands one out


@pytest.mark.usefixtures("sessions_on")
def test_a_request_without_the_session_is_refused(rpc: MCPClient) -> None:
    initialize(rpc)
    error = refused(rpc.request("tools/list"), 400)
    assert "Mcp-Session-Id" in error["message"]


@pytest.mark.usefixtures("sessions_on")
def test_an_unknown_session_is_404(rpc: MCPClient) -> None:
    response = rpc.request("tools/list", headers=in_session("no-such-session"))
    error = refused(response, 404)
    assert "initialize again" in error["message"]
    assert response.json()["id"] == rpc.next_id


@pytest.mark.usefixtures("sessions_on")
def test_another_credential_gets_404(
    rpc: MCPClient, mcp_client: Callable[..., MCPClient], bob: Any, alice: Any
) -> None:
    session_id = initialize(rpc)
    for key in (make_key(bob, "read write"), make_key(alice, "read write", name="second")):
        other = mcp_client(key)
        refused(other.request("tools/list", headers=in_session(session_id)), 404)
    # Still alive for its owner.
    assert rpc.request("tools/list", headers=in_session(session_id)).status_code == 200


@pytest.mark.usefixtures("sessions_on")
def test_delete_ends_the_session(rpc: MCPClient, client: Client, alice_key: str) -> None:
    session_id = initialize(rpc)
    auth = {"Authorization": f"Bearer {alice_key}"}
    response = client.delete("/mcp", headers={**auth, **in_session(session_id)})
    assert response.status_code == 204
    refused(rpc.request("tools/list", headers=in_session(session_id)), 404)
    again = client.delete("/mcp", headers={**auth, **in_session(session_id)})
    refused(again, 404)


@pytest.mark.usefixtures("sessions_on")
def test_delete_needs_the_owner(rpc: MCPClient, client: Client, bob: Any, alice_key: str) -> None:
    session_id = initialize(rpc)
    bob_key = make_key(bob, "read write")
    response = client.delete(
        "/mcp", headers={"Authorization": f"Bearer {bob_key}", **in_session(session_id)}
    )
    refused(response, 404)
    assert rpc.request("tools/list", headers=in_session(session_id)).status_code == 200


@pytest.mark.usefixtures("sessions_on")
def test_delete_needs_a_credential_and_a_header(client: Client, alice_key: str) -> None:
    assert client.delete("/mcp", headers=in_session("x")).status_code == 401
    response = client.delete("/mcp", headers={"Authorization": f"Bearer {alice_key}"})
    refused(response, 400)


@pytest.mark.usefixtures("sessions_on")
def test_allowed_methods_name_delete(client: Client) -> None:
    response = client.options("/mcp")
    assert response["Allow"] == "POST, OPTIONS, DELETE"
    assert client.get("/mcp").status_code == 405


def test_idle_expiry(rpc: MCPClient, settings: Any, clock: Clock) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True, "SESSION_IDLE_SECONDS": 1}
    session_id = initialize(rpc)
    clock.advance(0.6)
    assert rpc.request("tools/list", headers=in_session(session_id)).status_code == 200
    clock.advance(0.4)  # a second after its last recorded use: gone
    refused(rpc.request("tools/list", headers=in_session(session_id)), 404)


def test_use_keeps_a_session_alive(rpc: MCPClient, settings: Any, clock: Clock) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True, "SESSION_IDLE_SECONDS": 2}
    session_id = initialize(rpc)
    for _ in range(3):  # 3.3 s in all, longer than the idle time, but never idle that long
        clock.advance(1.1)
        assert rpc.request("tools/list", headers=in_session(session_id)).status_code == 200
    clock.advance(2)
    refused(rpc.request("tools/list", headers=in_session(session_id)), 404)


def test_cap_per_credential_drops_the_least_recently_used(
    rpc: MCPClient, settings: Any, mcp_client: Callable[..., MCPClient], bob: Any, clock: Clock
) -> None:
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SESSIONS": True,
        "SESSIONS_PER_CREDENTIAL": 2,
    }
    bob_rpc = mcp_client(make_key(bob, "read write"))
    bobs = initialize(bob_rpc)
    first = initialize(rpc)
    second = initialize(rpc)
    clock.advance(1.05)  # use the first one later than the second
    assert rpc.request("tools/list", headers=in_session(first)).status_code == 200
    third = initialize(rpc)
    refused(rpc.request("tools/list", headers=in_session(second)), 404)
    for alive in (first, third):
        assert rpc.request("tools/list", headers=in_session(alive)).status_code == 200
    # Another credential's sessions are counted apart.
    assert bob_rpc.request("tools/list", headers=in_session(bobs)).status_code == 200


@pytest.mark.usefixtures("sessions_on")
def test_the_session_remembers_the_client(rpc: MCPClient) -> None:
    from mcp_endpoint import site
    from mcp_endpoint.protocol.server import RequestContext

    session_id = initialize(rpc, capabilities={"elicitation": {}})
    response = rpc.request("tools/list", headers=in_session(session_id))
    assert response.status_code == 200
    credential_context = RequestContext(credential=None)
    # Bound to the credential: looking it up without one finds nothing.
    assert SessionStore(site).load(session_id, credential_context) is None


@pytest.mark.usefixtures("sessions_on")
def test_a_batch_needs_the_session_too(rpc: MCPClient) -> None:
    session_id = initialize(rpc)
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}]
    refused(rpc.post(batch), 400)
    response = rpc.post(batch, headers=in_session(session_id))
    assert response.json() == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


# -- requests to the client during a call (elicitation), through the session ------------------


def next_event(stream: Iterator[bytes]) -> dict[str, Any]:
    """The next message of a stream; the priming event (an id, empty data) is skipped."""
    while True:
        chunk = b""
        while b"\n\n" not in chunk:
            chunk += next(stream)
        lines = chunk.decode().splitlines()
        data = "".join(line[5:].strip() for line in lines if line.startswith("data:"))
        if data:
            result: dict[str, Any] = json.loads(data)
            return result


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("confirm", [True, False])
def test_legacy_session_confirms_a_delete_through_elicitation(
    rpc: MCPClient, sessions_on: Any, project: Project, confirm: bool
) -> None:
    task = Task.objects.get(project=project, title="Write copy")
    session_id = initialize(rpc, capabilities={"elicitation": {}})
    response = rpc.request(
        "tools/call",
        {"name": "delete_task", "arguments": {"id": task.pk}},
        headers=in_session(session_id, Accept=SSE),
    )
    assert response["Content-Type"] == "text/event-stream"
    stream = iter(response.streaming_content)
    question = next_event(stream)
    assert question["method"] == "elicitation/create"
    # The object named as a person would: its kind and its title, from REST's representation.
    assert "Delete task: the task “Write copy”" in question["params"]["message"]
    assert Task.objects.filter(pk=task.pk).exists()
    answer = {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": {"confirm": confirm}},
    }
    posted = rpc.post(answer, headers=in_session(session_id))
    assert posted.status_code == 202
    result = next_event(stream)
    assert result["id"] == rpc.next_id
    assert result["result"]["isError"] is (not confirm)
    assert Task.objects.filter(pk=task.pk).exists() is (not confirm)


@pytest.mark.django_db(transaction=True)
def test_legacy_session_without_elicitation_is_not_asked(
    rpc: MCPClient, sessions_on: Any, project: Project
) -> None:
    task = Task.objects.get(project=project, title="Write copy")
    session_id = initialize(rpc)
    response = rpc.request(
        "tools/call",
        {"name": "delete_task", "arguments": {"id": task.pk}},
        headers=in_session(session_id, Accept=SSE),
    )
    assert response["Content-Type"] == "application/json"
    assert response.json()["result"]["isError"] is False
    assert not Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("sessions_on")
def test_an_answer_from_another_credential_never_arrives(
    rpc: MCPClient, mcp_client: Callable[..., MCPClient], bob: Any
) -> None:
    session_id = initialize(rpc, capabilities={"elicitation": {}})
    other = mcp_client(make_key(bob, "read write"))
    answer = {"jsonrpc": "2.0", "id": "mcp-x", "result": {"action": "accept"}}
    refused(other.post(answer, headers=in_session(session_id)), 404)


# -- two processes, one Redis -------------------------------------------------------------------


class Raw:
    """Plain HTTP to one server: status, headers and JSON body."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server

    def send(
        self, method: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], Any]:
        connection = http.client.HTTPConnection(HOST, self.server.port, timeout=20)
        data = json.dumps(body).encode() if body is not None else None
        sent = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, "/mcp", body=data, headers=sent)
        response = connection.getresponse()
        raw = response.read()
        connection.close()
        found = {k.lower(): v for k, v in response.getheaders()}
        return response.status, found, json.loads(raw) if raw else None

    def rpc(self, key: str, method: str, session: str | None = None, **params: Any) -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        if session:
            headers.update(in_session(session))
        message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return self.send("POST", message, headers)

    def open(self, key: str) -> str:
        status, headers, _ = self.rpc(key, "initialize", protocolVersion=LEGACY, capabilities={})
        assert status == 200
        return headers["mcp-session-id"]


# The idle time of the two processes' sessions: the expiry test moves their clock past it,
# so it costs no waiting, and the real time between two requests counts toward it too: long
# enough for the other tests to finish what they check within it, and for the expiry test's
# steps to stay clear of it, on a loaded machine too (a request there can take seconds).
TWO_PROCESS_IDLE = 30

# Each test of the two processes takes a pair of keys (alice's, bob's) no other test used:
# a credential's sessions are capped and counted per key, so none of them sees sessions
# that another test (run before it, in any order) left open.
KEY_PAIRS = 4


@dataclass
class FileClock:
    """The clock both server processes read (``DEMO_CLOCK_FILE``, project/clock.py): the
    wall clock plus the seconds in :attr:`path`, which :meth:`advance` adds to."""

    path: Path

    def advance(self, seconds: float) -> None:
        moved = float(self.path.read_text()) if self.path.exists() else 0.0
        partial = self.path.with_suffix(".partial")
        partial.write_text(repr(moved + seconds))
        partial.replace(self.path)  # whole, for a process reading it now


@pytest.fixture(scope="module")
def two_clock(tmp_path_factory: pytest.TempPathFactory) -> FileClock:
    return FileClock(tmp_path_factory.mktemp("sessions-clock") / "seconds")


@pytest.fixture(scope="module")
def two_servers(
    tmp_path_factory: pytest.TempPathFactory, two_clock: FileClock
) -> Iterator[tuple[Raw, Raw, list[tuple[str, str]]]]:
    redis_url = require_redis()
    workdir: Path = tmp_path_factory.mktemp("sessions-two")
    env = {
        "DEMO_CLOCK_FILE": str(two_clock.path),
        "SQLITE_PATH": str(workdir / "shared.sqlite3"),
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"mcp-sessions-{secrets.token_hex(6)}",
        "DEMO_MCP_SESSIONS": "1",
        "DEMO_MCP_SESSION_IDLE_SECONDS": str(TWO_PROCESS_IDLE),
        "DEMO_MCP_SESSIONS_PER_CREDENTIAL": "2",
        "DATABASE_URL": "",
    }
    with LiveServer(workdir / "a", workers=2, env=env) as first:
        manage(first.env, "seed_demo")
        out = run_script(
            first.env,
            "from django.contrib.auth import get_user_model\n"
            "from mcp_endpoint.models import APIKey\n"
            f"for _ in range({KEY_PAIRS}):\n"
            "    for name in ('alice', 'bob'):\n"
            "        user = get_user_model().objects.get(username=name)\n"
            "        print(APIKey.objects.create_key(user=user, scopes='read')[1])\n",
        )
        keys = out.split()[-2 * KEY_PAIRS :]
        pairs = list(zip(keys[0::2], keys[1::2], strict=True))
        with LiveServer(
            workdir / "b", workers=2, env=env, migrate=False, share_database=first
        ) as second:
            yield Raw(first), Raw(second), pairs


@pytest.fixture
def deployment(
    two_servers: tuple[Raw, Raw, list[tuple[str, str]]],
) -> tuple[Raw, Raw, str, str]:
    """The two processes, and a pair of keys (alice's, bob's) of this test's own."""
    a, b, pairs = two_servers
    assert pairs, f"more tests than KEY_PAIRS ({KEY_PAIRS}): raise it"
    alice, bob = pairs.pop()
    return a, b, alice, bob


@pytest.mark.e2e
def test_two_processes_share_sessions(deployment: tuple[Raw, Raw, str, str]) -> None:
    a, b, alice, bob = deployment
    session = a.open(alice)
    for server in (b, a, b):
        status, _, body = server.rpc(alice, "tools/list", session)
        assert status == 200, body
        assert body["result"]["tools"]
    # Another credential, on either process: 404.
    for server in (a, b):
        status, _, body = server.rpc(bob, "tools/list", session)
        assert status == 404 and body["error"]["code"] == -32600
    # Ended on one process, gone on the other.
    status, _, _ = b.send("DELETE", None, {"Authorization": f"Bearer {alice}", **in_session(
        session)})  # fmt: skip
    assert status == 204
    assert a.rpc(alice, "tools/list", session)[0] == 404


@pytest.mark.e2e
def test_two_processes_expire_idle_sessions(
    deployment: tuple[Raw, Raw, str, str], two_clock: FileClock
) -> None:
    # Both processes read the clock the test moves, as the in-process tests above do
    # theirs. Each move leaves half the idle time for the real time that passes as well.
    a, b, alice, _ = deployment
    session = a.open(alice)
    two_clock.advance(TWO_PROCESS_IDLE / 2)  # past the second after which a use is recorded
    assert b.rpc(alice, "tools/list", session)[0] == 200
    # Idle for longer than the idle time since it was opened, not since that use.
    two_clock.advance(TWO_PROCESS_IDLE / 2 + 1)
    assert a.rpc(alice, "tools/list", session)[0] == 200
    two_clock.advance(TWO_PROCESS_IDLE + 0.2)
    assert a.rpc(alice, "tools/list", session)[0] == 404
    assert b.rpc(alice, "tools/list", session)[0] == 404


@pytest.mark.e2e
def test_two_processes_cap_sessions_per_credential(
    deployment: tuple[Raw, Raw, str, str], two_clock: FileClock
) -> None:
    a, b, alice, bob = deployment
    first = a.open(alice)
    second = b.open(alice)
    two_clock.advance(1.1)  # a use is recorded a second after the last one, at the earliest
    assert b.rpc(alice, "tools/list", first)[0] == 200  # now the second is the least used
    # Another credential's session, opened last so that a slow machine cannot idle it out
    # before it is checked: it counts toward Bob's cap, not Alice's.
    bobs = b.open(bob)
    third = a.open(alice)
    # The kept sessions first: each check is a use, and on a loaded machine the two checks
    # of the dropped one take seconds of the idle time after which the first idles out.
    for session in (first, third):
        assert a.rpc(alice, "tools/list", session)[0] == 200
    assert a.rpc(alice, "tools/list", second)[0] == 404
    assert b.rpc(alice, "tools/list", second)[0] == 404
    assert a.rpc(bob, "tools/list", bobs)[0] == 200
