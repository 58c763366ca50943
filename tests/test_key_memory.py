"""Each worker's memory of verified keys: used, dropped on every kind of change (here and
through the Redis channel), bounded, off without Redis, cleared when the channel is lost.

Most of these need the suite's cache to be Redis (the PostgreSQL run sets ``REDIS_URL``);
``tests/test_credential_live.py`` repeats the changes across server processes, under load.
The check E044 is tested here too.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from mcp_endpoint import key_cache, key_memory
from mcp_endpoint.checks import check_settings
from mcp_endpoint.models import APIKey, digest_of
from mcp_endpoint.redis_cache import redis_location
from tests.conftest import MCPClient, make_key
from tests.test_checks import MakeEndpoint, make_endpoint, only

__all__ = ["make_endpoint"]  # the fixture, shared with tests/test_checks.py

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
KEY_TABLE = APIKey._meta.db_table
needs_redis = pytest.mark.skipif(
    redis_location("default") is None, reason="the memory needs the cache to be Redis"
)


def wait_for(condition: Callable[[], bool]) -> None:
    """Wait for the subscriber thread (it works on its own time), failing only if it never
    gets there."""
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, "the key memory's subscriber never got there"
        time.sleep(0.02)


@pytest.fixture
def memory_on(settings: Any) -> Iterator[None]:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "KEY_MEMORY_SECONDS": 60}
    wait_for(key_memory.memory.listen)
    yield
    key_memory.memory.clear(ready=key_memory.memory.ready)


def key_queries(run: Callable[[], Any]) -> tuple[Any, int]:
    with CaptureQueriesContext(connection) as captured:
        value = run()
    return value, sum(KEY_TABLE in q["sql"] and "SELECT" in q["sql"] for q in captured)


def assert_refused(response: Any) -> None:
    assert response.status_code == 401, response.content


def redis_client() -> Any:
    import redis

    return redis.Redis.from_url(key_memory.channel_url())


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_a_known_key_needs_no_query(alice_key: str, mcp_client: Callable[..., MCPClient]) -> None:
    rpc = mcp_client(alice_key)
    answer, queries = key_queries(lambda: rpc.post(PING))
    assert answer.status_code == 200 and queries == 1
    answer, queries = key_queries(lambda: rpc.post(PING))
    assert answer.status_code == 200 and queries == 0
    # Named by the digest: the raw key is nowhere in the memory.
    assert digest_of(alice_key) in key_memory.memory.entries
    assert alice_key not in key_memory.memory.entries


def revoke(alice: Any) -> None:
    APIKey.objects.get(user=alice).revoke()


def lower_scopes(alice: Any) -> None:
    key = APIKey.objects.get(user=alice)
    key.scope = "read"
    key.save()


def expire(alice: Any) -> None:
    key = APIKey.objects.get(user=alice)
    key.expires = timezone.now() - timedelta(seconds=1)
    key.save()


def deactivate(alice: Any) -> None:
    alice.is_active = False
    alice.save()


def delete_key(alice: Any) -> None:
    APIKey.objects.get(user=alice).delete()


def delete_user(alice: Any) -> None:
    alice.delete()


@needs_redis
@pytest.mark.usefixtures("memory_on")
@pytest.mark.parametrize(
    "change", [revoke, lower_scopes, expire, deactivate, delete_key, delete_user]
)
def test_each_change_drops_the_entry_everywhere(
    alice: Any,
    alice_key: str,
    mcp_client: Callable[..., MCPClient],
    django_capture_on_commit_callbacks: Any,
    change: Callable[[Any], None],
) -> None:
    rpc = mcp_client(alice_key)
    rpc.post(PING)
    assert key_queries(lambda: rpc.post(PING))[1] == 0
    with django_capture_on_commit_callbacks() as published:
        change(alice)
    # Dropped here at once; the publication waits for the commit.
    assert digest_of(alice_key) not in key_memory.memory.entries
    assert published, "the change is published once committed"
    for callback in published:
        callback()
    if change is lower_scopes:
        answer = rpc.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        names = {t["name"] for t in answer.json()["result"]["tools"]}
        assert "create_task" not in names and "list_tasks" in names
    else:
        assert_refused(rpc.post(PING))


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_a_change_published_by_another_process_is_dropped_and_acknowledged(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    rpc.post(PING)
    digest = digest_of(alice_key)
    assert digest in key_memory.memory.entries
    client = redis_client()
    ack = f"{key_memory.channel()}:ack:{uuid.uuid4().hex}"
    message = {"digests": [digest], "users": [], "ack": ack}
    assert client.publish(key_memory.channel(), json.dumps(message)) >= 1
    assert client.blpop([ack], timeout=20) is not None
    assert digest not in key_memory.memory.entries


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_a_publisher_is_acknowledged_by_the_listening_processes(alice: Any) -> None:
    assert key_memory.publish(users=[alice.pk]) is True


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_forget_reaches_the_memory_after_a_change_without_signals(
    alice: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    rpc.post(PING)
    APIKey.objects.filter(user=alice).update(revoked=timezone.now())
    assert rpc.post(PING).status_code == 200  # no signal: the memory still holds it
    key_cache.forget(digest_of(alice_key))
    assert_refused(rpc.post(PING))

    other = make_key(alice, name="second")
    rpc = mcp_client(other)
    rpc.post(PING)
    type(alice).objects.filter(pk=alice.pk).update(is_active=False)
    assert rpc.post(PING).status_code == 200
    key_cache.forget_user_keys(alice.pk)
    assert_refused(rpc.post(PING))


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_the_memory_is_bounded(
    alice: Any, mcp_client: Callable[..., MCPClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(key_memory, "MAX_ENTRIES", 2)
    keys = [make_key(alice, name=f"k{i}") for i in range(3)]
    for raw in keys:
        assert mcp_client(raw).post(PING).status_code == 200
    assert list(key_memory.memory.entries) == [digest_of(k) for k in keys[1:]]


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_an_entry_never_outlives_the_setting_or_the_key(
    alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    soon = make_key(alice, name="soon", expires=timezone.now() + timedelta(seconds=30))
    later = make_key(alice, name="later")
    for raw in (soon, later):
        mcp_client(raw).post(PING)
    now = time.monotonic()
    assert key_memory.memory.entries[digest_of(soon)][1] <= now + 30
    assert 30 < key_memory.memory.entries[digest_of(later)][1] <= now + 60


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_a_look_up_that_began_before_a_drop_is_not_remembered(alice: Any, alice_key: str) -> None:
    key = APIKey.objects.get(user=alice)
    mark = key_memory.begin()
    key_memory.memory.drop([key.digest])  # a change arrives while the row is read
    key_memory.remember(key, mark)
    assert key.digest not in key_memory.memory.entries
    key_memory.remember(key, key_memory.begin())
    assert key.digest in key_memory.memory.entries


@needs_redis
@pytest.mark.usefixtures("memory_on")
def test_losing_the_channel_clears_the_memory_until_subscribed_again(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    rpc = mcp_client(alice_key)
    rpc.post(PING)
    assert key_queries(lambda: rpc.post(PING))[1] == 0
    client = redis_client()
    name = key_memory.memory.client_name
    ids = [c["id"] for c in client.client_list() if c.get("name") == name]
    assert ids, "the subscriber names its connection"
    for client_id in ids:
        client.client_kill_filter(_id=client_id)
    wait_for(lambda: not key_memory.memory.ready)
    assert key_memory.memory.entries == {}
    # Not used until subscribed again, and empty then: the next request reads the row.
    assert key_queries(lambda: rpc.post(PING))[1] == 1
    wait_for(key_memory.memory.listen)
    rpc.post(PING)
    assert key_queries(lambda: rpc.post(PING))[1] == 0


def test_the_memory_is_off_without_redis(
    settings: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    settings.CACHES = {
        **django_settings.CACHES,
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "KEY_MEMORY_SECONDS": 60, "CACHE": "local"}
    assert not key_memory.enabled()
    rpc = mcp_client(alice_key)
    for _ in range(2):
        answer, queries = key_queries(lambda: rpc.post(PING))
        assert answer.status_code == 200 and queries == 1
    assert key_memory.publish(digests=[digest_of(alice_key)]) is True


@needs_redis
def test_the_memory_is_off_at_zero_seconds(
    settings: Any, alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "KEY_MEMORY_SECONDS": 0}
    assert not key_memory.enabled()
    rpc = mcp_client(alice_key)
    for _ in range(2):
        assert key_queries(lambda: rpc.post(PING))[1] == 1


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_a_process_that_keeps_no_keys_still_tells_the_others(alice: Any) -> None:
    """A shell, a task worker or an admin process with the memory off changes a key: the
    workers that keep it hear of it all the same."""
    assert not key_memory.enabled()
    pubsub = redis_client().pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(key_memory.channel())
    try:
        raw = make_key(alice)
        key = APIKey.objects.get(digest=digest_of(raw))
        key.revoked = timezone.now()
        key.save()
        deadline = time.monotonic() + 20
        heard = None
        while heard is None and time.monotonic() < deadline:
            heard = pubsub.get_message(timeout=1)
    finally:
        pubsub.close()
    assert heard is not None, "nothing was published"
    assert digest_of(raw) in json.loads(heard["data"])["digests"]


def test_the_memory_is_on_by_default() -> None:
    from mcp_endpoint.conf import DEFAULTS

    assert DEFAULTS["KEY_MEMORY_SECONDS"] == 60


@pytest.mark.parametrize("seconds", [-1, "60", 1.5, True])
def test_e044_key_memory_seconds(make_endpoint: MakeEndpoint, seconds: Any) -> None:
    make_endpoint(KEY_MEMORY_SECONDS=seconds)
    assert "KEY_MEMORY_SECONDS" in only(check_settings, "mcp_endpoint.E044").msg
