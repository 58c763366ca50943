from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils.html import escape
from rest_framework import pagination, permissions, renderers, serializers, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts.tutorial.models import Snippet

User = get_user_model()


class IsOwnerOrReadOnly(permissions.BasePermission):
    """Only the owner of a snippet may change it."""

    message = "Only the owner may change this snippet."

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return bool(obj.owner == request.user)


class SnippetSerializer(serializers.HyperlinkedModelSerializer):
    owner = serializers.ReadOnlyField(source="owner.username")
    highlight = serializers.HyperlinkedIdentityField(view_name="snippet-highlight", format="html")

    class Meta:
        model = Snippet
        fields = ["url", "id", "highlight", "owner", "title", "code", "language"]


class UserSerializer(serializers.HyperlinkedModelSerializer):
    snippets = serializers.HyperlinkedRelatedField(
        many=True, view_name="snippet-detail", read_only=True
    )

    class Meta:
        model = User
        fields = ["url", "id", "username", "snippets"]


class SnippetPagination(pagination.PageNumberPagination):
    page_size = 2


class SnippetViewSet(viewsets.ModelViewSet):
    """
    This viewset automatically provides `list`, `create`, `retrieve`,
    `update` and `destroy` actions.

    Additionally we also provide an extra `highlight` action.

    Code snippets, readable by everyone signed in, changed by their owners.
    """

    queryset = Snippet.objects.all()
    serializer_class = SnippetSerializer
    # Spelled out rather than taken from REST_FRAMEWORK, so the host is the same whatever
    # the test settings say.
    authentication_classes = [
        APIKeyAuthentication,
        OAuth2TokenAuthentication,
        SessionAuthentication,
    ]
    permission_classes = [permissions.IsAuthenticated, IsOwnerOrReadOnly]
    pagination_class = SnippetPagination
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []

    @action(detail=True, renderer_classes=[renderers.StaticHTMLRenderer])
    def highlight(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """The snippet's code as an HTML page."""
        snippet = self.get_object()
        return Response(f"<pre>{escape(snippet.code)}</pre>")

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)


class UserViewSet(viewsets.ReadOnlyModelViewSet):
    """
    This viewset automatically provides `list` and `retrieve` actions.

    The users, for browser sessions only.
    """

    queryset = User.objects.order_by("id")
    serializer_class = UserSerializer
    authentication_classes = [SessionAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = None
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []
