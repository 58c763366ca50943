"""Long-lived streams end with their credential, on a real uvicorn process with Redis.

A key opens a session's ``GET`` stream and a ``subscriptions/listen`` stream, both hear a
change made through the REST API; then the key is revoked, its scope lowered to ``write``,
or its user deactivated (in another process, as an admin would, with the key cache on),
and at the next change, or the next keep-alive, both streams end without a word of it.
"""

from __future__ import annotations

import http.client
import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.live_server import HOST, UvicornServer, manage, require_redis, run_script
from tests.test_e2e_sdk import DEMO_PROJECT, create_key
from tests.test_sessions import LEGACY
from tests.test_streaming import parse_events
from tests.test_subscriptions import listen_message, patch_task

pytestmark = pytest.mark.e2e

END = "end of stream"
OPEN = "still open"
# How long a stream may take to say its next thing (or end) before the test fails.
WAIT_SECONDS = 10


@dataclass
class Demo:
    server: UvicornServer
    editor: str  # a key that changes tasks through the REST API
    project_id: int
    task_id: int

    def board(self) -> str:
        return f"tracker://projects/{self.project_id}/board"

    def change_task(self, title: str) -> None:
        assert patch_task(self.server, self.editor, self.task_id, title) == 200


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    redis_url = require_redis()
    env = {
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"mcp-access-{secrets.token_hex(6)}",
        "DEMO_MCP_SESSIONS": "1",
        # The re-check reads keys through the cache: a revocation must still reach it.
        "DEMO_API_KEY_CACHE_SECONDS": "300",
        # A quiet stream re-checks its credential at each keep-alive.
        "DEMO_STREAM_KEEPALIVE_SECONDS": "1",
    }
    with UvicornServer(tmp_path_factory.mktemp("stream-access"), workers=1, env=env) as server:
        manage(server.env, "seed_demo")
        facts = run_script(server.env, (
            "from project.tracker.models import Project\n"
            f"p = Project.objects.get(name={DEMO_PROJECT!r})\n"
            "print(p.pk, p.tasks.first().pk)\n"))  # fmt: skip
        project_id, task_id = (int(n) for n in facts.strip().splitlines()[-1].split())
        editor = create_key(server.env, "alice", "read write")
        yield Demo(server, editor, project_id, task_id)


def new_member(demo: Demo, username: str) -> str:
    """A user of the demo project and a fresh ``read write`` key of theirs."""
    run_script(demo.server.env, (
        "from django.contrib.auth import get_user_model\n"
        "from project.tracker.models import Project\n"
        f"user = get_user_model().objects.create_user({username!r})\n"
        f"Project.objects.get(pk={demo.project_id}).members.add(user)\n"))  # fmt: skip
    return create_key(demo.server.env, username, "read write")


def post(demo: Demo, key: str, message: dict[str, Any], headers: dict[str, str]) -> Any:
    connection = http.client.HTTPConnection(HOST, demo.server.port, timeout=WAIT_SECONDS)
    connection.request("POST", "/mcp", body=json.dumps(message), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {key}", **headers})  # fmt: skip
    return connection.getresponse()


def next_message(stream: Any) -> dict[str, Any] | str:
    """The stream's next JSON message, :data:`END` when it ended, or :data:`OPEN` when it
    said nothing but keep-alives for ``WAIT_SECONDS``."""
    deadline = time.monotonic() + WAIT_SECONDS
    block = b""
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            return END
        if line.strip():
            block += line
            continue
        events = parse_events(block)
        if events:
            return events[0]
        block = b""
    return OPEN


def open_session_stream(demo: Demo, key: str) -> Any:
    """A legacy session subscribed to the board, and its GET stream, open."""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}}}  # fmt: skip
    opened = post(demo, key, initialize, {})
    assert opened.status == 200, opened.read()
    session = {"Mcp-Session-Id": opened.getheader("Mcp-Session-Id"), "MCP-Protocol-Version": LEGACY}
    opened.read()
    subscribe = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                 "params": {"uri": demo.board()}}  # fmt: skip
    subscribed = post(demo, key, subscribe, session)
    assert json.loads(subscribed.read())["result"] == {}
    connection = http.client.HTTPConnection(HOST, demo.server.port, timeout=WAIT_SECONDS)
    connection.request("GET", "/mcp", headers={
        "Authorization": f"Bearer {key}", "Accept": "text/event-stream", **session})  # fmt: skip
    stream = connection.getresponse()
    assert stream.status == 200, stream.read()
    # Its first keep-alive says it is open: changes from now on are heard.
    assert stream.readline().startswith(b":")
    return stream


def open_listen_stream(demo: Demo, key: str) -> Any:
    message, headers = listen_message([demo.board()], request_id="listen")
    stream = post(demo, key, message, headers)
    assert stream.status == 200, stream.read()
    ack = next_message(stream)
    assert isinstance(ack, dict)
    assert ack["params"]["notifications"] == {"resourceSubscriptions": [demo.board()]}
    return stream


CHANGES = {
    "revoke": "APIKey.objects.get(user=user).revoke()",
    "scope": "key = APIKey.objects.get(user=user)\nkey.scope = 'write'\nkey.save()",
    "deactivate": "user.is_active = False\nuser.save()",
}


@pytest.mark.parametrize("at", ["update", "keepalive"])
@pytest.mark.parametrize("change", sorted(CHANGES))
def test_open_streams_end_once_their_credential_no_longer_holds(
    demo: Demo, change: str, at: str
) -> None:
    username = f"streamer-{change}-{at}"
    key = new_member(demo, username)
    session_stream = open_session_stream(demo, key)
    listen_stream = open_listen_stream(demo, key)
    demo.change_task(f"Before {change}")
    for stream in (session_stream, listen_stream):
        heard = next_message(stream)
        assert isinstance(heard, dict), demo.server.log_tail()
        assert heard["method"] == "notifications/resources/updated"

    run_script(demo.server.env, (
        "from django.contrib.auth import get_user_model\n"
        "from mcp_endpoint.models import APIKey\n"
        f"user = get_user_model().objects.get(username={username!r})\n"
        f"{CHANGES[change]}\n"))  # fmt: skip
    if at == "update":
        demo.change_task(f"After {change}")
    # Else the next keep-alive, within a second, finds it out.

    # Not a word of the change: the session's stream ends; the listen stream ends with
    # an error for its request.
    assert next_message(session_stream) == END, demo.server.log_tail()
    ending = next_message(listen_stream)
    assert isinstance(ending, dict) and ending["id"] == "listen", ending
    assert ending["error"]["code"] == -32001
    assert next_message(listen_stream) == END
