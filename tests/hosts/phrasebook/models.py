from __future__ import annotations

from django.conf import settings
from django.db import models

# As many as a syntax highlighter knows: the choice lists the size budget is about.
LANGUAGES = [(f"lang{n:03d}", f"Language number {n}") for n in range(600)]
STYLES = [(f"style{n:02d}", f"Style number {n}") for n in range(50)]


class Author(models.Model):
    name = models.CharField(max_length=100, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Phrase(models.Model):
    author = models.ForeignKey(Author, on_delete=models.PROTECT, related_name="phrases")
    text = models.CharField(max_length=200)
    language = models.CharField(max_length=20, choices=LANGUAGES, default="lang000")
    style = models.CharField(max_length=20, choices=STYLES, default="style00")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.text
