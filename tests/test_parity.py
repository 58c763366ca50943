"""REST and MCP agree: every tool, every kind of caller, the same data and the same outcome.

Each row of the table is one operation, done once through ``/api/`` and once through
``/mcp`` with the same credential, each on the same starting data (each runs in a
transaction that is rolled back, so a write through one does not change what the other
sees). The outcomes map as PROTOCOL.md §6 says:

======================  ========================================================
REST                    MCP
======================  ========================================================
2xx                     ``isError: false``, ``structuredContent`` == the JSON
400                     ``invalid_arguments`` with the same per-field messages
401                     HTTP 401 with a JSON-RPC ``-32001`` error
403                     ``insufficient_scope`` when the credential lacks the
                        tool's scope, otherwise ``permission_denied``
404                     ``not_found``
409                     ``conflict``
======================  ========================================================
"""

from __future__ import annotations

import datetime
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from jsonschema import Draft202012Validator
from oauth2_provider.models import AccessToken, Application

from mcp_endpoint import site
from mcp_endpoint.models import APIKey
from project.tracker.models import Comment, Project, Task
from tests.conftest import MCPClient

pytestmark = pytest.mark.django_db

# The fields a write stamps with the time of the call: REST and MCP run a moment apart.
CALL_TIME_FIELDS = {"created", "updated"}

# -- the world both sides see ---------------------------------------------------------------


@dataclass
class World:
    """Alice's project (bob a member) with four tasks and two comments; carol's own project."""

    project: int
    other_project: int
    carol_project: int
    open_task: int
    assigned_task: int
    done_task: int
    overdue_task: int
    alice_comment: int
    bob_comment: int
    users: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def world(project: Project, alice: Any, bob: Any, carol: Any) -> World:
    tasks = {t.title: t for t in project.tasks.all()}
    overdue = Task.objects.create(
        project=project,
        title="Renew the domain",
        priority=1,
        due=timezone.localdate() - datetime.timedelta(days=3),
    )
    other = Project.objects.create(name="Backlog", owner=alice)
    garden = Project.objects.create(name="Garden", owner=carol)
    Task.objects.create(project=garden, title="Water the plants")
    alice_comment = Comment.objects.create(task=tasks["Write copy"], author=alice, body="Draft")
    bob_comment = Comment.objects.create(task=tasks["Write copy"], author=bob, body="Looks good")
    return World(
        project=project.pk,
        other_project=other.pk,
        carol_project=garden.pk,
        open_task=tasks["Write copy"].pk,
        assigned_task=tasks["Fix login"].pk,
        done_task=tasks["Ship it"].pk,
        overdue_task=overdue.pk,
        alice_comment=alice_comment.pk,
        bob_comment=bob_comment.pk,
        users={"alice": alice, "bob": bob, "carol": carol},
    )


# -- credentials ----------------------------------------------------------------------------


@dataclass
class Credential:
    bearer: str
    scopes: frozenset[str]


def api_key(user: Any, scopes: str, *, revoked: bool = False) -> Credential:
    key, raw = APIKey.objects.create_key(user=user, scopes=scopes, name="parity")
    if revoked:
        key.revoke()
    return Credential(raw, frozenset(scopes.split()))


def oauth_token(user: Any, scope: str) -> Credential:
    """An access token made the way django-oauth-toolkit stores one, bound (RFC 8707) to
    both resources the table compares: the REST API and the MCP endpoint."""
    application = Application.objects.create(
        name="parity client",
        user=user,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    raw = secrets.token_urlsafe(32)
    token = AccessToken.objects.create(
        user=user,
        application=application,
        token=raw,
        scope=scope,
        expires=timezone.now() + datetime.timedelta(hours=1),
        resource=["http://testserver/api", "http://testserver/mcp"],
    )
    assert token.allows_audience("http://testserver/mcp")
    return Credential(raw, frozenset(scope.split()))


CREDENTIALS: dict[str, Callable[[World], Credential]] = {
    "owner": lambda w: api_key(w.users["alice"], "read write"),
    "member": lambda w: api_key(w.users["bob"], "read write"),
    "non_member": lambda w: api_key(w.users["carol"], "read write"),
    "read_only_key": lambda w: api_key(w.users["alice"], "read"),
    "write_only_key": lambda w: api_key(w.users["alice"], "write"),
    "revoked_key": lambda w: api_key(w.users["alice"], "read write", revoked=True),
    "oauth_read": lambda w: oauth_token(w.users["alice"], "read"),
}

# -- the operations -------------------------------------------------------------------------


@dataclass
class Operation:
    """One tool call and the REST request that does the same.

    ``url`` names the path arguments in braces; the other arguments go into the query
    string for GET and into the JSON body otherwise.
    """

    tool: str
    method: str
    url: str
    arguments: Callable[[World], dict[str, Any]]

    def rest_request(self, world: World) -> tuple[str, dict[str, Any]]:
        arguments = self.arguments(world)
        path_names = {n for n in arguments if "{" + n + "}" in self.url}
        url = self.url.format(**{n: arguments[n] for n in path_names})
        rest = {k: v for k, v in arguments.items() if k not in path_names}
        return url, rest


# Expected REST statuses for the kinds of caller, by the shape of the operation.
READ_LIST = {
    "owner": 200,
    "member": 200,
    "non_member": 200,
    "read_only_key": 200,
    "write_only_key": 403,
    "revoked_key": 401,
    "oauth_read": 200,
}
READ_ONE = {**READ_LIST, "non_member": 404}
CREATE = {
    "owner": 201,
    "member": 201,
    "non_member": 201,
    "read_only_key": 403,
    "write_only_key": 201,
    "revoked_key": 401,
    "oauth_read": 403,
}
CREATE_IN_ALICES_PROJECT = {**CREATE, "non_member": 400}
MEMBERS_CHANGE = {
    "owner": 200,
    "member": 200,
    "non_member": 404,
    "read_only_key": 403,
    "write_only_key": 200,
    "revoked_key": 401,
    "oauth_read": 403,
}
OWNER_CHANGES = {**MEMBERS_CHANGE, "member": 403}
MEMBERS_DELETE = {**MEMBERS_CHANGE, "owner": 204, "member": 204, "write_only_key": 204}
OWNER_DELETES = {**MEMBERS_DELETE, "member": 403}


def only(status: int, for_whom: str = "owner") -> dict[str, int]:
    return {for_whom: status}


ROWS: list[tuple[str, Operation, dict[str, int]]] = [
    # projects
    ("list_projects", Operation("list_projects", "GET", "/api/projects/", lambda w: {}), READ_LIST),
    (
        "list_projects_search",
        Operation(
            "list_projects",
            "GET",
            "/api/projects/",
            lambda w: {"search": "laun", "ordering": "-name"},
        ),
        READ_LIST,
    ),
    (
        "get_project",
        Operation("get_project", "GET", "/api/projects/{id}/", lambda w: {"id": w.project}),
        READ_ONE,
    ),
    (
        "get_project_of_carol",
        Operation("get_project", "GET", "/api/projects/{id}/", lambda w: {"id": w.carol_project}),
        {
            **READ_ONE,
            "owner": 404,
            "member": 404,
            "non_member": 200,
            "read_only_key": 404,
            "oauth_read": 404,
        },
    ),
    (
        "create_project",
        Operation(
            "create_project",
            "POST",
            "/api/projects/",
            lambda w: {"name": "Brand new", "members": ["bob"]},
        ),
        CREATE,
    ),
    (
        "create_project_duplicate_name",
        Operation("create_project", "POST", "/api/projects/", lambda w: {"name": "Backlog"}),
        only(400),
    ),
    (
        "create_project_unknown_member",
        Operation(
            "create_project",
            "POST",
            "/api/projects/",
            lambda w: {"name": "Side", "members": ["nobody"]},
        ),
        only(400),
    ),
    (
        "replace_project",
        Operation(
            "replace_project",
            "PUT",
            "/api/projects/{id}/",
            lambda w: {"id": w.project, "name": "Relaunch", "members": []},
        ),
        OWNER_CHANGES,
    ),
    (
        "replace_project_missing_name",
        Operation("replace_project", "PUT", "/api/projects/{id}/", lambda w: {"id": w.project}),
        only(400),
    ),
    (
        "update_project",
        Operation(
            "update_project",
            "PATCH",
            "/api/projects/{id}/",
            lambda w: {"id": w.project, "name": "Renamed"},
        ),
        OWNER_CHANGES,
    ),
    (
        "update_project_to_a_name_in_use",
        Operation(
            "update_project",
            "PATCH",
            "/api/projects/{id}/",
            lambda w: {"id": w.project, "name": "Backlog"},
        ),
        only(400),
    ),
    (
        "delete_project",
        Operation("delete_project", "DELETE", "/api/projects/{id}/", lambda w: {"id": w.project}),
        OWNER_DELETES,
    ),
    # tasks
    ("list_tasks", Operation("list_tasks", "GET", "/api/tasks/", lambda w: {}), READ_LIST),
    (
        "list_tasks_filtered",
        Operation(
            "list_tasks",
            "GET",
            "/api/tasks/",
            lambda w: {"status": "open", "ordering": "-priority", "page_size": 1, "page": 2},
        ),
        {**READ_LIST, "non_member": 404},  # carol has one open task: no page 2
    ),
    (
        "list_tasks_bad_filter",
        Operation("list_tasks", "GET", "/api/tasks/", lambda w: {"status": "someday"}),
        {"owner": 400, "member": 400, "non_member": 400, "oauth_read": 400},
    ),
    (
        "list_tasks_page_past_the_end",
        Operation("list_tasks", "GET", "/api/tasks/", lambda w: {"page": 9}),
        {"owner": 404, "read_only_key": 404},
    ),
    (
        "get_task",
        Operation("get_task", "GET", "/api/tasks/{id}/", lambda w: {"id": w.assigned_task}),
        READ_ONE,
    ),
    (
        "create_task",
        Operation(
            "create_task",
            "POST",
            "/api/tasks/",
            lambda w: {
                "project": w.project,
                "title": "Book the venue",
                "description": "Somewhere with a projector.",
                "priority": 2,
                "due": "2031-05-04",
                "assignee": "bob",
            },
        ),
        CREATE_IN_ALICES_PROJECT,
    ),
    (
        "create_task_bad_values",
        Operation(
            "create_task",
            "POST",
            "/api/tasks/",
            lambda w: {"project": w.project, "title": "", "due": "next tuesday", "priority": 9},
        ),
        {"owner": 400, "member": 400, "non_member": 400},
    ),
    (
        "create_task_assignee_not_a_member",
        Operation(
            "create_task",
            "POST",
            "/api/tasks/",
            lambda w: {"project": w.project, "title": "Hire", "assignee": "carol"},
        ),
        {"owner": 400, "member": 400},
    ),
    (
        "replace_task",
        Operation(
            "replace_task",
            "PUT",
            "/api/tasks/{id}/",
            lambda w: {
                "id": w.open_task,
                "project": w.project,
                "title": "Rewrite copy",
                "description": "",
                "status": "in_progress",
                "priority": 4,
                "due": None,
                "assignee": None,
            },
        ),
        MEMBERS_CHANGE,
    ),
    (
        "update_task",
        Operation(
            "update_task",
            "PATCH",
            "/api/tasks/{id}/",
            lambda w: {"id": w.open_task, "title": "Polish copy", "due": "2030-01-31"},
        ),
        MEMBERS_CHANGE,
    ),
    (
        "update_task_bad_status",
        Operation(
            "update_task",
            "PATCH",
            "/api/tasks/{id}/",
            lambda w: {"id": w.open_task, "status": "finished"},
        ),
        {"owner": 400, "member": 400, "non_member": 404},
    ),
    (
        "delete_task",
        Operation("delete_task", "DELETE", "/api/tasks/{id}/", lambda w: {"id": w.open_task}),
        MEMBERS_DELETE,
    ),
    (
        "complete_task",
        Operation(
            "complete_task", "POST", "/api/tasks/{id}/complete/", lambda w: {"id": w.open_task}
        ),
        MEMBERS_CHANGE,
    ),
    (
        "complete_task_already_done",
        Operation(
            "complete_task", "POST", "/api/tasks/{id}/complete/", lambda w: {"id": w.done_task}
        ),
        {**MEMBERS_CHANGE, "owner": 409, "member": 409, "write_only_key": 409},
    ),
    (
        "overdue_tasks",
        Operation("overdue_tasks", "GET", "/api/tasks/overdue/", lambda w: {}),
        READ_LIST,
    ),
    (
        "overdue_tasks_filtered",
        Operation("overdue_tasks", "GET", "/api/tasks/overdue/", lambda w: {"priority": 4}),
        {"owner": 200, "member": 200},
    ),
    # comments
    ("list_comments", Operation("list_comments", "GET", "/api/comments/", lambda w: {}), READ_LIST),
    (
        "get_comment",
        Operation("get_comment", "GET", "/api/comments/{id}/", lambda w: {"id": w.bob_comment}),
        READ_ONE,
    ),
    (
        "create_comment",
        Operation(
            "create_comment",
            "POST",
            "/api/comments/",
            lambda w: {"task": w.assigned_task, "body": "On it."},
        ),
        CREATE_IN_ALICES_PROJECT,
    ),
    (
        "create_comment_on_a_missing_task",
        Operation(
            "create_comment", "POST", "/api/comments/", lambda w: {"task": 99999, "body": "?"}
        ),
        {"owner": 400},
    ),
    (
        "replace_comment",
        Operation(
            "replace_comment",
            "PUT",
            "/api/comments/{id}/",
            lambda w: {"id": w.alice_comment, "task": w.open_task, "body": "Second draft"},
        ),
        OWNER_CHANGES,
    ),
    (
        "update_comment",
        Operation(
            "update_comment",
            "PATCH",
            "/api/comments/{id}/",
            lambda w: {"id": w.alice_comment, "body": "Third draft"},
        ),
        OWNER_CHANGES,
    ),
    (
        "delete_comment",
        Operation(
            "delete_comment", "DELETE", "/api/comments/{id}/", lambda w: {"id": w.alice_comment}
        ),
        OWNER_DELETES,
    ),
]

CASES = [
    pytest.param(operation, who, status, id=f"{row_id}-{who}")
    for row_id, operation, statuses in ROWS
    for who, status in statuses.items()
]
VIEWSET_TOOLS = {
    f"{verb}_{noun}"
    for noun in ("project", "task", "comment")
    for verb in ("get", "create", "replace", "update", "delete")
} | {"list_projects", "list_tasks", "list_comments", "complete_task", "overdue_tasks"}


def test_the_table_covers_every_viewset_tool() -> None:
    assert {operation.tool for _, operation, _ in ROWS} == VIEWSET_TOOLS
    assert {tool.name for tool in site.tools} >= VIEWSET_TOOLS
    for _, _, statuses in ROWS:
        assert set(statuses) <= set(CREDENTIALS)
    # Every tool is tried by every kind of caller in at least one row.
    for tool in VIEWSET_TOOLS:
        callers = {who for _, op, statuses in ROWS if op.tool == tool for who in statuses}
        assert callers == set(CREDENTIALS), tool


# -- running one side -----------------------------------------------------------------------


def rolled_back(run: Callable[[], Any]) -> Any:
    """Run ``run`` in a transaction that is then rolled back: the next side sees the same data."""
    with transaction.atomic():
        outcome = run()
        transaction.set_rollback(True)
    return outcome


def call_rest(client: Client, bearer: str, method: str, url: str, arguments: dict[str, Any]) -> Any:
    headers = {"Authorization": f"Bearer {bearer}"}
    if method == "GET":
        return client.get(url, arguments, headers=headers)
    return client.generic(
        method, url, json.dumps(arguments), content_type="application/json", headers=headers
    )


def output_schemas(mcp: MCPClient) -> dict[str, dict[str, Any] | None]:
    tools = mcp.result("tools/list")["tools"]
    return {tool["name"]: tool.get("outputSchema") for tool in tools}


def same_data(rest: Any, mcp: Any, write: bool) -> None:
    """Equal, but for the call-time stamps of a write, which must be a moment apart at most."""
    if not write:
        assert mcp == rest
        return
    assert isinstance(rest, dict) and isinstance(mcp, dict)
    assert mcp.keys() == rest.keys()
    for key in rest:
        if key == "id":
            # Allocated, not chosen: PostgreSQL's sequences do not roll back with the
            # transaction that undid the REST write, so the MCP write gets the next id.
            assert isinstance(mcp[key], int)
        elif key in CALL_TIME_FIELDS:
            # parse_datetime reads the trailing "Z" on every Python (3.10's fromisoformat not).
            gap = parse_datetime(mcp[key]) - parse_datetime(rest[key])  # type: ignore[operator]
            assert abs(gap.total_seconds()) < 60, (key, rest[key], mcp[key])
        else:
            assert mcp[key] == rest[key], key


@pytest.mark.parametrize(("operation", "who", "rest_status"), CASES)
def test_rest_and_mcp_agree(
    operation: Operation,
    who: str,
    rest_status: int,
    world: World,
    client: Client,
    mcp_client: Callable[..., MCPClient],
) -> None:
    credential = CREDENTIALS[who](world)
    url, rest_arguments = operation.rest_request(world)
    arguments = operation.arguments(world)

    rest = rolled_back(
        lambda: call_rest(client, credential.bearer, operation.method, url, rest_arguments)
    )
    mcp = mcp_client(credential.bearer)
    answer = rolled_back(
        lambda: mcp.request("tools/call", {"name": operation.tool, "arguments": arguments})
    )

    assert rest.status_code == rest_status, rest.content
    if rest_status == 401:
        assert answer.status_code == 401
        assert answer.json()["error"]["code"] == -32001
        assert "WWW-Authenticate" in answer
        return
    assert answer.status_code == 200, answer.content
    result = answer.json()["result"]
    rest_data = rest.json() if rest.content else None
    write = operation.method != "GET"

    if 200 <= rest_status < 300:
        assert result["isError"] is False, result
        assert result["content"] and result["content"][0]["type"] == "text"
        if rest_data is None:
            assert "structuredContent" not in result
            return
        same_data(rest_data, result["structuredContent"], write)
        schema = output_schemas(mcp)[operation.tool]
        assert schema is not None
        validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        errors = [e.message for e in validator.iter_errors(result["structuredContent"])]
        assert errors == []
        return

    assert result["isError"] is True, result
    error = result["structuredContent"]["error"]
    assert error["message"] and error["message"] in result["content"][0]["text"]
    if rest_status == 400:
        assert error["code"] == "invalid_arguments"
        assert error["fields"] == rest_data
    elif rest_status == 403:
        needed = frozenset(error.get("required_scopes", ()))
        if error["code"] == "insufficient_scope":
            assert needed and not needed <= credential.scopes
            assert set(error["granted_scopes"]) == credential.scopes
            assert " ".join(sorted(needed)) in result["content"][0]["text"]
        else:
            assert error["code"] == "permission_denied"
            assert error["message"] == rest_data["detail"]
        lacks_scope = {"GET": "read"}.get(operation.method, "write") not in credential.scopes
        assert (error["code"] == "insufficient_scope") is lacks_scope
    elif rest_status == 404:
        assert error["code"] == "not_found"
        assert error["message"] == rest_data["detail"]
    elif rest_status == 409:
        assert error["code"] == "conflict"
        assert error["message"] == rest_data["detail"]
    else:
        pytest.fail(f"no MCP outcome is mapped for REST {rest_status}")


@pytest.mark.parametrize("who", sorted(set(CREDENTIALS) - {"revoked_key"}))
def test_tools_list_shows_what_the_credential_may_call(
    who: str, world: World, mcp_client: Callable[..., MCPClient]
) -> None:
    credential = CREDENTIALS[who](world)
    listed = {t["name"] for t in mcp_client(credential.bearer).result("tools/list")["tools"]}
    readers = {n for n in VIEWSET_TOOLS if n.startswith(("list_", "get_", "overdue_"))}
    writers = VIEWSET_TOOLS - readers
    assert (readers <= listed) is ("read" in credential.scopes)
    assert (writers <= listed) is ("write" in credential.scopes)
    assert not (readers & listed) or "read" in credential.scopes
    assert not (writers & listed) or "write" in credential.scopes


def test_writes_through_each_side_land_the_same(
    world: World, client: Client, mcp_client: Callable[..., MCPClient]
) -> None:
    """Without the rollback: the REST write and the MCP write leave rows that match."""
    credential = CREDENTIALS["member"](world)
    body = {
        "project": world.project,
        "title": "Same either way",
        "priority": 1,
        "due": "2030-02-03",
    }
    rest = call_rest(client, credential.bearer, "POST", "/api/tasks/", body)
    mcp = mcp_client(credential.bearer).call("create_task", body)
    assert rest.status_code == 201 and mcp["isError"] is False
    made_by_rest = Task.objects.get(pk=rest.json()["id"])
    made_by_mcp = Task.objects.get(pk=mcp["structuredContent"]["id"])
    assert made_by_rest.pk != made_by_mcp.pk
    for name in ("project_id", "title", "priority", "due", "status", "assignee_id"):
        assert getattr(made_by_rest, name) == getattr(made_by_mcp, name), name
