"""System checks: one test per check id, plus ``manage.py check`` and ``makemigrations``.

Every endpoint made in the process is checked, so the throwaway endpoints made here are
dropped (and garbage-collected) after each test; the others would fail their checks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.checks import CheckMessage
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_endpoint.checks import (
    check_registries,
    check_settings,
    check_tool_schemas_with_database,
)
from mcp_endpoint.conf import SETTINGS_BY_NAME
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.prompts import PromptArgument
from mcp_endpoint.tools import Tool

PREFIX = "throwaway-checks"


def check_id(key: str) -> str:
    """The id of the check that refuses a bad value of ``key``."""
    return SETTINGS_BY_NAME[key].check_id


MakeEndpoint = Callable[..., Endpoint]


@pytest.fixture
def make_endpoint() -> Iterator[MakeEndpoint]:
    """Endpoints for one test; gone from ``endpoints`` once the test ends."""
    made: list[Endpoint] = []

    def make(suffix: str = "", **settings: Any) -> Endpoint:
        # The deprecated dict, which takes any key and any value, so that the checks
        # (not the constructor) are the ones that refuse them.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            endpoint = Endpoint(f"{PREFIX}{suffix}", settings=settings or None)
        made.append(endpoint)
        return endpoint

    yield make
    # Taken out of the endpoints the checks walk at once: an endpoint holds cycles, and
    # waiting for the collector (a whole collection per test) cost seconds in a full run.
    for endpoint in made:
        endpoints.discard(endpoint)
    made.clear()
    assert not [e for e in endpoints if e.name.startswith(PREFIX)]


def messages(check: Callable[..., list[CheckMessage]], check_id: str) -> list[CheckMessage]:
    """The messages of ``check`` with ``check_id`` that are about a throwaway endpoint."""
    found = []
    for message in check():
        if message.id != check_id:
            continue
        obj = message.obj
        if (isinstance(obj, Endpoint) and obj.name.startswith(PREFIX)) or PREFIX in message.msg:
            found.append(message)
    return found


def only(check: Callable[..., list[CheckMessage]], check_id: str) -> CheckMessage:
    found = messages(check, check_id)
    assert len(found) == 1, [m.msg for m in check()]
    assert found[0].is_serious()
    return found[0]


# -- a clean project ------------------------------------------------------------------------------


@pytest.mark.backends
def test_the_project_is_clean() -> None:
    # Raises SystemCheckError on any error.
    call_command("check")


def errors(check: Callable[..., list[CheckMessage]]) -> list[str]:
    return [f"{m.id}: {m.msg}" for m in check() if m.is_serious()]


def test_the_registered_endpoints_pass_every_check() -> None:
    assert errors(check_settings) == []
    assert errors(check_registries) == []


def test_a_clean_endpoint_passes(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(SERVER_NAME="clean", LIST_PAGE_SIZE=5, TTL_MS=0)

    @endpoint.tool(scopes=["read"])
    def fine(n: int | None = None) -> dict[str, int]:
        return {"n": n or 0}

    assert errors(check_settings) == []
    assert errors(check_registries) == []


@pytest.mark.backends
def test_manage_py_check_fails_on_an_error(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(NO_SUCH_KEY=1)
    with pytest.raises(SystemCheckError, match=r"mcp_endpoint\.E001"):
        call_command("check")


@pytest.mark.django_db
def test_no_missing_migrations() -> None:
    # Exits non-zero when a model change has no migration.
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


# -- settings: E001 to E005 ---------------------------------------------------------------------


def test_e001_unknown_key(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(MAX_REQUEST_SIZE=10)
    message = only(check_settings, "mcp_endpoint.E001")
    assert "'MAX_REQUEST_SIZE'" in message.msg
    assert message.hint is not None and "MAX_REQUEST_BYTES" in message.hint


def test_e001_unknown_key_in_the_settings_dict(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SERVER_NAMES": "typo"}
    [message] = [m for m in check_settings() if m.id == "mcp_endpoint.E001"]
    assert "MCP_ENDPOINT" in message.msg and "'SERVER_NAMES'" in message.msg


def test_e001_settings_not_a_dict(settings: Any) -> None:
    settings.MCP_ENDPOINT = [("SERVER_NAME", "x")]
    [message] = check_settings()
    assert message.id == "mcp_endpoint.E001"
    assert "dict" in message.msg


@pytest.mark.parametrize(
    "versions", [[], ["2025-11-25", "2099-01-01"], "2025-11-25", [20251125], None]
)
def test_e002_bad_versions(make_endpoint: MakeEndpoint, versions: Any) -> None:
    make_endpoint(PROTOCOL_VERSIONS=versions)
    message = only(check_settings, "mcp_endpoint.E002")
    assert message.hint is not None and "2026-07-28" in message.hint


def test_e002_good_versions(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(PROTOCOL_VERSIONS=("2025-06-18", "2026-07-28"))
    assert messages(check_settings, "mcp_endpoint.E002") == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("MAX_REQUEST_BYTES", 0),
        ("MAX_REQUEST_BYTES", "1MB"),
        ("LIST_PAGE_SIZE", -1),
        ("LIST_PAGE_SIZE", 2.5),
        ("TEXT_BUDGET_BYTES", True),
        ("TTL_MS", -1),
        ("API_KEY_DEFAULT_EXPIRY_DAYS", 0),
        ("API_KEY_DEFAULT_EXPIRY_DAYS", "90"),
    ],
)
def test_bad_integers(make_endpoint: MakeEndpoint, key: str, value: Any) -> None:
    make_endpoint(**{key: value})
    message = only(check_settings, check_id(key))
    assert key in message.msg


@pytest.mark.parametrize(
    "key",
    [
        "MAX_ARGUMENT_DEPTH",
        "MAX_BATCH_SIZE",
        "MAX_QUERY_ARGUMENT_LENGTH",
        "OUTAGE_RETRY_AFTER",
        "OUTAGE_LOG_INTERVAL",
        "MAX_BINARY_RESULT_BYTES",
    ],
)
def test_limits_are_positive_integers(make_endpoint: MakeEndpoint, key: str) -> None:
    make_endpoint(**{key: 0})
    assert key in only(check_settings, check_id(key)).msg


@pytest.mark.parametrize("value", [0, 501, 2.5, "deep", True])
def test_e042_json_depth_out_of_range(make_endpoint: MakeEndpoint, value: Any) -> None:
    make_endpoint(MAX_JSON_DEPTH=value)
    message = only(check_settings, "mcp_endpoint.E042")
    assert "MAX_JSON_DEPTH" in message.msg
    assert message.hint


@pytest.mark.parametrize("value", [1, 200, 500])
def test_e042_json_depth_in_range(make_endpoint: MakeEndpoint, value: int) -> None:
    make_endpoint(MAX_JSON_DEPTH=value)
    assert messages(check_settings, "mcp_endpoint.E042") == []


@pytest.mark.parametrize("value", [-1, "20s", True, float("nan")])
def test_e043_batch_time_budget(make_endpoint: MakeEndpoint, value: Any) -> None:
    make_endpoint(BATCH_TIME_BUDGET=value)
    message = only(check_settings, "mcp_endpoint.E043")
    assert "BATCH_TIME_BUDGET" in message.msg and message.hint


@pytest.mark.parametrize("value", [None, 0, 2.5, 20])
def test_e043_batch_time_budget_fine(make_endpoint: MakeEndpoint, value: Any) -> None:
    make_endpoint(BATCH_TIME_BUDGET=value)
    assert messages(check_settings, "mcp_endpoint.E043") == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("TOOL_MIDDLEWARE", "yes"),
        ("TOOL_MIDDLEWARE", None),
        ("TOOL_MIDDLEWARE_SKIP", "corsheaders.middleware.CorsMiddleware"),
        ("TOOL_MIDDLEWARE_SKIP", [object()]),
    ],
)
def test_tool_middleware_malformed(settings: Any, key: str, value: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, key: value}
    [message] = [m for m in check_settings() if m.id == check_id(key)]
    assert f"MCP_ENDPOINT[{key!r}]" in message.msg and message.is_serious()


def test_e111_tool_middleware_is_not_an_endpoints(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(TOOL_MIDDLEWARE=False)
    message = only(check_settings, "mcp_endpoint.E111")
    assert "TOOL_MIDDLEWARE" in message.msg and "process" in message.msg
    assert message.hint == "Set it in MCP_ENDPOINT."


def test_w111_a_skipped_middleware_the_product_does_not_list(settings: Any) -> None:
    listed = "django.middleware.common.CommonMiddleware"
    typo = "django.middleware.common.CommonMiddleWare"
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TOOL_MIDDLEWARE_SKIP": [listed, typo]}
    [message] = [m for m in check_settings() if m.id == "mcp_endpoint.W111"]
    assert repr(typo) in message.msg and not message.is_serious()
    assert not [m for m in check_settings() if m.id == "mcp_endpoint.E111"]


def test_zero_ttl_is_fine(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(TTL_MS=0, LIST_PAGE_SIZE=1)
    assert messages(check_settings, check_id("TTL_MS")) == []
    assert messages(check_settings, check_id("LIST_PAGE_SIZE")) == []


@pytest.mark.parametrize(
    ("key", "dotted"),
    [
        ("AUTHENTICATION_CLASSES", "no_such_module.Authentication"),
        ("THROTTLE_CLASSES", "rest_framework.throttling.NoSuchThrottle"),
    ],
)
def test_unimportable_class(make_endpoint: MakeEndpoint, key: str, dotted: str) -> None:
    make_endpoint(**{key: [dotted]})
    message = only(check_settings, check_id(key))
    assert dotted in message.msg
    assert message.hint


def test_importable_classes(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(
        AUTHENTICATION_CLASSES=["rest_framework.authentication.SessionAuthentication"],
        THROTTLE_CLASSES=["rest_framework.throttling.AnonRateThrottle"],
    )
    for key in ("AUTHENTICATION_CLASSES", "THROTTLE_CLASSES"):
        assert messages(check_settings, check_id(key)) == []


@pytest.mark.parametrize(
    "origins", ["https://claude.ai", ["claude.ai"], ["ftp://example.com"], [None]]
)
def test_e005_bad_origins(make_endpoint: MakeEndpoint, origins: Any) -> None:
    make_endpoint(ALLOWED_ORIGINS=origins)
    message = only(check_settings, "mcp_endpoint.E005")
    assert "ALLOWED_ORIGINS" in message.msg


def test_e005_good_origins(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(ALLOWED_ORIGINS=["https://claude.ai", "http://localhost:3000", "*.example.com"])
    assert messages(check_settings, "mcp_endpoint.E005") == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("LARGE_CHOICE_LIST", 0),
        ("TOOL_BUDGET_BYTES", "16KB"),
        ("TOOLS_LIST_BUDGET_BYTES", True),
        ("FILTER_LOOKUPS", "some"),
        ("ARRAY_BODIES", "yes"),
        ("API_VERSION", 2),
    ],
)
def test_bad_schema_settings(make_endpoint: MakeEndpoint, key: str, value: Any) -> None:
    make_endpoint(**{key: value})
    message = only(check_settings, check_id(key))
    assert key in message.msg


def test_good_schema_settings(make_endpoint: MakeEndpoint) -> None:
    good = {
        "LARGE_CHOICE_LIST": 10,
        "TOOL_BUDGET_BYTES": 4096,
        "TOOLS_LIST_BUDGET_BYTES": 65536,
        "FILTER_LOOKUPS": "all",
        "ARRAY_BODIES": True,
        "API_VERSION": "4.1",
    }
    make_endpoint(**good)
    for key in good:
        assert messages(check_settings, check_id(key)) == []


# -- registries: E010 to E014 -------------------------------------------------------------------


def test_e010_duplicate_tool(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()

    @endpoint.tool(name="same_name")
    def first() -> str:
        return "first"

    @endpoint.tool(name="same_name")
    def second() -> str:
        return "second"

    message = only(check_registries, "mcp_endpoint.E010")
    assert "'same_name'" in message.msg
    # The first registration stays; the second never silently replaces it.
    tool = endpoint.tools.get("same_name")
    assert tool is not None and getattr(tool, "fn", None) is first


@pytest.mark.parametrize("name", ["has space", "dots.are.out", "x" * 65, "émoji", ""])
def test_e011_bad_tool_name(make_endpoint: MakeEndpoint, name: str) -> None:
    endpoint = make_endpoint()

    class Named(Tool):
        pass

    tool = Named()
    tool.name = name
    endpoint.add_tool(tool)
    message = only(check_registries, "mcp_endpoint.E011")
    assert repr(name) in message.msg


def test_e011_good_tool_names(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()
    for name in ("list_tasks", "get-task", "A1", "x" * 64):

        @endpoint.tool(name=name)
        def tool() -> str:
            return "ok"

    assert messages(check_registries, "mcp_endpoint.E011") == []


class SchemaTool(Tool):
    def __init__(self, name: str, schema: dict[str, Any], output: Any = None) -> None:
        self.name = name
        self.input_schema = schema
        self.output_schema = output


@pytest.mark.parametrize(
    ("schema", "output"),
    [
        ({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}, None),
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}, None),
        ({"type": "object"}, {"type": "object", "properties": {"r": {"$ref": "#/x"}}}),
        ({"type": "string"}, None),
        ({"properties": {}}, None),
    ],
)
def test_e012_non_portable_schema(
    make_endpoint: MakeEndpoint, schema: dict[str, Any], output: Any
) -> None:
    endpoint = make_endpoint()
    endpoint.add_tool(SchemaTool("rich_schema", schema, output))
    message = only(check_registries, "mcp_endpoint.E012")
    assert "'rich_schema'" in message.msg
    assert message.hint is not None and "portable" in message.hint


def test_e012_can_be_turned_off_for_rich_schemas(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(PORTABLE_SCHEMAS=False)
    schema = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}
    endpoint.add_tool(SchemaTool("rich_schema", schema))
    assert messages(check_registries, "mcp_endpoint.E012") == []


def test_e012_object_root_is_required_even_when_turned_off(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(PORTABLE_SCHEMAS=False)
    endpoint.add_tool(SchemaTool("string_root", {"type": "string"}))
    only(check_registries, "mcp_endpoint.E012")


def test_e012_a_schema_the_metaschema_refuses(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()
    schema = {"type": "object", "properties": {"lat": {"type": "number", "maximum": "90.0"}}}
    endpoint.add_tool(SchemaTool("stringly_bounded", schema))
    message = only(check_registries, "mcp_endpoint.E012")
    assert "2020-12" in message.msg
    assert "properties/lat/maximum" in message.msg


def test_e013_duplicate_resource(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()

    @endpoint.resource("test://same")
    def one() -> str:
        return "1"

    @endpoint.resource("test://same", name="other")
    def two() -> str:
        return "2"

    message = only(check_registries, "mcp_endpoint.E013")
    assert "'test://same'" in message.msg


def test_e013_duplicate_resource_template(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()

    @endpoint.resource("test://item/{id}")
    def one(id: str) -> str:
        return id

    @endpoint.resource("test://item/{id}", name="again")
    def two(id: str) -> str:
        return id

    message = only(check_registries, "mcp_endpoint.E013")
    assert "'test://item/{id}'" in message.msg


def test_e014_duplicate_prompt(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()

    @endpoint.prompt(name="same_prompt")
    def one() -> str:
        return "1"

    endpoint.template_prompt(
        "same_prompt",
        "tracker/prompts/plan_week.txt",
        arguments=[PromptArgument("project", required=False)],
    )
    message = only(check_registries, "mcp_endpoint.E014")
    assert "'same_prompt'" in message.msg


@pytest.mark.parametrize(
    ("prop", "problem"),
    [
        ({"type": "string", "x-mcp-header": ""}, "non-empty header token"),
        ({"type": "string", "x-mcp-header": "Bad Name"}, "non-empty header token"),
        ({"type": "number", "x-mcp-header": "Ratio"}, "string, integer or boolean"),
        ({"type": "object", "x-mcp-header": "Blob"}, "string, integer or boolean"),
    ],
)
def test_e081_header_marks_clients_refuse(
    make_endpoint: MakeEndpoint, prop: dict[str, Any], problem: str
) -> None:
    endpoint = make_endpoint()
    schema = {"type": "object", "properties": {"a": prop}}
    endpoint.add_tool(SchemaTool("marked", schema))
    message = only(check_registries, "mcp_endpoint.E081")
    assert "'marked'" in message.msg and problem in message.msg
    assert message.hint


def test_e081_same_header_twice_ignoring_case(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {
                "type": "object",
                "properties": {"c": {"type": "integer", "x-mcp-header": "region"}},
            },
        },
    }
    endpoint.add_tool(SchemaTool("twice", schema))
    assert "used twice" in only(check_registries, "mcp_endpoint.E081").msg


def test_e081_valid_marks_pass(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        },
    }
    endpoint.add_tool(SchemaTool("fine", schema))
    assert messages(check_registries, "mcp_endpoint.E081") == []


# -- sizes: W051, W052 -----------------------------------------------------------------------------


def add_wordy_tools(endpoint: Endpoint, count: int) -> None:
    for n in range(count):

        @endpoint.tool(name=f"wordy_{n}", description="Says a great deal. " * 20)
        def wordy() -> str:
            return "..."


def test_w051_one_tool_over_its_budget(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(TOOL_BUDGET_BYTES=300)
    add_wordy_tools(endpoint, 1)
    [message] = messages(check_registries, "mcp_endpoint.W051")
    assert not message.is_serious()
    assert "'wordy_0'" in message.msg and "300" in message.msg
    assert message.hint


def test_w051_within_the_budget(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(TOOL_BUDGET_BYTES=2000)
    add_wordy_tools(endpoint, 1)
    assert messages(check_registries, "mcp_endpoint.W051") == []


def test_w052_the_whole_list_over_its_budget(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(TOOLS_LIST_BUDGET_BYTES=1500, TOOL_DISCOVERY="never")
    add_wordy_tools(endpoint, 4)
    [message] = messages(check_registries, "mcp_endpoint.W052")
    assert not message.is_serious()
    assert "4 tools" in message.msg and "1500" in message.msg
    assert message.hint


def test_w052_not_when_discovery_keeps_the_list_small(make_endpoint: MakeEndpoint) -> None:
    # Over the budget, clients are served search_tools and call_tool instead.
    endpoint = make_endpoint(TOOLS_LIST_BUDGET_BYTES=1500)
    add_wordy_tools(endpoint, 4)
    assert messages(check_registries, "mcp_endpoint.W052") == []


def test_w054_a_served_toolset_no_tool_is_in(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(TOOLSETS=["general", "nowhere"])
    add_wordy_tools(endpoint, 1)
    [message] = messages(check_registries, "mcp_endpoint.W054")
    assert "'nowhere'" in message.msg and "general" in message.hint


def test_toolset_settings(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(
        TOOLSETS="tasks",
        READ_ONLY="yes",
        TOOL_DISCOVERY="maybe",
        OUTPUT_SCHEMAS="some",
        DYNAMIC_TOOLSETS="on",
    )
    add_wordy_tools(endpoint, 1)
    found = check_settings()
    for key in ("TOOLSETS", "READ_ONLY", "TOOL_DISCOVERY", "OUTPUT_SCHEMAS", "DYNAMIC_TOOLSETS"):
        assert any(key in m.msg for m in found if m.id == check_id(key)), key


def test_w052_within_the_budget(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(TOOLS_LIST_BUDGET_BYTES=1500)
    add_wordy_tools(endpoint, 2)
    assert messages(check_registries, "mcp_endpoint.W052") == []


@pytest.mark.django_db
def test_w052_without_the_database_and_once_with_it(make_endpoint: MakeEndpoint) -> None:
    """A product with a viewset whose schema needs the database: W052 comes from the plain
    check run, counting what builds without it, and ``check --database`` adds no second
    one, whichever order Django runs the two checks in."""
    from django.core import checks

    from tests.hosts.inventory.views import JournalEntryViewSet

    endpoint = make_endpoint(TOOLS_LIST_BUDGET_BYTES=1500, TOOL_DISCOVERY="never")
    add_wordy_tools(endpoint, 4)
    registration = endpoint.register_viewset(JournalEntryViewSet, include=["create"])
    [message] = messages(check_registries, "mcp_endpoint.W052")
    assert "4 tools" in message.msg and "at least" in message.msg
    assert registration.deferred
    assert messages(check_tool_schemas_with_database, "mcp_endpoint.W052") == []
    everything = checks.run_checks(databases=["default"], include_deployment_checks=False)
    mine = [m for m in everything if m.id == "mcp_endpoint.W052" and m.obj is endpoint]
    assert len(mine) == 1, [m.msg for m in mine]


def test_w052_is_not_raised_by_the_database_check(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint(TOOLS_LIST_BUDGET_BYTES=1500, TOOL_DISCOVERY="never")
    add_wordy_tools(endpoint, 4)
    assert messages(check_tool_schemas_with_database, "mcp_endpoint.W052") == []


# -- a body with no fields: W050 -------------------------------------------------------------------


class FreeFormViewSet(viewsets.ViewSet):
    """Takes any JSON object: no fields for a model to fill in."""

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT})
    def create(self, request: Request) -> Response:
        return Response(request.data, status=201)


def test_w050_a_body_without_fields(make_endpoint: MakeEndpoint) -> None:
    endpoint = make_endpoint()
    endpoint.register_viewset(FreeFormViewSet, basename="free_form")
    [message] = messages(check_registries, "mcp_endpoint.W050")
    assert not message.is_serious()
    assert "'create_free_form'" in message.msg
    assert message.hint is not None and "@extend_schema(request=" in message.hint


# -- the database: never read by the checks, unless asked ------------------------------------------


@pytest.mark.django_db
def test_checks_leave_a_schema_that_reads_the_database_for_later(
    make_endpoint: MakeEndpoint,
) -> None:
    from tests.hosts.inventory.views import JournalEntryViewSet

    endpoint = make_endpoint()
    [registration] = [endpoint.register_viewset(JournalEntryViewSet, include=["create"])]
    with CaptureQueriesContext(connection) as queries:
        found = [m for m in check_registries() if m.obj is endpoint]
    assert len(queries) == 0
    assert found == []
    assert registration.deferred and not registration.built
    [tool] = endpoint.tools
    assert not tool.ready()

    # Not asked for the database: nothing; asked, once migrated: built, and clean.
    assert check_tool_schemas_with_database(databases=None) == []
    with CaptureQueriesContext(connection) as queries:
        deep = [m for m in check_tool_schemas_with_database(databases=["default"])]
    assert len(queries) > 0
    assert [m for m in deep if m.obj is endpoint] == []
    assert registration.built and tool.unavailable() is None
    assert "inventory.site" in str(tool.input_schema)


@pytest.mark.django_db
def test_first_use_builds_what_the_checks_left(make_endpoint: MakeEndpoint) -> None:
    from tests.hosts.inventory.views import JournalEntryViewSet

    endpoint = make_endpoint()
    registration = endpoint.register_viewset(JournalEntryViewSet, include=["create"])
    check_registries()
    assert registration.deferred
    [tool] = endpoint.tools
    assert tool.unavailable() is None  # built now, with the database
    assert tool.input_schema["properties"]["assigned_object_type"]["enum"] == [
        "inventory.device",
        "inventory.devicetype",
        "inventory.site",
    ]


def test_e082_a_template_following_a_model_needs_its_uris(make_endpoint: MakeEndpoint) -> None:
    from project.tracker.models import Task

    endpoint = make_endpoint()

    @endpoint.resource("test://followed/{id}", follows=[Task])
    def followed(id: str) -> str:
        return id

    message = only(check_registries, "mcp_endpoint.E082")
    assert "'test://followed/{id}'" in message.msg and "tracker.Task" in message.msg
    assert message.hint


def test_e082_a_mapped_template_passes(make_endpoint: MakeEndpoint) -> None:
    from project.tracker.models import Task

    endpoint = make_endpoint()

    @endpoint.resource("test://mapped/{id}", follows={Task: lambda task: {"id": task.pk}})
    def mapped(id: str) -> str:
        return id

    assert messages(check_registries, "mcp_endpoint.E082") == []
