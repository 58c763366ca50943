"""The inventory's REST API under ``/inventory/api/`` and its MCP endpoint at
``/inventory/mcp``, which accepts the product's own tokens as well as API keys."""

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
    settings={
        "SERVER_NAME": "inventory",
        "AUTHENTICATION_CLASSES": [
            "tests.hosts.inventory.authentication.TokenAuthentication",
            "mcp_endpoint.authentication.APIKeyAuthentication",
        ],
    },
)
endpoint.register_router(router)

# Another endpoint on the same API: described and called as version 4.1 (sites without
# coordinates), with creates that take a list of sites; one tool asks for 4.2 itself.
legacy_endpoint = Endpoint(
    "inventory-4.1",
    settings={
        "SERVER_NAME": "inventory-4.1",
        "AUTHENTICATION_CLASSES": ["tests.hosts.inventory.authentication.TokenAuthentication"],
        "API_VERSION": "4.1",
        "ARRAY_BODIES": True,
    },
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
    path("inventory/api/", include(router.urls)),
    path("inventory/mcp", endpoint.urls),
    path("inventory/mcp-4.1", legacy_endpoint.urls),
]
