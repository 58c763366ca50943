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

urlpatterns = [
    path("inventory/api/", include(router.urls)),
    path("inventory/mcp", endpoint.urls),
]
