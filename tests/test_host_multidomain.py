"""A product whose middleware sets ``request.urlconf`` per request (``multidomain``).

A ``/mcp`` added to ``ROOT_URLCONF`` only is not consulted for a tenant's domain: the
tenant URLconf answers (its 404, or a catch-all's page), and ``mcp_doctor`` says the path
may be routed elsewhere and how to check. With the docs' recipe (the per-request URLconf
includes the endpoint's URLs) the endpoint answers on the tenant's domain too, and its tool
calls are routed by the URLconf the middleware sets, as the REST requests are: REST and MCP
agree there for every tool and credential kind.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from mcp_endpoint.doctor import DjangoClientHTTP, Doctor
from tests.hosts.parity import CredentialClient, Operation, api_key, credential_kinds
from tests.hosts.tutorial.parity import (
    OPERATIONS,
    check_operation,
    each_operation,
    owner_with_snippets,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.multidomain.urls")]

TENANT = "acme.example.com"
MIDDLEWARE = "tests.hosts.multidomain.middleware.TenantURLConfMiddleware"


@pytest.fixture
def tenant(settings: Any) -> Any:
    """The middleware installed, with the tenant's domain allowed."""
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, MIDDLEWARE]
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, TENANT]
    return settings


def initialize(client: Client, host: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    return client.post("/mcp", data=body, content_type="application/json", HTTP_HOST=host)


def routed_elsewhere(findings: list[Any]) -> Any:
    [finding] = [f for f in findings if f.id == "mcp_doctor.E003"]
    assert "routed elsewhere" in finding.message
    assert "request.urlconf" in finding.hint and "catch-all" in finding.hint
    assert "--host" in finding.hint
    return finding


def test_the_root_urlconf_alone_leaves_the_tenants_domain_without_the_endpoint(
    client: Client, tenant: Any
) -> None:
    assert initialize(client, "testserver").status_code == 401
    assert initialize(client, TENANT).status_code == 404


def test_the_doctor_says_the_path_may_be_routed_elsewhere(tenant: Any) -> None:
    findings = Doctor(DjangoClientHTTP(), f"http://{TENANT}/mcp").run()
    assert "404" in routed_elsewhere(findings).message


def test_a_catch_all_page_is_not_taken_for_an_open_endpoint(tenant: Any) -> None:
    tenant.TENANT_URLCONF = "tests.hosts.multidomain.spa_urls"
    findings = Doctor(DjangoClientHTTP(), f"http://{TENANT}/mcp").run()
    assert "200" in routed_elsewhere(findings).message
    assert not [f for f in findings if f.id == "mcp_doctor.W003"]


def test_the_recipe_makes_the_endpoint_answer_on_the_tenants_domain(
    client: Client, tenant: Any
) -> None:
    tenant.TENANT_URLCONF = "tests.hosts.multidomain.tenant_urls_with_mcp"
    answer = initialize(client, TENANT)
    assert answer.status_code == 401
    assert f'resource_metadata="http://{TENANT}/' in answer["WWW-Authenticate"]
    owner, _ = owner_with_snippets()
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    listed = rpc.request("tools/list", headers={"Host": TENANT}).json()["result"]["tools"]
    assert "list_snippets" in {t["name"] for t in listed}
    findings = Doctor(DjangoClientHTTP(), f"http://{TENANT}/mcp").run()
    assert not [f for f in findings if f.id in ("mcp_doctor.E003", "mcp_doctor.E006")]


# -- tool calls on the tenant's domain take the per-request URLconf -------------------------------

TENANT_KINDS = credential_kinds(host=TENANT)


@pytest.mark.parametrize("kind", sorted(TENANT_KINDS))
@each_operation
def test_rest_and_mcp_agree_on_the_tenants_domain(
    kind: str, operation: Operation, tenant: Any
) -> None:
    """Through the recipe's URLconf, which the middleware sets for the inner request too."""
    tenant.TENANT_URLCONF = "tests.hosts.multidomain.tenant_urls_with_mcp"
    owner, snippets = owner_with_snippets()
    on_tenant = Client(HTTP_HOST=TENANT)
    check_operation(on_tenant, TENANT_KINDS[kind](owner), operation, snippets, "/mcp")


def test_a_tenant_urlconf_without_the_api_answers_not_found_through_both(tenant: Any) -> None:
    """The inner request is routed by the URLconf the middleware sets for it, as the REST
    request is: the root URLconf's route is not taken behind the product's back."""
    tenant.TENANT_URLCONF = "tests.hosts.multidomain.tenant_urls_mcp_only"
    owner, snippets = owner_with_snippets()
    on_tenant = Client(HTTP_HOST=TENANT)
    key = api_key(owner, "read")
    for operation in [o for o in OPERATIONS if o[1] == "GET"]:
        rest, _ = check_operation(on_tenant, key, operation, snippets, "/mcp")
        assert rest.status_code == 404


def test_a_tenant_urlconf_that_routes_the_path_elsewhere_is_not_the_action(tenant: Any) -> None:
    tenant.TENANT_URLCONF = "tests.hosts.multidomain.tenant_urls_elsewhere"
    owner, _ = owner_with_snippets()
    on_tenant = Client(HTTP_HOST=TENANT)
    key = api_key(owner, "read")
    assert on_tenant.get("/snippets/", headers=key.headers()).json() == {"legacy": True}
    answer = CredentialClient(on_tenant, "/mcp", key).call("list_snippets", {})
    error = answer["structuredContent"]["error"]
    assert error["code"] == "not_found"
    assert (
        "routes /snippets/ to another view" in error["message"] and "legacy-api" in error["message"]
    )
