"""Four viewsets per kind, made from one template each, as a large product's are.

- ``<plural>``: the caller's own records (a ``ModelViewSet``);
- ``archived-<plural>``: the caller's retired records, read-only, with a ``restore`` action;
- ``team-<plural>``: everyone's records, which only staff may change;
- ``draft-<plural>``: everyone's drafts, which anyone signed in may add to.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Model, QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import filters, permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from tests.hosts.generated.catalog import plural
from tests.hosts.generated.models import MODELS


class Pages(PageNumberPagination):
    page_size = 20
    page_size_query_param = "page_size"
    max_page_size = 100


class IsStaffOrReadOnly(permissions.BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        return request.method in permissions.SAFE_METHODS or bool(request.user.is_staff)


def serializer_for(model: type[Model]) -> type[serializers.ModelSerializer[Any]]:
    meta = type(
        "Meta",
        (),
        {
            "model": model,
            "fields": [
                "id",
                "name",
                "code",
                "status",
                "quantity",
                "price",
                "due",
                "created",
                "owner",
            ],
            "read_only_fields": ["created"],
        },
    )
    attrs = {"Meta": meta, "owner": serializers.ReadOnlyField(source="owner.username")}
    return type(f"{model.__name__}Serializer", (serializers.ModelSerializer,), attrs)


class Listing:
    """What every list here offers: filters, search, ordering, pages."""

    pagination_class = Pages
    filter_backends = [DjangoFilterBackend, filters.SearchFilter, filters.OrderingFilter]
    filterset_fields = {"status": ["exact"], "quantity": ["gte", "lte"], "due": ["gte", "lte"]}
    search_fields = ["name", "code"]
    ordering_fields = ["name", "created", "quantity", "due"]
    permission_classes = [permissions.IsAuthenticated]


def own_viewset(model: type[Model], serializer: type[Any], noun: str) -> type[Any]:
    def get_queryset(self: Any) -> QuerySet[Any]:
        return model.objects.filter(owner=self.request.user).select_related("owner")

    def perform_create(self: Any, serializer: Any) -> None:
        serializer.save(owner=self.request.user)

    return type(
        f"Own{model.__name__}ViewSet",
        (Listing, viewsets.ModelViewSet),
        {
            "__module__": __name__,
            "__doc__": f"Your {noun}.\n\nThe queryset uses select_related on the owner to "
            "avoid N+1 queries.",
            "serializer_class": serializer,
            "get_queryset": get_queryset,
            "perform_create": perform_create,
        },
    )


def archive_viewset(model: type[Model], serializer: type[Any], noun: str) -> type[Any]:
    def get_queryset(self: Any) -> QuerySet[Any]:
        return model.objects.filter(owner=self.request.user, status="retired")

    def restore(self: Any, request: Request, pk: Any = None) -> Response:
        """Put a retired record back in use (its status becomes active)."""
        record = self.get_object()
        record.status = "active"
        record.save(update_fields=["status"])
        return Response(serializer(record, context=self.get_serializer_context()).data)

    return type(
        f"Archived{model.__name__}ViewSet",
        (Listing, viewsets.ReadOnlyModelViewSet),
        {
            "__module__": __name__,
            "__doc__": f"Your retired {noun}. Cached per request; see the mixin.",
            "serializer_class": serializer,
            "get_queryset": get_queryset,
            "restore": action(detail=True, methods=["post"])(restore),
        },
    )


def team_viewset(model: type[Model], serializer: type[Any], noun: str) -> type[Any]:
    def perform_create(self: Any, serializer: Any) -> None:
        serializer.save(owner=self.request.user)

    return type(
        f"Team{model.__name__}ViewSet",
        (Listing, viewsets.ModelViewSet),
        {
            "__module__": __name__,
            "__doc__": f"Everyone's {noun}: anyone signed in reads them, staff change them.",
            "serializer_class": serializer,
            "queryset": model.objects.select_related("owner"),
            "permission_classes": [permissions.IsAuthenticated, IsStaffOrReadOnly],
            "perform_create": perform_create,
        },
    )


def draft_viewset(model: type[Model], serializer: type[Any], noun: str) -> type[Any]:
    def perform_create(self: Any, serializer: Any) -> None:
        serializer.save(owner=self.request.user, status="draft")

    return type(
        f"Draft{model.__name__}ViewSet",
        (Listing, viewsets.ModelViewSet),
        {
            "__module__": __name__,
            "__doc__": f"Draft {noun} that anyone signed in may propose.",
            "serializer_class": serializer,
            "queryset": model.objects.filter(status="draft"),
            "perform_create": perform_create,
        },
    )


# (URL prefix, viewset, basename, the word before the nouns in tool names)
VIEWSETS: list[tuple[str, type[Any], str, str]] = []
for kind, model in MODELS.items():
    serializer = serializer_for(model)
    noun = plural(kind).replace("_", " ")
    url = plural(kind).replace("_", "-")
    VIEWSETS += [
        (url, own_viewset(model, serializer, noun), kind, ""),
        (
            f"archived-{url}",
            archive_viewset(model, serializer, noun),
            f"archived_{kind}",
            "archived",
        ),
        (f"team-{url}", team_viewset(model, serializer, noun), f"team_{kind}", "team"),
        (f"draft-{url}", draft_viewset(model, serializer, noun), f"draft_{kind}", "draft"),
    ]
