"""Viewsets that only the tests use: the shapes of DRF viewset a host may register.

- :class:`GadgetViewSet`: a plain ``ViewSet`` with no queryset, answering dicts, its responses
  described with ``@extend_schema``.
- :class:`ShipmentViewSet`: a plain ``ViewSet`` whose input nests serializers.
- :class:`NoteViewSet`: a ``GenericViewSet`` made of mixins.
- :class:`PersonViewSet`: a ``ModelViewSet`` looked up by a slug (``username``), with a
  detail ``@action`` and a list ``@action``.
- :class:`BoardViewSet`: a viewset whose serializer depends on ``self.action``.
- :class:`BeaconViewSet`: a view with a scoped throttle of its own.
- :class:`ExplodingViewSet`, :class:`FragileProjectViewSet`,
  :class:`RefusingProjectViewSet`: views that fail, before or after they save.
- :class:`SerializerlessViewSet`, :class:`HalfRoutedViewSet`: misconfigurations the system
  checks report; only tests that expect the errors register them, on endpoints of their own.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages as django_messages
from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from oauth2_provider.contrib.rest_framework import OAuth2Authentication, TokenHasReadWriteScope
from rest_framework import exceptions, mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.throttling import ScopedRateThrottle

from project.tracker.models import Comment, Project, Task, tasks_visible_to
from project.tracker.serializers import CommentSerializer, ProjectSerializer, TaskSerializer

User = get_user_model()

# -- a plain ViewSet ------------------------------------------------------------------------


class GadgetSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField(max_length=40)
    colour = serializers.ChoiceField(choices=["red", "green", "blue"])


GADGETS: dict[int, dict[str, Any]] = {
    1: {"id": 1, "name": "Sprocket", "colour": "red"},
    2: {"id": 2, "name": "Widget", "colour": "blue"},
}


class GadgetViewSet(viewsets.ViewSet):
    """Gadgets from a fixed catalogue."""

    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]

    @extend_schema(responses=GadgetSerializer(many=True))
    def list(self, request: Request) -> Response:
        return Response(list(GADGETS.values()))

    @extend_schema(
        parameters=[OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH)],
        responses=GadgetSerializer,
    )
    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        gadget = GADGETS.get(int(pk)) if pk and pk.isdigit() else None
        if gadget is None:
            raise exceptions.NotFound("No such gadget.")
        return Response(gadget)


class CategorySerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField(max_length=40)


CATEGORIES: dict[int, dict[str, Any]] = {
    1: {"id": 1, "name": "Tools"},
    2: {"id": 2, "name": "Toys"},
}


class CategoryViewSet(viewsets.ViewSet):
    """No model, so its nouns come from the basename ``category``: its plural is English."""

    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]

    @extend_schema(responses=CategorySerializer(many=True))
    def list(self, request: Request) -> Response:
        return Response(list(CATEGORIES.values()))

    @extend_schema(responses=CategorySerializer(many=True))
    @action(detail=False)
    def featured(self, request: Request) -> Response:
        return Response([CATEGORIES[2]])


class AddressSerializer(serializers.Serializer[dict[str, Any]]):
    street = serializers.CharField(max_length=80)
    city = serializers.CharField(max_length=40)


class ParcelSerializer(serializers.Serializer[dict[str, Any]]):
    label = serializers.CharField(max_length=20)
    weight = serializers.FloatField(min_value=0.1, help_text="In kilograms.")


class ShipmentSerializer(serializers.Serializer[dict[str, Any]]):
    reference = serializers.CharField(max_length=12)
    address = AddressSerializer()
    parcels = ParcelSerializer(many=True)


class ShipmentViewSet(viewsets.ViewSet):
    """Shipments: a nested serializer and a list of nested serializers, not stored."""

    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]

    @extend_schema(request=ShipmentSerializer, responses={201: ShipmentSerializer})
    def create(self, request: Request) -> Response:
        serializer = ShipmentSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(serializer.data, status=201)


# -- a GenericViewSet made of mixins ---------------------------------------------------------


class NoteViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[Comment],
):
    """Notes on the tasks of your projects."""

    serializer_class = CommentSerializer
    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]

    def get_queryset(self) -> QuerySet[Comment]:
        return Comment.objects.filter(task__in=tasks_visible_to(self.request.user).values("pk"))

    def perform_create(self, serializer: BaseSerializer[Comment]) -> None:
        serializer.save(author=self.request.user)


# -- a ModelViewSet with a slug lookup and extra actions -------------------------------------


class PersonSerializer(serializers.ModelSerializer[Any]):
    class Meta:
        model = User
        fields = ["username", "email", "first_name", "is_active"]
        read_only_fields = ["is_active"]


class PersonViewSet(viewsets.ModelViewSet[Any]):
    """People who use the tracker."""

    serializer_class = PersonSerializer
    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]
    lookup_field = "username"
    queryset = User.objects.order_by("username")
    filterset_fields = ["is_active"]
    search_fields = ["username", "first_name"]
    ordering_fields = ["username"]

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def deactivate(self, request: Request, username: str | None = None) -> Response:
        """Deactivate the person: they can no longer sign in."""
        person = self.get_object()
        person.is_active = False
        person.save(update_fields=["is_active"])
        return Response(self.get_serializer(person).data)

    @extend_schema(responses=PersonSerializer(many=True))
    @action(detail=False, methods=["get"])
    def active(self, request: Request) -> Response:
        """People who can sign in."""
        queryset = self.filter_queryset(self.get_queryset()).filter(is_active=True)
        page = self.paginate_queryset(queryset)
        assert page is not None
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


# -- a serializer per action -----------------------------------------------------------------


class TaskSummarySerializer(serializers.ModelSerializer[Task]):
    class Meta:
        model = Task
        fields = ["id", "title", "status"]


class BoardViewSet(viewsets.ReadOnlyModelViewSet[Task]):
    """Tasks on a board: short in the list, in full one by one."""

    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]
    ordering = ["id"]

    def get_queryset(self) -> QuerySet[Task]:
        return tasks_visible_to(self.request.user).order_by("id")

    def get_serializer_class(self) -> type[BaseSerializer[Task]]:
        if self.action in ("list", "urgent"):
            return TaskSummarySerializer
        return TaskSerializer

    @extend_schema(request=None)
    @action(detail=True, methods=["post"])
    def reopen(self, request: Request, pk: str | None = None) -> Response:
        """Open the task again."""
        task = self.get_object()
        task.status = Task.Status.OPEN
        task.save(update_fields=["status", "updated"])
        return Response(self.get_serializer(task).data)

    @extend_schema(responses=TaskSummarySerializer(many=True))
    @action(detail=False, methods=["get"])
    def urgent(self, request: Request) -> Response:
        """Urgent tasks that are not done."""
        queryset = self.get_queryset().filter(priority=Task.Priority.URGENT).exclude(status="done")
        page = self.paginate_queryset(queryset)
        assert page is not None
        return self.get_paginated_response(self.get_serializer(page, many=True).data)


class ProbeSerializer(serializers.Serializer[dict[str, Any]]):
    user = serializers.CharField()
    authenticator = serializers.CharField()
    client = serializers.CharField()
    host = serializers.CharField()
    absolute = serializers.CharField()
    messages = serializers.ListField(child=serializers.CharField())


class ProbeViewSet(viewsets.ViewSet):
    """What a view sees of the request it is given."""

    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]

    @extend_schema(request=None, responses=ProbeSerializer)
    def create(self, request: Request) -> Response:
        django_messages.success(request._request, "Probed.")
        return Response(
            {
                "user": request.user.get_username(),
                "authenticator": type(request.successful_authenticator).__name__,
                "client": request.META.get("REMOTE_ADDR", ""),
                "host": request.get_host(),
                "absolute": request.build_absolute_uri(),
                "messages": [str(m) for m in django_messages.get_messages(request._request)],
            }
        )


class TokenOnlyBoardViewSet(BoardViewSet):
    """The board, for OAuth tokens only: API keys are not among its authentication classes."""

    authentication_classes = [OAuth2Authentication]


# -- failures --------------------------------------------------------------------------------


class BurstThrottle(ScopedRateThrottle):
    """Two calls a minute for views with ``throttle_scope = "tests-burst"``."""

    THROTTLE_RATES = {"tests-burst": "2/minute"}


class BeaconSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()


class BeaconViewSet(viewsets.ViewSet):
    """A view with a tight throttle of its own."""

    throttle_classes = [BurstThrottle]
    throttle_scope = "tests-burst"

    @extend_schema(responses=BeaconSerializer(many=True))
    def list(self, request: Request) -> Response:
        return Response([{"id": 1}])


class ExplodingViewSet(viewsets.ViewSet):
    """A view with a bug."""

    @extend_schema(responses=BeaconSerializer(many=True))
    def list(self, request: Request) -> Response:
        raise RuntimeError("the database password is hunter2")


class FragileProjectViewSet(mixins.CreateModelMixin, viewsets.GenericViewSet[Project]):
    """Saves the project, then fails with an unexpected exception."""

    serializer_class = ProjectSerializer
    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]

    def get_queryset(self) -> QuerySet[Project]:
        return Project.objects.visible_to(self.request.user)

    def perform_create(self, serializer: BaseSerializer[Project]) -> None:
        serializer.save(owner=self.request.user)
        raise RuntimeError("failed after saving")


class RefusingProjectViewSet(FragileProjectViewSet):
    """Saves the project, then refuses it the way DRF refuses input (a 400)."""

    def perform_create(self, serializer: BaseSerializer[Project]) -> None:
        serializer.save(owner=self.request.user)
        raise exceptions.ValidationError({"name": ["Refused after saving."]})


# -- misconfigurations -----------------------------------------------------------------------


class SerializerlessViewSet(mixins.ListModelMixin, viewsets.GenericViewSet[Task]):
    """No serializer_class, no get_serializer_class(), no @extend_schema: no schema to derive."""

    queryset = Task.objects.all()


class HalfRoutedViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Task]
):
    """The URLconf routes its list only, so its retrieve has no route."""

    serializer_class = TaskSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self) -> QuerySet[Task]:
        return tasks_visible_to(self.request.user)
