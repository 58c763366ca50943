"""Long-running tools on Celery and RabbitMQ: a real worker process, a real broker.

uvicorn serves the demo host with ``TASKS`` on :class:`mcp_endpoint.celery.CeleryBackend`
and a queue of this run's own (so that parallel runs on one broker never take each
other's tasks); each test starts its own ``celery worker`` on that queue. A 2026-07-28
client that declares the tasks extension starts the paced CSV export as a task, and the
test sees it complete, be cancelled, keep nothing when its key is revoked, and fail (never
stay ``working``) when its worker is killed with SIGKILL mid-task.

RabbitMQ is expected at ``CELERY_TEST_BROKER_URL`` (amqp://guest:guest@127.0.0.1:5672//):
without it these tests are skipped, except under CI, where that is a failure.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_endpoint.protocol.tasks import EXTENSION
from mcp_endpoint.task_recovery import LOST
from tests.live_server import (
    CeleryWorker,
    ReadyCommand,
    UvicornServer,
    manage,
    missing,
    run_script,
)
from tests.test_e2e_sdk import DEMO_PROJECT, create_key

pytest.importorskip("celery")

pytestmark = pytest.mark.e2e

BROKER_URL = os.environ.get("CELERY_TEST_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//")
MODERN = "2026-07-28"
TERMINAL = {"completed", "failed", "cancelled"}
# Upper bounds on waiting for a state, not timings under test.
PATIENCE = 90.0
# A task's worker says it is alive twice a second: one gone is seen after 1.5 s.
HEARTBEAT_MS = "500"
PACE = "0.8"  # seconds per exported row: an export takes about ten seconds


def require_broker() -> None:
    parts = urlsplit(BROKER_URL)
    try:
        socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 5672), 3).close()
    except OSError as exc:
        missing(f"no RabbitMQ at {parts.hostname}:{parts.port or 5672} ({exc})")


class Deployment:
    """The server, its queue, a key of alice's and the demo project's id."""

    def __init__(self, server: UvicornServer, queue: str, key: str, project: str) -> None:
        self.server = server
        self.queue = queue
        self.key = key
        self.project = int(project)

    def rpc(self, method: str, params: dict[str, Any], name: str, key: str | None = None) -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
        request = urllib.request.Request(
            self.server.url("/mcp"),
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Authorization": f"Bearer {key or self.key}",
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": method,
                "Mcp-Name": name,
            },
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def start_export(self, key: str | None = None) -> str:
        arguments = {"project_id": self.project}
        params = {"name": "export_project_tasks", "arguments": arguments}
        answer = self.rpc("tools/call", params, "export_project_tasks", key)
        result = answer["result"]
        assert result["resultType"] == "task", answer
        task_id: str = result["taskId"]
        return task_id

    def get(self, task_id: str, key: str | None = None) -> dict[str, Any]:
        answer = self.rpc("tasks/get", {"taskId": task_id}, task_id, key)
        assert "result" in answer, answer
        result: dict[str, Any] = answer["result"]
        return result

    def until(self, task_id: str, done: Any, key: str | None = None) -> dict[str, Any]:
        """tasks/get until ``done(task)``, for PATIENCE at most."""
        deadline = time.monotonic() + PATIENCE
        while True:
            task = self.get(task_id, key)
            if done(task) or time.monotonic() > deadline:
                return task
            time.sleep(0.1)

    def row(self, task_id: str) -> dict[str, Any]:
        """The task's row as the database holds it (read from another process)."""
        script = (
            "import json; from mcp_endpoint.models import ToolTask; "
            f"t = ToolTask.objects.get(pk={task_id!r}); "
            "print(json.dumps({'status': t.status, 'result': t.result, 'error': t.error, "
            "'message': t.status_message, 'job': t.job}))"
        )
        found: dict[str, Any] = json.loads(run_script(self.server.env, script).splitlines()[-1])
        return found


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    require_broker()
    queue = f"mcp-test-{os.getpid()}-{secrets.token_hex(4)}"
    env = {
        "DEMO_TASK_ENGINE": "celery",
        "CELERY_BROKER_URL": BROKER_URL,
        "DEMO_CELERY_QUEUE": queue,
        "DEMO_TASK_HEARTBEAT_MS": HEARTBEAT_MS,
        "DEMO_EXPORT_PACE_SECONDS": PACE,
    }
    workdir = Path(tmp_path_factory.mktemp("celery"))
    with UvicornServer(workdir, workers=1, env=env) as server:
        manage(server.env, "seed_demo")
        key = create_key(server.env, "alice", "read write")
        project = run_script(
            server.env,
            "from project.tracker.models import Project; "
            f"print(Project.objects.get(name={DEMO_PROJECT!r}).pk)",
        ).splitlines()[-1]
        try:
            yield Deployment(server, queue, key, project)
        finally:
            delete_queue(queue)


def delete_queue(queue: str) -> None:
    from kombu import Connection

    with Connection(BROKER_URL, connect_timeout=5) as connection:
        connection.default_channel.queue_delete(queue)


@pytest.fixture
def worker(deployment: Deployment) -> Iterator[CeleryWorker]:
    with CeleryWorker(deployment.server, deployment.queue) as started:
        yield started


def test_the_tasks_extension_is_announced_once_a_worker_is_seen(deployment: Deployment) -> None:
    def discover() -> dict[str, Any]:
        capabilities: dict[str, Any] = deployment.rpc("server/discover", {}, "")["result"][
            "capabilities"
        ]
        return capabilities.get("extensions", {})

    # No Celery worker has said it is alive (or the last one stopped cleanly).
    assert EXTENSION not in discover()
    with CeleryWorker(deployment.server, deployment.queue):
        assert EXTENSION in discover()


def test_a_task_completes_on_a_celery_worker(deployment: Deployment, worker: CeleryWorker) -> None:
    task_id = deployment.start_export()
    task = deployment.until(task_id, lambda t: t["status"] in TERMINAL)
    assert task["status"] == "completed", (task, worker.log_tail())
    content = task["result"]["content"]
    assert content[0]["type"] == "resource"
    assert content[0]["resource"]["text"].startswith("id,")


def test_a_task_is_cancelled_on_a_celery_worker(
    deployment: Deployment, worker: CeleryWorker
) -> None:
    task_id = deployment.start_export()
    working = deployment.until(task_id, lambda t: bool(t.get("statusMessage")))
    assert working["status"] == "working", working
    deployment.rpc("tasks/cancel", {"taskId": task_id}, task_id)
    assert deployment.get(task_id)["status"] == "cancelled"
    # The worker stops at the tool's next look, and records nothing over the cancellation.
    deadline = time.monotonic() + PATIENCE
    while b"succeeded" not in worker.log_path.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.1)
    row = deployment.row(task_id)
    assert row["status"] == "cancelled" and row["result"] is None, row


def test_a_revoked_key_keeps_nothing(deployment: Deployment, worker: CeleryWorker) -> None:
    key = create_key(deployment.server.env, "alice", "read")
    prefix = "_".join(key.split("_")[:2])  # mcp_ab12cd34
    # Loaded before the export starts: a revocation that waits for Django to start could
    # land after the export's last row on a busy machine, and then nothing is revoked.
    with ReadyCommand(deployment.server.env, "mcp_key", "revoke", prefix) as revoke:
        task_id = deployment.start_export(key)
        working = deployment.until(task_id, lambda t: bool(t.get("statusMessage")), key)
        assert working["status"] == "working", working
        revoke.run()
    assert deployment.row(task_id)["status"] == "working", "the export ended before the revocation"
    deadline = time.monotonic() + PATIENCE
    while deployment.row(task_id)["status"] == "working" and time.monotonic() < deadline:
        time.sleep(0.2)
    row = deployment.row(task_id)
    assert row["status"] == "failed", (row, worker.log_tail())
    assert row["result"] is None
    assert row["error"]["code"] == -32001
    # And the revoked key reads nothing of it: refused before any method.
    with pytest.raises(urllib.error.HTTPError) as refused:
        deployment.rpc("tasks/get", {"taskId": task_id}, task_id, key)
    assert refused.value.code == 401


def test_a_worker_killed_mid_task_fails_the_task(deployment: Deployment) -> None:
    doomed = CeleryWorker(deployment.server, deployment.queue).start()
    try:
        task_id = deployment.start_export()
        working = deployment.until(task_id, lambda t: bool(t.get("statusMessage")))
        assert working["status"] == "working", working
        doomed.kill()
    finally:
        doomed.stop()
    # Its heartbeat stops; the next poll after three missed ones settles the task.
    task = deployment.until(task_id, lambda t: t["status"] != "working")
    assert task["status"] == "failed", task
    assert task["error"]["message"] == LOST
    # The broker gives the unacknowledged message to the next worker, which runs nothing
    # for it: the task is no longer working, and no tool starts twice for one enqueue.
    job = deployment.row(task_id)["job"]
    handled = f"run[{job}] succeeded".encode()
    with CeleryWorker(deployment.server, deployment.queue) as successor:
        deadline = time.monotonic() + PATIENCE
        while handled not in successor.log_path.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert handled in successor.log_path.read_bytes(), successor.log_tail()
    row = deployment.row(task_id)
    assert row["status"] == "failed" and row["result"] is None, row
