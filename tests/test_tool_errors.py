"""The error table of PROTOCOL.md §6, one test per row, for tools made from viewsets.

A failure inside a tool is a result with ``isError: true`` and
``structuredContent.error.code``; only an unknown tool is a JSON-RPC error. Where REST
answers the same request, the messages are compared with REST's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key

pytestmark = pytest.mark.django_db

READ_TOOLS = {
    "list_projects",
    "get_project",
    "list_tasks",
    "get_task",
    "overdue_tasks",
    "list_comments",
    "get_comment",
    "summarize_project",
    "export_project_tasks",
}


def tool_error(result: dict[str, Any], code: str) -> dict[str, Any]:
    """The error of a failed tool result, after checking its shape and code."""
    assert result["isError"] is True, result
    error: dict[str, Any] = result["structuredContent"]["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    text = result["content"][0]["text"]
    assert text.startswith(f"Error ({code}): {error['message']}")
    return error


def rest(client: Client, key: str, method: str, url: str, body: Any = None) -> Any:
    return client.generic(
        method,
        url,
        json.dumps(body) if body is not None else "",
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


def first_task(project: Project, title: str) -> Task:
    return project.tasks.get(title=title)


# -- invalid_arguments ----------------------------------------------------------------------


def test_invalid_arguments_carry_drfs_messages_per_field(
    rpc: MCPClient, project: Project, client: Client, alice_key: str
) -> None:
    body = {"project": project.pk, "title": "Plan", "due": "next tuesday", "priority": 7}
    result = rpc.call("create_task", body)
    error = tool_error(result, "invalid_arguments")
    assert error["fields"]["due"] == [
        "Date has wrong format. Use one of these formats instead: YYYY-MM-DD."
    ]
    assert error["fields"]["priority"] == ['"7" is not a valid choice.']
    assert "- due: Date has wrong format." in result["content"][0]["text"]

    answer = rest(client, alice_key, "POST", "/api/tasks/", body)
    assert answer.status_code == 400
    assert error["fields"] == answer.json()
    assert project.tasks.count() == 3


def test_a_missing_body_field_is_drfs_required_message(
    rpc: MCPClient, project: Project, client: Client, alice_key: str
) -> None:
    error = tool_error(rpc.call("create_task", {"project": project.pk}), "invalid_arguments")
    answer = rest(client, alice_key, "POST", "/api/tasks/", {"project": project.pk})
    assert error["fields"] == answer.json() == {"title": ["This field is required."]}


def test_a_filter_value_the_filterset_refuses(
    rpc: MCPClient, project: Project, client: Client, alice_key: str
) -> None:
    error = tool_error(rpc.call("list_tasks", {"due_before": "soon"}), "invalid_arguments")
    answer = client.get(
        "/api/tasks/", {"due_before": "soon"}, headers={"Authorization": f"Bearer {alice_key}"}
    )
    assert answer.status_code == 400
    assert error["fields"] == answer.json() == {"due_before": ["Enter a valid date."]}


@pytest.mark.parametrize(
    ("arguments", "fields"),
    [
        ({}, {"id": ["This field is required."]}),
        ({"id": 1, "colour": "red"}, {"colour": ["Unknown argument."]}),
        ({"id": "one"}, {"id": ["'one' is not of type 'integer'"]}),
    ],
)
def test_arguments_outside_the_input_schema(
    rpc: MCPClient, project: Project, arguments: dict[str, Any], fields: dict[str, list[str]]
) -> None:
    error = tool_error(rpc.call("get_task", arguments), "invalid_arguments")
    assert error["fields"] == fields


# -- not_found ------------------------------------------------------------------------------


def test_not_found(rpc: MCPClient, project: Project, client: Client, alice_key: str) -> None:
    error = tool_error(rpc.call("get_task", {"id": 999_999}), "not_found")
    answer = rest(client, alice_key, "GET", "/api/tasks/999999/")
    assert answer.status_code == 404
    assert error["message"] == answer.json()["detail"] == "No Task matches the given query."


def test_an_object_the_user_cannot_see_is_not_found(
    mcp_client: Callable[..., MCPClient], project: Project, carol: Any
) -> None:
    task = first_task(project, "Write copy")
    carol_rpc = mcp_client(make_key(carol, "read write"))
    tool_error(carol_rpc.call("get_task", {"id": task.pk}), "not_found")
    tool_error(carol_rpc.call("update_task", {"id": task.pk, "title": "Mine now"}), "not_found")
    task.refresh_from_db()
    assert task.title == "Write copy"


# -- permission_denied ----------------------------------------------------------------------


def test_permission_denied_carries_the_permissions_message(
    mcp_client: Callable[..., MCPClient], project: Project, bob: Any, client: Client
) -> None:
    bob_key = make_key(bob, "read write")
    result = mcp_client(bob_key).call("update_project", {"id": project.pk, "name": "Bob's now"})
    error = tool_error(result, "permission_denied")
    assert error["message"] == "Only the project's owner may change it."

    answer = rest(client, bob_key, "PATCH", f"/api/projects/{project.pk}/", {"name": "Bob's now"})
    assert answer.status_code == 403
    assert answer.json()["detail"] == error["message"]
    project.refresh_from_db()
    assert project.name == "Launch"


# -- insufficient_scope ---------------------------------------------------------------------


def test_insufficient_scope_names_required_and_granted_scopes(
    mcp_client: Callable[..., MCPClient], project: Project, alice_read_key: str
) -> None:
    result = mcp_client(alice_read_key).call(
        "create_task", {"project": project.pk, "title": "Not allowed"}
    )
    error = tool_error(result, "insufficient_scope")
    assert error["required_scopes"] == ["write"]
    assert error["granted_scopes"] == ["read"]
    assert "write" in error["message"]
    assert "required_scopes: ['write']" in result["content"][0]["text"]
    assert project.tasks.count() == 3


def test_a_write_only_key_cannot_read(
    mcp_client: Callable[..., MCPClient], project: Project, alice: Any
) -> None:
    result = mcp_client(make_key(alice, "write")).call("list_tasks", {})
    error = tool_error(result, "insufficient_scope")
    assert error["required_scopes"] == ["read"]
    assert error["granted_scopes"] == ["write"]


def test_tools_list_for_a_read_only_key_has_no_write_tools(
    mcp_client: Callable[..., MCPClient], alice_read_key: str, alice_key: str
) -> None:
    read_only = {t["name"] for t in mcp_client(alice_read_key).result("tools/list")["tools"]}
    assert read_only == READ_TOOLS
    read_write = mcp_client(alice_key).result("tools/list")["tools"]
    writes = {t["name"] for t in read_write if not t["annotations"].get("readOnlyHint")}
    assert writes and not writes & read_only


# -- conflict -------------------------------------------------------------------------------


def test_conflict(rpc: MCPClient, project: Project, client: Client, alice_key: str) -> None:
    task = first_task(project, "Write copy")
    first = rpc.call("complete_task", {"id": task.pk})
    assert first["isError"] is False
    assert first["structuredContent"]["status"] == "done"
    error = tool_error(rpc.call("complete_task", {"id": task.pk}), "conflict")
    assert error["message"] == "The task is already done."

    answer = rest(client, alice_key, "POST", f"/api/tasks/{task.pk}/complete/")
    assert answer.status_code == 409
    assert answer.json()["detail"] == error["message"]


# -- throttled, inside the view -------------------------------------------------------------


@pytest.fixture
def private_cache(settings: Any) -> Iterator[None]:
    """A cache of this test's own, so throttle counters are not shared with anything else."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "tool-errors-throttle",
        }
    }
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.mark.urls("tests.urls_drf_testing")
def test_throttled_inside_the_view(
    private_cache: None, mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    rpc = mcp_client(alice_key, "/drf-mcp")
    for _ in range(2):
        assert rpc.call("list_beacons")["isError"] is False
    result = rpc.call("list_beacons")
    error = tool_error(result, "throttled")
    assert isinstance(error["retry_after"], int)
    assert 0 < error["retry_after"] <= 60
    assert f"retry_after: {error['retry_after']}" in result["content"][0]["text"]


@pytest.mark.urls("tests.urls_drf_testing")
def test_the_views_throttle_counts_rest_and_mcp_together(
    private_cache: None, mcp_client: Callable[..., MCPClient], alice_key: str, client: Client
) -> None:
    for _ in range(2):
        assert rest(client, alice_key, "GET", "/beacons/").status_code == 200
    answer = rest(client, alice_key, "GET", "/beacons/")
    assert answer.status_code == 429
    error = tool_error(mcp_client(alice_key, "/drf-mcp").call("list_beacons"), "throttled")
    assert abs(error["retry_after"] - int(answer["Retry-After"])) <= 1


# -- internal_error -------------------------------------------------------------------------


@pytest.mark.urls("tests.urls_drf_testing")
def test_internal_error_hides_the_traceback_and_logs_it(
    mcp_client: Callable[..., MCPClient], alice_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    rpc = mcp_client(alice_key, "/drf-mcp")
    with caplog.at_level(logging.ERROR, logger="mcp_endpoint"):
        response = rpc.request("tools/call", {"name": "explode", "arguments": {}})
    assert response.status_code == 200
    result = response.json()["result"]
    error = tool_error(result, "internal_error")
    assert error == {"code": "internal_error", "message": "Internal error running tool"}
    assert result["content"] == [
        {"type": "text", "text": "Error (internal_error): Internal error running tool"}
    ]
    body = response.content.decode()
    for leak in ("hunter2", "Traceback", "RuntimeError", "viewsets_testing"):
        assert leak not in body

    logged = [r for r in caplog.records if r.exc_info and r.name.startswith("mcp_endpoint")]
    assert logged, caplog.text
    assert "explode" in logged[0].getMessage()
    assert "Traceback" in caplog.text
    assert "RuntimeError: the database password is hunter2" in caplog.text


# -- a failed write leaves the database as it was -------------------------------------------


@pytest.mark.urls("tests.urls_drf_testing")
def test_a_view_that_raises_after_saving_leaves_no_row(
    mcp_client: Callable[..., MCPClient], alice_key: str, alice: Any
) -> None:
    before = Project.objects.count()
    result = mcp_client(alice_key, "/drf-mcp").call("create_fragile_project", {"name": "Ghost"})
    tool_error(result, "internal_error")
    assert Project.objects.count() == before
    assert not Project.objects.filter(name="Ghost").exists()


@pytest.mark.urls("tests.urls_drf_testing")
def test_a_view_that_refuses_after_saving_leaves_no_row(
    mcp_client: Callable[..., MCPClient], alice_key: str, alice: Any
) -> None:
    before = Project.objects.count()
    result = mcp_client(alice_key, "/drf-mcp").call("create_refused_project", {"name": "Ghost"})
    error = tool_error(result, "invalid_arguments")
    assert error["fields"] == {"name": ["Refused after saving."]}
    assert Project.objects.count() == before


# -- protocol errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"name": "no_such_tool", "arguments": {}},
        {"name": "list_task", "arguments": {}},
        {"arguments": {}},
    ],
    ids=["unknown", "near-miss", "missing-name"],
)
def test_unknown_or_missing_tool_name_is_invalid_params(rpc: MCPClient, params: Any) -> None:
    body = rpc.request("tools/call", params).json()
    assert "result" not in body
    assert body["error"]["code"] == -32602


# -- a commit whose outcome is unknown -------------------------------------------------------


class LostAtCommit:
    """An ``execute_wrapper`` that drops the connection, as far as Django can tell, when the
    tool's transaction commits: the statement that ends the outermost transaction (or
    savepoint) opened after it was armed, as it is sent."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.depth = len(connection.savepoint_ids)
        self.fired = 0

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        ends = sql.upper().startswith(("COMMIT", "RELEASE SAVEPOINT"))
        if ends and len(self.connection.savepoint_ids) == self.depth and not self.fired:
            self.fired += 1
            from django.db import OperationalError

            raise OperationalError("server closed the connection unexpectedly")
        return execute(sql, params, many, context)


def test_a_write_whose_commit_may_have_gone_through_says_so_and_invites_no_retry(
    rpc: MCPClient, project: Project
) -> None:
    from django.db import connection

    lost = LostAtCommit(connection)
    params = {"name": "create_task", "arguments": {"project": project.pk, "title": "Once"}}
    with connection.execute_wrapper(lost):
        response = rpc.request("tools/call", params)
    assert lost.fired == 1
    assert response.status_code == 200
    assert "Retry-After" not in response
    body = response.json()
    error = tool_error(body["result"], "outcome_unknown")
    assert "retry_after" not in error
    assert "unknown" in error["message"] and "Check" in error["message"]
    assert "error" not in body
