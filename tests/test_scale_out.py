"""The scaled-out topology of docs/deployment.md, on loopback: two web processes, two task
workers, one PostgreSQL, one Redis.

Two uvicorn processes (A and B, each on its own port, as two machines behind a balancer
that pins nothing) share the database and Redis; two ``mcp_task_worker`` processes run the
tasks. Each piece of state moves between them: a session opened on A is used on B, a
stream started on A resumes on B, a subscription made on A streams its updates on B, and a
task created on A is followed on B. Then A and one worker are killed (SIGKILL) while two
tasks run: the session goes on at B, the task of the surviving worker completes, and the
killed worker's task fails as lost; nothing stays ``working``.

These tests belong to the PostgreSQL and Redis run: without ``DATABASE_URL`` and
``REDIS_URL`` they are skipped (SQLite is one machine's database).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_endpoint.protocol.tasks import EXTENSION
from mcp_endpoint.task_recovery import LOST
from tests.live_server import HOST, TaskWorker, UvicornServer, manage, missing, run_script
from tests.test_e2e_sdk import DEMO_PROJECT, create_key
from tests.test_resumption import resume_across, sse_events
from tests.test_sessions import LEGACY, SSE, in_session
from tests.test_subscriptions import patch_task
from tests.test_tasks_live import redis_reachable

pytestmark = pytest.mark.e2e

MODERN = "2026-07-28"
TERMINAL = {"completed", "failed", "cancelled"}
PATIENCE = 90.0  # an upper bound on waiting for a state, not a timing under test


@dataclass
class Topology:
    a: UvicornServer
    b: UvicornServer
    workers: list[TaskWorker]
    key: str
    project: int
    task: int

    def post(
        self, server: UvicornServer, message: Any, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection(HOST, server.port, timeout=30)
        connection.request("POST", "/mcp", body=json.dumps(message).encode(), headers={
            "Content-Type": "application/json", "Accept": SSE,
            "Authorization": f"Bearer {self.key}", **(headers or {})})  # fmt: skip
        answer = connection.getresponse()
        body = answer.read()
        connection.close()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body

    def modern(self, server: UvicornServer, method: str, params: dict[str, Any], name: str) -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
        }
        message = {"jsonrpc": "2.0", "id": 1, "method": method,
                   "params": {**params, "_meta": meta}}  # fmt: skip
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method, "Mcp-Name": name}
        status, _, body = self.post(server, message, headers)
        assert status == 200, body
        return json.loads(body)

    def export(self, server: UvicornServer) -> str:
        params = {"name": "export_project_tasks", "arguments": {"project_id": self.project}}
        result = self.modern(server, "tools/call", params, "export_project_tasks")["result"]
        assert result["resultType"] == "task", result
        task_id: str = result["taskId"]
        return task_id

    def task_state(self, server: UvicornServer, task_id: str) -> dict[str, Any]:
        found: dict[str, Any] = self.modern(server, "tasks/get", {"taskId": task_id}, task_id)[
            "result"
        ]
        return found

    def until(self, server: UvicornServer, task_id: str, done: Any) -> dict[str, Any]:
        deadline = time.monotonic() + PATIENCE
        while True:
            state = self.task_state(server, task_id)
            if done(state) or time.monotonic() > deadline:
                return state
            time.sleep(0.1)

    def initialize(self, server: UvicornServer) -> str:
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": LEGACY, "capabilities": {}}}  # fmt: skip
        status, headers, body = self.post(server, message)
        assert status == 200, body
        return headers["mcp-session-id"]

    def in_session(self, server: UvicornServer, session: str, method: str, params: Any) -> Any:
        message = {"jsonrpc": "2.0", "id": 2, "method": method, "params": params}
        status, _, body = self.post(server, message, in_session(session))
        assert status == 200, body
        return sse_events(body)[-1]["data"] if body.startswith(b"id:") else json.loads(body)


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
        pytest.skip("the scaled-out topology runs in the PostgreSQL and Redis run")
    if not redis_reachable(os.environ["REDIS_URL"]):
        missing(f"no Redis at {os.environ['REDIS_URL']}")
    workdir = Path(tmp_path_factory.mktemp("scale-out"))
    env = {
        "CACHE_KEY_PREFIX": f"mcp-scale-{secrets.token_hex(6)}",
        "DEMO_MCP_SESSIONS": "1",
        "DEMO_TASK_HEARTBEAT_MS": "500",
        "DEMO_EXPORT_PACE_SECONDS": "0.5",
    }
    with UvicornServer(workdir / "a", workers=1, env=env) as a:
        manage(a.env, "seed_demo")
        key = create_key(a.env, "alice", "read write")
        facts = run_script(a.env, (
            "from project.tracker.models import Project\n"
            f"p = Project.objects.get(name={DEMO_PROJECT!r})\n"
            "print(p.pk, p.tasks.first().pk)\n"))  # fmt: skip
        project, task = (int(n) for n in facts.strip().splitlines()[-1].split())
        b = UvicornServer(workdir / "b", workers=1, env=env, migrate=False, share_database=a)
        with b, TaskWorker(a) as first, TaskWorker(b) as second:
            yield Topology(a, b, [first, second], key, project, task)


def test_a_session_opened_on_one_web_process_is_used_on_the_other(topology: Topology) -> None:
    session = topology.initialize(topology.a)
    listed = topology.in_session(topology.b, session, "tools/list", {})
    assert any(t["name"] == "list_projects" for t in listed["result"]["tools"])


def test_a_stream_started_on_one_web_process_resumes_on_the_other(topology: Topology) -> None:
    # The conformance fixture's reconnection tool: its stream on A ends after the priming
    # event, and the client resumes it, here on B, with Last-Event-ID.
    resume_across(topology.a.port, topology.b.port)


def test_a_subscription_made_on_one_web_process_streams_on_the_other(topology: Topology) -> None:
    uri = f"tracker://projects/{topology.project}/board"
    session = topology.initialize(topology.a)
    assert "result" in topology.in_session(topology.a, session, "resources/subscribe", {"uri": uri})
    lines: queue.Queue[bytes] = queue.Queue()
    stream = http.client.HTTPConnection(HOST, topology.b.port, timeout=PATIENCE)
    stream.request("GET", "/mcp", headers={
        "Accept": "text/event-stream", "Authorization": f"Bearer {topology.key}",
        **in_session(session)})  # fmt: skip
    response = stream.getresponse()
    assert response.status == 200

    def read() -> None:
        # Until the stream is closed below (http.client then reads from a closed socket).
        with contextlib.suppress(OSError, AttributeError, ValueError, http.client.HTTPException):
            for line in iter(response.readline, b""):
                lines.put(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    heard = b""
    try:
        # A change before the stream is registered is not news to it: change until heard.
        for attempt in range(20):
            assert patch_task(topology.a, topology.key, topology.task, f"Renamed {attempt}") == 200
            deadline = time.monotonic() + 1.5
            while b"notifications/resources/updated" not in heard:
                try:
                    heard += lines.get(timeout=max(deadline - time.monotonic(), 0.01))
                except queue.Empty:
                    break
            if b"notifications/resources/updated" in heard:
                break
    finally:
        stream.close()
        response.close()
        reader.join(timeout=10)
    assert b"notifications/resources/updated" in heard and uri.encode() in heard


def test_a_task_created_on_one_web_process_is_followed_on_the_other(topology: Topology) -> None:
    task_id = topology.export(topology.a)
    state = topology.until(topology.b, task_id, lambda t: t["status"] in TERMINAL)
    assert state["status"] == "completed", state


def test_a_web_process_and_a_worker_killed_mid_work_lose_nothing(
    topology: Topology, tmp_path: Path
) -> None:
    # A third web process and a third worker, killed below: the module's two stay up.
    with UvicornServer(
        tmp_path / "c", workers=1, env=topology.a.env, migrate=False, share_database=topology.a
    ) as c:
        doomed = TaskWorker(c).start()
        try:
            session = topology.initialize(c)
            # Three exports for three workers, each running one task at a time: all busy.
            tasks = [topology.export(c) for _ in range(3)]
            for task_id in tasks:
                state = topology.until(c, task_id, lambda t: bool(t.get("statusMessage")))
                assert state["status"] == "working", state
            doomed.kill()
            assert c.process is not None
            c.process.kill()  # SIGKILL: no graceful shutdown
            c.process.wait(timeout=15)
        finally:
            doomed.stop()
    # B answers for the session C opened; every task ends, on B's polls.
    listed = topology.in_session(topology.b, session, "tools/list", {})
    assert listed["result"]["tools"]
    ended = [topology.until(topology.b, t, lambda s: s["status"] in TERMINAL) for t in tasks]
    assert sorted(s["status"] for s in ended) == ["completed", "completed", "failed"], ended
    [lost] = [s for s in ended if s["status"] == "failed"]
    assert lost["error"]["message"] == LOST
    # And the surviving workers take new tasks.
    again = topology.export(topology.b)
    assert topology.until(topology.b, again, lambda t: t["status"] in TERMINAL)["status"] == (
        "completed"
    )
