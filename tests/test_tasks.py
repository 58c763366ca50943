"""The tasks extension through the real URL, with the task backend running tasks at once.

The suite's settings use the framework's immediate backend, so a task has run by the time
``tools/call`` answers; ``tests/test_tasks_live.py`` runs the same on a real worker.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from datetime import timedelta
from importlib.util import find_spec
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.utils import timezone
from django.utils.module_loading import import_string

from mcp_endpoint import site, task_recovery
from mcp_endpoint.checks import (
    check_setting_values,
    check_settings,
    check_task_worker_seen,
    check_task_workers,
    check_tasks,
)
from mcp_endpoint.conf import SETTINGS_BY_NAME
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.models import APIKey, TaskWorker, ToolCall, ToolTask
from mcp_endpoint.protocol.tasks import EXTENSION
from mcp_endpoint.tasks import NARROWED, REVOKED, run_tool_task
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key
from tests.test_modern import FIXTURE, Modern, error_of, result_of

pytestmark = pytest.mark.django_db

TASKS = {"extensions": {EXTENSION: {}}}
ELICIT = {"elicitation": {}, **TASKS}
DUMMY_BACKEND = (
    "django.tasks.backends.dummy.DummyBackend"
    if find_spec("django.tasks") is not None
    else "django_tasks.backends.dummy.DummyBackend"
)

HostImmediateBackend = type(
    "HostImmediateBackend",
    (import_string(str(django_settings.TASKS["default"]["BACKEND"])),),
    {"__doc__": "A host's subclass of the immediate backend: still in the web worker.",
     "__module__": __name__},
)  # fmt: skip


class TaskClient(Modern):
    """A 2026-07-28 client that routes tasks/* by task id, as the transport asks."""

    def post(self, method: str, params: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        if method.startswith("tasks/") and params and isinstance(params.get("taskId"), str):
            headers = {"Mcp-Name": params["taskId"], **(kwargs.pop("headers", None) or {})}
            kwargs["headers"] = headers
        return super().post(method, params, **kwargs)

    def call(self, name: str, arguments: dict[str, Any], caps: Any = TASKS) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        return result_of(self.post("tools/call", params, capabilities=caps))

    def get(self, task_id: str, caps: Any = TASKS) -> dict[str, Any]:
        return result_of(self.post("tasks/get", {"taskId": task_id}, capabilities=caps))


@pytest.fixture
def fixture_tasks(mcp_client: Callable[..., MCPClient]) -> TaskClient:
    return TaskClient(mcp_client(None, FIXTURE))


@pytest.fixture
def demo(mcp_client: Callable[..., MCPClient], alice_key: str, project: Project) -> TaskClient:
    return TaskClient(mcp_client(alice_key))


# -- negotiation --------------------------------------------------------------------------


def test_discover_advertises_the_extension_under_extensions(fixture_tasks: TaskClient) -> None:
    capabilities = result_of(fixture_tasks.post("server/discover"))["capabilities"]
    assert capabilities["extensions"][EXTENSION] == {}
    assert "tasks" not in capabilities


def test_an_endpoint_without_long_running_tools_has_no_task_engine() -> None:
    endpoint = Endpoint("no-tasks")
    endpoint.tool(name="quick")(lambda: "done")
    assert endpoint.features.task_engine() is None
    endpoint.tool(name="slow", task_support="optional")(lambda: "done")
    assert endpoint.features.task_engine() is not None


def test_a_client_without_the_extension_gets_the_result_at_once(fixture_tasks: TaskClient) -> None:
    result = fixture_tasks.call("slow_compute", {"seconds": 0, "label": "x"}, caps={})
    assert result["resultType"] == "complete"
    assert "taskId" not in result
    assert result["content"][0]["text"] == "Computed x after 0 s"


def test_a_tool_that_runs_only_as_a_task_needs_the_extension(fixture_tasks: TaskClient) -> None:
    params = {"name": "failing_job", "arguments": {}}
    response = fixture_tasks.post("tools/call", params, capabilities={})
    error = error_of(response, 400, -32021, fixture_tasks.next_id)
    assert error["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
def test_tasks_methods_need_the_extension(fixture_tasks: TaskClient, method: str) -> None:
    params: dict[str, Any] = {"taskId": "gate", "inputResponses": {}}
    error = error_of(fixture_tasks.post(method, params), 400, -32021, fixture_tasks.next_id)
    assert error["data"]["requiredCapabilities"]["extensions"] == {EXTENSION: {}}


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
def test_removed_methods_are_unknown(fixture_tasks: TaskClient, method: str) -> None:
    response = fixture_tasks.post(method, {"taskId": "x"}, capabilities=TASKS)
    error_of(response, 404, -32601, fixture_tasks.next_id)


def test_legacy_requests_have_no_tasks_methods(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    response = mcp_client(alice_key).request("tasks/get", {"taskId": "x"})
    assert response.json()["error"]["code"] == -32601


# -- the task envelope and its life ---------------------------------------------------------


def test_a_task_is_created_flat_and_polled_to_its_result(fixture_tasks: TaskClient) -> None:
    created = fixture_tasks.call("slow_compute", {"seconds": 0, "label": "flat"})
    assert created["resultType"] == "task"
    assert {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(
        created
    )
    assert not {"task", "result", "error", "inputRequests", "requestState", "ttl"} & set(created)
    assert created["ttlMs"] == 3_600_000 and created["pollIntervalMs"] == 1000
    task = fixture_tasks.get(created["taskId"])
    assert task["resultType"] == "complete"
    assert task["status"] == "completed"
    assert task["result"]["content"][0]["text"] == "Computed flat after 0 s"
    assert "io.modelcontextprotocol/related-task" not in task["result"].get("_meta", {})


def test_a_tool_error_completes_the_task(fixture_tasks: TaskClient) -> None:
    created = fixture_tasks.call("failing_job", {})
    task = fixture_tasks.get(created["taskId"])
    assert task["status"] == "completed"
    assert task["result"]["isError"] is True


def test_a_protocol_error_fails_the_task(fixture_tasks: TaskClient) -> None:
    task = fixture_tasks.get(fixture_tasks.call("protocol_error_job", {})["taskId"])
    assert task["status"] == "failed"
    assert task["error"] == {"code": -32603, "message": "The job broke down"}
    assert "result" not in task


def test_input_requests_wait_until_every_one_is_answered(fixture_tasks: TaskClient) -> None:
    task_id = fixture_tasks.call("multi_input", {}, caps=ELICIT)["taskId"]
    task = fixture_tasks.get(task_id, caps=ELICIT)
    assert task["status"] == "input_required"
    assert set(task["inputRequests"]) == {"first", "second"}
    assert task["inputRequests"]["first"]["method"] == "elicitation/create"

    def update(responses: dict[str, Any]) -> dict[str, Any]:
        params = {"taskId": task_id, "inputResponses": responses}
        return result_of(fixture_tasks.post("tasks/update", params, capabilities=ELICIT))

    answer = {"action": "accept", "content": {"name": "Ada"}}
    ack = update({"first": answer, "unknown": {"ignored": True}})
    assert {k: v for k, v in ack.items() if k != "_meta"} == {"resultType": "complete"}
    task = fixture_tasks.get(task_id, caps=ELICIT)
    assert task["status"] == "input_required"
    assert set(task["inputRequests"]) == {"second"}
    update({"second": {"action": "accept", "content": {"name": "Grace"}}})
    task = fixture_tasks.get(task_id, caps=ELICIT)
    assert task["status"] == "completed"
    assert task["result"]["content"][0]["text"] == "Got Ada and Grace"


def test_cancel_acknowledges_and_settles_on_cancelled(fixture_tasks: TaskClient) -> None:
    task_id = fixture_tasks.call("confirm_delete", {"filename": "a.txt"}, caps=ELICIT)["taskId"]
    ack = result_of(fixture_tasks.post("tasks/cancel", {"taskId": task_id}, capabilities=TASKS))
    assert not {"taskId", "status", "result", "error", "inputRequests"} & set(ack)
    assert ack["resultType"] == "complete"
    task = fixture_tasks.get(task_id)
    assert task["status"] == "cancelled"
    assert "inputRequests" not in task
    # A terminal task stays as it is, and is acknowledged alike.
    result_of(fixture_tasks.post("tasks/cancel", {"taskId": task_id}, capabilities=TASKS))
    assert fixture_tasks.get(task_id)["status"] == "cancelled"


def test_input_asked_before_the_task_is_answered_in_the_same_request(
    fixture_tasks: TaskClient,
) -> None:
    first = fixture_tasks.call("test_tool_with_task", {}, caps=ELICIT)
    assert first["resultType"] == "input_required" and "taskId" not in first
    params = {
        "name": "test_tool_with_task",
        "arguments": {},
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
        "requestState": first["requestState"],
    }
    created = result_of(fixture_tasks.post("tools/call", params, capabilities=ELICIT))
    assert created["resultType"] == "task" and "requestState" not in created
    task = fixture_tasks.get(created["taskId"], caps=ELICIT)
    assert task["result"]["content"][0]["text"] == "Hello, Alice!"


# -- malformed requests --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {}),
        ("tasks/get", {"taskId": 7}),
        ("tasks/get", {"taskId": ""}),
        ("tasks/cancel", {"taskId": None}),
        ("tasks/update", {"taskId": "t"}),
        ("tasks/update", {"taskId": "t", "inputResponses": []}),
        ("tasks/update", {"taskId": "t", "inputResponses": {"k": "yes"}}),
        ("tasks/get", {"taskId": "no-such-task"}),
        ("tasks/cancel", {"taskId": "no-such-task"}),
        ("tasks/update", {"taskId": "no-such-task", "inputResponses": {}}),
    ],
)
def test_malformed_or_unknown_task_requests_are_invalid_params(
    fixture_tasks: TaskClient, method: str, params: dict[str, Any]
) -> None:
    headers = {"Mcp-Name": str(params.get("taskId"))}
    response = fixture_tasks.post(method, params, capabilities=TASKS, headers=headers)
    error_of(response, 400, -32602, fixture_tasks.next_id)


def test_the_task_id_header_must_match_the_body(fixture_tasks: TaskClient) -> None:
    task_id = fixture_tasks.call("slow_compute", {"seconds": 0})["taskId"]
    response = fixture_tasks.post(
        "tasks/get", {"taskId": task_id}, capabilities=TASKS, headers={"Mcp-Name": "other"}
    )
    assert error_of(response, 400, -32020, fixture_tasks.next_id)["data"] == {"header": "Mcp-Name"}


# -- the demo's export, and whose tasks are whose ------------------------------------------


def test_the_export_runs_as_a_task_with_its_progress(demo: TaskClient, project: Project) -> None:
    created = demo.call("export_project_tasks", {"project_id": project.pk})
    task = demo.get(created["taskId"])
    assert task["status"] == "completed"
    resource = task["result"]["content"][0]["resource"]
    assert resource["mimeType"] == "text/csv"
    lines = resource["text"].splitlines()
    assert lines[0] == "id,title,status,priority,due,assignee"
    assert len(lines) == 1 + Task.objects.filter(project=project).count()
    row = ToolTask.objects.get(pk=created["taskId"])
    assert row.user == project.owner and row.credential_kind == "api_key"
    # The call log has the task's call, as it has any other.
    logged = ToolCall.objects.get(tool="export_project_tasks")
    assert logged.user == project.owner and logged.outcome == "ok"


def test_the_export_answers_at_once_without_the_extension(
    demo: TaskClient, project: Project
) -> None:
    result = demo.call("export_project_tasks", {"project_id": project.pk}, caps={})
    assert result["resultType"] == "complete"
    assert result["content"][0]["resource"]["text"].startswith("id,title")


def test_only_the_creating_credential_sees_its_task(
    demo: TaskClient,
    project: Project,
    bob: Any,
    alice: Any,
    mcp_client: Callable[..., MCPClient],
) -> None:
    task_id = demo.call("export_project_tasks", {"project_id": project.pk})["taskId"]
    for key in (make_key(bob), make_key(alice)):
        other = TaskClient(mcp_client(key))
        for method in ("tasks/get", "tasks/cancel"):
            error_of(other.post(method, {"taskId": task_id}, capabilities=TASKS), 400, -32602,
                     other.next_id)  # fmt: skip
    assert demo.get(task_id)["status"] == "completed"


def test_a_revoked_credential_stops_its_tasks_calls(
    demo: TaskClient, project: Project, mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    task_id = demo.call("export_project_tasks", {"project_id": project.pk})["taskId"]
    APIKey.objects.get_for_raw_key(alice_key).revoke()  # type: ignore[union-attr]
    response = demo.post("tasks/get", {"taskId": task_id}, capabilities=TASKS)
    assert response.status_code == 401


def test_a_task_whose_key_was_revoked_before_it_ran_fails_without_running(
    demo: TaskClient, project: Project, alice_key: str
) -> None:
    task_id = demo.call("export_project_tasks", {"project_id": project.pk})["taskId"]
    # As if the worker got to it only now: back to working, never started, key revoked.
    ToolTask.objects.filter(pk=task_id).update(status="working", result=None, heartbeat=None)
    APIKey.objects.get_for_raw_key(alice_key).revoke()  # type: ignore[union-attr]
    run_tool_task.call(task_id)
    row = ToolTask.objects.get(pk=task_id)
    assert row.status == "failed"
    assert row.error == {"code": -32001, "message": REVOKED}
    assert row.result is None


@pytest.mark.urls("tests.urls_testing")
def test_a_key_revoked_while_the_task_runs_keeps_nothing_it_did(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    client = TaskClient(mcp_client(alice_key, "/test-mcp"))
    created = client.call("name_project_then_revoke", {"name": "Never kept"})
    row = ToolTask.objects.get(pk=created["taskId"])
    assert row.status == "failed"
    assert row.error == {"code": -32001, "message": REVOKED}
    assert row.result is None
    assert not Project.objects.filter(name="Never kept").exists()


@pytest.mark.urls("tests.urls_testing")
def test_a_key_that_loses_the_tools_scope_while_it_runs_gets_nothing(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    client = TaskClient(mcp_client(alice_key, "/test-mcp"))
    task_id = client.call("read_then_lose_read", {})["taskId"]
    row = ToolTask.objects.get(pk=task_id)
    assert row.status == "failed"
    assert row.error["message"] == NARROWED
    assert row.result is None
    # Its key, now write-only, reads nothing of the task either.
    response = client.post("tasks/get", {"taskId": task_id}, capabilities=TASKS)
    assert "nobody may read" not in response.content.decode()


@pytest.mark.urls("tests.urls_testing")
def test_a_task_whose_commit_is_lost_does_not_stay_working(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    from django.db import connection

    from tests.test_tool_errors import LostAtCommit

    client = TaskClient(mcp_client(alice_key, "/test-mcp"))
    lost = LostAtCommit(connection)
    with connection.execute_wrapper(lost):
        task_id = client.call("name_project_as_task", {"name": "Maybe kept"})["taskId"]
    assert lost.fired == 1
    task = client.get(task_id)
    # Its outcome was written in the transaction that was lost: not kept, and said so.
    assert task["status"] == "failed", task
    assert "nothing was kept" in task["error"]["message"]
    assert not Project.objects.filter(name="Maybe kept").exists()


@pytest.mark.urls("tests.urls_testing")
def test_a_user_made_inactive_while_the_task_runs_gets_nothing(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    client = TaskClient(mcp_client(alice_key, "/test-mcp"))
    task_id = client.call("read_then_deactivate", {})["taskId"]
    row = ToolTask.objects.get(pk=task_id)
    assert row.status == "failed"
    assert row.error == {"code": -32001, "message": REVOKED}
    assert row.result is None
    response = client.post("tasks/get", {"taskId": task_id}, capabilities=TASKS)
    assert response.status_code == 401
    assert "user who left" not in response.content.decode()


def test_a_finished_task_is_not_read_by_a_key_narrowed_since(
    demo: TaskClient, project: Project, alice_key: str
) -> None:
    task_id = demo.call("export_project_tasks", {"project_id": project.pk})["taskId"]
    assert demo.get(task_id)["status"] == "completed"
    key = APIKey.objects.get_for_raw_key(alice_key)
    assert key is not None
    key.scope = "write"
    key.save(update_fields=["scope"])
    response = demo.post("tasks/get", {"taskId": task_id}, capabilities=TASKS)
    error = error_of(response, response.status_code, -32000, demo.next_id)
    assert error["data"]["code"] == "insufficient_scope"
    assert error["data"]["required_scopes"] == ["read"]
    assert "result" not in response.content.decode()
    # The REST view the export stands for refuses the same key the same way.
    rest = demo.rpc.client.get(
        f"/api/tasks/?project={project.pk}", headers={"Authorization": f"Bearer {alice_key}"}
    )
    assert rest.status_code == 403


@pytest.mark.urls("tests.urls_drf_testing")
def test_a_viewset_action_runs_as_a_task_with_the_callers_rights(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Project
) -> None:
    client = TaskClient(mcp_client(alice_key, "/drf-mcp"))
    at_once = client.call("browse_notes", {}, caps={})
    created = client.call("browse_notes", {})
    assert created["resultType"] == "task"
    row = ToolTask.objects.get(pk=created["taskId"])
    assert row.authenticator == "mcp_endpoint.authentication.APIKeyAuthentication"
    # (With OpenTelemetry the origin also keeps the trace context: tests/test_tracing_tasks.py.)
    assert {k: v for k, v in row.origin.items() if k != "trace"} == {
        "host": "testserver", "scheme": "http", "script_name": "", "remote_addr": "127.0.0.1"
    }  # fmt: skip
    task = client.get(created["taskId"])
    assert task["status"] == "completed"
    at_once.pop("_meta")
    assert task["result"] == {k: v for k, v in at_once.items() if k != "resultType"}


def test_an_unknown_action_marked_long_running_is_e020() -> None:
    from mcp_endpoint.rest_framework import register_viewset
    from tests.urls_drf_testing import NoteViewSet

    endpoint = Endpoint("throwaway-checks-tasks-drf")
    registration = register_viewset(endpoint, NoteViewSet, task_support={"export": "optional"})
    assert [m.id for m in registration.problems] == ["mcp_endpoint.E020"]
    endpoints.discard(endpoint)


# -- system checks -------------------------------------------------------------------------


@pytest.fixture
def throwaway() -> Iterator[Endpoint]:
    endpoint = Endpoint("throwaway-checks-tasks")
    yield endpoint
    # pytest holds the test's arguments until after this teardown, so the endpoint can
    # outlive it: taken out of the endpoints the checks walk, a later test's project
    # check does not see a throwaway left with another test's settings.
    endpoints.discard(endpoint)


def ids(messages: list[Any], endpoint: Endpoint) -> list[str]:
    return [m.id for m in messages if m.obj is endpoint]


def test_e090_unknown_task_support(throwaway: Endpoint) -> None:
    throwaway.tool(name="odd", task_support="sometimes")(lambda: "x")
    assert ids(check_tasks(), throwaway) == ["mcp_endpoint.E090"]


@pytest.mark.parametrize("key", ["TASK_TTL_MS", "TASK_POLL_INTERVAL_MS", "TASK_HEARTBEAT_MS"])
@pytest.mark.parametrize("value", [0, -1, 1.5, "10", True])
def test_task_durations(throwaway: Endpoint, key: str, value: Any) -> None:
    throwaway.settings.overrides[key] = value
    throwaway.settings.reload()
    wanted = SETTINGS_BY_NAME[key].check_id
    # Its own id, once for this endpoint's values (an endpoint of an earlier test, of the
    # same name, may not be collected yet: the checks' messages about it name it too).
    assert [m.id for m in check_setting_values("x", throwaway.settings.overrides)] == [wanted]
    label = f"Endpoint {throwaway.name!r} settings[{key!r}]"
    assert wanted in [m.id for m in check_settings() if m.msg.startswith(label)]


def test_e093_task_backend_not_in_tasks(throwaway: Endpoint) -> None:
    throwaway.tool(name="slow", task_support="optional")(lambda: "x")
    assert ids(check_tasks(), throwaway) == []
    throwaway.settings.overrides["TASK_BACKEND"] = "missing"
    throwaway.settings.reload()
    assert ids(check_tasks(), throwaway) == ["mcp_endpoint.E093"]


def test_w090_long_running_tools_on_the_immediate_backend(
    throwaway: Endpoint, settings: Any
) -> None:
    assert ids(check_task_workers(), throwaway) == []  # no long-running tool yet
    throwaway.tool(name="slow", task_support="optional")(lambda: "x")
    assert ids(check_task_workers(), throwaway) == ["mcp_endpoint.W090"]  # the suite's backend
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert ids(check_task_workers(), throwaway) == []
    # A host's subclass of the immediate backend runs the tools in the web worker too.
    settings.TASKS = {"default": {"BACKEND": f"{__name__}.HostImmediateBackend"}}
    assert ids(check_task_workers(), throwaway) == ["mcp_endpoint.W090"]


def test_w091_no_worker_of_the_backend_seen(throwaway: Endpoint, settings: Any) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert ids(check_task_worker_seen(), throwaway) == []  # no long-running tool yet
    throwaway.tool(name="slow", task_support="optional")(lambda: "x")
    assert ids(check_task_worker_seen(), throwaway) == ["mcp_endpoint.W091"]  # never seen
    TaskWorker.objects.create(
        name="old:1", backend="default", last_seen=timezone.now() - timedelta(minutes=5)
    )
    [warning] = [m for m in check_task_worker_seen() if m.obj is throwaway]
    assert "last seen" in str(warning.msg)
    task_recovery.worker_alive("default", "fresh:2")
    assert ids(check_task_worker_seen(), throwaway) == []
    # Another backend's worker does not count.
    throwaway.settings.overrides["TASK_BACKEND"] = "other"
    throwaway.settings.reload()
    settings.TASKS = {"other": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert ids(check_task_worker_seen(), throwaway) == ["mcp_endpoint.W091"]


def test_w091_leaves_in_process_backends_to_w090(throwaway: Endpoint) -> None:
    throwaway.tool(name="slow", task_support="optional")(lambda: "x")
    assert ids(check_task_worker_seen(), throwaway) == []  # the suite's immediate backend


def test_the_extension_is_announced_only_with_a_backend_that_runs_tasks(
    fixture_tasks: TaskClient, settings: Any
) -> None:
    def announced() -> bool:
        capabilities = result_of(fixture_tasks.post("server/discover"))["capabilities"]
        return EXTENSION in capabilities.get("extensions", {})

    assert announced()  # the immediate backend runs a task in its request
    settings.TASKS = {"default": {"BACKEND": DUMMY_BACKEND}}
    assert not announced()  # keeps tasks, never runs them
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert not announced()  # no worker seen
    TaskWorker.objects.create(
        name="gone:1", backend="default", last_seen=timezone.now() - timedelta(minutes=5)
    )
    assert not announced()  # one that stopped long ago
    task_recovery.worker_alive("default", "here:2")
    assert announced()


def test_a_worker_presence_is_written_and_forgotten() -> None:
    presence = task_recovery.WorkerPresence("default", 3600).start()
    try:
        assert TaskWorker.objects.get(name=presence.name).backend == "default"
        assert task_recovery.worker_seen("default", site.settings)
    finally:
        presence.stop()
    assert not TaskWorker.objects.filter(name=presence.name).exists()


def test_e091_needs_no_check_when_a_framework_is_installed(throwaway: Endpoint) -> None:
    # E091 stands for hosts without django.tasks or django-tasks; this suite has one.
    throwaway.tool(name="slow", task_support="required")(lambda: "x")
    assert "mcp_endpoint.E091" not in ids(check_tasks(), throwaway)


def test_a_run_whose_tool_started_already_is_not_run_again(demo: TaskClient) -> None:
    # A broker gives a message again when its worker was lost mid-run (Celery's
    # acks_late): the tool never starts twice for one enqueue.
    now = timezone.now()
    task = ToolTask.objects.create(
        id="redelivered", endpoint="mcp", tool="export_project_tasks",
        arguments={"project_id": 1}, protocol_version="2026-07-28", owner="x",
        expires=now + timedelta(hours=1), heartbeat=now,
    )  # fmt: skip
    run_tool_task.call(task.id)
    task.refresh_from_db()
    assert task.status == "working" and task.result is None and task.heartbeat == now


# -- pruning ---------------------------------------------------------------------------------


def stored_task(task_id: str, status: str, *, expires_in: timedelta, age: timedelta) -> ToolTask:
    """A task row in ``status``, last updated ``age`` ago, expiring ``expires_in`` from now."""
    now = timezone.now()
    task = ToolTask.objects.create(
        id=task_id, endpoint="mcp", tool="slow_compute", protocol_version="2026-07-28",
        status=status, expires=now + expires_in,
    )  # fmt: skip
    ToolTask.objects.filter(pk=task_id).update(created=now - age, updated=now - age)
    return task


def prune_tasks(*args: str) -> str:
    out = io.StringIO()
    call_command("mcp_prune_tasks", *args, stdout=out)
    return out.getvalue()


def test_prune_deletes_expired_tasks_whatever_their_status(db: Any) -> None:
    live, gone = timedelta(hours=1), timedelta(seconds=-1)
    for status in ("working", "input_required", "completed", "failed", "cancelled"):
        stored_task(f"expired-{status}", status, expires_in=gone, age=timedelta(days=2))
        stored_task(f"live-{status}", status, expires_in=live, age=timedelta(days=2))
    assert prune_tasks() == "Deleted 5 task(s) past their expiry.\n"
    assert sorted(ToolTask.objects.values_list("pk", flat=True)) == sorted(
        f"live-{s}" for s in ("working", "input_required", "completed", "failed", "cancelled")
    )
    # Idempotent: nothing more goes on a second run.
    assert prune_tasks() == "Deleted 0 task(s) past their expiry.\n"
    assert ToolTask.objects.count() == 5


def test_prune_with_finished_days_keeps_running_tasks(db: Any) -> None:
    live = timedelta(days=30)
    for status in ("working", "input_required", "completed", "failed", "cancelled"):
        stored_task(f"old-{status}", status, expires_in=live, age=timedelta(days=8))
        stored_task(f"new-{status}", status, expires_in=live, age=timedelta(days=6))
    output = prune_tasks("--finished-days", "7")
    assert output == "Deleted 3 task(s) past their expiry, or finished 7 day(s) ago or more.\n"
    assert sorted(ToolTask.objects.values_list("pk", flat=True)) == sorted(
        [
            "old-working",
            "old-input_required",
            *(
                f"new-{s}"
                for s in ("working", "input_required", "completed", "failed", "cancelled")
            ),
        ]
    )
    prune_tasks("--finished-days", "0")
    assert sorted(ToolTask.objects.values_list("status", flat=True)) == [
        "input_required", "input_required", "working", "working",
    ]  # fmt: skip


def test_prune_refuses_negative_days(db: Any) -> None:
    with pytest.raises(CommandError, match="--finished-days must be 0 or more"):
        prune_tasks("--finished-days", "-1")


def test_a_task_pruned_before_its_worker_runs_records_nothing(fixture_tasks: TaskClient) -> None:
    task_id = fixture_tasks.call("confirm_delete", {"filename": "a.txt"}, caps=ELICIT)["taskId"]
    ToolTask.objects.filter(pk=task_id).update(status="working", expires=timezone.now())
    prune_tasks()
    run_tool_task.call(task_id)  # the worker finds no row, and creates none
    assert not ToolTask.objects.filter(pk=task_id).exists()
    error_of(
        fixture_tasks.post("tasks/get", {"taskId": task_id}, capabilities=TASKS),
        400, -32602, fixture_tasks.next_id,
    )  # fmt: skip


# -- a task whose worker is gone ------------------------------------------------------------


@pytest.mark.parametrize("silent_for", [timedelta(seconds=1), timedelta(minutes=5)])
def test_a_working_task_whose_worker_fell_silent_is_reported_failed(
    fixture_tasks: TaskClient, silent_for: timedelta
) -> None:
    from mcp_endpoint.task_recovery import LOST, settle_abandoned

    task_id = fixture_tasks.call("slow_compute", {"seconds": 0})["taskId"]
    # As a worker killed mid-run leaves it: working, its last heartbeat some time ago.
    beat = timezone.now() - silent_for
    ToolTask.objects.filter(pk=task_id).update(status="working", result=None, heartbeat=beat)
    task = fixture_tasks.get(task_id)
    lost = silent_for > timedelta(seconds=30)  # three heartbeats of 10 s
    assert task["status"] == ("failed" if lost else "working"), task
    if lost:
        assert task["error"] == {"code": -32603, "message": LOST}
        assert "result" not in task
    assert settle_abandoned() == 0


# -- the conformance fixture is the suite's, on this machine only -----------------------------


def test_the_fixture_refuses_clients_off_the_loopback_interface(client: Any) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = client.post(
        FIXTURE,
        data=message,
        content_type="application/json",
        headers={"Accept": "application/json, text/event-stream"},
        REMOTE_ADDR="203.0.113.9",
    )
    assert response.status_code == 403
    assert "result" not in response.json()
    assert not ToolTask.objects.exists()


@pytest.mark.parametrize("seconds", [61, -1])
def test_slow_compute_sleeps_within_its_bound(fixture_tasks: TaskClient, seconds: int) -> None:
    schema = next(
        tool["inputSchema"]
        for tool in result_of(fixture_tasks.post("tools/list"))["tools"]
        if tool["name"] == "slow_compute"
    )
    assert schema["properties"]["seconds"]["maximum"] == 60
    task = fixture_tasks.get(fixture_tasks.call("slow_compute", {"seconds": seconds})["taskId"])
    assert task["result"]["isError"] is True
    assert task["result"]["structuredContent"]["error"]["code"] == "invalid_arguments"


def test_the_worker_settles_every_task_whose_worker_fell_silent(fixture_tasks: TaskClient) -> None:
    from mcp_endpoint.task_recovery import settle_abandoned

    silent, busy = (fixture_tasks.call("slow_compute", {"seconds": 0})["taskId"] for _ in "ab")
    ToolTask.objects.filter(pk=silent).update(
        status="working", result=None, heartbeat=timezone.now() - timedelta(minutes=5)
    )
    ToolTask.objects.filter(pk=busy).update(status="working", result=None, heartbeat=timezone.now())
    assert settle_abandoned() == 1
    assert ToolTask.objects.get(pk=silent).status == "failed"
    assert ToolTask.objects.get(pk=busy).status == "working"


@pytest.mark.parametrize(
    ("run_status", "started_ago", "lost"),
    [
        ("READY", None, False),  # still queued: a long queue is not a lost worker
        ("RUNNING", timedelta(seconds=1), False),
        ("RUNNING", timedelta(minutes=5), True),  # claimed, and the tool never started
        ("FAILED", timedelta(minutes=5), True),  # the run ended without a word on the task
    ],
)
def test_a_task_that_never_started_is_lost_only_as_its_backend_says(
    settings: Any, run_status: str, started_ago: timedelta | None, lost: bool
) -> None:
    from django_tasks_db.models import DBTaskResult

    from mcp_endpoint.conf import MCPSettings
    from mcp_endpoint.task_recovery import abandoned

    settings.TASKS = {**settings.TASKS, "db": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    run = run_tool_task.using(backend="db").enqueue("never-started")
    started = timezone.now() - started_ago if started_ago else None
    DBTaskResult.objects.filter(pk=run.id).update(status=run_status, started_at=started)
    task = stored_task("never-started", "working", expires_in=timedelta(hours=1),
                       age=timedelta(minutes=10))  # fmt: skip
    ToolTask.objects.filter(pk=task.pk).update(job=str(run.id))
    task.refresh_from_db()
    assert abandoned(task, MCPSettings({"TASK_BACKEND": "db"})) is lost
