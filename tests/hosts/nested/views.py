from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from rest_framework import permissions, serializers, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework_nested.viewsets import NestedViewSetMixin

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts.nested.models import Comment, Project, Task


class ProjectSerializer(serializers.ModelSerializer):
    owner = serializers.ReadOnlyField(source="owner.username")

    class Meta:
        model = Project
        fields = ["id", "name", "owner"]


class TaskSerializer(serializers.ModelSerializer):
    class Meta:
        model = Task
        fields = ["id", "project", "title", "done"]
        read_only_fields = ["project"]


class CommentSerializer(serializers.ModelSerializer):
    author = serializers.ReadOnlyField(source="author.username")

    class Meta:
        model = Comment
        fields = ["id", "task", "author", "body"]
        read_only_fields = ["task"]


class Page(PageNumberPagination):
    page_size = 2


class HostViewSet(viewsets.ModelViewSet):
    """What every view of this host shares, spelled out rather than taken from
    REST_FRAMEWORK, so the host is the same whatever the test settings say."""

    authentication_classes = [
        APIKeyAuthentication,
        OAuth2TokenAuthentication,
        SessionAuthentication,
    ]
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = Page
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []

    def visible_projects(self) -> QuerySet[Project]:
        return Project.objects.filter(owner=self.request.user)


class ProjectViewSet(HostViewSet):
    """Your projects."""

    serializer_class = ProjectSerializer
    # The parent's lookup regex is the nested routes' too: a parent id that is not a
    # number does not resolve (404) instead of reaching the database.
    lookup_value_regex = "[0-9]+"

    def get_queryset(self) -> QuerySet[Project]:
        if getattr(self, "swagger_fake_view", False):
            return Project.objects.none()
        # users/<int:user_pk>/projects/: the caller's own, and no one else's (the int
        # converter hands the view an int, which is compared as one).
        if "user_pk" in self.kwargs and self.kwargs["user_pk"] != self.request.user.pk:
            raise NotFound("No such user.")
        return self.visible_projects()

    def perform_create(self, serializer: Any) -> None:
        serializer.save(owner=self.request.user)


class TaskViewSet(HostViewSet):
    """Tasks of your projects: all of them, or one project's."""

    serializer_class = TaskSerializer
    lookup_value_regex = "[0-9]+"

    def parent(self) -> Project | None:
        """The project of a nested route, refused (404) when the caller may not see it."""
        if "project_pk" not in self.kwargs:
            return None
        return get_object_or_404(self.visible_projects(), pk=self.kwargs["project_pk"])

    def get_queryset(self) -> QuerySet[Task]:
        if getattr(self, "swagger_fake_view", False):
            return Task.objects.none()
        project = self.parent()
        if project is not None:
            return project.tasks.all()
        return Task.objects.filter(project__in=self.visible_projects())

    def perform_create(self, serializer: Any) -> None:
        project = self.parent()
        if project is None:
            raise serializers.ValidationError({"project": ["Create tasks under a project."]})
        serializer.save(project=project)


class CommentViewSet(NestedViewSetMixin[Comment], HostViewSet):
    """Comments on a task of one of your projects."""

    queryset = Comment.objects.all()
    serializer_class = CommentSerializer
    parent_lookup_kwargs = {"project_pk": "task__project__pk", "task_pk": "task__pk"}

    def parent(self) -> Task:
        return get_object_or_404(
            Task.objects.filter(project__in=self.visible_projects()),
            project__pk=self.kwargs["project_pk"],
            pk=self.kwargs["task_pk"],
        )

    def get_queryset(self) -> QuerySet[Comment]:
        if getattr(self, "swagger_fake_view", False):
            return Comment.objects.none()
        self.parent()
        return super().get_queryset()

    def perform_create(self, serializer: Any) -> None:
        serializer.save(task=self.parent(), author=self.request.user)
