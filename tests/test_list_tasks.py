"""``list_tasks``: each filter, search, ordering and pagination parameter changes the answer,
the answer is the REST API's, and a long answer stays inside the model's context.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from project.tracker.models import Project, Task
from tests.conftest import MCPClient

pytestmark = pytest.mark.django_db

ALL = ["Write copy", "Fix login", "Ship it", "Book venue", "Print badges", "Refactor login"]


@pytest.fixture
def backlog(project: Project, alice: Any, bob: Any) -> Project:
    """Besides the three tasks of ``project``: two dated ones in it, one in another project."""
    Task.objects.create(
        project=project,
        title="Book venue",
        description="A conference hall for 200",
        priority=4,
        due=datetime.date(2030, 3, 10),
    )
    Task.objects.create(
        project=project,
        title="Print badges",
        priority=3,
        due=datetime.date(2030, 3, 20),
        assignee=alice,
    )
    other = Project.objects.create(name="Backlog", owner=alice)
    Task.objects.create(
        project=other, title="Refactor login", priority=4, due=datetime.date(2030, 4, 1)
    )
    return other


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


def listed(rpc: MCPClient, arguments: dict[str, Any]) -> dict[str, Any]:
    result = rpc.call("list_tasks", arguments)
    assert result["isError"] is False, result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def titles(page: dict[str, Any]) -> list[str]:
    return [task["title"] for task in page["results"]]


def rest_page(client: Client, key: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = client.get("/api/tasks/", arguments, headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 200, answer.content
    data: dict[str, Any] = answer.json()
    return data


FILTERS: list[tuple[str, Callable[[Any], dict[str, Any]], list[str]]] = [
    (
        "status",
        lambda w: {"status": "open"},
        ["Write copy", "Book venue", "Print badges", "Refactor login"],
    ),
    ("priority", lambda w: {"priority": 1}, ["Fix login"]),
    ("project", lambda w: {"project": w["backlog"].pk}, ["Refactor login"]),
    ("assignee", lambda w: {"assignee": w["bob"].pk}, ["Fix login"]),
    ("due_before", lambda w: {"due_before": "2030-03-15"}, ["Book venue"]),
    ("due_after", lambda w: {"due_after": "2030-03-15"}, ["Print badges", "Refactor login"]),
    ("search_title", lambda w: {"search": "login"}, ["Fix login", "Refactor login"]),
    ("search_description", lambda w: {"search": "conference"}, ["Book venue"]),
    (
        "ordering",
        lambda w: {"ordering": "-title"},
        ["Write copy", "Ship it", "Refactor login", "Print badges", "Fix login", "Book venue"],
    ),
    (
        "ordering_by_due",
        lambda w: {"ordering": "due", "due_after": "2000-01-01"},
        ["Book venue", "Print badges", "Refactor login"],
    ),
    ("page_size", lambda w: {"page_size": 2}, ["Write copy", "Fix login"]),
    ("page", lambda w: {"page_size": 2, "page": 2}, ["Ship it", "Book venue"]),
    (
        "combined",
        lambda w: {"status": "open", "project": w["project"].pk, "due_before": "2030-12-31"},
        ["Book venue", "Print badges"],
    ),
]


@pytest.mark.parametrize(
    ("arguments", "expected"), [pytest.param(a, e, id=n) for n, a, e in FILTERS]
)
def test_each_parameter_changes_the_result(
    arguments: Callable[[Any], dict[str, Any]],
    expected: list[str],
    rpc: MCPClient,
    backlog: Project,
    project: Project,
    bob: Any,
    client: Client,
    alice_key: str,
) -> None:
    args = arguments({"backlog": backlog, "project": project, "bob": bob})
    unfiltered = listed(rpc, {})
    assert titles(unfiltered) == ALL
    page = listed(rpc, args)
    assert titles(page) == expected
    assert titles(page) != titles(unfiltered)
    assert page == rest_page(client, alice_key, args)


def test_pages_link_to_each_other(rpc: MCPClient, backlog: Project) -> None:
    first = listed(rpc, {"page_size": 4})
    assert first["count"] == 6
    assert first["previous"] is None
    assert first["next"] == "http://testserver/api/tasks/?page=2&page_size=4"
    second = listed(rpc, {"page_size": 4, "page": 2})
    assert titles(second) == ALL[4:]
    assert second["next"] is None
    assert second["previous"] == "http://testserver/api/tasks/?page_size=4"
    text = rpc.call("list_tasks", {"page_size": 4})["content"][0]["text"]
    assert text.startswith("6 tasks in all; 4 on this page. More on the next page")


def test_a_page_past_the_end_is_not_found(rpc: MCPClient, backlog: Project) -> None:
    result = rpc.call("list_tasks", {"page": 5})
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "not_found"


def test_the_text_names_each_task_by_id(rpc: MCPClient, project: Project) -> None:
    result = rpc.call("list_tasks", {"status": "in_progress"})
    task = Task.objects.get(title="Fix login")
    lines = result["content"][0]["text"].splitlines()
    assert lines[0] == "1 task in all; 1 on this page."
    assert lines[1].startswith(f"- Task {task.pk}: ")
    assert 'title="Fix login"' in lines[1]
    assert "assignee=bob" in lines[1]


# -- staying inside the model's context -----------------------------------------------------


@pytest.fixture
def many_tasks(project: Project) -> None:
    Task.objects.bulk_create(
        Task(project=project, title=f"Chore number {n:03d}", description="Routine work " * 5)
        for n in range(120)
    )


def test_the_default_page_is_the_paginators(rpc: MCPClient, many_tasks: None) -> None:
    page = listed(rpc, {})
    assert page["count"] == 123
    assert len(page["results"]) == 20


@pytest.mark.parametrize("page_size", [100, 101, 1000])
def test_never_more_than_the_paginators_maximum(
    rpc: MCPClient, many_tasks: None, page_size: int, client: Client, alice_key: str
) -> None:
    page = listed(rpc, {"page_size": page_size})
    assert page["count"] == 123
    assert len(page["results"]) == 100
    assert page["next"] is not None
    assert page == rest_page(client, alice_key, {"page_size": page_size})


def test_the_input_schema_states_the_cap(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    tools = {t["name"]: t for t in mcp_client(alice_key).result("tools/list")["tools"]}
    page_size = tools["list_tasks"]["inputSchema"]["properties"]["page_size"]
    assert page_size["maximum"] == 100
    assert page_size["minimum"] == 1


def test_a_long_text_is_cut_with_a_note_on_narrowing(
    rpc: MCPClient, many_tasks: None, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 300}
    result = rpc.call("list_tasks", {})
    assert result["isError"] is False
    text = result["content"][0]["text"]
    kept, _, note = text.partition("\n[cut at 300 of ")
    assert note, text
    assert len(kept.encode()) <= 300
    assert "narrow the query" in note
    assert "filters or search" in note
    assert "page_size" in note and "next page" in note
    # The structured answer is whole: the budget is on the text a model reads.
    assert len(result["structuredContent"]["results"]) == 20


def test_a_short_text_is_not_cut(rpc: MCPClient, many_tasks: None, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 300}
    text = rpc.call("list_tasks", {"page_size": 1})["content"][0]["text"]
    assert "[cut at" not in text
    assert len(text.encode()) <= 300


def test_the_default_budget_leaves_a_page_whole(rpc: MCPClient, many_tasks: None) -> None:
    text = rpc.call("list_tasks", {"page_size": 100})["content"][0]["text"]
    assert "[cut at" not in text
    assert len(text.splitlines()) == 101
