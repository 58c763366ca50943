"""Snippets paged three ways: limit/offset, cursor, and a page-number subclass."""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from rest_framework import pagination, permissions, viewsets
from rest_framework.routers import SimpleRouter

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts import host_endpoint
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import SnippetSerializer, SnippetViewSet


class TwoAtATime(pagination.LimitOffsetPagination):
    default_limit = 2


class ByCreation(pagination.CursorPagination):
    page_size = 2
    ordering = "id"


class NumberedPages(pagination.PageNumberPagination):
    page_size = 2
    page_query_param = "p"


class PagedSnippets(viewsets.ReadOnlyModelViewSet):
    """Snippets, a few at a time."""

    queryset = Snippet.objects.order_by("id")
    serializer_class = SnippetSerializer
    authentication_classes = [APIKeyAuthentication, OAuth2TokenAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []


class OffsetSnippets(PagedSnippets):
    pagination_class = TwoAtATime


class CursorSnippets(PagedSnippets):
    pagination_class = ByCreation


class NumberedSnippets(PagedSnippets):
    pagination_class = NumberedPages


class UnpagedSnippets(PagedSnippets):
    pagination_class = None


router = SimpleRouter()
router.register("offset", OffsetSnippets, basename="offset")
router.register("cursor", CursorSnippets, basename="cursor")
router.register("numbered", NumberedSnippets, basename="numbered")
router.register("unpaged", UnpagedSnippets, basename="unpaged")
# The serializer links to snippet-detail and snippet-highlight: route those names too.
links = SimpleRouter()
links.register("snippets", SnippetViewSet, basename="snippet")

endpoint = host_endpoint("paging")
endpoint.register_router(
    router,
    per_basename={
        "offset": {"singular": "offset_snippet", "plural": "offset_snippets"},
        "cursor": {"singular": "cursor_snippet", "plural": "cursor_snippets"},
        "numbered": {"singular": "numbered_snippet", "plural": "numbered_snippets"},
        "unpaged": {"singular": "unpaged_snippet", "plural": "unpaged_snippets"},
    },
)

urlpatterns = [
    path("", include(router.urls)),
    path("", include(links.urls)),
    path("mcp", endpoint.urls),
]
