"""API key rows: hashed at rest, found in constant time, scoped, expiring, revocable."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from mcp_endpoint.models import (
    LAST_USED_RESOLUTION,
    APIKey,
    digest_of,
    get_api_key_model,
    split_key,
)


def test_create_key_returns_the_raw_key_and_stores_its_digest(alice: Any) -> None:
    key, raw = APIKey.objects.create_key(user=alice, scopes=["read", "write"], name="ci")
    assert re.fullmatch(r"mcp_[0-9a-f]{8}_[0-9a-f]{64}", raw)
    assert raw.startswith(f"{key.prefix}_")
    stored = APIKey.objects.get(pk=key.pk)
    assert stored.digest == hashlib.sha256(raw.encode()).hexdigest() == digest_of(raw)
    assert stored.scope == "read write"
    assert stored.scopes == frozenset({"read", "write"})
    assert stored.name == "ci"
    assert stored.created is not None
    assert stored.last_used is None and stored.revoked is None and stored.expires is None
    secret = raw.rsplit("_", 1)[1]
    for value in APIKey.objects.filter(pk=key.pk).values().get().values():
        assert raw not in str(value) and secret not in str(value)


def test_keys_are_distinct(alice: Any) -> None:
    made = [APIKey.objects.create_key(user=alice) for _ in range(5)]
    assert len({raw for _, raw in made}) == 5
    assert len({key.prefix for key, _ in made}) == 5


def test_scopes_as_a_string_are_normalised(alice: Any) -> None:
    key, _ = APIKey.objects.create_key(user=alice, scopes="  read \n write ")
    assert key.scope == "read write"


def test_str_shows_the_prefix_only(alice: Any) -> None:
    key, raw = APIKey.objects.create_key(user=alice, name="laptop")
    assert str(key) == f"{key.prefix}… (laptop)"
    assert raw.rsplit("_", 1)[1] not in str(key)
    unnamed, _ = APIKey.objects.create_key(user=alice)
    assert str(unnamed) == f"{unnamed.prefix}…"


def test_split_key() -> None:
    assert split_key("mcp_ab12cd34_" + "0" * 64) == "mcp_ab12cd34"
    assert split_key("mcp_ab12cd34_short") is None
    assert split_key("no-separator-" + "0" * 64) is None
    assert split_key("_" + "0" * 64) is None
    assert split_key("x" * 41 + "_" + "0" * 64) is None


def test_get_for_raw_key(alice: Any, bob: Any) -> None:
    key, raw = APIKey.objects.create_key(user=alice)
    other, other_raw = APIKey.objects.create_key(user=bob)
    assert APIKey.objects.get_for_raw_key(raw) == key
    assert APIKey.objects.get_for_raw_key(other_raw) == other


def test_get_for_raw_key_refuses_a_wrong_secret_with_a_right_prefix(alice: Any, bob: Any) -> None:
    key, raw = APIKey.objects.create_key(user=alice)
    _, other_raw = APIKey.objects.create_key(user=bob)
    secret = raw.rsplit("_", 1)[1]
    flipped = secret[:-1] + ("0" if secret[-1] != "0" else "1")
    assert APIKey.objects.get_for_raw_key(f"{key.prefix}_{flipped}") is None
    # Another key's (valid) secret under this key's prefix is no better.
    assert APIKey.objects.get_for_raw_key(f"{key.prefix}_{other_raw.rsplit('_', 1)[1]}") is None
    # Nor is the right secret cut short or lengthened.
    assert APIKey.objects.get_for_raw_key(raw[:-1]) is None
    assert APIKey.objects.get_for_raw_key(raw + "0") is None


@pytest.mark.parametrize(
    "raw", ["mcp_00000000_" + "0" * 64, "mcp_00000000", "not a key", "", "mcp__" + "0" * 64]
)
def test_get_for_raw_key_unknown(alice: Any, raw: str) -> None:
    APIKey.objects.create_key(user=alice)
    assert APIKey.objects.get_for_raw_key(raw) is None


def test_expiry(alice: Any) -> None:
    past, _ = APIKey.objects.create_key(user=alice, expires=timezone.now() - timedelta(seconds=1))
    future, _ = APIKey.objects.create_key(user=alice, expires=timezone.now() + timedelta(days=1))
    never, _ = APIKey.objects.create_key(user=alice)
    assert past.is_expired() and not past.is_usable() and not past.is_valid()
    assert not future.is_expired() and future.is_usable()
    assert not never.is_expired() and never.is_usable()


def test_revoke_is_recorded_once(alice: Any) -> None:
    key, _ = APIKey.objects.create_key(user=alice)
    assert not key.is_revoked()
    key.revoke()
    stored = APIKey.objects.get(pk=key.pk)
    assert stored.is_revoked() and not stored.is_usable() and not stored.is_valid()
    first = stored.revoked
    stored.revoke()
    assert APIKey.objects.get(pk=key.pk).revoked == first


def test_scopes_as_on_an_access_token(alice: Any) -> None:
    key, _ = APIKey.objects.create_key(user=alice, scopes="read")
    assert key.allow_scopes(["read"])
    assert key.allow_scopes([])
    assert key.allow_scopes(None)
    assert not key.allow_scopes(["read", "write"])
    assert key.is_valid(["read"])
    assert not key.is_valid(["write"])


def test_touch_writes_at_most_once_a_minute(alice: Any) -> None:
    key, _ = APIKey.objects.create_key(user=alice)
    key.touch()
    first = APIKey.objects.get(pk=key.pk).last_used
    assert first is not None

    again = APIKey.objects.get(pk=key.pk)
    again.touch()
    assert APIKey.objects.get(pk=key.pk).last_used == first

    # A copy loaded before the first touch does not overwrite it: the UPDATE is conditional.
    stale = APIKey.objects.get(pk=key.pk)
    stale.last_used = None
    stale.touch()
    assert APIKey.objects.get(pk=key.pk).last_used == first

    earlier = first - LAST_USED_RESOLUTION - timedelta(seconds=1)
    APIKey.objects.filter(pk=key.pk).update(last_used=earlier)
    APIKey.objects.get(pk=key.pk).touch()
    latest = APIKey.objects.get(pk=key.pk).last_used
    assert latest is not None and latest >= first


def test_get_api_key_model() -> None:
    assert get_api_key_model() is APIKey
