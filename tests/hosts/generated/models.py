"""Fifty models, one per kind in :data:`catalog.KINDS`, made from the same fields."""

from __future__ import annotations

from typing import Any

from django.db import models

from tests.hosts.generated.catalog import KINDS, class_name, fields, options


def make_model(kind: str) -> type[models.Model]:
    attrs: dict[str, Any] = dict(fields())
    attrs["__module__"] = __name__
    attrs["__str__"] = lambda self: self.name
    attrs["Meta"] = type("Meta", (), {**options(kind), "app_label": "generated"})
    return type(class_name(kind), (models.Model,), attrs)


MODELS: dict[str, type[models.Model]] = {kind: make_model(kind) for kind in KINDS}
globals().update({model.__name__: model for model in MODELS.values()})
