"""The opt-in cache of validated API keys: every change to a key or its user is seen at once.

These run in one process against the suite's cache (files, or Redis in the PostgreSQL run);
``tests/test_key_cache_live.py`` repeats the important ones across processes. The checks
E040, E041 and W040 are tested here too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core.cache import caches
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from mcp_endpoint import key_cache
from mcp_endpoint.checks import check_key_cache, check_settings
from mcp_endpoint.models import APIKey, digest_of
from tests.conftest import MCPClient, make_key
from tests.test_checks import MakeEndpoint, make_endpoint, messages, only

__all__ = ["make_endpoint"]  # the fixture, shared with tests/test_checks.py

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
KEY_TABLE = APIKey._meta.db_table


@pytest.fixture
def cache_on(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "API_KEY_CACHE_SECONDS": 300}


def key_queries(run: Callable[[], Any]) -> tuple[Any, int]:
    """What ``run`` returns, and how many queries it made of the API key table."""
    with CaptureQueriesContext(connection) as captured:
        value = run()
    return value, sum(KEY_TABLE in q["sql"] and "SELECT" in q["sql"] for q in captured)


def tools_list(rpc: MCPClient) -> list[str]:
    return [t["name"] for t in rpc.result("tools/list")["tools"]]


def assert_refused(response: Any) -> None:
    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == -32001
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


@pytest.mark.usefixtures("cache_on")
def test_a_known_key_needs_no_query(alice_key: str, mcp_client: Callable[..., MCPClient]) -> None:
    rpc = mcp_client(alice_key)
    answer, queries = key_queries(lambda: rpc.post(PING))
    assert answer.status_code == 200 and queries == 1
    answer, queries = key_queries(lambda: rpc.post(PING))
    assert answer.status_code == 200 and queries == 0
    # The entry is named by the digest: the raw key is nowhere in the cache.
    assert caches["default"].get(key_cache.entry_key(digest_of(alice_key))) is not None


def test_the_cache_is_off_by_default(alice_key: str, mcp_client: Callable[..., MCPClient]) -> None:
    rpc = mcp_client(alice_key)
    for _ in range(2):
        answer, queries = key_queries(lambda: rpc.post(PING))
        assert answer.status_code == 200 and queries == 1
    assert caches["default"].get(key_cache.entry_key(digest_of(alice_key))) is None


@pytest.mark.usefixtures("cache_on")
def test_revocation_takes_effect_on_the_next_request(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    assert rpc.post(PING).status_code == 200
    APIKey.objects.get().revoke()
    assert_refused(rpc.post(PING))


@pytest.mark.usefixtures("cache_on")
def test_a_scope_edit_takes_effect_on_the_next_request(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    assert "create_task" in tools_list(rpc)
    key = APIKey.objects.get()
    key.scope = "read"
    key.save()
    names = tools_list(rpc)
    assert "create_task" not in names and "list_tasks" in names


@pytest.mark.usefixtures("cache_on")
def test_an_expiry_edit_takes_effect_on_the_next_request(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    assert rpc.post(PING).status_code == 200
    key = APIKey.objects.get()
    key.expires = timezone.now() - timedelta(seconds=1)
    key.save()
    assert_refused(rpc.post(PING))


@pytest.mark.usefixtures("cache_on")
def test_user_deactivation_takes_effect_on_the_next_request(
    alice: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    assert rpc.post(PING).status_code == 200
    alice.is_active = False
    alice.save()
    assert_refused(rpc.post(PING))


@pytest.mark.usefixtures("cache_on")
def test_deleting_the_key_or_the_user_takes_effect_on_the_next_request(
    alice: Any, bob: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    alice_rpc = mcp_client(make_key(alice))
    bob_rpc = mcp_client(make_key(bob))
    assert alice_rpc.post(PING).status_code == 200
    assert bob_rpc.post(PING).status_code == 200
    APIKey.objects.get(user=alice).delete()
    bob.delete()
    assert_refused(alice_rpc.post(PING))
    assert_refused(bob_rpc.post(PING))


@pytest.mark.usefixtures("cache_on")
def test_a_login_keeps_the_entry(
    alice: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    rpc.post(PING)
    alice.last_login = timezone.now()
    alice.save(update_fields=["last_login"])
    assert key_queries(lambda: rpc.post(PING))[1] == 0


@pytest.mark.usefixtures("cache_on")
def test_an_entry_past_its_keys_expiry_is_refused(
    alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    raw = make_key(alice, expires=timezone.now() + timedelta(hours=1))
    rpc = mcp_client(raw)
    assert rpc.post(PING).status_code == 200
    # What the cache would hold an hour on: the same entry, its key now past its expiry.
    entry = caches["default"].get(key_cache.entry_key(digest_of(raw)))
    entry.expires = timezone.now() - timedelta(seconds=1)
    caches["default"].set(key_cache.entry_key(digest_of(raw)), entry)
    assert_refused(rpc.post(PING))


@pytest.mark.usefixtures("cache_on")
def test_an_entry_lives_no_longer_than_its_key(settings: Any, alice: Any) -> None:
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "k"}
    }
    cache = caches["default"]
    for expires, most in ((timezone.now() + timedelta(seconds=30), 30), (None, 300)):
        _, raw = APIKey.objects.create_key(user=alice, expires=expires)
        key = APIKey.objects.get_for_raw_key(raw)
        assert key is not None
        key_cache.remember(key)
        name = cache.make_and_validate_key(key_cache.entry_key(key.digest))
        left = cache._expire_info[name] - time.time()  # type: ignore[attr-defined]
        assert most - 5 < left <= most
    # A key that expires within the second is not kept at all.
    _, raw = APIKey.objects.create_key(user=alice, expires=timezone.now())
    soon = APIKey.objects.get_for_raw_key(raw)
    assert soon is not None
    key_cache.remember(soon)
    assert cache.get(key_cache.entry_key(soon.digest)) is None
    cache.clear()


@pytest.mark.usefixtures("cache_on")
def test_changes_without_signals_wait_for_forget(
    alice: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    assert rpc.post(PING).status_code == 200
    # QuerySet.update() sends no signal: the entry stands until it expires or is forgotten.
    APIKey.objects.update(revoked=timezone.now())
    assert rpc.post(PING).status_code == 200
    key_cache.forget_user_keys(alice.pk)
    assert_refused(rpc.post(PING))


@pytest.mark.usefixtures("cache_on")
def test_local_memory_is_per_process(
    settings: Any, alice: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    """What docs/performance.md says: a change made in another process, which sends its
    signals there and not here, is seen here only when the entry expires."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "p"}
    }
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "CACHE": "default"}
    caches["default"].clear()
    rpc = mcp_client(alice_key)
    assert rpc.post(PING).status_code == 200
    # Another process revokes the key: this one's memory learns nothing of it.
    APIKey.objects.update(revoked=timezone.now())
    assert rpc.post(PING).status_code == 200
    # The entry's expiry (dropped here, rather than waited for) ends it.
    caches["default"].delete(key_cache.entry_key(digest_of(alice_key)))
    assert_refused(rpc.post(PING))
    assert [m.id for m in check_key_cache()] == ["mcp_endpoint.W040"]
    caches["default"].clear()


# -- checks --------------------------------------------------------------------------------


@pytest.mark.backends
@pytest.mark.parametrize(
    "backend",
    ["django.core.cache.backends.locmem.LocMemCache", "tests.test_checks_sessions.HostLocMemCache"],
)
def test_w040_warns_for_a_per_process_cache(settings: Any, backend: str) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "API_KEY_CACHE_SECONDS": 60}
    settings.CACHES = {**settings.CACHES, "default": {"BACKEND": backend}}
    (warning,) = [m for m in check_key_cache() if m.id == "mcp_endpoint.W040"]
    assert "60 s" in warning.msg and warning.hint and "Redis" in warning.hint


def test_w040_is_quiet_for_a_shared_cache_or_the_cache_off(settings: Any) -> None:
    assert check_key_cache() == []  # off by default
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "API_KEY_CACHE_SECONDS": 60}
    assert check_key_cache() == []  # the suite's cache is files or Redis


@pytest.mark.parametrize("rate", ["lots", "10", "0/minute", "10/fortnight", 10, "a/b/c"])
def test_e040_protocol_rate(make_endpoint: MakeEndpoint, rate: Any) -> None:
    make_endpoint(PROTOCOL_RATE=rate)
    assert "PROTOCOL_RATE" in only(check_settings, "mcp_endpoint.E040").msg


def test_e040_good_rates_pass(make_endpoint: MakeEndpoint) -> None:
    make_endpoint("a", PROTOCOL_RATE="100/s")
    make_endpoint("b", PROTOCOL_RATE=None)
    make_endpoint("c", PROTOCOL_RATE="5000/day")
    assert messages(check_settings, "mcp_endpoint.E040") == []


@pytest.mark.parametrize("seconds", [-1, "60", 1.5, True])
def test_e041_key_cache_seconds(make_endpoint: MakeEndpoint, seconds: Any) -> None:
    make_endpoint(API_KEY_CACHE_SECONDS=seconds)
    assert "API_KEY_CACHE_SECONDS" in only(check_settings, "mcp_endpoint.E041").msg
