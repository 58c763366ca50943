"""Notes behind the product's team tokens, with ``/mcp`` taking team tokens besides the
app's API keys and OAuth tokens (the team tokens listed last, as a product adds its own)."""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from rest_framework import serializers, viewsets
from rest_framework.routers import SimpleRouter
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from tests.hosts import host_endpoint
from tests.hosts.teamtokens.authentication import HasTeamToken, TeamTokenAuthentication
from tests.hosts.teamtokens.models import Note


class NoteSerializer(serializers.ModelSerializer):
    class Meta:
        model = Note
        fields = ["id", "title", "body"]


class TeamAnonThrottle(AnonRateThrottle):
    """DRF's anonymous throttle, as the product keeps it: by address, for every caller whose
    user is anonymous, team tokens included."""

    rate = "1000/hour"


class TeamUserThrottle(UserRateThrottle):
    rate = "1000/hour"


class NoteViewSet(viewsets.ModelViewSet):
    """The notes of the caller's team."""

    queryset = Note.objects.all()  # narrowed to the team by get_queryset()
    serializer_class = NoteSerializer
    authentication_classes = [TeamTokenAuthentication]
    permission_classes = [HasTeamToken]
    throttle_classes = [TeamAnonThrottle, TeamUserThrottle]
    pagination_class = None
    filter_backends: list[Any] = []

    def get_queryset(self) -> Any:
        return Note.objects.filter(team=self.request.auth.team)

    def perform_create(self, serializer: Any) -> None:
        serializer.save(team=self.request.auth.team)


router = SimpleRouter()
router.register("notes", NoteViewSet, basename="note")

endpoint = host_endpoint(
    "teamtokens",
    AUTHENTICATION_CLASSES=[
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "mcp_endpoint.authentication.OAuth2TokenAuthentication",
        "tests.hosts.teamtokens.authentication.TeamTokenAuthentication",
    ],
    LOG_TOOL_CALLS=True,
)
endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
