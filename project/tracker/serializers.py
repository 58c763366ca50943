from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from project.tracker.models import Comment, Project, Task


class ProjectSerializer(serializers.ModelSerializer[Project]):
    owner = serializers.SlugRelatedField(slug_field="username", read_only=True)
    members = serializers.SlugRelatedField(
        slug_field="username",
        many=True,
        required=False,
        queryset=get_user_model().objects.filter(is_active=True),
        help_text="Usernames of the project's members.",
    )

    class Meta:
        model = Project
        fields = ["id", "name", "owner", "members", "created"]
        read_only_fields = ["created"]

    def validate_name(self, value: str) -> str:
        request = self.context["request"]
        others = Project.objects.filter(owner=request.user, name=value)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise serializers.ValidationError("You already have a project with this name.")
        return value


class TaskSerializer(serializers.ModelSerializer[Task]):
    assignee = serializers.SlugRelatedField(
        slug_field="username",
        allow_null=True,
        required=False,
        queryset=get_user_model().objects.filter(is_active=True),
        help_text="Username of the person doing the task.",
    )

    class Meta:
        model = Task
        fields = [
            "id",
            "project",
            "title",
            "description",
            "status",
            "priority",
            "due",
            "assignee",
            "created",
            "updated",
        ]
        read_only_fields = ["created", "updated"]

    def validate_project(self, project: Project) -> Project:
        if not project.has_member(self.context["request"].user):
            raise serializers.ValidationError("You are not a member of this project.")
        return project

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        project = attrs.get("project") or getattr(self.instance, "project", None)
        assignee = attrs.get("assignee")
        if project is not None and assignee is not None and not project.has_member(assignee):
            raise serializers.ValidationError(
                {"assignee": ["The assignee must be a member of the project."]}
            )
        return attrs


class CommentSerializer(serializers.ModelSerializer[Comment]):
    author = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Comment
        fields = ["id", "task", "author", "body", "created"]
        read_only_fields = ["created"]

    def validate_task(self, task: Task) -> Task:
        if not task.project.has_member(self.context["request"].user):
            raise serializers.ValidationError("You are not a member of this task's project.")
        return task
