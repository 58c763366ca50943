from __future__ import annotations

from django.conf import settings
from django.db import models

LANGUAGES = [("python", "Python"), ("ruby", "Ruby"), ("text", "Plain text")]


class Snippet(models.Model):
    created = models.DateTimeField(auto_now_add=True)
    title = models.CharField(max_length=100, blank=True, default="")
    code = models.TextField()
    language = models.CharField(choices=LANGUAGES, default="python", max_length=100)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, related_name="snippets", on_delete=models.CASCADE
    )

    class Meta:
        app_label = "tutorial"
        ordering = ["created", "id"]

    def __str__(self) -> str:
        return self.title or f"snippet {self.pk}"
