"""Snippets behind ``TokenAuthentication`` only, with two endpoints: ``/mcp`` authenticates
API keys and OAuth tokens (which the view cannot take), ``/mcp-tokens`` DRF tokens too."""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from rest_framework import permissions, viewsets
from rest_framework.authentication import TokenAuthentication
from rest_framework.routers import SimpleRouter

from tests.hosts import host_endpoint
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import IsOwnerOrReadOnly, SnippetSerializer, SnippetViewSet


class TokenSnippetViewSet(viewsets.ModelViewSet):
    """Snippets for holders of a DRF token."""

    queryset = Snippet.objects.order_by("id")
    serializer_class = SnippetSerializer
    authentication_classes = [TokenAuthentication]
    permission_classes = [permissions.IsAuthenticated, IsOwnerOrReadOnly]
    pagination_class = None
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)


router = SimpleRouter()
router.register("token-snippets", TokenSnippetViewSet, basename="token-snippet")
# The serializer's hyperlinks name snippet-detail and snippet-highlight.
links = SimpleRouter()
links.register("snippets", SnippetViewSet, basename="snippet")

keys_endpoint = host_endpoint("tokenauth-keys")
keys_endpoint.register_router(router)
tokens_endpoint = host_endpoint(
    "tokenauth-tokens",
    AUTHENTICATION_CLASSES=[
        "rest_framework.authentication.TokenAuthentication",
        "mcp_endpoint.authentication.APIKeyAuthentication",
    ],
)
tokens_endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("", include(links.urls)),
    path("mcp", keys_endpoint.urls),
    path("mcp-tokens", tokens_endpoint.urls),
]
