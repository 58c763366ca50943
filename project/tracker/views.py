"""The task tracker's REST API: one viewset per model, under /api/."""

from __future__ import annotations

import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from oauth2_provider.contrib.rest_framework import TokenHasReadWriteScope
from rest_framework import exceptions, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from project.tracker.filters import TaskFilter
from project.tracker.models import Comment, Project, Task, tasks_visible_to
from project.tracker.permissions import IsAuthorOrReadOnly, IsProjectOwnerOrReadOnly
from project.tracker.serializers import CommentSerializer, ProjectSerializer, TaskSerializer


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state of the object."
    default_code = "conflict"


class ProjectViewSet(viewsets.ModelViewSet[Project]):
    """Projects you own or are a member of."""

    serializer_class = ProjectSerializer
    permission_classes = [IsAuthenticated, TokenHasReadWriteScope, IsProjectOwnerOrReadOnly]
    search_fields = ["name"]
    ordering_fields = ["name", "created"]
    filterset_fields = ["owner"]

    def get_queryset(self) -> QuerySet[Project]:
        return (
            Project.objects.visible_to(self.request.user)
            .select_related("owner")
            .prefetch_related("members")
        )

    def perform_create(self, serializer: BaseSerializer[Project]) -> None:
        serializer.save(owner=self.request.user)


class TaskViewSet(viewsets.ModelViewSet[Task]):
    """Tasks in the projects you belong to."""

    serializer_class = TaskSerializer
    permission_classes = [IsAuthenticated, TokenHasReadWriteScope]
    filterset_class = TaskFilter
    search_fields = ["title", "description"]
    ordering_fields = ["due", "priority", "created", "updated", "title"]
    ordering = ["id"]

    def get_queryset(self) -> QuerySet[Task]:
        return tasks_visible_to(self.request.user).select_related("assignee")

    @extend_schema(request=None, responses=TaskSerializer)
    @action(detail=True, methods=["post"])
    def complete(self, request: Request, pk: Any = None) -> Response:
        """Mark the task done; a task that is already done is a conflict."""
        task = self.get_object()
        if task.status == Task.Status.DONE:
            raise Conflict("The task is already done.")
        task.status = Task.Status.DONE
        task.save(update_fields=["status", "updated"])
        return Response(self.get_serializer(task).data)

    @extend_schema(responses=TaskSerializer(many=True))
    @action(detail=False, methods=["get"])
    def overdue(self, request: Request) -> Response:
        """Open tasks whose due date has passed, most overdue first."""
        today: datetime.date = timezone.localdate()
        queryset = (
            self.filter_queryset(self.get_queryset())
            .filter(due__lt=today)
            .exclude(status=Task.Status.DONE)
            .order_by("due", "id")
        )
        page = self.paginate_queryset(queryset)
        if page is not None:
            return self.get_paginated_response(self.get_serializer(page, many=True).data)
        return Response(self.get_serializer(queryset, many=True).data)


class CommentViewSet(viewsets.ModelViewSet[Comment]):
    """Comments on the tasks of your projects."""

    serializer_class = CommentSerializer
    permission_classes = [IsAuthenticated, TokenHasReadWriteScope, IsAuthorOrReadOnly]
    filterset_fields = ["task", "author"]
    search_fields = ["body"]
    ordering_fields = ["created"]

    def get_queryset(self) -> QuerySet[Comment]:
        return Comment.objects.filter(
            task__in=tasks_visible_to(self.request.user).values("pk")
        ).select_related("author")

    def perform_create(self, serializer: BaseSerializer[Comment]) -> None:
        serializer.save(author=self.request.user)
