from __future__ import annotations

from django.db import models


class Team(models.Model):
    name = models.CharField(max_length=100, unique=True)

    def __str__(self) -> str:
        return self.name


class TeamToken(models.Model):
    """A team's token: whoever holds it acts for the team, read-only unless ``can_write``."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="tokens")
    key = models.CharField(max_length=64, unique=True)
    can_write = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"token of {self.team}"


class Note(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="notes")
    title = models.CharField(max_length=100)
    body = models.TextField(blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.title
