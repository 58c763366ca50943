"""The recipe: the tenant URLconf with the endpoint's URLs, and the OAuth URLs its 401
points clients at, as the root URLconf has them."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path

from tests.hosts.multidomain import tenant_urls
from tests.hosts.multidomain.urls import endpoint

urlpatterns: list[URLPattern | URLResolver] = [
    *tenant_urls.urlpatterns,
    path("", include("mcp_endpoint.oauth.urls")),
    path("mcp", endpoint.urls),
]
