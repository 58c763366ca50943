"""Row scoping as django-scopes does it, in a few lines (django-scopes needs Python 3.11,
and the suite runs on 3.10 too): a query of a scoped model outside an active scope is an
error, and inside one it sees the scope's rows only. The product's middleware activates
the scope of the tenant and project in the URL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import models

_scope: ContextVar[dict[str, Any] | None] = ContextVar("tenants_scope", default=None)


class ScopeError(Exception):
    """A scoped model was queried with no scope active."""


@contextmanager
def scope(**values: Any) -> Iterator[None]:
    """The rows of ``values`` (``tenant=..., project=...``), until the block ends."""
    token = _scope.set(values)
    try:
        yield
    finally:
        _scope.reset(token)


@contextmanager
def scopes_disabled() -> Iterator[None]:
    """Every row, as a management command or a test's set-up sees them."""
    token = _scope.set({"disabled": True})
    try:
        yield
    finally:
        _scope.reset(token)


class ScopedManager(models.Manager[Any]):
    """A manager whose querysets are filtered by the active scope: ``fields`` maps a scope
    name to the lookup it filters (``tenant="order__tenant"``)."""

    def __init__(self, **fields: str) -> None:
        super().__init__()
        self.fields = fields

    def deconstruct(self) -> Any:
        # Built with lookups, not the Manager's own arguments: migrations need no copy.
        return (False, "django.db.models.Manager", None, [], {})

    def get_queryset(self) -> models.QuerySet[Any]:
        active = _scope.get()
        if active is None:
            raise ScopeError(
                f"{self.model.__name__} queried with no scope active (the tenant "
                "middleware activates it)"
            )
        queryset = super().get_queryset()
        if active.get("disabled"):
            return queryset
        return queryset.filter(**{lookup: active[name] for name, lookup in self.fields.items()})
