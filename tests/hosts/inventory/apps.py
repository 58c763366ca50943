from __future__ import annotations

from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "tests.hosts.inventory"
    label = "inventory"
    default_auto_field = "django.db.models.BigAutoField"
