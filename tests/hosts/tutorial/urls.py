"""The tutorial host's URLs: the REST API at the root, the MCP endpoint at ``/mcp``."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import DefaultRouter

from tests.hosts import host_endpoint
from tests.hosts.tutorial.views import SnippetViewSet, UserViewSet

router = DefaultRouter()
router.register("snippets", SnippetViewSet, basename="snippet")
router.register("users", UserViewSet, basename="user")

endpoint = host_endpoint("tutorial")
endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
