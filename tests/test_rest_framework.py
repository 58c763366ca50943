"""The DRF adapter (``mcp_endpoint.rest_framework``): viewsets become tools, seen through MCP.

The product's three viewsets are checked against PROTOCOL.md §5 (names, annotations,
portable schemas, a committed snapshot of ``tools/list``). The shapes of viewset a host may
have (a plain ``ViewSet``, a ``GenericViewSet`` of mixins, a ``ModelViewSet`` looked up by
a slug, extra actions, a serializer per action) are registered on the tests' own endpoint
in :mod:`tests.urls_drf_testing` and called through ``/drf-mcp``. Misconfigurations are
system check errors.

``UPDATE_SNAPSHOTS=1 pytest tests/test_rest_framework.py`` rewrites the snapshot.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import CheckMessage, run_checks
from django.test import Client
from django.utils import timezone
from jsonschema import Draft202012Validator

from mcp_endpoint import rest_framework as adapter
from mcp_endpoint.checks import check_registries
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.rest_framework import registration as registration_module
from project.tracker.models import Comment, Project, Task
from project.tracker.views import TaskViewSet
from tests.conftest import MCPClient, make_key
from tests.urls_drf_testing import drf_endpoint
from tests.viewsets_testing import (
    GADGETS,
    CategoryViewSet,
    GadgetViewSet,
    HalfRoutedViewSet,
    NoteViewSet,
    SerializerlessViewSet,
)

pytestmark = pytest.mark.django_db

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_list.json"

# The product's viewset tools, in registration order, with the HTTP method of each.
DEMO_TOOLS: dict[str, str] = {}
for _noun, _plural in (("project", "projects"), ("task", "tasks"), ("comment", "comments")):
    DEMO_TOOLS |= {
        f"list_{_plural}": "GET",
        f"get_{_noun}": "GET",
        f"create_{_noun}": "POST",
        f"replace_{_noun}": "PUT",
        f"update_{_noun}": "PATCH",
        f"delete_{_noun}": "DELETE",
    }
    if _noun == "task":
        DEMO_TOOLS |= {"complete_task": "POST", "overdue_tasks": "GET"}

DRF_TOOLS = [
    "list_gadgets",
    "get_gadget",
    "create_shipment",
    "list_categories",
    "featured_categories",
    "browse_notes",
    "get_note",
    "create_note",
    "list_people",
    "get_person",
    "create_person",
    "update_person",
    "active_people",
    "deactivate_person",
    "list_cards",
    "get_card",
    "reopen_card",
    "urgent_cards",
    "create_probe",
    "list_token_cards",
    "list_beacons",
    "explode",
    "create_fragile_project",
    "create_refused_project",
]


def list_tools(rpc: MCPClient) -> list[dict[str, Any]]:
    """Every page of ``tools/list``."""
    tools: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    while True:
        result = rpc.result("tools/list", params)
        tools.extend(result["tools"])
        if not result.get("nextCursor"):
            return tools
        params = {"cursor": result["nextCursor"]}


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


@pytest.fixture
def product_tools(rpc: MCPClient) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in list_tools(rpc)}


# -- the product's tools --------------------------------------------------------------------


def test_every_action_of_the_three_viewsets_is_a_tool(
    product_tools: dict[str, dict[str, Any]],
) -> None:
    viewset_tools = [name for name in product_tools if name in DEMO_TOOLS]
    assert viewset_tools == list(DEMO_TOOLS)
    assert set(product_tools) - set(DEMO_TOOLS) == {"summarize_project", "export_project_tasks"}


def test_tools_list_matches_the_snapshot(product_tools: dict[str, dict[str, Any]]) -> None:
    tools = list(product_tools.values())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(tools, indent=2, ensure_ascii=False) + "\n")
    assert SNAPSHOT.exists(), "No snapshot yet: run with UPDATE_SNAPSHOTS=1"
    expected = json.loads(SNAPSHOT.read_text())
    assert [t["name"] for t in tools] == [t["name"] for t in expected]
    for got, want in zip(tools, expected, strict=True):
        assert got == want, f"{got['name']} differs from the snapshot (UPDATE_SNAPSHOTS=1)"


def schema_problems(schema: Any, where: str = "#") -> list[str]:
    """``$ref`` and type arrays anywhere in ``schema``."""
    problems: list[str] = []
    if isinstance(schema, dict):
        if "$ref" in schema:
            problems.append(f"{where}: $ref")
        if isinstance(schema.get("type"), list):
            problems.append(f"{where}: type array {schema['type']}")
        for key, value in schema.items():
            problems.extend(schema_problems(value, f"{where}/{key}"))
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            problems.extend(schema_problems(value, f"{where}/{index}"))
    return problems


def assert_portable(tool: dict[str, Any]) -> None:
    for key in ("inputSchema", "outputSchema"):
        schema = tool.get(key)
        if schema is None:
            assert key == "outputSchema", tool["name"]
            continue
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object", (tool["name"], key)
        assert schema_problems(schema) == [], (tool["name"], key)
    assert tool["inputSchema"].get("additionalProperties") is False, tool["name"]


def test_every_schema_is_portable_2020_12(product_tools: dict[str, dict[str, Any]]) -> None:
    assert len(product_tools) == len(DEMO_TOOLS) + 2
    for tool in product_tools.values():
        assert_portable(tool)


def test_the_schema_walk_finds_what_it_looks_for() -> None:
    bad = {"type": "object", "properties": {"a": {"items": [{"$ref": "#/x"}]}, "b": {}}}
    bad["properties"]["b"] = {"type": ["string", "null"]}
    assert schema_problems(bad) == [
        "#/properties/a/items/0: $ref",
        "#/properties/b: type array ['string', 'null']",
    ]


def test_input_schemas_follow_the_serializer_and_filterset(
    product_tools: dict[str, dict[str, Any]],
) -> None:
    create = product_tools["create_task"]["inputSchema"]
    assert set(create["properties"]) == {
        "project",
        "title",
        "description",
        "status",
        "priority",
        "due",
        "assignee",
    }
    assert sorted(create["required"]) == ["project", "title"]
    assert create["properties"]["due"]["anyOf"] == [
        {"type": "string", "format": "date"},
        {"type": "null"},
    ]
    assert create["properties"]["status"]["enum"] == ["open", "in_progress", "done"]
    assert create["properties"]["title"]["maxLength"] == 200
    assert "required" not in {
        k: v for k, v in product_tools["update_task"]["inputSchema"].items() if k != "required"
    }
    assert product_tools["update_task"]["inputSchema"]["required"] == ["id"]
    assert sorted(product_tools["replace_task"]["inputSchema"]["required"]) == [
        "id",
        "project",
        "title",
    ]
    listing = product_tools["list_tasks"]["inputSchema"]["properties"]
    assert set(listing) == {
        "status",
        "priority",
        "project",
        "assignee",
        "due_before",
        "due_after",
        "search",
        "ordering",
        "page",
        "page_size",
    }
    assert "-due" in listing["ordering"]["enum"]
    assert listing["due_before"]["format"] == "date"
    output = product_tools["list_tasks"]["outputSchema"]
    assert set(output["properties"]) == {"count", "next", "previous", "results"}
    assert product_tools["get_task"]["outputSchema"]["properties"]["created"]["format"] == (
        "date-time"
    )


def test_annotations_follow_the_http_method(product_tools: dict[str, dict[str, Any]]) -> None:
    for name, method in DEMO_TOOLS.items():
        annotations = product_tools[name]["annotations"]
        assert annotations["openWorldHint"] is False, name
        assert annotations["readOnlyHint"] is (method == "GET"), name
        assert annotations["idempotentHint"] is (method != "POST"), name
        # All four stated, always; the demo declares its custom POST (complete) harmless.
        assert annotations["destructiveHint"] is (method == "DELETE"), name
        assert annotations["title"] == product_tools[name]["title"]


def test_descriptions_come_from_docstrings(product_tools: dict[str, dict[str, Any]]) -> None:
    # The action's docstring, then the viewset's.
    assert product_tools["complete_task"]["description"] == (
        "Mark the task done; a task that is already done is a conflict. "
        "Tasks in the projects you belong to."
    )
    assert product_tools["overdue_tasks"]["description"] == (
        "Open tasks whose due date has passed, most overdue first. "
        "Tasks in the projects you belong to."
    )
    assert product_tools["list_tasks"]["description"].endswith(
        "Tasks in the projects you belong to."
    )


def test_a_delete_answers_with_a_short_text(rpc: MCPClient, project: Project) -> None:
    task = project.tasks.get(title="Ship it")
    result = rpc.call("delete_task", {"id": task.pk})
    assert result == {
        "content": [{"type": "text", "text": f"Deleted task {task.pk}."}],
        "isError": False,
    }
    assert not Task.objects.filter(pk=task.pk).exists()


# -- the shapes of viewset a host may register ----------------------------------------------

drf_urls = pytest.mark.urls("tests.urls_drf_testing")


@pytest.fixture
def drf_rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key, "/drf-mcp")


@pytest.fixture
def drf_tools(drf_rpc: MCPClient) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in list_tools(drf_rpc)}


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is False, result
    structured: dict[str, Any] = result.get("structuredContent", {})
    return structured


@drf_urls
def test_names_follow_include_exclude_and_overrides(drf_tools: dict[str, Any]) -> None:
    # list_token_cards's view takes OAuth tokens only: it is not listed for an API key.
    assert list(drf_tools) == [name for name in DRF_TOOLS if name != "list_token_cards"]
    # include= left destroy out of the notes; exclude= left update and destroy out of people.
    assert not {"delete_note", "replace_person", "delete_person"} & set(drf_tools)


@drf_urls
def test_the_tests_endpoint_schemas_are_portable(drf_tools: dict[str, Any]) -> None:
    for tool in drf_tools.values():
        assert_portable(tool)


@drf_urls
def test_the_tests_endpoint_passes_the_system_checks() -> None:
    messages = [m for m in check_registries() if m.obj is drf_endpoint]
    assert messages == []


@drf_urls
def test_a_plain_viewset(drf_tools: dict[str, Any], drf_rpc: MCPClient) -> None:
    listing = drf_tools["list_gadgets"]
    # Unpaginated: a bare list answer is wrapped, since structuredContent is an object.
    assert listing["outputSchema"]["required"] == ["results"]
    item = listing["outputSchema"]["properties"]["results"]["items"]
    # Choices constrain what is written, not what is read back: no enum in an output.
    assert item["properties"]["colour"]["type"] == "string"
    assert "enum" not in item["properties"]["colour"]
    assert drf_tools["get_gadget"]["inputSchema"]["properties"] == {"id": {"type": "integer"}}
    assert drf_tools["get_gadget"]["description"].endswith("Gadgets from a fixed catalogue.")

    assert ok(drf_rpc.call("list_gadgets")) == {"results": list(GADGETS.values())}
    result = drf_rpc.call("get_gadget", {"id": 2})
    assert ok(result) == GADGETS[2]
    assert result["content"][0]["text"] == "Gadget 2: name=Widget, colour=blue"
    missing = drf_rpc.call("get_gadget", {"id": 9})
    assert missing["structuredContent"]["error"] == {
        "code": "not_found",
        "message": "No such gadget.",
    }


@drf_urls
def test_a_viewset_without_a_model_is_named_in_english(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, settings: Any
) -> None:
    # The basename "category" is all it has: its plural is "categories", not "categorys".
    assert drf_tools["list_categories"]["description"].startswith("List categories.")
    assert drf_tools["featured_categories"]["inputSchema"]["properties"] == {}
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_LIST_ITEMS": 1}
    text = drf_rpc.call("list_categories")["content"][0]["text"]
    assert text.endswith(
        "[showing the first 1 of 2 categories; narrow the query with filters or search]"
    )


@pytest.mark.parametrize(
    ("basename", "singular", "plural"),
    [
        ("category", "category", "categories"),
        ("status", "status", "statuses"),
        ("box", "box", "boxes"),
        ("journal_entry", "journal_entry", "journal_entries"),
        ("news", "news", "news"),
        # A basename that is already plural is not made plural twice.
        ("snippets", "snippets", "snippets"),
    ],
)
def test_the_nouns_of_a_viewset_without_a_model(
    basename: str, singular: str, plural: str, scratch_endpoint: Endpoint
) -> None:
    scratch_endpoint.register_viewset(CategoryViewSet, basename=basename)
    assert {tool.name for tool in scratch_endpoint.tools} == {
        f"list_{plural}",
        f"featured_{plural}",
    }
    [registration] = {tool.registration for tool in scratch_endpoint.tools}
    assert (registration.singular, registration.plural) == (singular, plural)


@drf_urls
def test_an_unpaginated_list_is_capped_with_a_note(drf_rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_LIST_ITEMS": 1}
    result = drf_rpc.call("list_gadgets")
    assert ok(result) == {"results": [GADGETS[1]]}
    text = result["content"][0]["text"]
    assert text.endswith(
        "[showing the first 1 of 2 gadgets; narrow the query with filters or search]"
    )


@drf_urls
def test_nested_serializers(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, client: Client, alice_key: str
) -> None:
    schema = drf_tools["create_shipment"]["inputSchema"]
    assert sorted(schema["required"]) == ["address", "parcels", "reference"]
    address = schema["properties"]["address"]
    assert address["type"] == "object"
    assert sorted(address["required"]) == ["city", "street"]
    parcels = schema["properties"]["parcels"]
    assert parcels["type"] == "array"
    assert parcels["items"]["properties"]["weight"] == {
        "type": "number",
        "format": "double",
        "minimum": 0.1,
        "description": "In kilograms.",
    }

    good = {
        "reference": "R-1",
        "address": {"street": "1 Main St", "city": "Springfield"},
        "parcels": [{"label": "box", "weight": 2.5}],
    }
    assert ok(drf_rpc.call("create_shipment", good)) == good

    bad = {
        "reference": "R-2",
        "address": {"street": "1 Main St"},
        "parcels": [{"label": "box", "weight": 2.5}, {"label": "crate", "weight": 0}],
    }
    result = drf_rpc.call("create_shipment", bad)
    rest = client.post(
        "/shipments/",
        bad,
        content_type="application/json",
        headers={"Authorization": f"Bearer {alice_key}"},
    )
    assert rest.status_code == 400
    fields = result["structuredContent"]["error"]["fields"]
    # The nested messages keep their shape, as strings, never a Python repr.
    assert fields == rest.json()
    assert fields["address"] == {"city": ["This field is required."]}
    assert "ErrorDetail" not in result["content"][0]["text"]


@drf_urls
def test_a_generic_viewset_of_mixins(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, project: Project, alice: Any
) -> None:
    assert drf_tools["create_note"]["description"] == "Leave a note on a task."
    assert drf_tools["browse_notes"]["title"] == "Browse notes"  # titled after its new name
    assert sorted(drf_tools["create_note"]["inputSchema"]["required"]) == ["body", "task"]
    task = project.tasks.first()
    assert task is not None
    made = ok(drf_rpc.call("create_note", {"task": task.pk, "body": "Remember the logo"}))
    assert made["author"] == "alice"
    assert Comment.objects.get(pk=made["id"]).body == "Remember the logo"
    assert ok(drf_rpc.call("get_note", {"id": made["id"]})) == made
    assert ok(drf_rpc.call("browse_notes"))["results"] == [made]


@drf_urls
def test_a_model_viewset_with_a_slug_lookup(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, bob: Any, client: Client, alice_key: str
) -> None:
    get_person = drf_tools["get_person"]["inputSchema"]
    assert get_person["required"] == ["username"]
    assert get_person["properties"]["username"]["type"] == "string"
    person = ok(drf_rpc.call("get_person", {"username": "bob"}))
    assert person == {
        "username": "bob",
        "email": "bob@example.com",
        "first_name": "",
        "is_active": True,
    }
    rest = client.get("/people/bob/", headers={"Authorization": f"Bearer {alice_key}"})
    assert rest.json() == person

    # The body's username would collide with the lookup's, so the body is an argument of its own.
    update = drf_tools["update_person"]["inputSchema"]
    assert update["required"] == ["username"]
    assert set(update["properties"]["body"]["properties"]) == {"username", "email", "first_name"}
    renamed = ok(
        drf_rpc.call("update_person", {"username": "bob", "body": {"first_name": "Robert"}})
    )
    assert renamed["first_name"] == "Robert"
    bob.refresh_from_db()
    assert bob.first_name == "Robert"

    made = ok(drf_rpc.call("create_person", {"username": "dave", "email": "dave@example.com"}))
    assert made["username"] == "dave"
    refused = drf_rpc.call("create_person", {"username": "bob"})
    assert refused["structuredContent"]["error"]["fields"] == {
        "username": ["A user with that username already exists."]
    }


@drf_urls
def test_detail_and_list_actions(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, bob: Any, alice: Any
) -> None:
    deactivate = drf_tools["deactivate_person"]
    assert deactivate["inputSchema"]["required"] == ["username"]
    assert deactivate["description"] == (
        "Deactivate the person: they can no longer sign in. People who use the tracker."
    )
    active = drf_tools["active_people"]
    assert active["description"] == "People who can sign in. People who use the tracker."
    assert {"page", "page_size", "search", "ordering"} <= set(active["inputSchema"]["properties"])

    before = ok(drf_rpc.call("active_people"))
    assert [p["username"] for p in before["results"]] == ["alice", "bob"]
    assert ok(drf_rpc.call("deactivate_person", {"username": "bob"}))["is_active"] is False
    after = ok(drf_rpc.call("active_people", {"search": "b"}))
    assert after["results"] == []
    # A boolean filter goes into the query string the way a REST client writes it.
    inactive = ok(drf_rpc.call("list_people", {"is_active": False}))
    assert [p["username"] for p in inactive["results"]] == ["bob"]


@drf_urls
def test_a_serializer_per_action(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, project: Project
) -> None:
    summary = {"id", "title", "status"}
    items = drf_tools["list_cards"]["outputSchema"]["properties"]["results"]["items"]
    assert set(items["properties"]) == summary
    urgent = drf_tools["urgent_cards"]["outputSchema"]["properties"]["results"]["items"]
    assert set(urgent["properties"]) == summary
    full = set(drf_tools["get_card"]["outputSchema"]["properties"])
    assert full > summary and "priority" in full
    assert set(drf_tools["reopen_card"]["outputSchema"]["properties"]) == full
    assert drf_tools["reopen_card"]["inputSchema"]["required"] == ["id"]

    cards = ok(drf_rpc.call("list_cards"))["results"]
    assert [set(card) for card in cards] == [summary] * 3
    done = project.tasks.get(status="done")
    card = ok(drf_rpc.call("get_card", {"id": done.pk}))
    assert set(card) == full
    reopened = ok(drf_rpc.call("reopen_card", {"id": done.pk}))
    assert reopened["status"] == "open"
    assert Task.objects.get(pk=done.pk).status == "open"
    assert [c["title"] for c in ok(drf_rpc.call("urgent_cards"))["results"]] == ["Fix login"]


@drf_urls
def test_annotations_overridden_per_action(drf_tools: dict[str, Any]) -> None:
    assert drf_tools["deactivate_person"]["annotations"] == {
        "title": "Deactivate person",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    get_person = drf_tools["get_person"]
    assert get_person["annotations"]["openWorldHint"] is True
    assert get_person["annotations"]["readOnlyHint"] is True
    assert get_person["title"] == get_person["annotations"]["title"] == "Look a person up"
    # Not overridden: the defaults.
    assert drf_tools["create_person"]["annotations"]["destructiveHint"] is False
    assert drf_tools["update_person"]["annotations"]["idempotentHint"] is True


@drf_urls
def test_the_views_scopes_decide_visibility(
    mcp_client: Callable[..., MCPClient], alice: Any
) -> None:
    read_only = {t["name"] for t in list_tools(mcp_client(make_key(alice, "read"), "/drf-mcp"))}
    assert {"list_gadgets", "get_person", "active_people", "list_cards"} <= read_only
    assert not {"create_note", "update_person", "deactivate_person", "reopen_card"} & read_only
    # Views without a scope permission are shown to every credential.
    assert {"list_beacons", "explode"} <= read_only


@drf_urls
def test_calls_run_through_the_views_own_queryset(
    mcp_client: Callable[..., MCPClient], project: Project, carol: Any
) -> None:
    carol_rpc = mcp_client(make_key(carol, "read write"), "/drf-mcp")
    assert ok(carol_rpc.call("list_cards"))["results"] == []
    task = project.tasks.first()
    assert task is not None
    error = carol_rpc.call("reopen_card", {"id": task.pk})["structuredContent"]["error"]
    assert error["code"] == "not_found"


# -- misconfiguration is a system check error -----------------------------------------------


@pytest.fixture
def scratch_endpoint() -> Iterator[Endpoint]:
    """An endpoint for one test; it leaves the set the system checks look at afterwards."""
    endpoint = Endpoint("scratch")
    yield endpoint
    endpoints.discard(endpoint)


def errors_for(endpoint: Endpoint, messages: list[CheckMessage] | None = None) -> list[Any]:
    found = messages if messages is not None else check_registries()
    return [m for m in found if m.obj is endpoint and m.is_serious()]


def test_an_unknown_action_in_include(scratch_endpoint: Endpoint) -> None:
    scratch_endpoint.register_viewset(GadgetViewSet, include=["list", "frobnicate"])
    [error] = errors_for(scratch_endpoint)
    assert error.id == "mcp_endpoint.E020"
    assert "GadgetViewSet has no action 'frobnicate'" in error.msg
    assert error.hint == "Its actions are: list, retrieve."


def test_an_unknown_action_in_names(scratch_endpoint: Endpoint) -> None:
    scratch_endpoint.register_viewset(
        NoteViewSet, names={"lst": "browse"}, annotations={"retrieve": {"openWorldHint": True}}
    )
    errors = errors_for(scratch_endpoint, run_checks())
    assert [e.id for e in errors] == ["mcp_endpoint.E020"]
    assert "'lst'" in errors[0].msg
    assert "create, destroy, list, retrieve" in errors[0].hint


def test_a_duplicate_tool_name(scratch_endpoint: Endpoint) -> None:
    scratch_endpoint.register_viewset(TaskViewSet)
    scratch_endpoint.register_viewset(GadgetViewSet, names={"list": "get_task"})
    errors = errors_for(scratch_endpoint)
    assert [e.id for e in errors] == ["mcp_endpoint.E010"]
    assert "'get_task'" in errors[0].msg
    assert errors[0].hint
    # Never a silent overwrite: the first registration keeps the name.
    tool = scratch_endpoint.tools.get("get_task")
    assert isinstance(tool, adapter.ViewSetTool) and tool.registration.viewset is TaskViewSet


def test_a_tool_name_clients_refuse(scratch_endpoint: Endpoint) -> None:
    scratch_endpoint.register_viewset(GadgetViewSet, names={"list": "list gadgets!"})
    assert [e.id for e in errors_for(scratch_endpoint)] == ["mcp_endpoint.E011"]


def test_a_viewset_with_no_serializer(scratch_endpoint: Endpoint) -> None:
    scratch_endpoint.register_viewset(SerializerlessViewSet)
    # A warning, never an error: it must not stop migrate or any other command.
    assert errors_for(scratch_endpoint) == []
    [warning] = [m for m in check_registries() if m.obj is scratch_endpoint]
    assert warning.id == "mcp_endpoint.W022"
    assert "SerializerlessViewSet.list" in warning.msg
    assert "'list_tasks' is not listed" in warning.msg
    assert warning.hint is not None and "serializer_class" in warning.hint
    [tool] = scratch_endpoint.tools
    assert tool.unavailable() is not None
    assert tool.unavailable().startswith("its schema could not be built (")


@drf_urls
def test_an_action_the_url_conf_does_not_route(
    scratch_endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The routes are read from the URL conf once per process; read them from this one.
    monkeypatch.setattr(registration_module, "_url_routes", {})
    scratch_endpoint.register_viewset(HalfRoutedViewSet)
    errors = errors_for(scratch_endpoint)
    assert [e.id for e in errors] == ["mcp_endpoint.E021"]
    assert "HalfRoutedViewSet.retrieve has no route" in errors[0].msg
    assert errors[0].hint
    assert [t.name for t in scratch_endpoint.tools] == ["list_tasks", "get_task"]


@pytest.mark.urls("tests.hosts.generated.urls")
def test_each_registration_looks_only_at_its_own_views_routes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A large product's registrations each find their routes among their own view's, so
    # that finding every tool's route grows with the product, not with its square (200
    # viewsets here, each asked about all 1,050 routes before).
    from drf_spectacular.generators import EndpointEnumerator

    from tests.hosts import host_endpoint
    from tests.hosts.generated.urls import router

    asked: list[Any] = []
    matches = registration_module.ViewSetRegistration.matches

    def counted(self: Any, route: Any) -> bool:
        asked.append(route)
        return matches(self, route)

    monkeypatch.setattr(registration_module.ViewSetRegistration, "matches", counted)
    endpoint = host_endpoint("generated-again")
    endpoint.register_router(router)
    for registration in endpoint.registrations:
        registration.build(database=False)
    routes = EndpointEnumerator().get_api_endpoints()
    assert len(endpoint.registrations) == 200
    assert len({id(route) for route in asked}) == len(asked) == len(routes)
    assert all(tool.unavailable() is None for tool in endpoint.tools)


@drf_urls
def test_the_view_still_chooses_which_credentials_it_accepts(
    client: Any, drf_rpc: MCPClient, alice_key: str, alice: Any, project: Project
) -> None:
    # The view authenticates with OAuth tokens only: an API key is refused at /api/ and,
    # through the same view, at /mcp, though the MCP endpoint itself accepts the key.
    rest = client.get("/token-cards/", headers={"Authorization": f"Bearer {alice_key}"})
    assert rest.status_code in (401, 403)
    error = drf_rpc.call("list_token_cards")["structuredContent"]["error"]
    assert error["code"] == "permission_denied"

    from oauth2_provider.models import AccessToken, Application

    app = Application.objects.create(
        name="t", client_type="confidential", authorization_grant_type="authorization-code",
        user=alice, redirect_uris="http://127.0.0.1/cb",
    )  # fmt: skip
    AccessToken.objects.create(
        user=alice, application=app, token="token-cards-0123456789", scope="read",
        expires=timezone.now() + timedelta(hours=1), resource=["http://testserver/drf-mcp"],
    )  # fmt: skip
    with_token = MCPClient(client, "/drf-mcp", "token-cards-0123456789")
    listed = ok(with_token.call("list_token_cards"))
    assert {row["id"] for row in listed["results"]} == set(
        project.tasks.values_list("id", flat=True)
    )


@drf_urls
def test_the_view_gets_the_request_a_rest_call_would_give_it(
    client: Client, alice_key: str, settings: Any
) -> None:
    settings.ALLOWED_HOSTS = ["tracker.example.com"]
    rpc = MCPClient(client, "/drf-mcp", alice_key)
    extra = {"REMOTE_ADDR": "203.0.113.9", "HTTP_HOST": "tracker.example.com"}
    response = client.post(
        "/drf-mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "create_probe", "arguments": {}}}),
        content_type="application/json", headers=rpc.headers(), **extra,
    )  # fmt: skip
    seen = ok(response.json()["result"])
    rest = client.post("/probes/", headers=rpc.headers(), **extra).json()
    assert seen == {
        "user": "alice",
        "authenticator": "APIKeyAuthentication",
        "client": "203.0.113.9",
        "host": "tracker.example.com",
        "absolute": "http://tracker.example.com/probes/",
        "messages": ["Probed."],  # message storage works on the inner request
    }
    assert rest == seen


# -- query strings are bounded ------------------------------------------------------------------


@drf_urls
def test_query_strings_are_bounded_and_say_so(
    drf_tools: dict[str, Any], drf_rpc: MCPClient, alice: Any, bob: Any
) -> None:
    properties = drf_tools["list_people"]["inputSchema"]["properties"]
    assert properties["search"]["maxLength"] == 500
    # An enum is bounded already; a body field keeps the serializer's own bounds.
    assert "maxLength" not in properties["ordering"]
    assert ok(drf_rpc.call("list_people", {"search": "b" * 500}))["results"] == []
    refused = drf_rpc.call("list_people", {"search": "b" * 501})
    assert refused["isError"] is True
    error = refused["structuredContent"]["error"]
    assert error["code"] == "invalid_arguments"
    assert error["fields"] == {"search": ["Ensure this field has no more than 500 characters."]}


def test_the_product_bounds_its_query_strings_too(product_tools: dict[str, Any]) -> None:
    properties = product_tools["list_tasks"]["inputSchema"]["properties"]
    assert properties["search"]["maxLength"] == 500
    assert "maxLength" not in properties["status"]  # a choice is bounded by its enum
    assert "maxLength" not in product_tools["create_task"]["inputSchema"]["properties"]["status"]


def test_a_view_that_served_a_request_is_still_the_routed_view(rf: Any) -> None:
    """DRF adds ``head`` to a viewset view's actions the first time it serves a GET: the
    tool's route (which has served one) and the same route in a URLconf that has not are
    the same view, so a tool call is not refused as routed elsewhere."""
    from rest_framework.routers import SimpleRouter

    from mcp_endpoint.rest_framework.handler import same_view

    served, fresh = SimpleRouter(), SimpleRouter()
    served.register("gadgets", GadgetViewSet, basename="gadget")
    fresh.register("gadgets", GadgetViewSet, basename="gadget")
    [served_list, *_] = served.urls
    [fresh_list, *_] = fresh.urls
    served_list.callback(rf.head("/gadgets/"))
    assert "head" in served_list.callback.actions
    assert same_view(fresh_list.callback, served_list.callback)
    other = SimpleRouter()
    other.register("notes", NoteViewSet, basename="note")
    assert not same_view(other.urls[0].callback, served_list.callback)
