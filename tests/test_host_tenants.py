"""The multi-tenant host (:mod:`tests.hosts.tenants`): plain routers ``include()`` d under
``api/v1/<tenant>/projects/<project>/``, and the product's middleware that reads the tenant
and project from the path, sets them on the request, activates their row scope and refuses
some paths. The prefix's kwargs are parents of every tool (required arguments, found where
the routers are mounted); names read right (no stutter, English plurals); a custom action
that reads no body asks for its lookup only; the check warnings come once per viewset.
REST and MCP agree for every tool and credential kind, for members of two tenants, each
refused the other's rows as REST refuses them, and for the paths the middleware refuses.
Tool calls pass through that middleware (the views fail without it); schemas are built
with the host's ``schema_request``, without which its tools are left out (W022)."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import markcoroutinefunction
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from django.urls import include, path, re_path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import DefaultRouter

from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.rest_framework.naming import without_stutter
from mcp_endpoint.tools import TOOL_NAME
from tests.conftest import MCPClient
from tests.hosts.parity import CREDENTIAL_KINDS, api_key, check_parity
from tests.hosts.tenants import API_MIDDLEWARE
from tests.hosts.tenants.middleware import ARCHIVED_PROJECT, GATED_PROJECT
from tests.hosts.tenants.models import Medium, Order, OrderPayment, Property, Tenant
from tests.hosts.tenants.scoping import scopes_disabled
from tests.hosts.tenants.urls import as_a_tenant
from tests.hosts.tenants.views import (
    MediumViewSet,
    OrderPaymentViewSet,
    OrderSerializer,
    OrderViewSet,
    PropertyViewSet,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.tenants.urls")]

User = get_user_model()
MISSING = 999_999
PATH_ARGUMENTS = {"id", "tenant", "project"}


@pytest.fixture(autouse=True)
def middleware(settings: Any) -> Any:
    """The product's API middleware, after Django's own."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, *API_MIDDLEWARE]
    return settings


@pytest.fixture
def users() -> dict[str, Any]:
    """olive belongs to acme, sam to globex; each tenant has a project ``web`` of rows."""
    olive = User.objects.create_user("olive", "olive@example.com", "pw-olive-123")
    sam = User.objects.create_user("sam", "sam@example.com", "pw-sam-123")
    for user, slug in ((olive, "acme"), (sam, "globex")):
        tenant = Tenant.objects.create(slug=slug)
        tenant.members.add(user)
    return {"acme": olive, "globex": sam}


@pytest.fixture
def ids(users: dict[str, Any]) -> dict[str, dict[str, int]]:
    with scopes_disabled():
        return make_rows()


def make_rows() -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for tenant in Tenant.objects.order_by("slug"):
        order = Order.objects.create(tenant=tenant, project="web", reference="A-1", total="12.50")
        paid = Order.objects.create(
            tenant=tenant, project="web", reference="A-2", total="3.00", paid=True
        )
        Order.objects.create(tenant=tenant, project="app", reference="B-1", total="9.00")
        payment = OrderPayment.objects.create(order=order, amount="2.50")
        prop = Property.objects.create(tenant=tenant, project="web", name="colour")
        medium = Medium.objects.create(tenant=tenant, project="web", title="poster")
        found[tenant.slug] = {
            "order": order.pk,
            "paid": paid.pk,
            "payment": payment.pk,
            "property": prop.pk,
            "medium": medium.pk,
        }
    return found


def snapshot() -> list[Any]:
    with scopes_disabled():
        return rows()


def rows() -> list[Any]:
    return [
        list(Order.objects.order_by("pk").values_list("pk", "tenant", "project", "paid", "total")),
        list(OrderPayment.objects.order_by("pk").values_list("pk", "order", "amount")),
        list(Property.objects.order_by("pk").values_list("pk", "name")),
        list(Medium.objects.order_by("pk").values_list("pk", "title")),
    ]


BASE = "/api/v1/{tenant}/projects/{project}/"
# (tool, method, url under BASE, arguments); "{own:order}" is the caller's tenant's order,
# "{other:order}" the other tenant's; "own" and "other" as a tenant are the tenants' slugs.
OPERATIONS: list[tuple[str, str, str, dict[str, Any]]] = [
    ("list_orders", "GET", "orders/", {}),
    ("list_orders", "GET", "orders/", {"page": 2}),
    ("get_order", "GET", "orders/{id}/", {"id": "{own:order}"}),
    ("get_order", "GET", "orders/{id}/", {"id": "{other:order}"}),
    ("create_order", "POST", "orders/", {"reference": "C-1", "total": "1.00"}),
    ("create_order", "POST", "orders/", {"reference": "C-1"}),
    (
        "replace_order",
        "PUT",
        "orders/{id}/",
        {"id": "{own:order}", "reference": "R", "total": "2.00"},
    ),
    ("update_order", "PATCH", "orders/{id}/", {"id": "{own:order}", "reference": "R-2"}),
    ("update_order", "PATCH", "orders/{id}/", {"id": "{other:order}", "reference": "R-3"}),
    ("delete_order", "DELETE", "orders/{id}/", {"id": "{own:order}"}),
    ("delete_order", "DELETE", "orders/{id}/", {"id": "{other:order}"}),
    # The custom action that reads no body: its lookup is all it needs.
    ("mark_paid_order", "POST", "orders/{id}/mark_paid/", {"id": "{own:order}"}),
    ("mark_paid_order", "POST", "orders/{id}/mark_paid/", {"id": "{other:order}"}),
    ("mark_paid_order", "POST", "orders/{id}/mark_paid/", {"id": MISSING}),
    # The view raises the product's own error; its middleware answers it (409).
    ("mark_paid_order", "POST", "orders/{id}/mark_paid/", {"id": "{own:paid}"}),
    ("unpaid_orders", "GET", "orders/unpaid/", {}),
    ("largest_orders", "GET", "orders/largest/", {}),
    ("list_order_payments", "GET", "order-payments/", {}),
    ("get_order_payment", "GET", "order-payments/{id}/", {"id": "{own:payment}"}),
    ("get_order_payment", "GET", "order-payments/{id}/", {"id": "{other:payment}"}),
    ("create_order_payment", "POST", "order-payments/", {"order": "{own:order}", "amount": "1.25"}),
    ("create_order_payment", "POST", "order-payments/", {"order": "{own:order}"}),
    (
        "replace_order_payment",
        "PUT",
        "order-payments/{id}/",
        {"id": "{own:payment}", "order": "{own:order}", "amount": "4.00"},
    ),
    (
        "update_order_payment",
        "PATCH",
        "order-payments/{id}/",
        {"id": "{own:payment}", "amount": "5.00"},
    ),
    ("delete_order_payment", "DELETE", "order-payments/{id}/", {"id": "{other:payment}"}),
    ("list_properties", "GET", "properties/", {}),
    ("get_property", "GET", "properties/{id}/", {"id": "{own:property}"}),
    ("get_property", "GET", "properties/{id}/", {"id": "{other:property}"}),
    ("create_property", "POST", "properties/", {"name": "size"}),
    ("replace_property", "PUT", "properties/{id}/", {"id": "{own:property}", "name": "hue"}),
    ("update_property", "PATCH", "properties/{id}/", {"id": "{own:property}", "name": ""}),
    ("delete_property", "DELETE", "properties/{id}/", {"id": "{own:property}"}),
    ("list_media", "GET", "media/", {}),
    ("get_medium", "GET", "media/{id}/", {"id": "{own:medium}"}),
    ("get_medium", "GET", "media/{id}/", {"id": "{other:medium}"}),
    ("create_medium", "POST", "media/", {"title": "flyer"}),
    ("replace_medium", "PUT", "media/{id}/", {"id": "{own:medium}", "title": "banner"}),
    ("update_medium", "PATCH", "media/{id}/", {"id": "{other:medium}", "title": "mine"}),
    ("delete_medium", "DELETE", "media/{id}/", {"id": "{own:medium}"}),
]
# Where a call goes: the caller's own tenant, or the other tenant (whose rows REST hides).
PLACES = {
    "own": ("own", "web"),
    "other tenant": ("other", "web"),
    "own other project": ("own", "app"),
}


def fill(value: Any, ids: dict[str, dict[str, int]], own: str) -> Any:
    if isinstance(value, str) and value.startswith("{") and ":" in value:
        whose, key = value.strip("{}").split(":")
        tenant = own if whose == "own" else next(t for t in ids if t != own)
        return ids[tenant][key]
    return value


def check_place(
    client: Client,
    credential: Any,
    operation: tuple[str, str, str, dict[str, Any]],
    ids: dict[str, dict[str, int]],
    member: str,
    tenant: str,
    project: str,
) -> tuple[Any, dict[str, Any]]:
    tool, method, url, arguments = operation
    filled = {k: fill(v, ids, member) for k, v in arguments.items()}
    filled.update(tenant=tenant, project=project)
    return check_parity(
        client,
        credential,
        tool=tool,
        method=method,
        url=(BASE + url).format(**filled),
        arguments=filled,
        rest_arguments={k: v for k, v in filled.items() if k not in PATH_ARGUMENTS},
        snapshot=snapshot,
    )


OPERATION_IDS = [f"{o[0]}-{i}" for i, o in enumerate(OPERATIONS)]


@pytest.mark.parametrize("kind", ["key_read_write", "oauth_read"])
@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("member", ["acme", "globex"])
@pytest.mark.parametrize("operation", OPERATIONS, ids=OPERATION_IDS)
def test_rest_and_mcp_agree(
    operation: tuple[str, str, str, dict[str, Any]],
    member: str,
    place: str,
    kind: str,
    client: Client,
    users: dict[str, Any],
    ids: dict[str, dict[str, int]],
) -> None:
    whose, project = PLACES[place]
    tenant = member if whose == "own" else next(t for t in ids if t != member)
    credential = CREDENTIAL_KINDS[kind](users[member])
    rest, answer = check_place(client, credential, operation, ids, member, tenant, project)
    if whose == "other":
        # Another tenant's rows are not found, nor listed, nor written, through either.
        if operation[1] == "GET" and rest.status_code == 200:
            assert answer["structuredContent"]["results"] == []
        else:
            assert rest.status_code in (400, 403, 404), rest.content


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
@pytest.mark.parametrize("operation", OPERATIONS, ids=OPERATION_IDS)
def test_every_credential_kind_agrees(
    operation: tuple[str, str, str, dict[str, Any]],
    kind: str,
    client: Client,
    users: dict[str, Any],
    ids: dict[str, dict[str, int]],
) -> None:
    """Each kind the app issues, read-only ones included, in the caller's own project."""
    credential = CREDENTIAL_KINDS[kind](users["acme"])
    check_place(client, credential, operation, ids, "acme", "acme", "web")


# Paths the product's middleware answers before (or instead of) the view.
REFUSED = {
    "unknown tenant": ("nobody", "web", 404),
    "archived project": ("acme", ARCHIVED_PROJECT, 403),
    "gated project": ("acme", GATED_PROJECT, 302),
}


@pytest.mark.parametrize("refused", sorted(REFUSED))
@pytest.mark.parametrize("operation", OPERATIONS, ids=OPERATION_IDS)
def test_paths_the_middleware_refuses_are_refused_alike(
    operation: tuple[str, str, str, dict[str, Any]],
    refused: str,
    client: Client,
    users: dict[str, Any],
    ids: dict[str, dict[str, int]],
) -> None:
    tenant, project, status = REFUSED[refused]
    credential = CREDENTIAL_KINDS["key_read_write"](users["acme"])
    rest, answer = check_place(client, credential, operation, ids, "acme", tenant, project)
    assert rest.status_code == status
    error = answer["structuredContent"]["error"]
    if status == 302:
        assert "redirect" in error["message"] and error["status"] == 302
    if status == 403:
        assert error["message"] == "This project is archived."


def test_the_products_exception_middleware_answers_through_mcp(
    client: Client, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read write").bearer)
    there = {"tenant": "acme", "project": "web", "id": ids["acme"]["paid"]}
    error = rpc.call("mark_paid_order", there)["structuredContent"]["error"]
    assert error == {"code": "conflict", "message": "Order A-2 is paid already."}


def test_without_the_request_path_the_views_fail(
    client: Client, settings: Any, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    """What tool calls did before they took the product's middleware: the views find no
    tenant on the request and no row scope (REST answers the same call 200)."""
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TOOL_MIDDLEWARE": False}
    key = api_key(users["acme"], "read")
    assert (
        client.get(
            BASE.format(tenant="acme", project="web") + "orders/", headers=key.headers()
        ).status_code
        == 200
    )
    rpc = MCPClient(client, "/mcp", key.bearer)
    error = rpc.call("list_orders", {"tenant": "acme", "project": "web"})["structuredContent"]
    assert error["error"]["code"] == "internal_error"


def test_a_skipped_middleware_does_not_run_for_tool_calls(
    client: Client, settings: Any, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    gate = "tests.hosts.tenants.middleware.ProjectGateMiddleware"
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TOOL_MIDDLEWARE_SKIP": [gate]}
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read").bearer)
    listed = rpc.call("list_orders", {"tenant": "acme", "project": GATED_PROJECT})
    assert listed["isError"] is False and listed["structuredContent"]["results"] == []


def test_every_tool_is_covered() -> None:
    from tests.hosts.tenants.urls import endpoint

    assert {t.name for t in endpoint.tools} == {o[0] for o in OPERATIONS}


# -- parents from the include() prefix ------------------------------------------------------------


def test_the_prefix_kwargs_are_parents_and_required_arguments(
    client: Client, users: dict[str, Any]
) -> None:
    from tests.hosts.tenants.urls import endpoint

    for registration in endpoint.registrations:
        assert registration.routed_parents() == ("tenant", "project"), registration
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read").bearer)
    for tool in rpc.result("tools/list")["tools"]:
        schema = tool["inputSchema"]
        assert {"tenant", "project"} <= set(schema["required"]), tool["name"]
    assert not [m for m in endpoint.check() if m.is_serious()]


def test_a_tenant_the_caller_is_not_in_is_not_found_and_untouched(
    client: Client, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read write").bearer)
    before = snapshot()
    there = {"tenant": "globex", "project": "web"}
    for tool, arguments in [
        ("get_order", {**there, "id": ids["globex"]["order"]}),
        ("mark_paid_order", {**there, "id": ids["globex"]["order"]}),
        ("delete_medium", {**there, "id": ids["globex"]["medium"]}),
    ]:
        error = rpc.call(tool, arguments)["structuredContent"]["error"]
        assert error["code"] == "not_found", tool
    listed = rpc.call("list_orders", there)["structuredContent"]
    assert listed["results"] == []
    assert snapshot() == before


def scratch(name: str) -> Endpoint:
    endpoint = Endpoint(name, server_name=name)
    endpoints.discard(endpoint)
    return endpoint


def router_of(viewset: Any, prefix: str, basename: str) -> DefaultRouter:
    router = DefaultRouter()
    router.register(prefix, viewset, basename=basename)
    return router


# A router that is mounted twice, under prefixes whose kwargs differ, and one mounted nowhere.
TWICE = router_of(PropertyViewSet, "properties", "property")
NOWHERE = router_of(MediumViewSet, "media", "medium")
urlpatterns = [
    re_path(r"^api/v1/(?P<tenant>[^/]+)/projects/(?P<project>[^/]+)/", include(TWICE.urls)),
    re_path(r"^api/v1/(?P<tenant>[^/]+)/shared/", include(TWICE.urls)),
    path("mcp", scratch("unused").urls),
]


@pytest.mark.urls(__name__)
def test_e101_a_router_under_two_prefixes_asks_for_parents() -> None:
    endpoint = scratch("twice")
    endpoint.register_router(TWICE)
    [error] = [m for m in endpoint.check() if m.is_serious()]
    assert error.id == "mcp_endpoint.E101"
    assert "['tenant', 'project']; ['tenant']" in error.msg
    assert "parents=[...]" in (error.hint or "")


@pytest.mark.urls(__name__)
def test_parents_on_register_router_choose_the_mount() -> None:
    endpoint = scratch("chosen")
    [registration] = endpoint.register_router(TWICE, parents=["tenant"], include=["list"])
    assert not [m for m in endpoint.check() if m.is_serious()]
    assert registration.routes()["list"].path == "/api/v1/{tenant}/shared/properties/"
    assert [t.name for t in endpoint.tools] == ["list_properties"]
    wrong = scratch("wrong")
    wrong.register_router(TWICE, parents=["project"])
    [error] = [m for m in wrong.check() if m.is_serious()]
    assert error.id == "mcp_endpoint.E102"
    assert "['tenant', 'project']" in error.msg and "parents=" in (error.hint or "")


@pytest.mark.urls(__name__)
def test_w101_a_router_mounted_nowhere_says_how_to_pass_parents() -> None:
    endpoint = scratch("nowhere")
    endpoint.register_router(NOWHERE)
    [warning] = [m for m in endpoint.check() if m.id == "mcp_endpoint.W101"]
    assert "MediumViewSet" in warning.msg
    assert "parents=[...]" in (warning.hint or "")


def test_per_basename_parents_must_name_a_basename() -> None:
    with pytest.raises(ImproperlyConfigured, match="'orders'"):
        scratch("unknown").register_router(NOWHERE, per_basename={"orders": {"parents": []}})


# -- names ----------------------------------------------------------------------------------------


def test_names_are_unique_and_read_right() -> None:
    from tests.hosts.tenants.urls import endpoint

    names = [t.name for t in endpoint.tools]
    assert len(names) == len(set(names)) and all(TOOL_NAME.match(n) for n in names)
    assert {"list_properties", "list_media", "list_order_payments", "mark_paid_order"} <= set(names)
    assert not [n for n in names if "propertys" in n or "mediums" in n]


def test_a_name_prefix_that_repeats_the_noun_is_said_once() -> None:
    endpoint = scratch("stutter")
    endpoint.register_viewset(
        OrderPaymentViewSet, basename="order-payments", name_prefix="order", include=["list"]
    )
    assert [t.name for t in endpoint.tools] == ["list_order_payments"]


@pytest.mark.parametrize(
    ("name", "said_once"),
    [
        ("list_list_order_positions", "list_order_positions"),
        ("list_order_order_payments", "list_order_payments"),
        ("get_status_status", "get_status"),
        ("list_user_users", "list_user_users"),  # a user's users
        ("mark_paid_order", "mark_paid_order"),
    ],
)
def test_without_stutter(name: str, said_once: str) -> None:
    assert without_stutter(name) == said_once


# -- a custom action's body -----------------------------------------------------------------------


def test_an_action_that_reads_no_body_needs_only_its_lookup(
    client: Client, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read write").bearer)
    tools = {t["name"]: t for t in rpc.result("tools/list")["tools"]}
    schema = tools["mark_paid_order"]["inputSchema"]
    assert sorted(schema["required"]) == ["id", "project", "tenant"]
    result = rpc.call(
        "mark_paid_order", {"tenant": "acme", "project": "web", "id": ids["acme"]["order"]}
    )
    assert result["isError"] is False, result
    assert result["structuredContent"]["paid"] is True
    with scopes_disabled():
        assert Order.objects.get(pk=ids["acme"]["order"]).paid is True


class PaymentSerializer(serializers.Serializer):
    amount = serializers.DecimalField(max_digits=10, decimal_places=2)


class DeclaredOrderViewSet(OrderViewSet):
    """Orders whose actions say what they read."""

    @action(detail=True, methods=["post"], serializer_class=PaymentSerializer)
    def pay(self, request: Request, tenant: str, project: str, pk: str) -> Response:
        return Response({})

    @extend_schema(request=OrderSerializer)
    @action(detail=True, methods=["post"])
    def duplicate(self, request: Request, tenant: str, project: str, pk: str) -> Response:
        return Response({})

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def archive(self, request: Request, tenant: str, project: str, pk: str) -> Response:
        return Response({})


DECLARED = router_of(DeclaredOrderViewSet, "orders", "order")
urlpatterns.append(re_path(r"^t/(?P<tenant>[^/]+)/p/(?P<project>[^/]+)/", include(DECLARED.urls)))


@pytest.mark.urls(__name__)
def test_a_declared_body_keeps_its_required_fields() -> None:
    endpoint = scratch("declared")
    endpoint.register_router(
        DECLARED, include=["pay", "duplicate", "archive", "mark_paid"], schema_request=as_a_tenant
    )
    assert not [m for m in endpoint.check() if m.is_serious()]
    schemas = {t.name: t.spec.input_schema for t in endpoint.tools if t.spec is not None}
    assert set(schemas["pay_order"]["required"]) == {"tenant", "project", "id", "amount"}
    assert set(schemas["duplicate_order"]["required"]) == {
        "tenant",
        "project",
        "id",
        "reference",
        "total",
    }
    assert set(schemas["archive_order"]["required"]) == {"tenant", "project", "id"}
    assert set(schemas["archive_order"]["properties"]) == {"tenant", "project", "id"}
    assert set(schemas["mark_paid_order"]["required"]) == {"tenant", "project", "id"}
    assert {"reference", "total"} <= set(schemas["mark_paid_order"]["properties"])


# -- warnings, once per viewset -------------------------------------------------------------------


def test_warnings_come_once_per_viewset_and_say_what_to_do_once() -> None:
    from tests.hosts.tenants.urls import endpoint

    messages = [m for m in endpoint.check() if m.id in {"mcp_endpoint.W020", "mcp_endpoint.W053"}]
    # Two list actions described as one object (W020), one action's body guessed (W053):
    # one warning each for the viewset, naming its tools.
    assert sorted(m.id for m in messages) == ["mcp_endpoint.W020", "mcp_endpoint.W053"]
    assert all("OrderViewSet" in m.msg for m in messages)
    [guesses] = [m for m in messages if m.id == "mcp_endpoint.W020"]
    assert "'unpaid_orders'" in guesses.msg and "'largest_orders'" in guesses.msg
    assert (guesses.hint or "").count("@extend_schema") == 1
    [guessed] = [m for m in messages if m.id == "mcp_endpoint.W053"]
    assert "'mark_paid'" in guessed.msg and "'mark_paid_order'" in guessed.msg
    assert "@extend_schema(request=None)" in (guessed.hint or "")


# -- schemas built with the request the views expect ----------------------------------------------


def test_without_schema_request_the_tools_are_left_out() -> None:
    """The views read the tenant the middleware sets, which the schema generator's request
    lacks: without the hook, each tool's schema fails (W022) and the tool is not listed."""
    from tests.hosts.tenants.urls import orders

    endpoint = scratch("no-schema-request")
    endpoint.register_router(orders)
    left_out = [m for m in endpoint.check() if m.id == "mcp_endpoint.W022"]
    assert len(left_out) == len(endpoint.tools) and left_out
    assert all("tenant" in m.msg for m in left_out), [m.msg for m in left_out]
    assert all(t.spec is None for t in endpoint.tools)


def test_schema_request_gives_the_views_what_they_read(
    client: Client, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    from jsonschema import Draft202012Validator

    from tests.hosts.tenants.urls import endpoint

    assert not [m for m in endpoint.check() if m.id == "mcp_endpoint.W022"]
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read").bearer)
    tools = {t["name"]: t for t in rpc.result("tools/list")["tools"]}
    assert set(tools) == {o[0] for o in OPERATIONS if o[1] == "GET"}
    get_order = tools["get_order"]
    assert set(get_order["outputSchema"]["properties"]) == {"id", "reference", "total", "paid"}
    assert set(get_order["inputSchema"]["required"]) == {"tenant", "project", "id"}
    there = {"tenant": "acme", "project": "web"}
    for name, arguments in [
        ("get_order", {**there, "id": ids["acme"]["order"]}),
        ("list_orders", there),
        ("list_order_payments", there),
        ("get_medium", {**there, "id": ids["acme"]["medium"]}),
    ]:
        result = rpc.call(name, arguments)
        assert result["isError"] is False, result
        errors = Draft202012Validator(tools[name]["outputSchema"]).iter_errors(
            result["structuredContent"]
        )
        assert not list(errors), name


def test_schema_request_must_be_callable() -> None:
    from tests.hosts.tenants.urls import orders

    with pytest.raises(ImproperlyConfigured, match="schema_request for OrderViewSet must be a"):
        scratch("bad-schema-request").register_router(orders, schema_request="as_a_tenant")


# -- middleware of every kind ---------------------------------------------------------------------

SEEN: list[str] = []


class AsyncOnlyAuditMiddleware:
    """A product middleware that runs under ASGI only (async-only): a tool call, which runs
    synchronously, adapts it as Django's handler does."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        markcoroutinefunction(self)

    async def __call__(self, request: Any) -> Any:
        response = await self.get_response(request)
        if request.path.startswith("/api/"):
            SEEN.append(f"{request.method} {request.path} {response.status_code}")
        return response


class UnusedMiddleware:
    def __init__(self, get_response: Any) -> None:
        from django.core.exceptions import MiddlewareNotUsed

        raise MiddlewareNotUsed


def test_async_only_and_unused_middleware_run_as_django_runs_them(
    client: Client, settings: Any, users: dict[str, Any], ids: dict[str, dict[str, int]]
) -> None:
    settings.MIDDLEWARE = [
        f"{__name__}.UnusedMiddleware",
        f"{__name__}.AsyncOnlyAuditMiddleware",
        *settings.MIDDLEWARE,
    ]
    SEEN.clear()
    rpc = MCPClient(client, "/mcp", api_key(users["acme"], "read").bearer)
    result = rpc.call("list_orders", {"tenant": "acme", "project": "web"})
    assert result["isError"] is False, result
    refused = rpc.call("list_orders", {"tenant": "acme", "project": ARCHIVED_PROJECT})
    assert refused["structuredContent"]["error"]["code"] == "permission_denied"
    # Once per call, with the answer each call got; the MCP request itself is not an API path.
    assert [
        "GET /api/v1/acme/projects/web/orders/ 200",
        f"GET /api/v1/acme/projects/{ARCHIVED_PROJECT}/orders/ 403",
    ] == SEEN
