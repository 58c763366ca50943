"""The generated product's kinds of record and their fields, made in one place for the
models and their migration alike (so that ``makemigrations --check`` finds nothing)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

KINDS = [
    "warehouse",
    "shelf",
    "carrier",
    "invoice",
    "receipt",
    "vendor",
    "buyer",
    "contract",
    "shipment",
    "parcel",
    "route",
    "driver",
    "vehicle",
    "depot",
    "forklift",
    "pallet",
    "container",
    "customs_form",
    "tariff",
    "quote",
    "purchase_order",
    "sales_order",
    "refund",
    "coupon",
    "campaign",
    "newsletter",
    "subscriber",
    "segment",
    "survey",
    "response",
    "ticket",
    "incident",
    "outage",
    "change_request",
    "release",
    "build",
    "artifact",
    "license",
    "seat",
    "workstation",
    "printer",
    "badge",
    "visitor",
    "meeting_room",
    "booking",
    "trip",
    "expense",
    "budget",
    "forecast",
    "ledger_entry",
]

STATUSES = [("draft", "Draft"), ("active", "Active"), ("retired", "Retired")]


def plural(kind: str) -> str:
    """``shelves``, ``buyers``, ``purchase_orders``: the models' plural names."""
    if kind.endswith("f"):
        return kind[:-1] + "ves"
    if kind.endswith("y") and kind[-2:-1] not in "aeiou":
        return kind[:-1] + "ies"
    if kind.endswith(("s", "x", "ch", "sh")):
        return kind + "es"
    return kind + "s"


def options(kind: str) -> dict[str, Any]:
    return {
        "ordering": ["id"],
        "verbose_name": kind.replace("_", " "),
        "verbose_name_plural": plural(kind).replace("_", " "),
    }


def class_name(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


def fields() -> list[tuple[str, Any]]:
    """One kind's fields, made anew for each model (a field belongs to one model)."""
    return [
        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False)),
        ("name", models.CharField(max_length=120, help_text="What people call it.")),
        ("code", models.CharField(max_length=32, blank=True, default="")),
        ("status", models.CharField(max_length=16, choices=STATUSES, default="draft")),
        ("quantity", models.PositiveIntegerField(default=0)),
        ("price", models.DecimalField(max_digits=10, decimal_places=2, default=0)),
        ("due", models.DateField(null=True, blank=True)),
        ("created", models.DateTimeField(auto_now_add=True)),
        (
            "owner",
            models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"),
        ),
    ]
