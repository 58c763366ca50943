from __future__ import annotations

from django.apps import AppConfig


class TeamTokensConfig(AppConfig):
    name = "tests.hosts.teamtokens"
    label = "teamtokens"
    default_auto_field = "django.db.models.BigAutoField"
