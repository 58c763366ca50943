"""Resource subscriptions fed by the host's data.

A resource (or template) registered with ``follows=`` names the models whose changes
change it::

    @site.resource("tracker://projects/{project_id}/board",
                   follows={Task: lambda task: {"project_id": task.project_id}})

When a followed row is saved or deleted, once the transaction commits, the endpoint
publishes "updated" for the URIs the row maps to. A legacy client in a session subscribes
with ``resources/subscribe`` (only to a resource its credential may read) and gets
``notifications/resources/updated`` on the session's ``GET`` stream; before each one is
sent the credential's access is checked again, so a user removed from a project stops
hearing about it. On each update and each keep-alive the stream also asks whether its
credential still holds (:class:`StreamAccess`) and ends when it does not.

Updates travel through a broker: Redis pub/sub (``SUBSCRIPTIONS_REDIS_URL``, by default the
Redis of ``CACHE`` when that is Django's ``RedisCache``), so a change made through the REST
API on one machine reaches streams held open by another; without Redis, an in-process
broker serves a one-process development server. Each process holds one Redis subscription,
in one thread, and hands updates to its open streams; under ASGI those streams are async
code (no thread per stream). Under WSGI a ``GET`` stream holds a worker for as long as it
is open, so it is refused (405) unless ``WSGI_GET_STREAMS`` accepts that.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.core.cache import caches
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from mcp_endpoint import authentication
from mcp_endpoint.database import release_request_connections, released
from mcp_endpoint.limits import CredentialLimit
from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.redis_cache import redis_location
from mcp_endpoint.responses import KEEPALIVE, sse_event

if TYPE_CHECKING:
    from django.http import HttpRequest

    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.protocol.server import RequestContext
    from mcp_endpoint.resources import Resource, UriMapper

logger = logging.getLogger("mcp_endpoint.subscriptions")


UPDATED = "notifications/resources/updated"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LIST_CHANGED = "notifications/tools/list_changed"
# What the update broker carries to listen streams: the tools list of one caller changed
# (a model enabled a toolset, mcp_endpoint.dynamic_toolsets).
TOOLS_CHANGED = "tools-changed:"


def changed_key(owner: str) -> str:
    """What the broker carries when the tools list of the caller ``owner`` changed."""
    return TOOLS_CHANGED + owner


def list_changed(subscription_id: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if subscription_id is not None:
        params["_meta"] = {SUBSCRIPTION_ID: subscription_id}
    return {"jsonrpc": "2.0", "method": LIST_CHANGED, "params": params}


# -- from a saved row to the URIs it changes ------------------------------------------------------


def follow(endpoint: EndpointLike, resource: Resource) -> None:
    """Publish updates of ``resource`` when the rows of the models it follows change."""
    for model, mapper in resource.follows.items():
        changed = _receiver(endpoint, resource, mapper)
        uid = f"mcp_endpoint:{endpoint.name}:{resource.uri}:{model._meta.label}"
        post_save.connect(changed, sender=model, weak=False, dispatch_uid=uid + ":save")
        post_delete.connect(changed, sender=model, weak=False, dispatch_uid=uid + ":delete")


def _receiver(endpoint: EndpointLike, resource: Resource, mapper: UriMapper | None) -> Any:
    # The signal holds the receiver for good; the receiver must not keep the endpoint alive.
    endpoint_ref = weakref.ref(endpoint)

    def changed(sender: Any, instance: Any, using: str, **kwargs: Any) -> None:
        uris = resource.uris_for(instance, mapper)
        if not uris:
            return

        def send() -> None:
            # Only what was committed is news; a rolled-back change never happened.
            target = endpoint_ref()
            if target is not None:
                publish(target, uris)

        transaction.on_commit(send, using=using, robust=True)

    return changed


def publish(endpoint: EndpointLike, uris: Iterable[str]) -> None:
    """Tell every process's streams that these URIs changed."""
    hub = hub_for(endpoint)
    for uri in dict.fromkeys(uris):
        hub.publish(uri)


# -- the broker: Redis pub/sub or this process ---------------------------------------------


def redis_url(endpoint: EndpointLike) -> str | None:
    url: str | None = endpoint.settings.SUBSCRIPTIONS_REDIS_URL
    return url or redis_location(endpoint.settings.CACHE)


class Hub:
    """This process's open streams of one endpoint, and how updates reach them.

    With Redis, ``publish`` goes to the channel and one thread per process relays what
    the channel carries to the streams here; without, ``publish`` hands it over directly.
    """

    def __init__(self, channel: str, url: str | None) -> None:
        self.channel = channel
        self.url = url
        self.lock = threading.Lock()
        self.sync_listeners: set[queue.Queue[str]] = set()
        self.async_listeners: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]] = set()
        self.relay: threading.Thread | None = None
        self.publisher: Any = None

    def publish(self, uri: str) -> None:
        if self.url is None:
            self.deliver(uri)
            return
        if self.publisher is None:
            import redis

            self.publisher = redis.Redis.from_url(self.url)
        self.publisher.publish(self.channel, uri)

    def deliver(self, uri: str) -> None:
        with self.lock:
            sync = list(self.sync_listeners)
            pending = list(self.async_listeners)
        for q in sync:
            q.put(uri)
        for loop, aq in pending:
            with contextlib.suppress(RuntimeError):  # the stream's loop has closed
                loop.call_soon_threadsafe(aq.put_nowait, uri)

    def ensure_relay(self) -> None:
        if self.url is None:
            return
        with self.lock:
            if self.relay is not None and self.relay.is_alive():
                return
            self.relay = threading.Thread(
                target=self.run_relay, name=f"mcp-updates:{self.channel}", daemon=True
            )
            self.relay.start()

    def run_relay(self) -> None:
        import redis

        while True:
            try:
                client = redis.Redis.from_url(self.url)  # type: ignore[arg-type]
                pubsub = client.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self.channel)
                for message in pubsub.listen():
                    data = message.get("data")
                    if isinstance(data, bytes):
                        self.deliver(data.decode())
            except redis.RedisError:
                logger.warning("resource updates: Redis unreachable, retrying", exc_info=True)
                time.sleep(1)

    # -- listening --------------------------------------------------------------------------

    def listen_sync(self) -> queue.Queue[str]:
        self.ensure_relay()
        q: queue.Queue[str] = queue.Queue()
        with self.lock:
            self.sync_listeners.add(q)
        return q

    def listen_async(self) -> tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]:
        self.ensure_relay()
        entry = (asyncio.get_running_loop(), asyncio.Queue[str]())
        with self.lock:
            self.async_listeners.add(entry)
        return entry

    def leave(self, listener: Any) -> None:
        with self.lock:
            self.sync_listeners.discard(listener)
            self.async_listeners.discard(listener)


_hubs: dict[tuple[str, str | None], Hub] = {}
_hubs_lock = threading.Lock()


def hub_for(endpoint: EndpointLike) -> Hub:
    url = redis_url(endpoint)
    prefix = caches[endpoint.settings.CACHE].key_prefix
    channel = f"{prefix}:mcp_endpoint:updates:{endpoint.name}"
    with _hubs_lock:
        hub = _hubs.get((channel, url))
        if hub is None:
            hub = _hubs[(channel, url)] = Hub(channel, url)
        return hub


# -- subscribing (legacy sessions) -------------------------------------------------------------


def subscribe(endpoint: EndpointLike, uri: str, context: RequestContext) -> None:
    """Remember ``uri`` (canonical) in the session, if the credential may read it now and
    the session holds fewer than ``SUBSCRIPTIONS_PER_SESSION``."""
    session = context.session
    if session is None:
        raise ProtocolError(
            jsonrpc.METHOD_NOT_FOUND, "Method not found: resources/subscribe needs a session"
        )
    limit: int = endpoint.settings.SUBSCRIPTIONS_PER_SESSION
    if uri not in session.subscriptions and len(session.subscriptions) >= limit:
        # The session is loaded and saved on every request: its size is everyone's cost.
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS,
            f"Invalid params: a session holds at most {limit} subscriptions; unsubscribe "
            "from one first",
            {"limit": limit},
        )
    endpoint.features.read_resource(uri, context)  # -32002 when it is unknown or not readable
    session.subscribe(uri)


def unsubscribe(uri: str, context: RequestContext) -> None:
    if context.session is None:
        raise ProtocolError(
            jsonrpc.METHOD_NOT_FOUND, "Method not found: resources/unsubscribe needs a session"
        )
    context.session.unsubscribe(uri)


# -- the session's GET stream ---------------------------------------------------------------


class StreamLimit(CredentialLimit):
    """At most ``STREAMS_PER_CREDENTIAL`` open GET streams per credential (best effort:
    the count lives in the cache, so every process shares it)."""

    def __init__(self, endpoint: EndpointLike, owner: str) -> None:
        super().__init__(endpoint, "streams", owner, endpoint.settings.STREAMS_PER_CREDENTIAL)


class StreamAccess:
    """Whether the credential a long-lived stream was opened with still holds.

    A stream outlives the request that authenticated it; it asks again on each update it
    would send and each keep-alive, and ends once the answer is no: the request is
    authenticated again as the transport first did it (the same classes, the key cache),
    and the credential's scopes must still allow reading every resource the stream follows
    (as ``resources/read`` decides). On yes the context carries the credential as it is
    now, so what is read next is read with its current scopes.
    """

    def __init__(
        self, endpoint: EndpointLike, request: HttpRequest, context: RequestContext
    ) -> None:
        self.endpoint = endpoint
        self.request = request
        self.context = context

    def holds(self, uris: Iterable[str] = ()) -> bool:
        try:
            self.context.credential = authentication.authenticate_again(
                self.request, self.endpoint.settings.AUTHENTICATION_CLASSES, self.context.credential
            )
        except authentication.CredentialRefused:
            return False
        return self.may_read(uris)

    def may_read(self, uris: Iterable[str]) -> bool:
        return all(self.endpoint.features.scopes_allow_reading(uri, self.context) for uri in uris)


def guarded(
    stream: Iterator[bytes] | AsyncIterator[bytes],
    access: StreamAccess,
    limit: StreamLimit,
) -> Iterator[bytes] | AsyncIterator[bytes]:
    """A stream that is sent only while its credential holds (checked before each part
    it sends, keep-alives included), and that frees its place in ``limit`` when it ends."""
    if isinstance(stream, AsyncIterator):
        return _async_guarded(stream, access, limit)
    return _sync_guarded(stream, access, limit)


def _sync_guarded(
    stream: Iterator[bytes], access: StreamAccess, limit: StreamLimit
) -> Iterator[bytes]:
    holds = released(access.holds)
    try:
        for part in stream:
            if not holds():
                return
            yield part
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()
        limit.release()


async def _async_guarded(
    stream: AsyncIterator[bytes], access: StreamAccess, limit: StreamLimit
) -> AsyncIterator[bytes]:
    holds = sync_to_async(released(access.holds))
    try:
        async for part in stream:
            if not await holds():
                return
            yield part
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
        await sync_to_async(limit.release)()


def update_message(uri: str, subscription_id: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"uri": uri}
    if subscription_id is not None:
        params["_meta"] = {SUBSCRIPTION_ID: subscription_id}
    return {"jsonrpc": "2.0", "method": UPDATED, "params": params}


# -- 2026-07-28: subscriptions/listen ---------------------------------------------------------


def readable_now(endpoint: EndpointLike, uri: str, context: RequestContext) -> bool:
    try:
        endpoint.features.read_resource(uri, context)
    except ProtocolError:
        return False
    return True


def listen_stream(
    endpoint: EndpointLike,
    answer: dict[str, Any],
    access: StreamAccess,
    *,
    asynchronous: bool,
    limit: StreamLimit | None,
) -> Iterator[bytes] | AsyncIterator[bytes]:
    """A ``subscriptions/listen`` stream: the acknowledgement, then the updates.

    ``answer`` is the protocol layer's answer (its result names what is honoured). Under
    ASGI the stream stays open, async, until the client leaves; elsewhere (no ``limit``)
    it honours nothing and ends at once with the result, as the revision allows.
    """
    subscription_id = answer["id"]
    result = dict(answer["result"])
    honoured = result.pop("notifications")
    if limit is None:
        honoured = {}
    result["_meta"] = {**result.get("_meta", {}), SUBSCRIPTION_ID: subscription_id}
    ack = {
        "jsonrpc": "2.0",
        "method": ACKNOWLEDGED,
        "params": {"notifications": honoured, "_meta": {SUBSCRIPTION_ID: subscription_id}},
    }
    ending = {"jsonrpc": "2.0", "id": subscription_id, "result": result}
    uris = set(honoured.get("resourceSubscriptions", []))
    if limit is None or not asynchronous:
        return iter([sse_event(ack), sse_event(ending)])
    tools = None
    if honoured.get("toolsListChanged"):
        tools = changed_key(principal(access.context))
    return async_listen(endpoint, ack, uris, subscription_id, access, limit, tools)


def credential_ended(subscription_id: Any) -> dict[str, Any]:
    """The end of a listen stream whose credential no longer holds."""
    return jsonrpc.error(
        subscription_id,
        jsonrpc.UNAUTHORIZED,
        "Unauthorized: the credential no longer holds (revoked, expired, its user "
        "deactivated, or its scopes no longer enough to read what is listened to)",
    )


async def async_listen(
    endpoint: EndpointLike,
    ack: dict[str, Any],
    uris: set[str],
    subscription_id: Any,
    access: StreamAccess,
    limit: StreamLimit,
    tools: str | None = None,
) -> AsyncIterator[bytes]:
    """The stream's updates: of the resources ``uris``, and, when ``tools`` is what the
    broker carries for this caller's tools list, of that list."""
    hub = hub_for(endpoint)
    listener = hub.listen_async()
    check = sync_to_async(released(readable_now))
    holds = sync_to_async(released(access.holds))
    keepalive: float = endpoint.settings.STREAM_KEEPALIVE_SECONDS
    try:
        await sync_to_async(release_request_connections)()
        yield sse_event(ack)
        while True:
            try:
                uri = await asyncio.wait_for(listener[1].get(), keepalive)
            except asyncio.TimeoutError:  # not TimeoutError before Python 3.11
                uri = None
            if uri is not None and uri not in uris and uri != tools:
                continue
            if not await holds(uris):
                yield sse_event(credential_ended(subscription_id))
                return
            if uri is None:
                yield KEEPALIVE
            elif uri == tools:
                yield sse_event(list_changed(subscription_id))
            elif await check(endpoint, uri, access.context):
                yield sse_event(update_message(uri, subscription_id))
    finally:
        hub.leave(listener)
        await sync_to_async(limit.release)()


def wanted_update(
    endpoint: EndpointLike, session_id: str, uri: str, access: StreamAccess
) -> bool | None:
    """Whether to send this update (``uri``, or ``""`` for a keep-alive): subscribed, and
    readable now. None: the stream ends (the session ended, or its credential no longer
    holds)."""
    from mcp_endpoint.sessions import SessionStore

    context = access.context
    session = SessionStore(endpoint).load(session_id, context)
    if session is None:
        return None
    if uri and uri not in session.subscriptions:
        return False  # not this stream's news: nothing to check
    if not access.holds(session.subscriptions):
        return None
    if not uri:
        return False
    context.session = session
    try:
        endpoint.features.read_resource(uri, context)
    except ProtocolError:
        return False  # no longer readable by this credential: nothing is said
    return True


async def async_updates(
    endpoint: EndpointLike, session_id: str, access: StreamAccess, limit: StreamLimit
) -> AsyncIterator[bytes]:
    hub = hub_for(endpoint)
    listener = hub.listen_async()
    check = sync_to_async(released(wanted_update))
    keepalive: float = endpoint.settings.STREAM_KEEPALIVE_SECONDS
    try:
        await sync_to_async(release_request_connections)()
        yield KEEPALIVE  # the stream is open: the client may now make changes and hear of them
        while True:
            try:
                uri = await asyncio.wait_for(listener[1].get(), keepalive)
            except asyncio.TimeoutError:  # not TimeoutError before Python 3.11
                if await check(endpoint, session_id, "", access) is None:
                    return
                yield KEEPALIVE
                continue
            wanted = await check(endpoint, session_id, uri, access)
            if wanted is None:
                return
            if wanted:
                yield sse_event(update_message(uri))
    finally:
        hub.leave(listener)
        await sync_to_async(limit.release)()


def sync_updates(
    endpoint: EndpointLike, session_id: str, access: StreamAccess, limit: StreamLimit
) -> Iterator[bytes]:
    hub = hub_for(endpoint)
    listener = hub.listen_sync()
    check = released(wanted_update)
    keepalive: float = endpoint.settings.STREAM_KEEPALIVE_SECONDS
    try:
        yield KEEPALIVE
        while True:
            try:
                uri = listener.get(timeout=keepalive)
            except queue.Empty:
                if check(endpoint, session_id, "", access) is None:
                    return
                yield KEEPALIVE
                continue
            wanted = check(endpoint, session_id, uri, access)
            if wanted is None:
                return
            if wanted:
                yield sse_event(update_message(uri))
    finally:
        hub.leave(listener)
        limit.release()
