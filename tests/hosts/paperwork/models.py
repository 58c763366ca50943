from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class Correspondent(models.Model):
    name = models.CharField(max_length=100)

    class Meta:
        app_label = "paperwork"
        ordering = ["id"]

    def __str__(self) -> str:
        return str(self.name)


class Tag(models.Model):
    name = models.CharField(max_length=100)
    colour = models.CharField(max_length=7, default="#a6cee3")

    class Meta:
        app_label = "paperwork"
        ordering = ["id"]

    def __str__(self) -> str:
        return str(self.name)


class Document(models.Model):
    uuid = models.UUIDField(default=uuid.uuid4, unique=True)
    title = models.CharField(max_length=200)
    content = models.TextField(blank=True, default="")
    amount = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    created = models.DateTimeField()
    correspondent = models.ForeignKey(
        Correspondent, null=True, blank=True, on_delete=models.SET_NULL, related_name="documents"
    )
    tags = models.ManyToManyField(Tag, blank=True, related_name="documents")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)

    class Meta:
        app_label = "paperwork"
        ordering = ["id"]

    def __str__(self) -> str:
        return str(self.title)


class Note(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="notes")
    note = models.TextField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "paperwork"
        ordering = ["id"]

    def __str__(self) -> str:
        return str(self.note)


class ApplicationSettings(models.Model):
    """A model whose name is already plural and that declares no plural name."""

    app_title = models.CharField(max_length=100, blank=True, default="")

    class Meta:
        app_label = "paperwork"
        ordering = ["id"]

    def __str__(self) -> str:
        return str(self.app_title)
