from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from tests.hosts.phrasebook.models import STYLES, Author, Phrase


class AuthorSerializer(serializers.ModelSerializer[Author]):
    class Meta:
        model = Author
        fields = ["id", "name"]


class PhraseSerializer(serializers.ModelSerializer[Phrase]):
    class Meta:
        model = Phrase
        fields = ["id", "author", "text", "language", "style"]


class RenderingSerializer(serializers.Serializer[dict[str, Any]]):
    text = serializers.CharField()
    style = serializers.ChoiceField(choices=STYLES)


class PhraseViewSet(viewsets.ModelViewSet[Phrase]):
    """Phrases you keep, each in a language and a style."""

    serializer_class = PhraseSerializer
    permission_classes = [IsAuthenticated]
    filterset_fields = ["language", "style", "author"]

    def get_queryset(self) -> QuerySet[Phrase]:
        return Phrase.objects.filter(owner=self.request.user.pk)

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)

    @extend_schema(
        parameters=[OpenApiParameter("style", enum=[s for s, _ in STYLES])],
        responses=RenderingSerializer,
    )
    @action(detail=True, methods=["get"])
    def render(self, request: Request, pk: str | None = None) -> Response:
        """The phrase as it reads in another style."""
        phrase = self.get_object()
        style = request.query_params.get("style", phrase.style)
        return Response({"text": phrase.text.upper(), "style": style})


class AuthorViewSet(viewsets.ReadOnlyModelViewSet[Author]):
    """The authors phrases are attributed to."""

    queryset = Author.objects.all()
    serializer_class = AuthorSerializer
    permission_classes = [IsAuthenticated]
