from __future__ import annotations

import csv
import io
import re
from typing import Any

import django_filters
from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import pagination, permissions, renderers, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts.paperwork.models import ApplicationSettings, Correspondent, Document, Note, Tag
from tests.hosts.paperwork.serializers import (
    ApplicationSettingsSerializer,
    CorrespondentSerializer,
    DocumentSerializer,
    NoteSerializer,
    StatisticsSerializer,
    TagSerializer,
)

AUTHENTICATION = [APIKeyAuthentication, OAuth2TokenAuthentication, SessionAuthentication]
FULL_PERMS = OpenApiParameter("full_perms", OpenApiTypes.BOOL, description="Add permissions.")
FULL_CONTENT = OpenApiParameter("full_content", OpenApiTypes.BOOL, description="Add content.")


class CSVRenderer(renderers.BaseRenderer):
    """Rows of a list as CSV, as export features write them."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> Any:
        rows = data.get("results", data) if isinstance(data, dict) else data
        rows = rows if isinstance(rows, list) else [rows]
        out = io.StringIO()
        if rows and isinstance(rows[0], dict):
            writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        return out.getvalue().encode("utf-8")


class CamelCaseJSONRenderer(renderers.JSONRenderer):
    """JSON with camelCase keys, as products that serve a JavaScript front end write it."""

    def render(
        self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None
    ) -> Any:
        return super().render(camel_cased(data), accepted_media_type, renderer_context)


def camel_cased(data: Any) -> Any:
    if isinstance(data, dict):
        return {
            re.sub(r"_([a-z])", lambda m: m[1].upper(), k): camel_cased(v) for k, v in data.items()
        }
    if isinstance(data, list):
        return [camel_cased(v) for v in data]
    return data


class Pages(pagination.PageNumberPagination):
    page_size = 10
    page_size_query_param = "page_size"
    max_page_size = 100


class Host(viewsets.GenericViewSet[Any]):
    """What every view of the product shares."""

    authentication_classes = AUTHENTICATION
    permission_classes = [permissions.IsAuthenticated]
    throttle_classes: list[Any] = []


class NumberInFilter(django_filters.BaseInFilter, django_filters.NumberFilter):
    pass


class DocumentFilter(django_filters.FilterSet):
    correspondent__id__in = NumberInFilter(field_name="correspondent__id", lookup_expr="in")
    id__in = NumberInFilter(field_name="id", lookup_expr="in")
    tags__id__all = NumberInFilter(method="all_tags")
    title__icontains = django_filters.CharFilter(field_name="title", lookup_expr="icontains")

    class Meta:
        model = Document
        fields = ["correspondent"]

    def all_tags(self, queryset: QuerySet[Document], name: str, value: list[int]) -> Any:
        for tag in value:
            queryset = queryset.filter(tags__id=tag)
        return queryset.distinct()


class TagViewSet(viewsets.ModelViewSet[Tag], Host):
    queryset = Tag.objects.all()
    serializer_class = TagSerializer
    pagination_class = Pages
    filter_backends: list[Any] = []

    @extend_schema(parameters=[FULL_PERMS])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(parameters=[FULL_PERMS])
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)


class DocumentViewSet(viewsets.ModelViewSet[Document], Host):
    queryset = Document.objects.all()
    serializer_class = DocumentSerializer
    pagination_class = Pages
    filter_backends = [DjangoFilterBackend]
    filterset_class = DocumentFilter

    def get_queryset(self) -> QuerySet[Document]:
        return Document.objects.filter(owner=self.request.user).prefetch_related("tags")

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)

    @extend_schema(parameters=[FULL_CONTENT])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(parameters=[FULL_CONTENT])
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(methods=["GET"], request=None, responses=NoteSerializer(many=True))
    @extend_schema(methods=["POST"], request=NoteSerializer, responses=NoteSerializer(many=True))
    @extend_schema(
        methods=["DELETE"],
        request=None,
        parameters=[
            # Named as the product names it: "id", like the document's own path parameter.
            OpenApiParameter("id", OpenApiTypes.INT, required=True, description="The note.")
        ],
        responses=NoteSerializer(many=True),
    )
    @action(
        detail=True, methods=["get", "post", "delete"], pagination_class=None, filter_backends=[]
    )
    def notes(self, request: Request, pk: Any = None) -> Response:
        """The notes of a document: read them, add one, delete one."""
        document = self.get_object()
        if request.method == "POST":
            serializer = NoteSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            serializer.save(document=document)
        elif request.method == "DELETE":
            Note.objects.filter(document=document, pk=request.query_params.get("id")).delete()
        notes = document.notes.all()
        return Response(NoteSerializer(notes, many=True).data)

    @extend_schema(responses=StatisticsSerializer)
    @action(detail=False, methods=["get"])
    def statistics(self, request: Request) -> Response:
        """How many documents there are, and the inbox tag."""
        tag = Tag.objects.filter(name="inbox").first()
        return Response(
            {"documents_total": self.get_queryset().count(), "inbox_tag": tag.pk if tag else None}
        )

    @extend_schema(request=None, responses=DocumentSerializer)
    @action(detail=True, methods=["post"])
    def email_document(self, request: Request, pk: Any = None) -> Response:
        """Send the document by email (here: answer with it)."""
        return Response(self.get_serializer(self.get_object()).data)

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=False, methods=["get"], renderer_classes=[CSVRenderer], pagination_class=None)
    def export(self, request: Request) -> Response:
        """Every document as CSV."""
        rows = [{"id": d.pk, "title": d.title} for d in self.get_queryset()]
        return Response(rows)


class CorrespondentViewSet(viewsets.ReadOnlyModelViewSet[Correspondent], Host):
    """A view whose default renderer is CSV; JSON when asked for."""

    queryset = Correspondent.objects.all()
    serializer_class = CorrespondentSerializer
    renderer_classes = [CSVRenderer, renderers.JSONRenderer]
    pagination_class = None
    filter_backends: list[Any] = []


class ApplicationSettingsViewSet(viewsets.ReadOnlyModelViewSet[ApplicationSettings], Host):
    """Settings, in the camelCase JSON of the product's front end."""

    queryset = ApplicationSettings.objects.all()
    serializer_class = ApplicationSettingsSerializer
    renderer_classes = [CamelCaseJSONRenderer]
    pagination_class = None
    filter_backends: list[Any] = []
