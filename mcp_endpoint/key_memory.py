"""Each worker's memory of verified API keys, dropped everywhere the moment a key changes.

A key that passed the look-up is kept in this process (with its user and scopes) for at
most ``KEY_MEMORY_SECONDS`` (60 by default) and never past its own expiry, so a request
with a known key makes no query and no cache round trip: what is left per request is what
cannot be kept (the expiry compared with the clock, the key's and its user's state as last
seen).

The memory is on only where the cache named by ``CACHE`` is Redis: every change that can
alter what a key may do is published on a Redis channel once its transaction commits (a
key saved or deleted: revoked, its scopes or expiry edited; its user saved or deleted:
deactivated, say), by any process whose cache is Redis, even one that keeps no keys itself
(a shell, a task worker), and a thread in each process drops the entries it names. The process
that publishes waits, for at most :data:`ACK_SECONDS`, until every process listening has
dropped them and said so; once :func:`publish` returns acknowledged, no worker answers
from the old state. A process whose connection to the channel is lost clears its memory
and does not use it until it has subscribed again, so there is no window in which it could
miss a change and keep answering from an entry.

Changes that bypass model signals (``QuerySet.update()``, raw SQL) are not published:
call :func:`mcp_endpoint.key_cache.forget` or :func:`~mcp_endpoint.key_cache.forget_user_keys`
after one (they drop this memory everywhere too), or wait ``KEY_MEMORY_SECONDS``.

Entries are keyed by the key's SHA-256 digest: the raw key is never kept.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.models import AbstractAPIKey, get_api_key_model
from mcp_endpoint.redis_cache import redis_location

logger = logging.getLogger("mcp_endpoint.authentication")

# The most keys one process keeps; past it the oldest entry goes.
MAX_ENTRIES = 10_000
# How long a publisher waits for every listening process to drop what it names.
ACK_SECONDS = 5.0
# How long an acknowledgement list outlives a publisher that stopped waiting for it.
ACK_KEY_SECONDS = 30


def redis_url() -> str | None:
    """The Redis the memory's channel runs on, or None where the memory is off."""
    if not mcp_settings.KEY_MEMORY_SECONDS:
        return None
    return redis_location(mcp_settings.CACHE)


def enabled() -> bool:
    return redis_url() is not None


def channel_url() -> str | None:
    """The Redis changes are published on: wherever Redis is the cache, whether or not
    this process keeps keys itself (a shell, a task worker or an admin process with
    ``KEY_MEMORY_SECONDS`` at 0 must still tell the workers that do)."""
    return redis_location(mcp_settings.CACHE)


def channel() -> str:
    return f"{caches[mcp_settings.CACHE].key_prefix}:mcp_endpoint:key_memory"


class KeyMemory:
    """This process's verified keys, and the thread that keeps them true."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: OrderedDict[str, tuple[AbstractAPIKey, float]] = OrderedDict()
        # Moved on every drop: a look-up that began before one may not store what it read.
        self.generation = 0
        self.ready = False
        self.listener: threading.Thread | None = None
        self.listening: tuple[int, str, str] | None = None
        # Whether the last change this process published was acknowledged by every
        # process listening (None: none published yet), for a shell or a test to read.
        self.acknowledged: bool | None = None
        # Names this process's connections to the channel in Redis's CLIENT LIST.
        self.client_name = f"mcp-key-memory-{uuid.uuid4().hex[:12]}"

    # -- reading and remembering ------------------------------------------------------------

    def get(self, digest: str) -> AbstractAPIKey | None:
        if not self.listen():
            return None
        entry = self.entries.get(digest)
        if entry is None:
            return None
        if entry[1] <= time.monotonic():
            with self.lock:
                self.entries.pop(digest, None)
            return None
        return entry[0]

    def begin(self) -> int:
        """A mark to hand to :meth:`remember` once the look-up it starts is done."""
        return self.generation

    def remember(self, key: AbstractAPIKey, mark: int, seconds: float) -> None:
        if key.expires is not None:
            seconds = min(seconds, (key.expires - timezone.now()).total_seconds())
        if seconds <= 0:
            return
        with self.lock:
            if not self.ready or self.generation != mark:
                return
            self.entries[key.digest] = (key, time.monotonic() + seconds)
            self.entries.move_to_end(key.digest)
            while len(self.entries) > MAX_ENTRIES:
                self.entries.popitem(last=False)

    def drop(self, digests: Iterable[str] = (), users: Iterable[Any] = ()) -> None:
        digests, users = set(digests), {str(pk) for pk in users}
        with self.lock:
            self.generation += 1
            for digest in digests:
                self.entries.pop(digest, None)
            if users:
                for digest, (key, _) in list(self.entries.items()):
                    if str(key.user_id) in users:
                        del self.entries[digest]

    def clear(self, *, ready: bool) -> None:
        with self.lock:
            self.generation += 1
            self.entries.clear()
            self.ready = ready

    # -- the channel ------------------------------------------------------------------------

    def listen(self) -> bool:
        """Whether the entries may be used: the thread is subscribed to the channel (it is
        started here, once per process and per channel)."""
        url = redis_url()
        if url is None:
            return False
        wanted = (os.getpid(), url, channel())
        if self.listening == wanted and self.listener is not None and self.listener.is_alive():
            return self.ready
        with self.lock:
            if self.listening != wanted or self.listener is None or not self.listener.is_alive():
                # A forked worker inherits its parent's memory but not its thread.
                self.entries.clear()
                self.generation += 1
                self.ready = False
                self.listening = wanted
                self.listener = threading.Thread(
                    target=self.run, args=wanted, name="mcp-key-memory", daemon=True
                )
                self.listener.start()
        return self.ready

    def run(self, pid: int, url: str, name: str) -> None:
        import redis

        first = True
        while self.listening == (pid, url, name):
            try:
                self.subscribe_and_drop(redis, url, name)
            except (redis.RedisError, OSError) as exc:
                # An outage, not a bug: one line when a subscription is lost (or never
                # made), not a traceback every second while Redis stays away.
                if first or self.ready:
                    logger.warning("key memory: Redis unreachable (%s), memory cleared", exc)
            first = False
            self.clear(ready=False)
            time.sleep(1)

    def subscribe_and_drop(self, redis: Any, url: str, name: str) -> None:
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        # No retries: redis-py would reconnect and subscribe again without a word, and what
        # was published in between would be missed while the entries were still used.
        client = redis.Redis.from_url(
            url,
            socket_connect_timeout=2,
            health_check_interval=10,
            retry=Retry(NoBackoff(), 0),
            client_name=self.client_name,
        )
        pubsub = client.pubsub()
        pubsub.subscribe(name)
        try:
            for message in pubsub.listen():
                if message.get("type") == "subscribe":
                    # Nothing seen before this moment can be trusted: start empty.
                    self.clear(ready=True)
                elif message.get("type") == "message":
                    self.received(client, message.get("data"))
        finally:
            pubsub.close()
            client.close()

    def received(self, client: Any, data: Any) -> None:
        try:
            change = json.loads(data)
        except (TypeError, ValueError):
            return
        self.drop(change.get("digests", ()), change.get("users", ()))
        ack = change.get("ack")
        if isinstance(ack, str):
            client.pipeline().rpush(ack, 1).expire(ack, ACK_KEY_SECONDS).execute()


memory = KeyMemory()


def get(digest: str) -> AbstractAPIKey | None:
    """The remembered key for ``digest``, or None (not remembered, or the memory is off)."""
    return memory.get(digest)


def begin() -> int:
    return memory.begin()


def remember(key: AbstractAPIKey, mark: int) -> None:
    """Keep a verified ``key`` (with its user) whose look-up began at ``mark``."""
    seconds = float(mcp_settings.KEY_MEMORY_SECONDS or 0)
    if seconds > 0 and enabled():
        memory.remember(key, mark, seconds)


def publish(digests: Iterable[str] = (), users: Iterable[Any] = ()) -> bool:
    """Drop these keys (by digest) and every key of these users (by primary key) in every
    process, and wait until each listening process says it has: True once they all have
    (or the memory is off), False when Redis could not be reached or some did not answer
    within :data:`ACK_SECONDS`."""
    digests, users = list(digests), [str(pk) for pk in users]
    memory.drop(digests, users)
    url = channel_url()
    if url is None or not (digests or users):
        return True
    memory.acknowledged = _broadcast(url, digests, users)
    return memory.acknowledged


def _broadcast(url: str, digests: list[str], users: list[str]) -> bool:
    import redis

    ack = f"{channel()}:ack:{uuid.uuid4().hex}"
    message = json.dumps({"digests": digests, "users": users, "ack": ack})
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2)
        listeners = int(client.publish(channel(), message))
        deadline = time.monotonic() + ACK_SECONDS
        acknowledged = 0
        while acknowledged < listeners:
            left = deadline - time.monotonic()
            if left <= 0 or client.blpop([ack], timeout=max(left, 0.01)) is None:
                break
            acknowledged += 1
        client.delete(ack)
        client.close()
    except (redis.RedisError, OSError) as exc:
        logger.warning("key memory: could not publish a key change (%s)", exc)
        return False
    if acknowledged < listeners:
        logger.warning(
            "key memory: %d of %d processes acknowledged a key change", acknowledged, listeners
        )
        return False
    return True


def publish_on_commit(
    using: str | None, digests: Iterable[str] = (), users: Iterable[Any] = ()
) -> None:
    """Drop at once in this process, and everywhere once the change is committed (a
    rolled-back change changed nothing, and before the commit another process would read
    the old row again)."""
    digests, users = list(digests), list(users)
    if channel_url() is None:
        return
    memory.drop(digests, users)
    transaction.on_commit(lambda: publish(digests, users), using=using, robust=True)


# -- signal receivers ---------------------------------------------------------------------


def _key_changed(sender: Any, instance: AbstractAPIKey, using: str, **kwargs: Any) -> None:
    if instance.digest:
        publish_on_commit(using, digests=[instance.digest])


def _user_changed(sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
    if instance.pk is None or kwargs.get("created"):
        return
    # A user's last_login is written on every login: that changes nothing a key may do.
    update_fields = kwargs.get("update_fields")
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return
    publish_on_commit(using, users=[instance.pk])


def connect() -> None:
    """Connect the receivers (the app's ``ready`` does), for the key model and the users."""
    model = get_api_key_model()
    user_model = get_user_model()
    uid = "mcp_endpoint.key_memory."
    post_save.connect(_key_changed, sender=model, dispatch_uid=uid + "key_save")
    post_delete.connect(_key_changed, sender=model, dispatch_uid=uid + "key_delete")
    post_save.connect(_user_changed, sender=user_model, dispatch_uid=uid + "user_save")
    post_delete.connect(_user_changed, sender=user_model, dispatch_uid=uid + "user_delete")
