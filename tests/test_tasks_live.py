"""Long-running tools end to end: the demo's CSV export as a task, through the official SDK.

Two uvicorn processes of the demo host on PostgreSQL and Redis, and a real
``django-tasks-db`` worker process beside them (``manage.py mcp_task_worker``): the SDK client
declares the tasks extension, starts exports as tasks, polls them to the end, cancels
one, and a task whose API key is revoked while it runs fails without a result. The export
is paced (``DEMO_EXPORT_PACE_SECONDS``) so that it is still running when the test acts.

These tests belong to the PostgreSQL and Redis run: without ``DATABASE_URL`` and
``REDIS_URL`` they are skipped, as the load tests are; with them set, an unreachable
Redis fails them under CI and skips them elsewhere.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Request, Result, TextContent
from pydantic import ConfigDict, Field, TypeAdapter

from mcp_endpoint.task_recovery import LOST
from tests.live_server import TaskWorker, TcpProxy, UvicornServer, manage, missing
from tests.test_e2e_sdk import create_key

pytestmark = pytest.mark.e2e

EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}
ROWS = 12
PACE = "0.5"  # seconds per exported row: an export takes about six seconds
ANSWER = TypeAdapter(dict[str, Any])
# Upper bounds on waiting for a state, not timings under test.
PATIENCE = 120.0
# A task's worker says it is alive every second: one gone is seen after three.
HEARTBEAT_MS = "1000"
# How long the database stays cut off from a worker: longer than the worker waits to
# record an outcome (three heartbeats), so that it must outlive the failure.
OUTAGE_SECONDS = 5.0


def require(variable: str) -> str:
    value = os.environ.get(variable, "")
    if not value:
        pytest.skip(f"{variable} is not set: the live tasks tests run with PostgreSQL and Redis")
    return value


def redis_reachable(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


# -- the client side of the tasks extension, on the SDK's extension interface --------------


class TaskHandle(Result):
    """The ``CreateTaskResult`` a long-running tool answers with."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str


class TaskParams(Result):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    task_id: str = Field(alias="taskId")


class TaskRequest(Request[TaskParams, str]):
    """``tasks/get`` or ``tasks/cancel``: routed by the task id (``Mcp-Name``)."""

    name_param: ClassVar[str | None] = "taskId"


async def task_request(ctx_session: Any, method: str, task_id: str) -> dict[str, Any]:
    request = TaskRequest(method=method, params=TaskParams(taskId=task_id))
    answer: dict[str, Any] = await ctx_session.send_request(request, ANSWER)
    return answer


@dataclass
class Tasks(ClientExtension):
    """Declares the extension; polls each task to its end and returns its result."""

    identifier = EXTENSION
    created: list[str] = field(default_factory=list)
    polls: dict[str, list[str]] = field(default_factory=dict)

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        self.created.append(handle.task_id)
        seen = self.polls.setdefault(handle.task_id, [])
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            task = await task_request(ctx.session, "tasks/get", handle.task_id)
            seen.append(task["status"])
            if task["status"] == "completed":
                return CallToolResult.model_validate(task["result"])
            if task["status"] in TERMINAL:
                text = f"task {task['status']}: {task.get('error', {}).get('message', '')}"
                return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
            await anyio.sleep(0.1)
        raise AssertionError(f"task {handle.task_id} did not end: {seen[-5:]}")


# -- the deployment ------------------------------------------------------------------------


@dataclass
class Deployment:
    server: UvicornServer
    worker: TaskWorker
    key: str
    project: int

    @property
    def url(self) -> str:
        return self.server.url("/mcp")

    def sql(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        """Straight to the deployment's database: far quicker than a ``manage.py`` process."""
        import psycopg

        with psycopg.connect(self.server.env["DATABASE_URL"], autocommit=True) as db:
            cursor = db.execute(query, args)
            return cursor.fetchall() if cursor.description else []

    def task_row(self, task_id: str) -> dict[str, Any]:
        [(status, result, error, message)] = self.sql(
            "SELECT status, result, error, status_message FROM mcp_endpoint_tooltask WHERE id = %s",
            task_id,
        )
        return {"status": status, "result": result, "error": error, "message": message}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    require("DATABASE_URL")
    redis_url = require("REDIS_URL")
    if not redis_reachable(redis_url):
        missing(f"Redis at REDIS_URL does not answer ({redis_url})")
    workdir = tmp_path_factory.mktemp("tasks-live")
    env = {
        "DEMO_EXPORT_PACE_SECONDS": PACE,
        "DEMO_MCP_SESSIONS": "0",
        "DEMO_TASK_HEARTBEAT_MS": HEARTBEAT_MS,
    }
    with UvicornServer(workdir, workers=2, env=env) as server, TaskWorker(server) as worker:
        out = manage(
            server.env,
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model\n"
            "from project.tracker.models import Project, Task\n"
            "user = get_user_model().objects.create_user('exporter', password='pw-exp-12345')\n"
            "p = Project.objects.create(name='Export me', owner=user)\n"
            f"Task.objects.bulk_create([Task(project=p, title=f'T{{i}}') for i in range({ROWS})])\n"
            "print(p.pk)\n",
        )
        project = int(out.strip().splitlines()[-1])
        key = create_key(server.env, "exporter", "read write")
        yield Deployment(server, worker, key, project)


def run(
    deployment: Deployment,
    scenario: Callable[[Client, Tasks], Awaitable[None]],
    key: str | None = None,
) -> Tasks:
    tasks = Tasks()

    async def main() -> None:
        headers = {"Authorization": f"Bearer {key or deployment.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(deployment.url, http_client=http)
            async with Client(transport, mode="2026-07-28", extensions=[tasks]) as client:
                await scenario(client, tasks)

    try:
        anyio.run(main)
    except BaseException as exc:
        raise AssertionError(
            f"{exc!r}\nserver:\n{deployment.server.log_tail(30)}\n"
            f"worker:\n{deployment.worker.log_tail(30)}"
        ) from exc
    return tasks


async def wait_for_task(tasks: Tasks) -> str:
    with anyio.fail_after(PATIENCE):
        while not tasks.created:
            await anyio.sleep(0.05)
    return tasks.created[-1]


# -- the tests -----------------------------------------------------------------------------


def test_the_export_runs_as_a_task_on_the_worker_and_is_polled_to_its_csv(
    deployment: Deployment,
) -> None:
    results: list[CallToolResult] = []

    async def scenario(client: Client, tasks: Tasks) -> None:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "export_project_tasks" in tools
        results.append(
            await client.call_tool("export_project_tasks", {"project_id": deployment.project})
        )

    tasks = run(deployment, scenario)
    [task_id] = tasks.created
    polls = tasks.polls[task_id]
    assert polls[0] == "working" and polls[-1] == "completed", polls
    [result] = results
    assert not result.is_error
    csv = result.content[0].resource.text  # type: ignore[union-attr]
    lines = csv.splitlines()
    assert lines[0] == "id,title,status,priority,due,assignee"
    assert len(lines) == 1 + ROWS
    row = deployment.task_row(task_id)
    assert row["status"] == "completed" and row["error"] is None


def test_a_cancelled_export_settles_on_cancelled_and_keeps_no_result(
    deployment: Deployment,
) -> None:
    outcome: dict[str, Any] = {}

    async def scenario(client: Client, tasks: Tasks) -> None:
        async with anyio.create_task_group() as group:

            async def export() -> None:
                outcome["result"] = await client.call_tool(
                    "export_project_tasks", {"project_id": deployment.project}
                )

            group.start_soon(export)
            task_id = await wait_for_task(tasks)
            with anyio.fail_after(PATIENCE):
                while "working" not in tasks.polls.get(task_id, []):
                    await anyio.sleep(0.05)
            ack = await task_request(client.session, "tasks/cancel", task_id)
            outcome["ack"] = ack

    tasks = run(deployment, scenario)
    [task_id] = tasks.created
    assert outcome["ack"]["resultType"] == "complete" and "status" not in outcome["ack"]
    assert tasks.polls[task_id][-1] == "cancelled"
    assert outcome["result"].is_error
    row = deployment.task_row(task_id)
    assert row["status"] == "cancelled" and row["result"] is None


def test_a_task_whose_key_is_revoked_while_it_runs_stops_without_committing(
    deployment: Deployment,
) -> None:
    key = create_key(deployment.server.env, "exporter", "read")
    started: dict[str, str] = {}

    async def scenario(client: Client, tasks: Tasks) -> None:
        handle = await client.session.call_tool(
            "export_project_tasks", {"project_id": deployment.project}, allow_claimed=True
        )
        assert isinstance(handle, TaskHandle)
        started["id"] = handle.task_id

    run(deployment, scenario, key=key)
    task_id = started["id"]
    # The worker reports progress once it runs; then the key is revoked.
    deadline = time.monotonic() + PATIENCE
    while not deployment.task_row(task_id)["message"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert deployment.task_row(task_id)["status"] == "working"
    # As the admin's "revoke" does, from another process, while the worker runs the task
    # (through the model, so that every worker's memory of the key hears of it).
    manage(
        deployment.server.env,
        "shell",
        "-c",
        "from mcp_endpoint.models import APIKey, ToolTask\n"
        f"task = ToolTask.objects.get(id={task_id!r})\n"
        "APIKey.objects.get(id=task.credential_id).revoke()",
    )
    deadline = time.monotonic() + PATIENCE
    while deployment.task_row(task_id)["status"] == "working" and time.monotonic() < deadline:
        time.sleep(0.2)
    row = deployment.task_row(task_id)
    assert row["status"] == "failed", row
    assert row["result"] is None
    assert row["error"]["code"] == -32001

    async def poll(client: Client, tasks: Tasks) -> None:
        await task_request(client.session, "tasks/get", task_id)

    # The revoked key cannot poll either: its requests are refused before any method.
    with pytest.raises(AssertionError, match=r"401"):
        run(deployment, poll, key=key)


# -- a worker that dies, and a database that goes away --------------------------------------


@contextmanager
def own_worker(deployment: Deployment, env: dict[str, str] | None = None) -> Iterator[TaskWorker]:
    """A worker of the test's own in place of the deployment's, which is back afterwards."""
    deployment.worker.stop()
    worker = TaskWorker(deployment.server, env=env)
    try:
        with worker:
            yield worker
    finally:
        deployment.worker.start()


def start_export(deployment: Deployment) -> str:
    """Start an export as a task; its id once the worker runs it (it reported progress)."""
    started: dict[str, str] = {}

    async def scenario(client: Client, tasks: Tasks) -> None:
        handle = await client.session.call_tool(
            "export_project_tasks", {"project_id": deployment.project}, allow_claimed=True
        )
        assert isinstance(handle, TaskHandle)
        started["id"] = handle.task_id

    run(deployment, scenario)
    task_id = started["id"]
    deadline = time.monotonic() + PATIENCE
    while not deployment.task_row(task_id)["message"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert deployment.task_row(task_id)["status"] == "working"
    return task_id


def poll_to_the_end(deployment: Deployment, task_id: str) -> dict[str, Any]:
    """``tasks/get`` until the task has ended (within PATIENCE); its last answer."""
    answers: list[dict[str, Any]] = []

    async def scenario(client: Client, tasks: Tasks) -> None:
        with anyio.fail_after(PATIENCE):
            while True:
                answers.append(await task_request(client.session, "tasks/get", task_id))
                if answers[-1]["status"] in TERMINAL:
                    return
                await anyio.sleep(0.2)

    run(deployment, scenario)
    return answers[-1]


def test_a_task_whose_worker_is_killed_is_reported_failed_after_a_restart(
    deployment: Deployment,
) -> None:
    with own_worker(deployment) as worker:
        task_id = start_export(deployment)
        worker.kill()
        worker.start()
        task = poll_to_the_end(deployment, task_id)
        assert task["status"] == "failed", task
        assert task["error"]["message"] == LOST
        assert "result" not in task
        assert worker.alive()
        # The next run on the restarted worker ends as it should, and after it the
        # backend's own row of the killed run says it failed too.
        results: list[CallToolResult] = []

        async def scenario(client: Client, tasks: Tasks) -> None:
            results.append(
                await client.call_tool("export_project_tasks", {"project_id": deployment.project})
            )

        run(deployment, scenario)
        assert not results[0].is_error, results
        [(status,)] = deployment.sql(
            "SELECT status FROM django_tasks_database_dbtaskresult WHERE id::text = "
            "(SELECT job FROM mcp_endpoint_tooltask WHERE id = %s)",
            task_id,
        )
        assert status == "FAILED", worker.log_tail()


def test_the_worker_outlives_a_database_outage_and_no_task_stays_working(
    deployment: Deployment,
) -> None:
    url = urlsplit(deployment.server.env["DATABASE_URL"])
    with TcpProxy((url.hostname or "127.0.0.1", url.port or 5432)) as proxy:
        user = url.netloc.rpartition("@")[0]
        through = urlunsplit(url._replace(netloc=f"{user}@127.0.0.1:{proxy.port}"))
        with own_worker(deployment, {"DATABASE_URL": through}) as worker:
            task_id = start_export(deployment)
            proxy.cut()
            # The outage lasts this long: what is under test is what comes after it.
            time.sleep(OUTAGE_SECONDS)
            assert deployment.task_row(task_id)["status"] == "working"
            proxy.restore()
            task = poll_to_the_end(deployment, task_id)
            assert task["status"] in {"failed", "completed"}, task
            assert worker.alive(), worker.log_tail()
            # And it goes on: the next export runs on it to the end.
            results: list[CallToolResult] = []

            async def scenario(client: Client, tasks: Tasks) -> None:
                results.append(
                    await client.call_tool(
                        "export_project_tasks", {"project_id": deployment.project}
                    )
                )

            run(deployment, scenario)
            assert not results[0].is_error, results
            assert worker.alive()
