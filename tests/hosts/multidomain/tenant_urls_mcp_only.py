"""A tenant URLconf with the endpoint and no API: the REST API is the product domain's
only, so a tenant's domain answers 404 to its URLs, and so must a tool called there."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path

from tests.hosts.multidomain.urls import endpoint

urlpatterns: list[URLPattern | URLResolver] = [
    path("", include("mcp_endpoint.oauth.urls")),
    path("mcp", endpoint.urls),
]
