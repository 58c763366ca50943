"""OpenTelemetry for tools run as tasks: the worker's tool span is in the creating request's trace.

The task is created through the real URL on the database task backend and run by
``manage.py mcp_task_worker`` (in this process, in batch mode, so that its spans reach the
SDK's in-memory exporter), and by the Celery backend's task.
"""

from __future__ import annotations

import io
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from opentelemetry import trace

from mcp_endpoint import task_recovery
from mcp_endpoint.models import ToolTask
from mcp_endpoint.tasks import run_tool_task
from project.tracker.models import Project
from tests.conftest import MCPClient
from tests.test_modern import meta, result_of
from tests.test_tasks import TASKS, TaskClient
from tests.test_tracing import (
    CLIENT_SPAN,
    CLIENT_TRACE,
    HEADER_SPAN,
    HEADER_TRACE,
    TRACEPARENT,
    hex_trace,
    named,
    spans,
)

__all__ = ["spans"]  # the fixture, shared with tests/test_tracing.py

pytestmark = pytest.mark.django_db(transaction=True)

EXPORT = "export_project_tasks"


@pytest.fixture
def database_backend(settings: Any) -> Iterator[None]:
    """The demo's task backend, with a worker of it seen (the extension is announced); the
    worker's signal handlers are put back as they were after the test."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    task_recovery.worker_alive("default", "tests:1")
    names = [signal.SIGINT, signal.SIGTERM] + (
        [signal.SIGQUIT] if hasattr(signal, "SIGQUIT") else []
    )
    handlers = {name: signal.getsignal(name) for name in names}
    yield
    for name, handler in handlers.items():
        signal.signal(name, handler)


def create_export(
    mcp_client: Callable[..., MCPClient], key: str, project: Project, **extra_meta: Any
) -> str:
    client = TaskClient(mcp_client(key))
    params = {
        "name": EXPORT,
        "arguments": {"project_id": project.pk},
        "_meta": meta(TASKS, **extra_meta),
    }
    created = result_of(client.post("tools/call", params, capabilities=TASKS))
    assert created["resultType"] == "task" and created["status"] == "working"
    task_id: str = created["taskId"]
    return task_id


def run_worker() -> None:
    """``manage.py mcp_task_worker --batch``: the database backend's worker runs every task
    queued, in this process, then stops."""
    call_command(
        "mcp_task_worker", "--batch", "--no-startup-delay", "--interval", "0", stdout=io.StringIO()
    )


def completed(task_id: str) -> ToolTask:
    task = ToolTask.objects.get(pk=task_id)
    assert task.status == "completed", (task.status, task.error)
    return task


def test_the_workers_tool_span_is_a_child_of_the_creating_message_span(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Project,
    database_backend: None,
    spans: Any,
) -> None:
    task_id = create_export(mcp_client, alice_key, project, traceparent=TRACEPARENT)
    message = named(spans(), f"tools/call {EXPORT}")
    assert hex_trace(message) == CLIENT_TRACE
    assert format(message.parent.span_id, "016x") == CLIENT_SPAN  # type: ignore[union-attr]
    assert not [s for s in spans() if s.name.startswith("execute_tool")]  # not run yet
    stored = ToolTask.objects.get(pk=task_id).origin["trace"]
    assert message.context is not None
    assert stored["traceparent"] == f"00-{CLIENT_TRACE}-{message.context.span_id:016x}-01"

    tracer = trace.get_tracer("tests.sql")

    def traced_query(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        with tracer.start_as_current_span("SQL"):
            return execute(sql, params, many, context)

    with connection.execute_wrapper(traced_query):
        run_worker()
    completed(task_id)
    finished = spans()
    run = named(finished, f"execute_tool {EXPORT}")
    assert run.kind == trace.SpanKind.INTERNAL
    assert hex_trace(run) == CLIENT_TRACE
    assert run.parent is not None and run.parent.is_remote
    assert run.parent.span_id == message.context.span_id
    # And linked, as a consumer's span links the message it processes.
    assert [link.context.span_id for link in run.links] == [message.context.span_id]
    assert dict(run.attributes or {})["gen_ai.tool.name"] == EXPORT
    # The viewset's queries on the worker nest under the tool's span, in the same trace.
    assert run.context is not None
    under = [s for s in finished if s.parent and s.parent.span_id == run.context.span_id]
    assert under and all(hex_trace(s) == CLIENT_TRACE for s in under)


def test_a_task_without_trace_context_runs_in_a_trace_of_its_own(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Project,
    database_backend: None,
    spans: Any,
) -> None:
    task_id = create_export(mcp_client, alice_key, project)
    message = named(spans(), f"tools/call {EXPORT}")
    # As a task created before its trace context was kept, or with OpenTelemetry off then.
    task = ToolTask.objects.get(pk=task_id)
    assert "trace" in task.origin
    del task.origin["trace"]
    task.save(update_fields=["origin"])
    run_worker()
    completed(task_id)
    run = named(spans(), f"execute_tool {EXPORT}")
    assert run.parent is None and run.links == ()
    assert hex_trace(run) != hex_trace(message)


@pytest.mark.parametrize(
    "kept",
    [
        {"traceparent": "00-nonsense-01", "tracestate": 5},
        {"traceparent": f"00-{'0' * 32}-{CLIENT_SPAN}-01"},  # an invalid (all-zero) trace id
        {"traceparent": [TRACEPARENT]},  # not a string
        "00-not-a-dict",
        None,
    ],
)
def test_malformed_kept_trace_context_is_ignored(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Project,
    database_backend: None,
    spans: Any,
    kept: Any,
) -> None:
    task_id = create_export(mcp_client, alice_key, project)
    task = ToolTask.objects.get(pk=task_id)
    task.origin["trace"] = kept
    task.save(update_fields=["origin"])
    run_worker()
    completed(task_id)
    run = named(spans(), f"execute_tool {EXPORT}")
    assert run.parent is None and run.links == ()


def test_a_task_from_a_request_with_trace_context_in_its_header(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Project,
    database_backend: None,
    spans: Any,
) -> None:
    header_trace = "0af7651916cd43dd8448eb211c80319c"
    client = TaskClient(mcp_client(alice_key))
    params = {"name": EXPORT, "arguments": {"project_id": project.pk}}
    headers = {"traceparent": f"00-{header_trace}-b7ad6b7169203331-01"}
    created = result_of(client.post("tools/call", params, capabilities=TASKS, headers=headers))
    run_worker()
    completed(created["taskId"])
    run = named(spans(), f"execute_tool {EXPORT}")
    message = named(spans(), f"tools/call {EXPORT}")
    assert hex_trace(run) == hex_trace(message) == header_trace
    assert message.context is not None and run.parent is not None
    assert run.parent.span_id == message.context.span_id


def test_a_span_current_on_the_worker_is_linked(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Project,
    database_backend: None,
    spans: Any,
) -> None:
    """A task framework's own instrumentation may open a span around the run: the creating
    message stays the parent, and that span is a link."""
    task_id = create_export(mcp_client, alice_key, project, traceparent=TRACEPARENT)
    message = named(spans(), f"tools/call {EXPORT}")
    with trace.get_tracer("tests.worker").start_as_current_span("process task") as around:
        run_worker()
    completed(task_id)
    run = named(spans(), f"execute_tool {EXPORT}")
    assert message.context is not None and run.parent is not None
    assert run.parent.span_id == message.context.span_id
    linked = [link.context.span_id for link in run.links]
    assert linked == [message.context.span_id, around.get_span_context().span_id]


def test_the_celery_backends_task_runs_in_the_creating_trace(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Project,
    database_backend: None,
    spans: Any,
) -> None:
    """What a Celery worker runs for a task (``mcp_endpoint.celery.run``, applied here in
    this process) gives the same span as the database backend's worker."""
    celery = pytest.importorskip("mcp_endpoint.celery")
    task_id = create_export(mcp_client, alice_key, project, traceparent=TRACEPARENT)
    message = named(spans(), f"tools/call {EXPORT}")
    celery.run.apply(args=[run_tool_task.module_path, [task_id], {}]).get()
    completed(task_id)
    run = named(spans(), f"execute_tool {EXPORT}")
    assert message.context is not None and run.parent is not None
    assert hex_trace(run) == CLIENT_TRACE
    assert run.parent.span_id == message.context.span_id


def test_a_run_started_by_tasks_update_links_to_that_message(
    mcp_client: Callable[..., MCPClient], database_backend: None, spans: Any
) -> None:
    from tests.test_modern import FIXTURE
    from tests.test_tasks import ELICIT

    client = TaskClient(mcp_client(None, FIXTURE))
    params = {
        "name": "multi_input",
        "arguments": {},
        "_meta": meta(ELICIT, traceparent=TRACEPARENT),
    }
    task_id = result_of(client.post("tools/call", params, capabilities=ELICIT))["taskId"]
    run_worker()
    assert client.get(task_id, caps=ELICIT)["status"] == "input_required"
    created = named(spans(), "tools/call multi_input")
    # Answered from another trace: the client's update is a message of its own.
    update_trace, update_span = HEADER_TRACE, HEADER_SPAN
    answer = {"action": "accept", "content": {"name": "Ada"}}
    params = {
        "taskId": task_id,
        "inputResponses": {"first": answer, "second": answer},
        "_meta": meta(ELICIT, traceparent=f"00-{update_trace}-{update_span}-01"),
    }
    result_of(client.post("tasks/update", params, capabilities=ELICIT))
    update = named(spans(), "tasks/update")
    assert hex_trace(update) == update_trace
    run_worker()
    assert client.get(task_id, caps=ELICIT)["status"] == "completed"
    runs = [s for s in spans() if s.name == "execute_tool multi_input"]
    assert len(runs) == 2
    rerun = runs[-1]
    assert created.context is not None and update.context is not None
    # Still in the creating request's trace, and linked to both messages.
    assert hex_trace(rerun) == CLIENT_TRACE
    assert rerun.parent is not None and rerun.parent.span_id == created.context.span_id
    assert [link.context.span_id for link in rerun.links] == [
        created.context.span_id,
        update.context.span_id,
    ]
    # The first run, started by no update, links to the creating message alone.
    assert [link.context.span_id for link in runs[0].links] == [created.context.span_id]
