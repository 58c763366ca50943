"""The opt-in cache of validated API keys, and what keeps it true.

With ``API_KEY_CACHE_SECONDS`` above 0, a key that passed the database look-up is kept in
the Django cache named by ``CACHE`` (with its user) for at most that long, and never past
the key's own expiry, so the next request with it needs no query at all. An entry is
dropped as soon as its key is saved or deleted (revocation, a scope or expiry edit in the
admin, ``manage.py mcp_key revoke``) and when the key's user is saved or deleted
(deactivation), by signal receivers in whichever process made the change. With a cache all
workers share (Redis, Memcached, the database cache, a file cache on one machine) the
change takes effect on the next request everywhere; with a per-process cache (local
memory) only in the process that made it, and elsewhere when the entry expires: system
check ``mcp_endpoint.W040`` says so.

Changes that bypass model signals (``QuerySet.update()``, raw SQL) are seen when the entry
expires; call :func:`forget_user_keys` or :func:`forget` after such a change.

Entries are keyed by the key's SHA-256 digest: the raw key is never in the cache.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from mcp_endpoint import key_memory
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.models import AbstractAPIKey, get_api_key_model

logger = logging.getLogger("mcp_endpoint.authentication")

ENTRY_PREFIX = "mcp_endpoint:api_key:"


def enabled() -> bool:
    return bool(mcp_settings.API_KEY_CACHE_SECONDS)


def _cache() -> BaseCache:
    return caches[mcp_settings.CACHE]


def entry_key(digest: str) -> str:
    return ENTRY_PREFIX + digest


def get(digest: str) -> AbstractAPIKey | None:
    """The cached key for ``digest``, or None when it is not cached (or the cache is off)."""
    if not enabled():
        return None
    key: AbstractAPIKey | None = _cache().get(entry_key(digest))
    return key


def remember(key: AbstractAPIKey) -> None:
    """Keep a validated ``key`` (with its user) until the setting's time or its expiry."""
    timeout = float(mcp_settings.API_KEY_CACHE_SECONDS)
    if timeout <= 0:
        return
    if key.expires is not None:
        timeout = min(timeout, (key.expires - timezone.now()).total_seconds())
        if timeout < 1:
            return
    _cache().set(entry_key(key.digest), key, timeout=int(timeout))


def forget(*digests: str) -> None:
    """Drop the entries of these key digests, whether the cache is on or not, and in every
    worker's memory of keys (:mod:`mcp_endpoint.key_memory`): call it after a change to a
    key that sent no signal."""
    _drop(*digests)
    key_memory.publish(digests=digests)


def forget_user_keys(user_pk: Any) -> None:
    """Drop the entries of every key of the user ``user_pk`` (one query for the digests),
    here and in every worker's memory of keys."""
    _drop_user_keys(user_pk)
    key_memory.publish(users=[user_pk])


def _drop(*digests: str) -> None:
    if digests:
        _cache().delete_many([entry_key(d) for d in digests])


def _drop_user_keys(user_pk: Any) -> None:
    model = get_api_key_model()
    _drop(*model._default_manager.filter(user_id=user_pk).values_list("digest", flat=True))


# -- signal receivers ---------------------------------------------------------------------


def _key_changed(sender: Any, instance: AbstractAPIKey, **kwargs: Any) -> None:
    if enabled() and instance.digest:
        _drop(instance.digest)


def _user_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    if not enabled() or instance.pk is None or kwargs.get("created"):
        return
    # A user's last_login is written on every login: that changes nothing a key may do.
    update_fields = kwargs.get("update_fields")
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    _drop_user_keys(instance.pk)


def _user_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    # The user's keys are deleted with it (each sends post_delete); this catches keys of a
    # custom model whose relation does not cascade.
    if enabled():
        _drop_user_keys(instance.pk)


def connect() -> None:
    """Connect the receivers (the app's ``ready`` does), for the key model and the users."""
    model = get_api_key_model()
    user_model = get_user_model()
    post_save.connect(_key_changed, sender=model, dispatch_uid="mcp_endpoint.key_cache.key_save")
    post_delete.connect(
        _key_changed, sender=model, dispatch_uid="mcp_endpoint.key_cache.key_delete"
    )
    post_save.connect(
        _user_changed, sender=user_model, dispatch_uid="mcp_endpoint.key_cache.user_save"
    )
    post_delete.connect(
        _user_deleted, sender=user_model, dispatch_uid="mcp_endpoint.key_cache.user_delete"
    )
