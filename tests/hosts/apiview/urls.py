"""Snippets served by generic class-based views and a plain ``APIView``."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.urls import include, path
from drf_spectacular.utils import extend_schema
from rest_framework import generics, permissions, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts import host_endpoint
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import IsOwnerOrReadOnly, SnippetSerializer, SnippetViewSet


class HostViewMixin:
    authentication_classes = [APIKeyAuthentication, OAuth2TokenAuthentication]
    permission_classes = [permissions.IsAuthenticated, IsOwnerOrReadOnly]
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []
    pagination_class = None


class SnippetList(HostViewMixin, generics.ListCreateAPIView):  # type: ignore[type-arg]
    """Every snippet."""

    queryset = Snippet.objects.order_by("id")
    serializer_class = SnippetSerializer

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)


class SnippetItem(HostViewMixin, generics.RetrieveUpdateDestroyAPIView):  # type: ignore[type-arg]
    """One snippet."""

    queryset = Snippet.objects.order_by("id")
    serializer_class = SnippetSerializer


class StatsSerializer(serializers.Serializer[Any]):
    snippets = serializers.IntegerField()
    languages = serializers.DictField(child=serializers.IntegerField())


class SnippetStats(HostViewMixin, APIView):
    """How many snippets there are, by language."""

    @extend_schema(responses=StatsSerializer)
    def get(self, request: Request) -> Response:
        counts = Snippet.objects.values("language").annotate(n=Count("id"))
        return Response(
            {
                "snippets": Snippet.objects.count(),
                "languages": {row["language"]: row["n"] for row in counts},
            }
        )


# The serializer's hyperlinks name snippet-detail and snippet-highlight.
links = SimpleRouter()
links.register("snippets", SnippetViewSet, basename="snippet")

endpoint = host_endpoint("apiview")
endpoint.register_view(
    SnippetList, url_name="snippet-list", names={"get": "list_snippets", "post": "create_snippet"}
)
endpoint.register_view(SnippetItem, url_name="api:snippet-item", singular="snippet")
endpoint.register_view(SnippetStats, url_name="snippet-stats")

api = (
    [
        path("items/<int:pk>/", SnippetItem.as_view(), name="snippet-item"),
    ],
    "api",
)

urlpatterns = [
    path("list/", SnippetList.as_view(), name="snippet-list"),
    path("api/", include(api)),
    path("stats/", SnippetStats.as_view(), name="snippet-stats"),
    path("", include(links.urls)),
    path("mcp", endpoint.urls),
]
