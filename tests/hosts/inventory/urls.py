"""The inventory's REST API at the root and its MCP endpoint at ``/mcp``, which accepts the
product's own tokens as well as API keys; ``/mcp-4.1`` is another endpoint on the same API."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from mcp_endpoint.endpoint import Endpoint
from tests.hosts.inventory import views

router = SimpleRouter()
router.register("tenants", views.TenantViewSet)
router.register("regions", views.RegionViewSet)
router.register("sites", views.SiteViewSet)
router.register("manufacturers", views.ManufacturerViewSet)
router.register("device-types", views.DeviceTypeViewSet)
router.register("devices", views.DeviceViewSet)
router.register("journal-entries", views.JournalEntryViewSet)

endpoint = Endpoint(
    "inventory",
    server_name="inventory",
    authentication_classes=[
        "tests.hosts.inventory.authentication.TokenAuthentication",
        "mcp_endpoint.authentication.APIKeyAuthentication",
    ],
)
endpoint.register_router(router)

# Another endpoint on the same API: described and called as version 4.1 (sites without
# coordinates), with creates that take a list of sites; one tool asks for 4.2 itself.
legacy_endpoint = Endpoint(
    "inventory-4.1",
    server_name="inventory-4.1",
    authentication_classes=["tests.hosts.inventory.authentication.TokenAuthentication"],
    api_version="4.1",
    array_bodies=True,
)
legacy_endpoint.register_viewset(views.SiteViewSet, prefix="sites", include=["create", "retrieve"])
legacy_endpoint.register_viewset(
    views.SiteViewSet,
    prefix="sites",
    include=["retrieve"],
    names={"retrieve": "get_site_as_of_4_2"},
    version="4.2",
)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
    path("mcp-4.1", legacy_endpoint.urls),
]
