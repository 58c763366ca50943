"""The tutorial's snippets behind a view that lists the scope policy itself
(:class:`~mcp_endpoint.permissions.HasScopes` first among its permissions, as a host that
puts it in ``DEFAULT_PERMISSION_CLASSES`` has it), for :mod:`tests.test_permissions`."""

from __future__ import annotations

from django.urls import include, path
from rest_framework import permissions
from rest_framework.routers import DefaultRouter

from mcp_endpoint.permissions import HasScopes
from tests.hosts import host_endpoint
from tests.hosts.tutorial.views import IsOwnerOrReadOnly, SnippetViewSet


class ListedSnippetViewSet(SnippetViewSet):
    """The snippets, the scope policy listed first among the view's permissions."""

    permission_classes = [HasScopes, permissions.IsAuthenticated, IsOwnerOrReadOnly]


router = DefaultRouter()
router.register("snippets", ListedSnippetViewSet, basename="snippet")

endpoint = host_endpoint("scope-policy")
endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
