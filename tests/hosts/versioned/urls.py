"""Snippets under ``/api/<version>/`` (URLPathVersioning) and ``/ns/v1/`` (NamespaceVersioning)."""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from rest_framework import permissions, serializers, viewsets
from rest_framework.routers import SimpleRouter
from rest_framework.versioning import NamespaceVersioning, URLPathVersioning

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts import host_endpoint
from tests.hosts.tutorial.models import Snippet


class PathSnippetSerializer(serializers.HyperlinkedModelSerializer):
    class Meta:
        model = Snippet
        fields = ["url", "id", "title", "code"]
        extra_kwargs = {"url": {"view_name": "snippet-detail"}}


class NamespaceSnippetSerializer(PathSnippetSerializer):
    class Meta(PathSnippetSerializer.Meta):
        extra_kwargs = {"url": {"view_name": "nsnippet-detail"}}


class VersionedSnippets(viewsets.ReadOnlyModelViewSet):
    """Snippets, by API version."""

    queryset = Snippet.objects.order_by("id")
    authentication_classes = [APIKeyAuthentication, OAuth2TokenAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []
    pagination_class = None


class V1PathVersioning(URLPathVersioning):
    default_version = "v1"
    allowed_versions = ["v1"]


class PathVersioned(VersionedSnippets):
    versioning_class = V1PathVersioning
    serializer_class = PathSnippetSerializer


class NamespaceVersioned(VersionedSnippets):
    versioning_class = NamespaceVersioning
    serializer_class = NamespaceSnippetSerializer


path_router = SimpleRouter()
path_router.register("snippets", PathVersioned, basename="snippet")
ns_router = SimpleRouter()
ns_router.register("nsnippets", NamespaceVersioned, basename="nsnippet")

endpoint = host_endpoint("versioned")
endpoint.register_viewset(PathVersioned, singular="snippet", plural="snippets")
endpoint.register_viewset(NamespaceVersioned, singular="ns_snippet", plural="ns_snippets")

urlpatterns = [
    path("api/<str:version>/", include(path_router.urls)),
    path("ns/v1/", include((ns_router.urls, "v1"))),
    path("mcp", endpoint.urls),
]
