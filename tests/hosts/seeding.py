"""Rows for every host app's models, made from the fields alone, so that a test can call
every tool of every host and get real answers (not only empty lists) without knowing each
host's data: two rows a model, each field given a value of its kind, foreign keys pointing
at rows made before (or the given user)."""

from __future__ import annotations

import datetime
import decimal
import uuid
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from tests.hosts import host_names

ROWS_PER_MODEL = 2


def field_value(field: models.Field[Any, Any], n: int, user: Any) -> Any:
    """A value for ``field`` in the ``n``-th row; ``NotImplemented`` when there is none."""
    if field.choices:
        return list(field.flatchoices)[n % len(field.flatchoices)][0]
    if isinstance(field, models.ForeignKey | models.OneToOneField):
        related = field.related_model
        if related is get_user_model():
            return user
        return related._base_manager.order_by("pk")[n : n + 1].first() or (  # type: ignore[union-attr]
            None if field.null else NotImplemented
        )
    kinds: list[tuple[type[Any], Any]] = [
        (models.EmailField, f"row{n}@example.com"),
        (models.URLField, f"https://example.com/{n}"),
        (models.GenericIPAddressField, f"192.0.2.{n + 1}"),
        (models.SlugField, f"row-{n}"),
        (models.UUIDField, uuid.uuid4()),
        (models.BooleanField, n % 2 == 0),
        (models.DecimalField, decimal.Decimal("12.50") + n),
        (models.FloatField, 1.5 + n),
        (models.IntegerField, n + 1),
        (models.DateTimeField, timezone.now() - datetime.timedelta(days=n)),
        (models.DateField, datetime.date(2026, 11, 1 + n)),
        (models.TimeField, datetime.time(9, n)),
        (models.JSONField, {"row": n}),
        (models.CharField, None),
        (models.TextField, f"Row {n} of the host's data."),
    ]
    for kind, value in kinds:
        if isinstance(field, kind):
            if kind is models.CharField:
                size = getattr(field, "max_length", None) or 40
                return f"{field.name}-{n}"[:size]
            return value
    return NotImplemented


def seed_model(model: type[models.Model], user: Any) -> int:
    """Up to :data:`ROWS_PER_MODEL` rows of ``model``; how many were made."""
    made = 0
    for n in range(ROWS_PER_MODEL):
        values: dict[str, Any] = {}
        for field in model._meta.concrete_fields:
            if field.primary_key or getattr(field, "auto_now", False):
                continue
            if getattr(field, "auto_now_add", False):
                continue
            if field.has_default() and not isinstance(field, models.ForeignKey):
                # Not every row in its default state: the second takes a field's last
                # choice (a retired record, which views of retired records list).
                if n and field.choices:
                    values[field.name] = list(field.flatchoices)[-1][0]
                continue
            value = field_value(field, n, user)
            if value is NotImplemented:
                if field.null or field.blank:
                    continue
                return made
            values[field.name] = value
        try:
            with transaction.atomic():
                # The base manager: a host's default manager may refuse to work outside
                # a request (a row scope its middleware activates), as a seed script's
                # would not.
                model._base_manager.create(**values)
        except (IntegrityError, ValueError, TypeError):
            continue
        made += 1
    return made


def seed(user: Any) -> dict[str, int]:
    """Rows for every host app's models, in passes until no more can be made (a model
    whose foreign keys point at one made later waits for the next pass)."""
    packages = {f"tests.hosts.{name}" for name in host_names()}
    host_models = [
        model
        for config in apps.get_app_configs()
        if config.name in packages
        for model in config.get_models()
        if not model._meta.proxy
    ]
    counts: dict[str, int] = {}
    for _ in range(3):
        for model in host_models:
            label = model._meta.label
            if counts.get(label):
                continue
            counts[label] = seed_model(model, user)
    return counts
