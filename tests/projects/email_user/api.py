"""The host's REST API: each user's notes, for API keys, OAuth tokens and JSON Web Tokens."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions, serializers, viewsets
from rest_framework.routers import SimpleRouter
from rest_framework_simplejwt.authentication import JWTAuthentication

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.projects.email_user.models import Note


class NoteSerializer(serializers.ModelSerializer):
    # The user model has no username: a note names its owner by email.
    owner = serializers.ReadOnlyField(source="owner.email")

    class Meta:
        model = Note
        fields = ["id", "title", "body", "owner", "created"]


class NoteViewSet(viewsets.ModelViewSet):
    """The signed-in user's notes."""

    queryset = Note.objects.order_by("id")
    serializer_class = NoteSerializer
    authentication_classes = [APIKeyAuthentication, OAuth2TokenAuthentication, JWTAuthentication]
    permission_classes = [permissions.IsAuthenticated]
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []
    pagination_class = None

    def get_queryset(self) -> Any:
        return self.queryset.filter(owner=self.request.user)

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)


router = SimpleRouter()
router.register("notes", NoteViewSet, basename="note")
