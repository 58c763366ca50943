"""The inventory host's URLs, plus an endpoint at ``/unavailable/mcp`` with tools that cannot
be built.

Its site tools ask for API version 9.9, which the inventory's views do not serve, so their
schemas cannot be built; its tenant tool builds. Use it with
``@pytest.mark.urls("tests.urls_unavailable_testing")``.
"""

from __future__ import annotations

from django.urls import path

from mcp_endpoint.endpoint import Endpoint
from tests.hosts.inventory.urls import urlpatterns as inventory_urlpatterns
from tests.hosts.inventory.views import SiteViewSet, TenantViewSet

unavailable_endpoint = Endpoint(
    "unavailable-tools",
    server_name="unavailable-tools",
    authentication_classes=["tests.hosts.inventory.authentication.TokenAuthentication"],
)
unavailable_endpoint.register_viewset(SiteViewSet, include=["list", "retrieve"], version="9.9")
unavailable_endpoint.register_viewset(TenantViewSet, include=["list"])

urlpatterns = [*inventory_urlpatterns, path("unavailable/mcp", unavailable_endpoint.urls)]
