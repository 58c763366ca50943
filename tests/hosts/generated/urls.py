"""The generated product's REST API at the root and its MCP endpoint at ``/mcp``."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from tests.hosts import host_endpoint
from tests.hosts.generated.views import VIEWSETS

router = SimpleRouter()
for prefix, viewset, basename, _ in VIEWSETS:
    router.register(prefix, viewset, basename=basename)

endpoint = host_endpoint("generated")
endpoint.register_router(
    router,
    per_basename={basename: {"name_prefix": word} for _, _, basename, word in VIEWSETS if word},
)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
