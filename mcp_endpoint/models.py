"""API keys: hashed at rest, shown once, scoped like OAuth tokens."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcp_endpoint.conf import mcp_settings

# last_used is written at most this often per key, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)

STATUS_LABELS = {"active": _("active"), "expired": _("expired"), "revoked": _("revoked")}


def digest_of(raw_key: str) -> str:
    """The stored form of a key. Keys carry 256 random bits, so a plain SHA-256 suffices."""
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def split_key(raw_key: str) -> str | None:
    """The visible prefix of a raw key (``mcp_ab12cd34``), or None if it is not key-shaped."""
    head, sep, secret = raw_key.rpartition("_")
    if not sep or not head or len(secret) < 20 or len(head) > 40:
        return None
    return head


class APIKeyManager(models.Manager["AbstractAPIKey"]):
    def create_key(
        self,
        *,
        user: Any,
        scopes: Iterable[str] | str = ("read",),
        name: str = "",
        expires: datetime | None = None,
    ) -> tuple[AbstractAPIKey, str]:
        """Create a key; returns the stored row and the raw key, which is never stored."""
        prefix = f"{mcp_settings.API_KEY_PREFIX}_{secrets.token_hex(4)}"
        raw = f"{prefix}_{secrets.token_hex(32)}"
        scope = scopes if isinstance(scopes, str) else " ".join(scopes)
        key = self.create(
            user=user,
            name=name,
            prefix=prefix,
            digest=digest_of(raw),
            scope=" ".join(scope.split()),
            expires=expires,
        )
        return key, raw

    def get_for_raw_key(self, raw_key: str) -> AbstractAPIKey | None:
        """The key row for a raw key, compared in constant time; None when unknown."""
        prefix = split_key(raw_key)
        if prefix is None:
            return None
        # The prefix is unique: no ORDER BY, which .first() would add.
        key = next(iter(self.select_related("user").filter(prefix=prefix).order_by()[:1]), None)
        expected = key.digest if key is not None else "0" * 64
        if not hmac.compare_digest(expected, digest_of(raw_key)) or key is None:
            return None
        return key


class AbstractAPIKey(models.Model):
    """An API key. ``scope`` is a space-separated list, as on an OAuth access token, so the
    key satisfies django-oauth-toolkit's ``TokenHasScope`` permissions exactly as a token."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="%(app_label)s_%(class)s_set",
        verbose_name=_("user"),
    )
    name = models.CharField(_("name"), max_length=100, blank=True)
    prefix = models.CharField(_("prefix"), max_length=48, unique=True, editable=False)
    digest = models.CharField(_("digest"), max_length=64, unique=True, editable=False)
    scope = models.TextField(_("scopes"), default="read", help_text=_("Space-separated scopes."))
    created = models.DateTimeField(_("created"), auto_now_add=True)
    expires = models.DateTimeField(_("expires"), null=True, blank=True)
    last_used = models.DateTimeField(_("last used"), null=True, blank=True, editable=False)
    revoked = models.DateTimeField(_("revoked"), null=True, blank=True)

    objects = APIKeyManager()

    class Meta:
        abstract = True
        ordering = ["-created"]
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})" if self.name else f"{self.prefix}…"

    @property
    def scopes(self) -> frozenset[str]:
        return frozenset(self.scope.split())

    def is_expired(self) -> bool:
        return self.expires is not None and timezone.now() >= self.expires

    def is_revoked(self) -> bool:
        return self.revoked is not None

    @property
    def status(self) -> str:
        """``"revoked"``, ``"expired"`` or ``"active"``, for listings."""
        if self.is_revoked():
            return "revoked"
        return "expired" if self.is_expired() else "active"

    def get_status_display(self) -> str:
        """The status in the user's language."""
        return str(STATUS_LABELS[self.status])

    def is_usable(self) -> bool:
        return not self.is_revoked() and not self.is_expired()

    def allow_scopes(self, scopes: Iterable[str] | None) -> bool:
        return not scopes or set(scopes) <= self.scopes

    def is_valid(self, scopes: Iterable[str] | None = None) -> bool:
        """As ``AccessToken.is_valid``: usable and holding ``scopes``."""
        return self.is_usable() and self.allow_scopes(scopes)

    def revoke(self) -> None:
        if self.revoked is None:
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])

    def touch(self) -> None:
        """Record use, at most once per minute per key, in one conditional UPDATE."""
        now = timezone.now()
        if self.last_used is not None and now - self.last_used < LAST_USED_RESOLUTION:
            return
        type(self)._default_manager.filter(pk=self.pk).filter(
            models.Q(last_used__isnull=True) | models.Q(last_used__lt=now - LAST_USED_RESOLUTION)
        ).update(last_used=now)
        self.last_used = now


class APIKey(AbstractAPIKey):
    class Meta(AbstractAPIKey.Meta):
        pass


def get_api_key_model() -> type[AbstractAPIKey]:
    model: type[AbstractAPIKey] = apps.get_model(mcp_settings.API_KEY_MODEL, require_ready=False)
    return model


class ToolCall(models.Model):
    """One ``tools/call``: who, which tool, the outcome and how long it took."""

    created = models.DateTimeField(_("time"), auto_now_add=True, db_index=True)
    endpoint = models.CharField(_("endpoint"), max_length=100)
    tool = models.CharField(_("tool"), max_length=128, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="mcp_tool_calls",
        verbose_name=_("user"),
    )
    credential = models.CharField(_("credential"), max_length=100, blank=True)
    outcome = models.CharField(
        _("outcome"), max_length=40, help_text=_('"ok", or the error code of a failed call.')
    )
    duration_ms = models.FloatField(_("duration (ms)"))
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)

    class Meta:
        ordering = ["-created"]
        verbose_name = _("tool call")
        verbose_name_plural = _("tool calls")

    def __str__(self) -> str:
        return f"{self.tool} ({self.outcome})"


def redact(arguments: Any, names: Iterable[str]) -> Any:
    """``arguments`` with the values of keys that contain any of ``names`` hidden."""
    lowered = [n.lower() for n in names]
    if isinstance(arguments, dict):
        return {
            k: "[redacted]" if any(n in str(k).lower() for n in lowered) else redact(v, lowered)
            for k, v in arguments.items()
        }
    if isinstance(arguments, list):
        return [redact(v, lowered) for v in arguments]
    return arguments
