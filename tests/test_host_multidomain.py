"""A product whose middleware sets ``request.urlconf`` per request (``multidomain``).

A ``/mcp`` added to ``ROOT_URLCONF`` only is not consulted for a tenant's domain: the
tenant URLconf answers (its 404, or a catch-all's page), and ``mcp_doctor`` says the path
may be routed elsewhere and how to check. With the docs' recipe (the per-request URLconf
includes the endpoint's URLs) the endpoint answers on the tenant's domain too.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from mcp_endpoint.doctor import DjangoClientHTTP, Doctor
from tests.hosts.parity import CredentialClient, api_key
from tests.hosts.tutorial.parity import owner_with_snippets

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
