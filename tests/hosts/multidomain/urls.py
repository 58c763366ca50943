"""The product's root URLconf: its API and ``/mcp``, where requests to the product's own
domain are routed; a tenant's domain is routed by the middleware's URLconf instead."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from tests.hosts import host_endpoint
from tests.hosts.multidomain import tenant_urls

endpoint = host_endpoint("multidomain")
endpoint.register_router(tenant_urls.router)

urlpatterns: list[URLPattern | URLResolver] = [
    *tenant_urls.urlpatterns,
    path("mcp", endpoint.urls),
]
