"""The inventory host (``tests/hosts/inventory``): a large product's shapes, REST and MCP alike.

Every operation runs once through the REST API and once through ``/mcp``
with the same credential, each in a transaction rolled back afterwards, so both sides see
the same data. The credentials are the product's own: a superuser's token, a read-only
token, the token of a user whose object permissions reach only the ACME tenant's sites and
devices, and one of the endpoint's API keys. A refused write leaves every table as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.test import Client, override_settings
from jsonschema import Draft202012Validator

from mcp_endpoint.models import APIKey
from tests.conftest import MCPClient
from tests.hosts.inventory.models import (
    Device,
    DeviceType,
    JournalEntry,
    Manufacturer,
    ObjectPermission,
    Region,
    Site,
    Tenant,
    Token,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.inventory.urls")]

MCP_URL = "/mcp"
API = ""
MODELS = (Tenant, Region, Site, Manufacturer, DeviceType, Device, JournalEntry)


@dataclass
class World:
    ids: dict[str, int]
    headers: dict[str, str]  # credential name -> Authorization header value


def grant(
    user: Any, models: tuple[type[Any], ...], constraints: Any = None, **actions: bool
) -> None:
    permission = ObjectPermission.objects.create(
        name=f"{user.username} on {len(models)} models", constraints=constraints, **actions
    )
    permission.users.add(user)
    permission.object_types.set([ContentType.objects.get_for_model(m) for m in models])


@pytest.fixture
def world(db: Any) -> World:
    users = get_user_model().objects
    admin = users.create_superuser("admin", "admin@example.com", "pw-admin-123")
    auditor = users.create_user("auditor", "auditor@example.com", "pw-auditor-123")
    acme_ops = users.create_user("acme_ops", "ops@acme.example", "pw-acme-123")
    noc = users.create_user("noc", "noc@example.com", "pw-noc-123")
    everything = dict(can_view=True, can_add=True, can_change=True, can_delete=True)
    grant(auditor, MODELS, **everything)
    grant(noc, MODELS, **everything)
    # ACME's operator sees the catalogue, and changes ACME's sites and devices only.
    grant(acme_ops, (Tenant, Region, Manufacturer, DeviceType, JournalEntry), can_view=True)
    grant(acme_ops, (Site,), [{"tenant__slug": "acme"}], **everything)
    grant(acme_ops, (Device,), [{"site__tenant__slug": "acme"}], **everything)

    acme = Tenant.objects.create(name="ACME", slug="acme")
    globex = Tenant.objects.create(name="Globex", slug="globex")
    eu = Region.objects.create(name="Europe", slug="eu")
    Region.objects.create(name="Americas", slug="americas")
    london = Site.objects.create(
        name="London",
        slug="lon",
        tenant=acme,
        region=eu,
        latitude=Decimal("51.507400"),
        longitude=Decimal("-0.127800"),
        time_zone="Zone/042",
    )
    Site.objects.create(name="Leeds", slug="lds", tenant=acme, region=eu, status="planned")
    springfield = Site.objects.create(name="Springfield", slug="spr", tenant=globex)
    maker = Manufacturer.objects.create(name="Juniper", slug="juniper")
    Manufacturer.objects.create(name="Arista", slug="arista")
    switch = DeviceType.objects.create(
        manufacturer=maker, model="EX4300", slug="ex4300", u_height=Decimal("1.0")
    )
    core = Device.objects.create(name="lon-core-1", device_type=switch, site=london, tenant=acme)
    Device.objects.create(name="lon-edge-1", device_type=switch, site=london, serial="A1")
    spr = Device.objects.create(name="spr-core-1", device_type=switch, site=springfield)
    entry = JournalEntry.objects.create(
        assigned_object_type=ContentType.objects.get_for_model(Site),
        assigned_object_id=london.pk,
        comments="Fibre cut repaired.",
    )
    _, api_key = APIKey.objects.create_key(user=noc, scopes="read write", name="noc")
    return World(
        ids={
            "acme": acme.pk,
            "globex": globex.pk,
            "eu": eu.pk,
            "london": london.pk,
            "springfield": springfield.pk,
            "juniper": maker.pk,
            "ex4300": switch.pk,
            "core": core.pk,
            "spr": spr.pk,
            "entry": entry.pk,
        },
        headers={
            "superuser": f"Token {Token.issue(admin).key}",
            "read_only": f"Token {Token.issue(auditor, write_enabled=False).key}",
            "restricted": f"Token {Token.issue(acme_ops).key}",
            "api_key": f"Bearer {api_key}",
        },
    )


@dataclass
class Operation:
    tool: str
    method: str
    url: str  # path arguments in braces; the rest goes to the query (GET) or the body
    arguments: Callable[[World], dict[str, Any]]


def expected(superuser: int, read_only: int, restricted: int, api_key: int) -> dict[str, int]:
    return {
        "superuser": superuser,
        "read_only": read_only,
        "restricted": restricted,
        "api_key": api_key,
    }


ROWS: list[tuple[str, Operation, dict[str, int]]] = [
    (
        "list_sites_filtered_and_paged",
        Operation(
            "list_sites",
            "GET",
            "/sites/",
            lambda w: {"region": w.ids["eu"], "status": "active", "limit": 1, "offset": 0},
        ),
        expected(200, 200, 200, 200),
    ),
    (
        "list_sites_by_slugs_ordered",
        Operation(
            "list_sites",
            "GET",
            "/sites/",
            lambda w: {"slug__in": "lon,spr,lds", "ordering": "-name", "limit": 2, "offset": 1},
        ),
        expected(200, 200, 200, 200),
    ),
    (
        "list_sites_bad_filter",
        Operation("list_sites", "GET", "/sites/", lambda w: {"status": "demolished"}),
        expected(400, 400, 400, 400),
    ),
    (
        "list_devices_of_a_site",
        Operation("list_devices", "GET", "/devices/", lambda w: {"site": w.ids["london"]}),
        expected(200, 200, 200, 200),
    ),
    (
        "list_tenants",
        Operation("list_tenants", "GET", "/tenants/", lambda w: {"q": "ac"}),
        expected(200, 200, 200, 200),
    ),
    (
        "list_journal_entries",
        Operation("list_journal_entries", "GET", "/journal-entries/", lambda w: {}),
        expected(200, 200, 200, 200),
    ),
    (
        "get_site",
        Operation("get_site", "GET", "/sites/{id}/", lambda w: {"id": w.ids["london"]}),
        expected(200, 200, 200, 200),
    ),
    (
        "get_site_of_another_tenant",
        Operation("get_site", "GET", "/sites/{id}/", lambda w: {"id": w.ids["springfield"]}),
        expected(200, 200, 404, 200),
    ),
    (
        "get_device_type",
        Operation(
            "get_device_type", "GET", "/device-types/{id}/", lambda w: {"id": w.ids["ex4300"]}
        ),
        expected(200, 200, 200, 200),
    ),
    (
        "create_site",
        Operation(
            "create_site",
            "POST",
            "/sites/",
            lambda w: {
                "name": "Paris",
                "slug": "par",
                "tenant": w.ids["acme"],
                "region": w.ids["eu"],
                "latitude": 48.8566,
                "longitude": 2.3522,
                "time_zone": "Zone/599",
            },
        ),
        expected(201, 403, 201, 201),
    ),
    (
        "create_site_for_another_tenant",
        Operation(
            "create_site",
            "POST",
            "/sites/",
            lambda w: {"name": "Shelbyville", "slug": "shb", "tenant": w.ids["globex"]},
        ),
        expected(201, 403, 403, 201),
    ),
    (
        "create_site_invalid",
        Operation(
            "create_site",
            "POST",
            "/sites/",
            lambda w: {
                "name": "London",
                "slug": "not a slug",
                "latitude": 123.5,
                "time_zone": "Mars/Olympus",
                "status": "gone",
            },
        ),
        expected(400, 403, 400, 400),
    ),
    (
        "create_device_type",
        Operation(
            "create_device_type",
            "POST",
            "/device-types/",
            lambda w: {
                "manufacturer": w.ids["juniper"],
                "model": "QFX5120",
                "slug": "qfx5120",
                "u_height": 2.5,
            },
        ),
        expected(201, 403, 403, 201),
    ),
    (
        "create_journal_entry",
        Operation(
            "create_journal_entry",
            "POST",
            "/journal-entries/",
            lambda w: {
                "assigned_object_type": "inventory.device",
                "assigned_object_id": w.ids["core"],
                "kind": "warning",
                "comments": "Fan failure.",
            },
        ),
        expected(201, 403, 403, 201),
    ),
    (
        "create_journal_entry_unknown_type",
        Operation(
            "create_journal_entry",
            "POST",
            "/journal-entries/",
            lambda w: {
                "assigned_object_type": "auth.user",
                "assigned_object_id": 1,
                "comments": "",
            },
        ),
        expected(400, 403, 403, 400),
    ),
    (
        "update_site",
        Operation(
            "update_site",
            "PATCH",
            "/sites/{id}/",
            lambda w: {"id": w.ids["london"], "description": "HQ", "latitude": 51.5},
        ),
        expected(200, 403, 200, 200),
    ),
    (
        "update_site_out_of_bounds",
        Operation(
            "update_site",
            "PATCH",
            "/sites/{id}/",
            lambda w: {"id": w.ids["london"], "longitude": -181},
        ),
        expected(400, 403, 400, 400),
    ),
    (
        "update_site_away_from_own_tenant",
        Operation(
            "update_site",
            "PATCH",
            "/sites/{id}/",
            lambda w: {"id": w.ids["london"], "tenant": w.ids["globex"]},
        ),
        expected(200, 403, 403, 200),
    ),
    (
        "update_device_of_another_tenant",
        Operation(
            "update_device",
            "PATCH",
            "/devices/{id}/",
            lambda w: {"id": w.ids["spr"], "serial": "X9"},
        ),
        expected(200, 403, 404, 200),
    ),
    (
        "replace_region",
        Operation(
            "replace_region",
            "PUT",
            "/regions/{id}/",
            lambda w: {"id": w.ids["eu"], "name": "EMEA", "slug": "emea", "description": ""},
        ),
        expected(200, 403, 403, 200),
    ),
    (
        "delete_device",
        Operation("delete_device", "DELETE", "/devices/{id}/", lambda w: {"id": w.ids["core"]}),
        expected(204, 403, 204, 204),
    ),
    (
        "delete_device_of_another_tenant",
        Operation("delete_device", "DELETE", "/devices/{id}/", lambda w: {"id": w.ids["spr"]}),
        expected(204, 403, 404, 204),
    ),
]

CASES = [
    pytest.param(operation, who, status, id=f"{label}-{who}")
    for label, operation, statuses in ROWS
    for who, status in statuses.items()
]


def rolled_back(run: Callable[[], Any]) -> tuple[Any, dict[str, int]]:
    """Run ``run`` in a transaction that is then rolled back; also the row counts it left."""
    with transaction.atomic():
        outcome = run()
        counts = {model.__name__: model.objects.count() for model in MODELS}
        transaction.set_rollback(True)
    return outcome, counts


def rest_call(client: Client, header: str, operation: Operation, world: World) -> Any:
    arguments = operation.arguments(world)
    names = {n for n in arguments if "{" + n + "}" in operation.url}
    url = API + operation.url.format(**{n: arguments[n] for n in names})
    rest = {k: v for k, v in arguments.items() if k not in names}
    if operation.method == "GET":
        return client.get(url, rest, headers={"Authorization": header})
    return client.generic(
        operation.method,
        url,
        json.dumps(rest),
        content_type="application/json",
        headers={"Authorization": header},
    )


def mcp_for(client: Client, header: str, url: str = MCP_URL) -> MCPClient:
    mcp = MCPClient(client, url)
    mcp.headers = lambda extra=None: {"Authorization": header, **(extra or {})}  # type: ignore[method-assign]
    return mcp


@pytest.mark.parametrize(("operation", "who", "rest_status"), CASES)
def test_rest_and_mcp_agree(
    operation: Operation, who: str, rest_status: int, world: World, client: Client
) -> None:
    header = world.headers[who]
    before = {model.__name__: model.objects.count() for model in MODELS}
    rest, rest_counts = rolled_back(lambda: rest_call(client, header, operation, world))
    mcp = mcp_for(client, header)
    answer, mcp_counts = rolled_back(
        lambda: mcp.request(
            "tools/call", {"name": operation.tool, "arguments": operation.arguments(world)}
        )
    )
    assert rest.status_code == rest_status, rest.content
    assert answer.status_code == 200, answer.content
    result = answer.json()["result"]
    rest_data = rest.json() if rest.content else None
    assert mcp_counts == rest_counts
    if not 200 <= rest_status < 300:
        assert mcp_counts == before  # a refused call writes nothing
        assert result["isError"] is True, result
        error = result["structuredContent"]["error"]
        code = {400: "invalid_arguments", 403: "permission_denied", 404: "not_found"}
        assert error["code"] == code[rest_status]
        if rest_status == 400:
            assert error["fields"] == rest_data
        else:
            assert error["message"] == rest_data["detail"]
        return
    assert result["isError"] is False, result
    if rest_data is None:
        return
    structured = result["structuredContent"]
    if operation.method == "POST":
        # Ids are allocated, not chosen (sequences do not roll back); the rest is equal.
        assert {**structured, "id": 0} == {**rest_data, "id": 0}
    else:
        assert structured == rest_data
    tools = listed_in_full(mcp)
    validator = Draft202012Validator(
        tools[operation.tool]["outputSchema"], format_checker=Draft202012Validator.FORMAT_CHECKER
    )
    assert [e.message for e in validator.iter_errors(structured)] == []


def test_the_table_tries_every_kind_of_tool(world: World) -> None:
    verbs = {operation.tool.split("_")[0] for _, operation, _ in ROWS}
    assert verbs == {"list", "get", "create", "update", "replace", "delete"}


# -- size and filters -----------------------------------------------------------------------


def tools_of(client: Client, header: str, url: str = MCP_URL) -> dict[str, dict[str, Any]]:
    return listed_in_full(mcp_for(client, header, url))


def listed_in_full(mcp: MCPClient) -> dict[str, dict[str, Any]]:
    """Every tool with its schemas, as an operator who turns discovery off serves them: the
    inventory's list is over 32 KiB, so by default a client is listed search_tools and
    call_tool instead (test_what_a_client_loads_by_default_is_under_32_kb)."""
    with override_settings(MCP_ENDPOINT={**settings.MCP_ENDPOINT, "TOOL_DISCOVERY": "never"}):
        return {t["name"]: t for t in mcp.result("tools/list")["tools"]}


def test_what_a_client_loads_by_default_is_under_32_kb(world: World, client: Client) -> None:
    mcp = mcp_for(client, world.headers["superuser"])
    response = mcp.request("tools/list")
    assert len(response.content) <= 32 * 1024
    assert [t["name"] for t in response.json()["result"]["tools"]] == [
        "search_tools",
        "call_tool",
    ]
    # One toolset picked is small enough to be listed in full.
    mcp.url = f"{MCP_URL}?toolsets=regions"
    listing = mcp.request("tools/list")
    assert len(listing.content) <= 32 * 1024
    regions = {t["name"]: t for t in listing.json()["result"]["tools"]}
    assert "outputSchema" in regions["list_regions"] and "outputSchema" in regions["get_region"]


def test_seven_viewsets_come_under_128_kb(world: World, client: Client) -> None:
    tools = tools_of(client, world.headers["superuser"])
    assert len(tools) == 42
    size = len(json.dumps(list(tools.values()), separators=(",", ":")).encode())
    assert size <= 128 * 1024, size
    # The 600 time zones: once in each input schema that takes one, in no output schema.
    for tool in tools.values():
        assert json.dumps(tool["inputSchema"]).count("Zone/599") <= 1, tool["name"]
        assert "Zone/599" not in json.dumps(tool.get("outputSchema")), tool["name"]


def test_a_list_tool_offers_exact_filters_and_groups_the_other_lookups(
    world: World, client: Client
) -> None:
    properties = tools_of(client, world.headers["superuser"])["list_sites"]["inputSchema"][
        "properties"
    ]
    for name in ("name", "slug", "slug__in", "id__in", "status", "region", "time_zone", "q"):
        assert name in properties, name
    for name in ("name__ic", "name__nisw", "slug__n", "id__gte", "time_zone__n"):
        assert name not in properties, name
    lookups = properties["lookups"]
    assert lookups["type"] == "object"
    assert "name__ic" in lookups["description"] or "ic" in lookups["description"]
    names = lookups["propertyNames"]["pattern"]
    assert re.fullmatch(names, "name__ic") and re.fullmatch(names, "id__gte")
    assert not re.fullmatch(names, "name__gte") and not re.fullmatch(names, "name")


@pytest.mark.parametrize(
    "lookups",
    [{"name__ic": "on"}, {"name__nisw": "lo", "id__gte": 1}, {"slug__n": "spr"}],
)
def test_grouped_lookups_filter_as_rest_does(
    lookups: dict[str, Any], world: World, client: Client
) -> None:
    header = world.headers["restricted"]
    rest = client.get(f"{API}/sites/", lookups, headers={"Authorization": header})
    assert rest.status_code == 200
    result = mcp_for(client, header).call("list_sites", {"lookups": lookups})
    assert result["isError"] is False, result
    assert result["structuredContent"] == rest.json()


@pytest.mark.parametrize(
    "lookups", [{"name__gte": "a"}, {"nope__ic": "a"}, {"name": "London"}, "name__ic=on"]
)
def test_an_unknown_lookup_is_refused(lookups: Any, world: World, client: Client) -> None:
    result = mcp_for(client, world.headers["superuser"]).call("list_sites", {"lookups": lookups})
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "invalid_arguments"
    assert "lookups" in error["fields"]


# -- versions and one-or-many bodies -----------------------------------------------------------

LEGACY_URL = "/mcp-4.1"


def test_calls_carry_the_version_the_endpoint_asks_for(world: World, client: Client) -> None:
    header = world.headers["superuser"]
    london = world.ids["london"]
    rest = client.get(
        f"{API}/sites/{london}/",
        headers={"Authorization": header, "Accept": "application/json; version=4.1"},
    )
    assert rest.status_code == 200 and "latitude" not in rest.json()
    mcp = mcp_for(client, header, LEGACY_URL)
    tools = listed_in_full(mcp)
    assert "latitude" not in tools["get_site"]["outputSchema"]["properties"]
    assert "latitude" in tools["get_site_as_of_4_2"]["outputSchema"]["properties"]
    old = mcp.call("get_site", {"id": london})
    assert old["structuredContent"] == rest.json()
    new = mcp.call("get_site_as_of_4_2", {"id": london})
    assert new["structuredContent"]["latitude"] == 51.5074


def test_the_default_version_is_described_and_called(world: World, client: Client) -> None:
    header = world.headers["superuser"]
    tools = tools_of(client, header)
    assert "latitude" in tools["get_site"]["outputSchema"]["properties"]
    result = mcp_for(client, header).call("get_site", {"id": world.ids["london"]})
    assert result["structuredContent"]["latitude"] == 51.5074


def test_a_one_or_many_body_takes_the_object_branch(world: World, client: Client) -> None:
    schema = tools_of(client, world.headers["superuser"])["create_site"]["inputSchema"]
    assert {"name", "slug", "latitude", "time_zone"} <= set(schema["properties"])
    assert schema["required"] == ["name", "slug"]
    latitude = schema["properties"]["latitude"]
    assert latitude["anyOf"][0]["maximum"] == 90 and latitude["anyOf"][0]["minimum"] == -90


def test_the_array_branch_when_the_setting_asks(world: World, client: Client) -> None:
    header = world.headers["superuser"]
    mcp = mcp_for(client, header, LEGACY_URL)
    schema = listed_in_full(mcp)["create_site"]["inputSchema"]
    assert list(schema["properties"]) == ["items"]
    assert schema["properties"]["items"]["type"] == "array"
    assert "name" in schema["properties"]["items"]["items"]["properties"]
    sites = [{"name": "Oslo", "slug": "osl"}, {"name": "Bergen", "slug": "bgo"}]
    result = mcp.call("create_site", {"items": sites})
    assert result["isError"] is False, result
    assert [s["name"] for s in result["structuredContent"]["results"]] == ["Oslo", "Bergen"]
    assert Site.objects.filter(slug__in=["osl", "bgo"]).count() == 2


def test_a_refused_item_in_a_list_writes_nothing(world: World, client: Client) -> None:
    mcp = mcp_for(client, world.headers["superuser"], LEGACY_URL)
    sites = [{"name": "Oslo", "slug": "osl"}, {"name": "London", "slug": "bad slug"}]
    rest = client.post(
        f"{API}/sites/",
        json.dumps(sites),
        content_type="application/json",
        headers={"Authorization": world.headers["superuser"]},
    )
    assert rest.status_code == 400
    result = mcp.call("create_site", {"items": sites})
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert result["structuredContent"]["error"]["fields"] == {"items": rest.json()}
    assert not Site.objects.filter(slug="osl").exists()


# -- tools whose schemas cannot be built ---------------------------------------------------------


@pytest.mark.urls("tests.urls_unavailable_testing")
def test_a_tool_without_a_schema_is_not_listed(world: World, client: Client) -> None:
    tools = tools_of(client, world.headers["superuser"], "/unavailable/mcp")
    assert list(tools) == ["list_tenants"]


@pytest.mark.urls("tests.urls_unavailable_testing")
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [("get_site", {}), ("list_sites", {"limit": 1000}), ("get_site", {"id": 1})],
)
def test_a_call_to_a_tool_without_a_schema_says_why(
    tool: str, arguments: dict[str, Any], world: World, client: Client
) -> None:
    mcp = mcp_for(client, world.headers["superuser"], "/unavailable/mcp")
    result = mcp.call(tool, arguments)
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "unavailable"
    assert error["message"].startswith(f"The tool {tool} is not available: its schema could not")
    assert "does not serve API version '9.9'" in error["message"]
    assert error["message"] in result["content"][0]["text"]


@pytest.mark.urls("tests.urls_unavailable_testing")
def test_the_check_warns_and_never_errs(world: World) -> None:
    from tests.urls_unavailable_testing import unavailable_endpoint

    messages = unavailable_endpoint.check()
    assert [m.id for m in messages] == ["mcp_endpoint.W022", "mcp_endpoint.W022"]
    assert not any(m.is_serious() for m in messages)
    assert "'get_site' is not listed" in messages[1].msg


@pytest.mark.parametrize(
    ("mode", "offered", "left_out"),
    [
        ("exact", {"name", "slug__in"}, {"lookups", "name__ic", "id__gte"}),
        ("grouped", {"name", "slug__in", "lookups"}, {"name__ic", "id__gte"}),
        ("all", {"name", "slug__in", "name__ic", "id__gte", "name__nisw"}, {"lookups"}),
    ],
)
def test_filter_lookups_setting(
    mode: str, offered: set[str], left_out: set[str], world: World
) -> None:
    from mcp_endpoint.endpoint import Endpoint, endpoints
    from tests.hosts.inventory.views import SiteViewSet

    endpoint = Endpoint("lookups-mode", filter_lookups=mode)
    try:
        endpoint.register_viewset(SiteViewSet, include=["list"])
        [tool] = endpoint.tools
        properties = set(tool.input_schema["properties"])
        assert offered <= properties
        assert not (left_out & properties)
    finally:
        endpoints.discard(endpoint)


@pytest.mark.parametrize("items", ["Oslo", {"name": "Oslo", "slug": "osl"}, [1, 2]])
def test_items_that_are_not_a_list_of_sites(items: Any, world: World, client: Client) -> None:
    mcp = mcp_for(client, world.headers["superuser"], LEGACY_URL)
    before = Site.objects.count()
    result = mcp.call("create_site", {"items": items})
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert Site.objects.count() == before
