"""The tenants host (:mod:`tests.hosts.tenants`) served by gunicorn on loopback with the
product's API middleware (``tests/settings_tenants.py``), and the official Python SDK as
the client, which checks every structured result against the tool's output schema: the
tools are listed with their schemas (built with the host's ``schema_request``), each call
passes through the middleware (the tenant from the path, the row scope, the refusals by
path, the exception middleware) and answers what REST answers, in both connection modes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import LiveServer, run_script

pytestmark = pytest.mark.e2e

SEED = """
import json
from django.contrib.auth import get_user_model
from mcp_endpoint.models import APIKey
from tests.hosts.tenants.models import Order, Tenant
from tests.hosts.tenants.scoping import scopes_disabled
olive = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
acme, globex = Tenant.objects.create(slug="acme"), Tenant.objects.create(slug="globex")
acme.members.add(olive)
with scopes_disabled():
    order = Order.objects.create(tenant=acme, project="web", reference="A-1", total="12.50")
    Order.objects.create(tenant=acme, project="web", reference="A-2", total="3.00", paid=True)
    theirs = Order.objects.create(tenant=globex, project="web", reference="G-1", total="1.00")
_, key = APIKey.objects.create_key(user=olive, scopes="read write", name="tenants e2e")
print(json.dumps({"key": key, "order": order.pk, "theirs": theirs.pk}))
"""


@dataclass
class Host:
    server: LiveServer
    key: str
    order: int
    theirs: int


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp_path_factory.mktemp("tenants-host")
    root = Path(__file__).resolve().parent.parent
    env = {"DJANGO_SETTINGS_MODULE": "tests.settings_tenants", "PYTHONPATH": str(root)}
    with LiveServer(workdir, workers=1, env=env) as server:
        output = run_script(server.env, SEED)
        facts = json.loads(output.strip().splitlines()[-1])
        yield Host(server, facts["key"], facts["order"], facts["theirs"])


def rest(host: Host, path: str) -> httpx2.Response:
    return httpx2.get(
        host.server.url(f"/api/v1/{path}"),
        headers={"Authorization": f"Bearer {host.key}"},
        timeout=30,
        follow_redirects=False,
    )


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_calls_through_the_products_middleware(host: Host, mode: str) -> None:
    web = {"tenant": "acme", "project": "web"}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_orders", web),
        ("get_order", {**web, "id": host.order}),
        ("list_order_payments", web),
        ("get_order", {"tenant": "globex", "project": "web", "id": host.theirs}),
        ("list_orders", {"tenant": "nobody", "project": "web"}),
        ("list_orders", {"tenant": "acme", "project": "archive"}),
        ("list_orders", {"tenant": "acme", "project": "gated"}),
    ]
    got: dict[int, Any] = {}

    async def main() -> None:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {host.key}"}, timeout=30
        ) as http:
            transport = streamable_http_client(host.server.url("/mcp"), http_client=http)
            async with Client(transport, mode=mode) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert {"list_orders", "get_order", "mark_paid_order"} <= set(tools)
                assert tools["get_order"].output_schema is not None
                for index, (name, arguments) in enumerate(calls):
                    got[index] = await client.call_tool(name, arguments)
                # A write in the tenant the path names, then the product's exception
                # middleware answering an order paid twice (409).
                created = await client.call_tool(
                    "create_order", {**web, "reference": f"N-{mode}", "total": "2.00"}
                )
                new = {**web, "id": created.structured_content["id"]}
                first = await client.call_tool("mark_paid_order", new)
                again = await client.call_tool("mark_paid_order", new)
                got["paid"] = (created, first, again)

    # What REST answers before the calls write anything.
    answers = [
        rest(host, "acme/projects/web/orders/").json(),
        rest(host, f"acme/projects/web/orders/{host.order}/").json(),
        rest(host, "acme/projects/web/order-payments/").json(),
    ]
    anyio.run(main)
    for index, answer in enumerate(answers):
        assert got[index].is_error is False and got[index].structured_content == answer
    # Another tenant's order, an unknown tenant, an archived and a gated project: refused
    # through both, as the product's middleware and views refuse them.
    expected = [
        (3, f"globex/projects/web/orders/{host.theirs}/", 404, "not_found"),
        (4, "nobody/projects/web/orders/", 404, "not_found"),
        (5, "acme/projects/archive/orders/", 403, "permission_denied"),
        (6, "acme/projects/gated/orders/", 302, "permission_denied"),
    ]
    for index, path, status, code in expected:
        assert rest(host, path).status_code == status, path
        assert got[index].is_error is True
        assert got[index].structured_content["error"]["code"] == code, got[index]
    created, first, again = got["paid"]
    assert created.is_error is False and created.structured_content["paid"] is False
    assert first.is_error is False and first.structured_content["paid"] is True
    assert again.is_error is True
    assert again.structured_content["error"]["code"] == "conflict"
