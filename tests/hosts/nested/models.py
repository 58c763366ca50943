from __future__ import annotations

from django.conf import settings
from django.db import models


class Project(models.Model):
    name = models.CharField(max_length=100)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, related_name="nested_projects", on_delete=models.CASCADE
    )

    class Meta:
        app_label = "nested"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class Task(models.Model):
    project = models.ForeignKey(Project, related_name="tasks", on_delete=models.CASCADE)
    title = models.CharField(max_length=100)
    done = models.BooleanField(default=False)

    class Meta:
        app_label = "nested"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.title


class Comment(models.Model):
    task = models.ForeignKey(Task, related_name="comments", on_delete=models.CASCADE)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, related_name="nested_comments", on_delete=models.CASCADE
    )
    body = models.TextField(max_length=500)

    class Meta:
        app_label = "nested"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.body[:30]
