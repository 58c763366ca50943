"""The nested-routes host (:mod:`tests.hosts.nested`): projects, their tasks and the tasks'
comments, routed by drf-nested-routers and by hand. Every tool, every credential kind: REST
and MCP agree under a parent, for a parent that does not exist or is another user's, and
field by field on a refused write; the URL kwargs are typed by their routes; names read as
``list_project_tasks`` and stay unique with the same viewset routed flat and nested."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import include, path, re_path
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from jsonschema import Draft202012Validator
from rest_framework_nested.routers import NestedSimpleRouter, SimpleRouter

from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.rest_framework.naming import parent_noun
from mcp_endpoint.rest_framework.spec import ActionOptions, Route, build_spec
from mcp_endpoint.tools import TOOL_NAME
from tests.conftest import MCPClient
from tests.hosts.nested.models import Comment, Project, Task
from tests.hosts.nested.views import CommentViewSet, ProjectViewSet, TaskViewSet
from tests.hosts.parity import CREDENTIAL_KINDS, api_key, call_rest, check_parity

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.nested.urls")]

User = get_user_model()
MISSING = 999_999
PATH_ARGUMENTS = {"id", "project_pk", "task_pk", "user_pk"}


@pytest.fixture
def owner() -> Any:
    return User.objects.create_user("olive", "olive@example.com", "pw-olive-123")


@pytest.fixture
def ids(owner: Any) -> dict[str, int]:
    stranger = User.objects.create_user("sam", "sam@example.com", "pw-sam-123")
    project = Project.objects.create(name="Launch", owner=owner)
    second = Project.objects.create(name="Garden", owner=owner)
    other = Project.objects.create(name="Secret", owner=stranger)
    task = Task.objects.create(project=project, title="Write copy")
    Task.objects.create(project=project, title="Print flyers", done=True)
    Task.objects.create(project=project, title="Book hall")
    second_task = Task.objects.create(project=second, title="Plant beans")
    other_task = Task.objects.create(project=other, title="Hidden")
    comment = Comment.objects.create(task=task, author=owner, body="Draft is ready")
    Comment.objects.create(task=other_task, author=stranger, body="Not yours")
    return {
        "project": project.pk,
        "second": second.pk,
        "other": other.pk,
        "task": task.pk,
        "second_task": second_task.pk,
        "other_task": other_task.pk,
        "comment": comment.pk,
        "missing": MISSING,
        "owner": owner.pk,
        "stranger": stranger.pk,
    }


def snapshot() -> list[Any]:
    return [
        list(Project.objects.order_by("pk").values_list("pk", "name", "owner")),
        list(Task.objects.order_by("pk").values_list("pk", "project", "title", "done")),
        list(Comment.objects.order_by("pk").values_list("pk", "task", "body")),
    ]


TASKS = "/api/projects/{project_pk}/tasks/"
COMMENTS = "/api/projects/{project_pk}/tasks/{task_pk}/comments/"
MINE = {"project_pk": "{project}"}
MY_TASK = {"project_pk": "{project}", "task_pk": "{task}"}

# (tool, method, url, arguments); "{name}" values are filled from the ``ids`` fixture,
# "'{name}'" ones as the digits a URL carries.
OPERATIONS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("list_projects", "GET", "/api/projects/", {}),
    ("get_project", "GET", "/api/projects/{id}/", {"id": "{project}"}),
    ("get_project", "GET", "/api/projects/{id}/", {"id": "{other}"}),
    ("create_project", "POST", "/api/projects/", {"name": "Move"}),
    ("create_project", "POST", "/api/projects/", {"name": ""}),
    ("update_project", "PATCH", "/api/projects/{id}/", {"id": "{project}", "name": "Relaunch"}),
    ("update_project", "PATCH", "/api/projects/{id}/", {"id": "{other}", "name": "Mine"}),
    ("replace_project", "PUT", "/api/projects/{id}/", {"id": "{project}", "name": "Again"}),
    ("delete_project", "DELETE", "/api/projects/{id}/", {"id": "{project}"}),
    ("delete_project", "DELETE", "/api/projects/{id}/", {"id": "{other}"}),
    # The same viewset under a user, routed by hand: the caller's own only.
    ("list_user_projects", "GET", "/api/users/{user_pk}/projects/", {"user_pk": "{owner}"}),
    ("list_user_projects", "GET", "/api/users/{user_pk}/projects/", {"user_pk": "'{owner}'"}),
    ("list_user_projects", "GET", "/api/users/{user_pk}/projects/", {"user_pk": "{stranger}"}),
    ("list_user_projects", "GET", "/api/users/{user_pk}/projects/", {"user_pk": "{missing}"}),
    (
        "create_user_project",
        "POST",
        "/api/users/{user_pk}/projects/",
        {"user_pk": "{owner}", "name": "Mine"},
    ),
    (
        "create_user_project",
        "POST",
        "/api/users/{user_pk}/projects/",
        {"user_pk": "{stranger}", "name": "Theirs"},
    ),
    ("create_user_project", "POST", "/api/users/{user_pk}/projects/", {"user_pk": "{owner}"}),
    # The same viewset, flat (every task of the caller's projects) ...
    ("list_tasks", "GET", "/api/tasks/", {}),
    ("list_tasks", "GET", "/api/tasks/", {"page": 2}),
    ("get_task", "GET", "/api/tasks/{id}/", {"id": "{second_task}"}),
    ("get_task", "GET", "/api/tasks/{id}/", {"id": "{other_task}"}),
    # ... and nested under a project.
    ("list_project_tasks", "GET", TASKS, MINE),
    ("list_project_tasks", "GET", TASKS, {**MINE, "page": 2}),
    ("list_project_tasks", "GET", TASKS, {"project_pk": "'{project}'"}),
    ("list_project_tasks", "GET", TASKS, {"project_pk": "{missing}"}),
    ("list_project_tasks", "GET", TASKS, {"project_pk": "{other}"}),
    ("get_project_task", "GET", TASKS + "{id}/", {**MINE, "id": "{task}"}),
    ("get_project_task", "GET", TASKS + "{id}/", {**MINE, "id": "{second_task}"}),
    ("get_project_task", "GET", TASKS + "{id}/", {"project_pk": "{other}", "id": "{other_task}"}),
    ("create_project_task", "POST", TASKS, {**MINE, "title": "Order food"}),
    ("create_project_task", "POST", TASKS, {**MINE, "title": "", "done": "maybe"}),
    ("create_project_task", "POST", TASKS, {**MINE, "title": "x" * 101}),
    ("create_project_task", "POST", TASKS, {"project_pk": "{other}", "title": "Sneak"}),
    ("create_project_task", "POST", TASKS, {"project_pk": "{missing}", "title": "Lost"}),
    ("update_project_task", "PATCH", TASKS + "{id}/", {**MINE, "id": "{task}", "done": True}),
    (
        "update_project_task",
        "PATCH",
        TASKS + "{id}/",
        {**MINE, "id": "{second_task}", "done": True},
    ),
    (
        "replace_project_task",
        "PUT",
        TASKS + "{id}/",
        {**MINE, "id": "{task}", "title": "Rewrite", "done": False},
    ),
    ("replace_project_task", "PUT", TASKS + "{id}/", {**MINE, "id": "{task}", "done": False}),
    ("delete_project_task", "DELETE", TASKS + "{id}/", {**MINE, "id": "{task}"}),
    (
        "delete_project_task",
        "DELETE",
        TASKS + "{id}/",
        {"project_pk": "{other}", "id": "{other_task}"},
    ),
    # Two levels down, routed with path() and re_path().
    ("list_task_comments", "GET", COMMENTS, MY_TASK),
    ("list_task_comments", "GET", COMMENTS, {"project_pk": "{other}", "task_pk": "{other_task}"}),
    ("list_task_comments", "GET", COMMENTS, {"project_pk": "{project}", "task_pk": "{other_task}"}),
    ("list_task_comments", "GET", COMMENTS, {"project_pk": "{second}", "task_pk": "{task}"}),
    ("list_task_comments", "GET", COMMENTS, {"project_pk": "{project}", "task_pk": "{missing}"}),
    ("get_task_comment", "GET", COMMENTS + "{id}/", {**MY_TASK, "id": "{comment}"}),
    ("get_task_comment", "GET", COMMENTS + "{id}/", {**MY_TASK, "id": "'{comment}'"}),
    ("get_task_comment", "GET", COMMENTS + "{id}/", {**MY_TASK, "id": "{missing}"}),
    ("create_task_comment", "POST", COMMENTS, {**MY_TASK, "body": "Looks good"}),
    ("create_task_comment", "POST", COMMENTS, {**MY_TASK, "body": ""}),
    (
        "create_task_comment",
        "POST",
        COMMENTS,
        {"project_pk": "{other}", "task_pk": "{other_task}", "body": "Hi"},
    ),
    (
        "update_task_comment",
        "PATCH",
        COMMENTS + "{id}/",
        {**MY_TASK, "id": "{comment}", "body": "Done"},
    ),
    (
        "replace_task_comment",
        "PUT",
        COMMENTS + "{id}/",
        {**MY_TASK, "id": "{comment}", "body": "Done"},
    ),
    ("replace_task_comment", "PUT", COMMENTS + "{id}/", {**MY_TASK, "id": "{comment}"}),
    ("delete_task_comment", "DELETE", COMMENTS + "{id}/", {**MY_TASK, "id": "{comment}"}),
    (
        "delete_task_comment",
        "DELETE",
        COMMENTS + "{id}/",
        {"project_pk": "{second}", "task_pk": "{task}", "id": "{comment}"},
    ),
]


def fill(value: Any, ids: dict[str, int]) -> Any:
    if isinstance(value, str) and value.startswith("'{") and value.endswith("}'"):
        return str(ids[value[2:-2]])
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids[value[1:-1]]
    return value


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
@pytest.mark.parametrize(
    ("tool", "method", "url", "arguments"),
    OPERATIONS,
    ids=[f"{o[0]}-{i}" for i, o in enumerate(OPERATIONS)],
)
def test_rest_and_mcp_agree(
    kind: str,
    tool: str,
    method: str,
    url: str,
    arguments: dict[str, Any],
    client: Client,
    owner: Any,
    ids: dict[str, int],
) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    filled = {k: fill(v, ids) for k, v in arguments.items()}
    rest, answer = check_parity(
        client,
        credential,
        tool=tool,
        method=method,
        url=url.format(**filled),
        arguments=filled,
        rest_arguments={k: v for k, v in filled.items() if k not in PATH_ARGUMENTS},
        snapshot=snapshot,
    )
    if method != "GET" and "write" not in credential.scopes:
        assert rest.status_code == 403
        assert answer["structuredContent"]["error"]["code"] == "insufficient_scope"


def test_every_tool_is_covered() -> None:
    from tests.hosts.nested.urls import endpoint

    assert {t.name for t in endpoint.tools} == {o[0] for o in OPERATIONS}


def test_a_refused_write_names_each_field(client: Client, owner: Any, ids: dict[str, int]) -> None:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read write").bearer)
    result = rpc.call(
        "create_project_task", {"project_pk": ids["project"], "title": "", "done": "maybe"}
    )
    error = result["structuredContent"]["error"]
    assert error["code"] == "invalid_arguments"
    assert error["fields"] == {
        "title": ["This field may not be blank."],
        "done": ["Must be a valid boolean."],
    }


def test_a_parent_the_caller_may_not_see_is_not_found_and_untouched(
    client: Client, owner: Any, ids: dict[str, int]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read write").bearer)
    before = snapshot()
    project = "No Project matches the given query."
    task = "No Task matches the given query."
    for tool, arguments, message in [
        ("list_project_tasks", {"project_pk": ids["other"]}, project),
        ("create_project_task", {"project_pk": ids["other"], "title": "Sneak"}, project),
        ("delete_project_task", {"project_pk": ids["other"], "id": ids["other_task"]}, project),
        ("list_task_comments", {"project_pk": ids["other"], "task_pk": ids["other_task"]}, task),
        (
            "create_task_comment",
            {"project_pk": ids["other"], "task_pk": ids["other_task"], "body": "Hi"},
            task,
        ),
    ]:
        error = rpc.call(tool, arguments)["structuredContent"]["error"]
        assert (error["code"], error["message"]) == ("not_found", message), tool
    assert snapshot() == before


# -- URL kwargs typed by their routes -------------------------------------------------------


def tool_schema(client: Client, owner: Any, name: str) -> dict[str, Any]:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read write").bearer)
    tools = {t["name"]: t for t in rpc.result("tools/list")["tools"]}
    schema: dict[str, Any] = tools[name]["inputSchema"]
    return schema


@pytest.mark.parametrize(
    ("tool", "kwargs"),
    [
        ("list_project_tasks", ["project_pk"]),  # a nested router, the parent's regex
        ("get_project_task", ["project_pk", "id"]),
        ("list_task_comments", ["project_pk", "task_pk"]),  # path() with <int:...>
        ("get_task_comment", ["project_pk", "task_pk", "id"]),  # re_path() with [0-9]+
    ],
)
def test_integer_kwargs_are_integers(
    client: Client, owner: Any, tool: str, kwargs: list[str]
) -> None:
    schema = tool_schema(client, owner, tool)
    for kwarg in kwargs:
        assert schema["properties"][kwarg]["type"] == "integer", kwarg
        assert schema["properties"][kwarg]["minimum"] == 0
    assert set(kwargs) <= set(schema["required"])
    validator = Draft202012Validator(schema)
    assert validator.is_valid({k: 2 for k in kwargs})
    assert not validator.is_valid({k: "abc" for k in kwargs})


@pytest.mark.parametrize("value", ["abc", "2x", -1, 2.5, True, None, [2]])
def test_a_wrong_typed_parent_is_refused_through_both(
    client: Client, owner: Any, ids: dict[str, int], value: Any
) -> None:
    """REST's URL does not resolve (404); the tool's input schema refuses the argument
    (``invalid_arguments``, naming it). Neither runs the view or changes anything."""
    credential = api_key(owner, "read write")
    before = snapshot()
    rest = call_rest(
        client, credential.bearer, "POST", f"/api/projects/{value}/tasks/", {"title": "t"}
    )
    assert rest.status_code == 404
    rpc = MCPClient(client, "/mcp", credential.bearer)
    error = rpc.call("create_project_task", {"project_pk": value, "title": "t"})[
        "structuredContent"
    ]["error"]
    assert error["code"] == "invalid_arguments"
    assert list(error["fields"]) == ["project_pk"]
    assert snapshot() == before


def test_the_digits_a_url_carries_are_taken(
    client: Client, owner: Any, ids: dict[str, int]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read").bearer)
    by_number = rpc.call(
        "list_task_comments", {"project_pk": ids["project"], "task_pk": ids["task"]}
    )
    by_text = rpc.call(
        "list_task_comments", {"project_pk": str(ids["project"]), "task_pk": str(ids["task"])}
    )
    assert by_number["isError"] is False
    assert by_text["structuredContent"] == by_number["structuredContent"]
    assert [c["body"] for c in by_text["structuredContent"]["results"]] == ["Draft is ready"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("list_user_projects", {"user_pk": "{owner}"}),
        ("get_project_task", {"project_pk": "{project}", "id": "{task}"}),
        ("list_project_tasks", {"project_pk": "{project}", "page": 2}),
    ],
)
def test_an_integral_float_is_the_integer(
    tool: str, arguments: dict[str, Any], client: Client, owner: Any, ids: dict[str, int]
) -> None:
    # JSON Schema takes 2.0 as an integer; the URL and the query string get "2", as for 2.
    rpc = MCPClient(client, "/mcp", api_key(owner, "read").bearer)
    filled = {name: fill(value, {**ids, "owner": owner.pk}) for name, value in arguments.items()}
    by_int = rpc.call(tool, filled)
    by_float = rpc.call(tool, {name: float(value) for name, value in filled.items()})
    assert by_int["isError"] is False
    assert by_float == by_int


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("list_user_projects", {"user_pk": "{owner}"}, "user_pk"),
        ("get_project_task", {"project_pk": "{project}", "id": "{task}"}, "id"),
    ],
)
def test_a_fractional_number_is_still_refused(
    tool: str,
    arguments: dict[str, Any],
    field: str,
    client: Client,
    owner: Any,
    ids: dict[str, int],
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(owner, "read").bearer)
    filled = {name: fill(value, {**ids, "owner": owner.pk}) for name, value in arguments.items()}
    error = rpc.call(tool, {**filled, field: filled[field] + 0.5})["structuredContent"]["error"]
    assert error["code"] == "invalid_arguments"
    assert list(error["fields"]) == [field]


def typed_kwargs(patterns: list[Any]) -> dict[str, dict[str, Any]]:
    """The schemas of the URL kwargs of the detail route among ``patterns``."""
    [endpoint] = EndpointEnumerator(patterns).get_api_endpoints()
    route = Route(*endpoint)
    spec = build_spec(
        viewset=CommentViewSet,
        name="get_comment",
        action=route.action,
        detail=route.detail,
        options=ActionOptions(),
        singular="comment",
        plural="comments",
        route=route,
        generator=SchemaGenerator(),
    )
    properties = spec.input_schema["properties"]
    return {name: properties[name] for name in spec.path_arguments}


DETAIL = CommentViewSet.as_view({"get": "retrieve"})


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (
            path("p/<slug:project_pk>/t/<uuid:task_pk>/c/<int:pk>/", DETAIL),
            {
                "project_pk": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
                "task_pk": {"type": "string", "format": "uuid"},
                "id": {"type": "integer", "minimum": 0},
            },
        ),
        (
            path("p/<str:project_pk>/t/<task_pk>/c/<int:pk>/", DETAIL),
            {
                # str leaves the kwarg to drf-spectacular: a string, or the type of the
                # model field it names (the comment's task).
                "project_pk": {"type": "string"},
                "task_pk": {"type": "integer"},
                "id": {"type": "integer", "minimum": 0},
            },
        ),
        (
            re_path(
                r"^p/(?P<project_pk>\d+)/t/(?P<task_pk>[-a-zA-Z0-9_]+)/c/(?P<pk>-?[0-9]+)/$", DETAIL
            ),
            {
                "project_pk": {"type": "integer", "minimum": 0},
                "task_pk": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
                "id": {"type": "integer"},
            },
        ),
    ],
    ids=["slug-uuid-int", "str-default", "regexes"],
)
def test_kwargs_are_typed_by_converter_or_regex(pattern: Any, expected: dict[str, Any]) -> None:
    got = typed_kwargs([path("api/", include([pattern]))])
    assert {
        k: {n: v for n, v in s.items() if n != "description"} for k, s in got.items()
    } == expected
    validator = Draft202012Validator(
        {"type": "object", "properties": got}, format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    if expected["task_pk"].get("format") == "uuid":
        assert validator.is_valid({"task_pk": str(uuid.uuid4())})
        assert not validator.is_valid({"task_pk": "not-a-uuid"})


# -- names ------------------------------------------------------------------------------------


def test_names_read_as_verb_parent_noun() -> None:
    from tests.hosts.nested.urls import endpoint

    names = [t.name for t in endpoint.tools]
    assert len(names) == len(set(names))
    assert all(TOOL_NAME.match(n) for n in names)
    assert {"list_tasks", "get_task", "list_project_tasks", "get_project_task"} <= set(names)
    assert {"create_project_task", "update_project_task", "delete_project_task"} <= set(names)
    assert {"list_task_comments", "get_task_comment", "create_task_comment"} <= set(names)
    assert not [n for n in names if "_pk" in n or n[-1].isdigit()]
    routes = {t.name: t.spec.route.path for t in endpoint.tools if t.spec is not None}
    assert routes["get_task"] == "/api/tasks/{pk}/"
    assert routes["get_project_task"] == "/api/projects/{project_pk}/tasks/{pk}/"


@pytest.mark.parametrize(
    ("kwarg", "noun"),
    [
        ("user_pk", "user"),
        ("project_id", "project"),
        ("team_slug", "team"),
        ("nested_1_pk", "nested_1"),
        ("pk", "pk"),
        ("parentId", "parentid"),
    ],
)
def test_the_parent_noun_of_a_kwarg(kwarg: str, noun: str) -> None:
    assert parent_noun(kwarg) == noun


def scratch(name: str) -> Endpoint:
    endpoint = Endpoint(name, server_name=name)
    endpoints.discard(endpoint)
    return endpoint


def test_a_viewset_registered_flat_and_nested_by_hand() -> None:
    endpoint = scratch("by-hand")
    flat = endpoint.register_viewset(TaskViewSet, include=["list"])
    nested = endpoint.register_viewset(TaskViewSet, include=["list"], parents=["project_pk"])
    assert [t.name for t in endpoint.tools] == ["list_tasks", "list_project_tasks"]
    assert flat.routes()["list"].path == "/api/tasks/"
    assert nested.routes()["list"].path == "/api/projects/{project_pk}/tasks/"
    assert not [m for m in endpoint.check() if m.is_serious()]


def test_a_nested_only_viewset_without_parents_keeps_plain_names() -> None:
    endpoint = scratch("no-parents")
    registration = endpoint.register_viewset(CommentViewSet, include=["list"])
    assert [t.name for t in endpoint.tools] == ["list_comments"]
    assert registration.routes()["list"].path.endswith("/tasks/{task_pk}/comments/")


def test_e100_parents_that_no_route_takes() -> None:
    endpoint = scratch("wrong-parents")
    endpoint.register_viewset(CommentViewSet, parents=["task_pk"])
    [error] = [m for m in endpoint.check() if m.id == "mcp_endpoint.E100"]
    assert "CommentViewSet is registered under the parents ['task_pk']" in error.msg
    assert "['project_pk', 'task_pk']" in (error.hint or "")


def test_a_name_collision_is_resolved_per_basename() -> None:
    """Two viewsets of one model in one router: the same names, until the router gives
    one of them a name prefix, without being unrolled."""

    class ArchivedTaskViewSet(TaskViewSet):
        """Tasks that are done."""

    router = SimpleRouter()
    router.register("projects", ProjectViewSet, basename="project")
    router.register("tasks", TaskViewSet, basename="task")
    router.register("archive", ArchivedTaskViewSet, basename="archived-task")
    clashing = scratch("clashing")
    clashing.register_router(router, include=["list"])
    assert clashing.tools.duplicates == ["list_tasks"]
    resolved = scratch("resolved")
    resolved.register_router(
        router,
        include=["list"],
        per_basename={"archived-task": {"name_prefix": "archived"}},
    )
    assert resolved.tools.duplicates == []
    assert [t.name for t in resolved.tools] == [
        "list_projects",
        "list_tasks",
        "list_archived_tasks",
    ]


def test_a_nested_routers_viewsets_take_their_parents_noun() -> None:
    router = SimpleRouter()
    router.register("projects", ProjectViewSet, basename="project")
    tasks = NestedSimpleRouter(router, "projects", lookup="project")
    tasks.register("tasks", TaskViewSet, basename="project-task")
    comments = NestedSimpleRouter(tasks, "tasks", lookup="task")
    comments.register("comments", CommentViewSet, basename="task-comment")
    endpoint = scratch("routers")
    [registration] = endpoint.register_router(comments, include=["list", "retrieve"])
    assert registration.parents == ("project_pk", "task_pk")
    assert [t.name for t in endpoint.tools] == ["list_task_comments", "get_task_comment"]
    renamed = scratch("renamed")
    renamed.register_router(
        comments, include=["list"], per_basename={"task-comment": {"name_prefix": ""}}
    )
    assert [t.name for t in renamed.tools] == ["list_comments"]


def test_per_basename_options_must_name_a_basename_of_a_nested_router() -> None:
    router = SimpleRouter()
    router.register("projects", ProjectViewSet, basename="project")
    tasks = NestedSimpleRouter(router, "projects", lookup="project")
    tasks.register("tasks", TaskViewSet, basename="project-task")
    endpoint = scratch("unknown-basename")
    with pytest.raises(ImproperlyConfigured, match=r"'task'.*'project-task'"):
        endpoint.register_router(tasks, per_basename={"task": {"name_prefix": "x"}})
    assert len(endpoint.tools) == 0
