"""One credential cannot stall the others, through real servers (gunicorn, uvicorn).

Alice's legacy session declares elicitation; she floods the demo with deletes that accept
SSE and never answers their confirmations. Under uvicorn she could fill the stream pool
and stall everyone's streamed calls; under gunicorn's sync workers each waiting call holds
a whole worker, up to the worker timeout. With the per-credential caps, at most her share
waits, the rest of her calls get the documented tool error at once, and bob's streamed
call and ``GET /health`` answer promptly. Every wait here is bounded.
"""

from __future__ import annotations

import http.client
import json
import secrets
import select
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.live_server import HOST, SERVERS, LiveServer, manage, require_redis
from tests.test_e2e_sdk import create_key
from tests.test_sessions import LEGACY, SSE

pytestmark = pytest.mark.e2e

# The caps the servers run with: under sync workers, fewer waiting calls than workers.
PENDING = {"uvicorn": 4, "gunicorn": 1}
WORKERS = {"uvicorn": 1, "gunicorn": 3}
# Under gunicorn, a waiting call gives up well before the worker timeout (30 s).
SINGLE_THREADED_WAIT = 8
FLOOD = {"uvicorn": 40, "gunicorn": 6}
REFUSALS = {"too_many_waiting", "stream_capacity"}


@dataclass
class Deployment:
    kind: str
    server: LiveServer
    keys: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module", params=["uvicorn", "gunicorn"])
def deployment(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    kind: str = request.param
    env = {
        # Sessions live in Redis, whose counts are atomic across processes and threads.
        "REDIS_URL": require_redis(),
        "CACHE_KEY_PREFIX": f"mcp_caps_{secrets.token_hex(4)}",
        "DEMO_MCP_SESSIONS": "1",
        "DEMO_MCP_PENDING": str(PENDING[kind]),
        "DEMO_MCP_SINGLE_THREADED_WAIT": str(SINGLE_THREADED_WAIT),
        "DEMO_PROTOCOL_RATE": "100000/minute",
        "DEMO_USER_THROTTLE": "100000/minute",
        # No keep-alive comment within the test: what a waiting call's stream sends next
        # is its end (see ended()).
        "DEMO_STREAM_KEEPALIVE_SECONDS": "600",
    }
    workdir: Path = tmp_path_factory.mktemp(f"caps-{kind}")
    # gunicorn's default worker timeout, which a waiting call must stay within.
    with SERVERS[kind](workdir, workers=WORKERS[kind], env=env, worker_timeout=30) as server:
        manage(server.env, "seed_demo")
        keys = {name: create_key(server.env, name, "read write") for name in ("alice", "bob")}
        yield Deployment(kind, server, keys)


class Session:
    """A legacy session of one credential, over plain HTTP connections."""

    def __init__(self, deployment: Deployment, user: str, capabilities: dict[str, Any]) -> None:
        self.server = deployment.server
        self.key = deployment.keys[user]
        self.next_id = 1
        response = self.send(
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": capabilities,
                "clientInfo": {"name": "flood", "version": "1"},
            },
            session=False,
        )
        self.id = response.getheader("Mcp-Session-Id") or ""
        response.read()
        assert self.id

    def send(
        self, method: str, params: dict[str, Any], *, session: bool = True
    ) -> http.client.HTTPResponse:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        headers = {
            "Authorization": f"Bearer {self.key}",
            "Content-Type": "application/json",
            "Accept": SSE,
        }
        if session:
            headers.update({"Mcp-Session-Id": self.id, "MCP-Protocol-Version": LEGACY})
        connection = http.client.HTTPConnection(HOST, self.server.port, timeout=30)
        connection.request("POST", "/mcp", json.dumps(body), headers)
        return connection.getresponse()


def first_message(response: http.client.HTTPResponse) -> dict[str, Any]:
    """A plain JSON answer, or the first message of a stream (which stays open)."""
    if response.getheader("Content-Type") == "application/json":
        return json.loads(response.read())  # type: ignore[no-any-return]
    block = b""
    while True:
        line = response.readline()
        assert line, "the stream ended without a message"
        block += line
        if line in (b"\n", b"\r\n"):
            data = [raw[5:].strip() for raw in block.splitlines() if raw.startswith(b"data:")]
            if b"".join(data):
                return json.loads(b"\n".join(data))  # type: ignore[no-any-return]
            block = b""


def refusal(message: dict[str, Any]) -> str | None:
    result = message.get("result")
    if not isinstance(result, dict) or not result.get("isError"):
        return None
    code: str = result["structuredContent"]["error"]["code"]
    return code


def answered(work: Any, hang: float) -> Any:
    """``work()``'s value; a test that waits longer than ``hang`` seconds for it has hung."""
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(work()), daemon=True)
    thread.start()
    thread.join(timeout=hang)
    assert outcome, f"no answer after {hang} s: the server hung"
    return outcome[0]


def ended(parked: list[http.client.HTTPResponse]) -> int:
    """How many of the ``parked`` answers (streams whose first message was read) have
    sent more since: a parked call's end (an answer, a refusal) is the next thing its
    stream carries."""
    readable, _, _ = select.select([response.fp.fileno() for response in parked], [], [], 0)
    return len(readable)


def test_one_credential_waiting_on_its_client_stalls_nobody(deployment: Deployment) -> None:
    alice = Session(deployment, "alice", {"elicitation": {}})
    bob = Session(deployment, "bob", {})
    flood = FLOOD[deployment.kind]
    answers: list[tuple[http.client.HTTPResponse, dict[str, Any]]] = []
    lock = threading.Lock()

    def delete(index: int) -> None:
        response = alice.send("tools/call", {"name": "delete_task", "arguments": {"id": 1}})
        message = first_message(response)
        with lock:
            answers.append((response, message))

    callers = [threading.Thread(target=delete, args=(i,), daemon=True) for i in range(flood)]
    try:
        for caller in callers:
            caller.start()
        deadline = time.monotonic() + 30
        for caller in callers:
            caller.join(timeout=max(0.0, deadline - time.monotonic()))
        assert len(answers) == flood, f"{flood - len(answers)} of alice's calls got no answer"

        # Her share waits on her client; every other call was refused at once, saying why.
        waiting = [m for _, m in answers if m.get("method") == "elicitation/create"]
        refused = [refusal(m) for _, m in answers if "method" not in m]
        assert 1 <= len(waiting) <= PENDING[deployment.kind], answers
        assert len(waiting) + len(refused) == flood
        assert set(refused) <= REFUSALS, refused

        # Others are not held back by her waiting calls: they are answered while every one
        # of hers still waits. (Had one of them needed a worker a waiting call holds, it
        # would have been answered only once that call had ended.)
        parked = [r for r, m in answers if m.get("method") == "elicitation/create"]
        health = answered(
            lambda: urllib.request.urlopen(deployment.server.url("/health"), timeout=30).status,
            30,
        )
        assert health == 200
        listed = answered(
            lambda: first_message(
                bob.send("tools/call", {"name": "list_projects", "arguments": {}})
            ),
            30,
        )
        assert listed["result"]["isError"] is False, listed
        assert ended(parked) == 0, "bob was answered only after a call of alice's had ended"

        if deployment.kind == "gunicorn":
            # A waiting call gives its worker back before the worker timeout (30 s).
            end = answered(lambda: first_message(parked[0]), SINGLE_THREADED_WAIT + 20)
            assert refusal(end) == "client_timeout", end
    finally:
        for response, _ in answers:
            response.close()

    assert "WORKER TIMEOUT" not in deployment.server.log_tail(400)
