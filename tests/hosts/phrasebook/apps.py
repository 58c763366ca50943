from __future__ import annotations

from django.apps import AppConfig


class PhrasebookConfig(AppConfig):
    name = "tests.hosts.phrasebook"
    label = "phrasebook"
    default_auto_field = "django.db.models.BigAutoField"
