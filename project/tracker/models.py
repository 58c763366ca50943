"""The task tracker: projects with members, their tasks, and comments on tasks."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q, QuerySet


class ProjectQuerySet(models.QuerySet["Project"]):
    def visible_to(self, user: object) -> ProjectQuerySet:
        """Projects the user owns or is a member of; none for an anonymous user."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(Q(owner=user) | Q(members=user)).distinct()


class Project(models.Model):
    name = models.CharField(max_length=100, help_text="A short name for the project.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="owned_projects"
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        related_name="projects",
        blank=True,
        help_text="Users who can see and change the project's tasks.",
    )
    created = models.DateTimeField(auto_now_add=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="unique_project_name_per_owner")
        ]

    def __str__(self) -> str:
        return self.name

    def has_member(self, user: object) -> bool:
        pk = getattr(user, "pk", None)
        if pk is None:
            return False
        return self.owner_id == pk or self.members.filter(pk=pk).exists()


class Task(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    class Priority(models.IntegerChoices):
        URGENT = 1, "Urgent"
        HIGH = 2, "High"
        NORMAL = 3, "Normal"
        LOW = 4, "Low"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    priority = models.PositiveSmallIntegerField(
        choices=Priority.choices,
        default=Priority.NORMAL,
        validators=[MinValueValidator(1), MaxValueValidator(4)],
        help_text="1 is the most urgent.",
    )
    due = models.DateField(null=True, blank=True, help_text="The day the task is due.")
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_tasks",
    )
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.title


def tasks_visible_to(user: object) -> QuerySet[Task]:
    return Task.objects.filter(project__in=Project.objects.visible_to(user).values("pk"))


class Comment(models.Model):
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comments"
    )
    body = models.TextField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"Comment {self.pk} on {self.task_id}"
