"""Request-scoped SSE: a tool call's progress and log messages, then its answer, as they happen.

When the client accepts ``text/event-stream`` and the call's client hears it as it runs (it
carries a ``progressToken``, or runs in a legacy session whose client answers requests),
the call runs in a worker thread and talks to the view through a :class:`Channel`. A call
that can only log (a legacy call, or a 2026-07-28 one whose ``_meta`` names a level) runs
in the request thread instead; its messages are kept (:class:`Buffered`) and, when there
are some, sent on the answer's stream ahead of it.

For a call in the worker thread, the view waits for the first thing the call produces: the
answer itself (then it is plain JSON, with the usual status) or a notification (then the
answer becomes an SSE stream that carries that notification, the ones after it, and the
answer last). A call that stays silent past the keep-alive interval commits to SSE too, so
comment lines can keep the connection open through proxies.

The stream is produced by a plain generator under WSGI and by an async generator under
ASGI, so neither server buffers it. A client that closes the stream cancels the call: the
next notification the tool reports raises :class:`StreamClosed` inside it, which rolls its
transaction back, and nothing more is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async
from django.db import close_old_connections
from django.http import HttpRequest

from mcp_endpoint import client_logging, outages, sessions, tracing
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.database import release_request_connections, released
from mcp_endpoint.event_store import RETRY_MS, EventStore, StoredEvent, event_id
from mcp_endpoint.limits import CredentialLimit
from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.versions import LOG_LEVELS, META_LOG_LEVEL
from mcp_endpoint.responses import KEEPALIVE, sse_event
from mcp_endpoint.tools import ToolError

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.protocol.server import RequestContext

logger = logging.getLogger("mcp_endpoint.streaming")

# Client capabilities that let a legacy session's call send requests to the client.
CLIENT_REQUEST_CAPABILITIES = ("elicitation", "sampling", "roots")
DEFAULT_LEGACY_LOG_LEVEL = "info"

# Tool errors of a call that cannot ask its client now (see Channel.request, Unstreamed).
TOO_MANY_WAITING = "too_many_waiting"
STREAM_CAPACITY = "stream_capacity"

# A resumed stream polls the cache: quickly at first, then at most this often.
POLL_FIRST = 0.02
POLL_MAX = 0.25

MESSAGE = "message"
DONE = "done"
CLOSE = "close"
# What the call produced, and the event id it has on a resumable stream.
Event = tuple[str, Any, str | None]


class StreamClosed(BaseException):
    """The client closed the stream: the call is cancelled.

    A ``BaseException``, as ``asyncio.CancelledError`` and ``GeneratorExit`` are, because
    it must cross code that turns every ``Exception`` into an answer: a tool's own
    ``except Exception``, the tool boundary (which makes it a tool error), and, for a
    viewset action, a product's DRF ``EXCEPTION_HANDLER`` that answers every exception and
    the ``convert_exception_to_response`` that wraps each of the product's middleware
    (both make it a 500 response). Any of
    those would make a cancelled call look finished and commit its transaction; as a
    ``BaseException`` it reaches :func:`run_call`, and the transaction is rolled back on
    the way.
    """


class StreamPool:
    """The threads that run streamed calls: a pool rather than a thread per call, so that a
    worker's database connections are reused under CONN_MAX_AGE like a request thread's.

    Started with the first streamed call, not at import (a management command or a worker
    that never streams starts no thread). A call is only ever handed to an idle thread: one
    that would have to queue behind calls waiting on their clients is refused instead
    (``reserve`` says so), so the pool never stalls a call.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.executor: ThreadPoolExecutor | None = None
        self.idle: threading.BoundedSemaphore | None = None

    def reserve(self) -> bool:
        """Hold an idle thread for the next :meth:`run`; False when none is idle."""
        with self.lock:
            if self.executor is None:
                size: int = mcp_settings.STREAM_POOL_SIZE
                self.executor = ThreadPoolExecutor(size, thread_name_prefix="mcp-stream")
                self.idle = threading.BoundedSemaphore(size)
        assert self.idle is not None
        return self.idle.acquire(blocking=False)

    def cancel(self) -> None:
        """Let go of the thread :meth:`reserve` held, unused."""
        assert self.idle is not None
        self.idle.release()

    def run(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the thread :meth:`reserve` held, then let it go."""
        assert self.executor is not None and self.idle is not None
        idle = self.idle

        def reserved() -> None:
            try:
                work()
            finally:
                idle.release()

        self.executor.submit(reserved)

    def shutdown(self) -> None:
        """Wait for the running calls, then end the threads (and their database
        connections); the next streamed call starts the pool anew."""
        with self.lock:
            executor, self.executor, self.idle = self.executor, None, None
        if executor is not None:
            executor.shutdown(wait=True)


stream_pool = StreamPool()


def streamed_calls(endpoint: EndpointLike, context: RequestContext) -> CredentialLimit:
    """The cap on the streamed calls of the caller's credential."""
    limit: int = endpoint.settings.STREAMED_CALLS_PER_CREDENTIAL
    return CredentialLimit(endpoint, "streamed-calls", principal(context), limit)


def pending_requests(
    endpoint: EndpointLike, context: RequestContext, wait: float
) -> CredentialLimit:
    """The cap on the requests to the client that the credential's calls await."""
    limit: int = endpoint.settings.PENDING_CLIENT_REQUESTS_PER_CREDENTIAL
    # A count left by a process that died waiting outlives the longest wait only briefly.
    return CredentialLimit(
        endpoint, "client-requests", principal(context), limit, timeout=int(wait) + 60
    )


def client_request_timeout(endpoint: EndpointLike, context: RequestContext) -> float:
    """How long a call waits for its client's answer.

    Under a WSGI server that serves one request per process at a time (``wsgi.multithread``
    false, as gunicorn's sync workers), the waiting call holds the whole worker, which
    the server kills past its own timeout: the wait ends before that.
    """
    timeout: float = endpoint.settings.CLIENT_REQUEST_TIMEOUT
    meta = getattr(context.transport, "META", None)
    if isinstance(meta, dict) and meta.get("wsgi.multithread") is False:
        single: float = endpoint.settings.SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT
        timeout = min(timeout, single)
    return timeout


def can_request(context: RequestContext) -> bool:
    """Whether a streamed answer to this call could carry requests to its client."""
    return (
        not context.modern
        and context.session is not None
        and any(c in context.client_capabilities for c in CLIENT_REQUEST_CAPABILITIES)
    )


class Channel:
    """How a streamed call reaches its client: notifications and, in a session, requests."""

    def __init__(self, endpoint: EndpointLike, context: RequestContext) -> None:
        self.endpoint = endpoint
        self.context = context
        self.events: queue.Queue[Event] = queue.Queue()
        self.closed = threading.Event()
        # Set when the server closed the stream for the client to resume it (polling).
        self.detached = threading.Event()
        # In a legacy session the stream is resumable: its events carry ids and are kept.
        self.store: EventStore | None = None
        self.stream_id: str | None = None
        self.seq = 0
        if not context.modern and context.session is not None:
            self.store = EventStore(endpoint)
            self.stream_id = self.store.open(context.session.id)
        self.can_request = can_request(context)

    # -- what the call sends --------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        if self.closed.is_set():
            raise StreamClosed()
        event_id = self.remember(message, final=False)
        if not self.detached.is_set():
            self.events.put((MESSAGE, message, event_id))

    def remember(self, message: dict[str, Any] | None, *, final: bool) -> str | None:
        """Keep the event for a client that resumes; its id (None when not resumable)."""
        if self.store is None or self.stream_id is None:
            return None
        self.seq += 1
        return self.store.append(self.stream_id, self.seq, message, final=final)

    def close_stream(self) -> bool:
        """End the client's stream now while the call runs on (see ``Context.close_stream``)."""
        if self.store is None:
            return False
        self.detached.set()
        self.events.put((CLOSE, None, None))
        return True

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        token = self.context.progress_token
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message:
            params["message"] = message
        self.notify("notifications/progress", params)

    def log(self, level: str, data: Any, logger: str = "mcp") -> None:
        if sends_level(self.endpoint, self.context, level):
            self.notify("notifications/message", {"level": level, "logger": logger, "data": data})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request to the client (legacy session only) and wait for its answer.

        The client posts its answer to the endpoint, to whichever worker, with the session's
        id; it reaches this call through the cache (see :mod:`mcp_endpoint.sessions`).
        """
        session = self.context.session
        if not self.can_request or session is None:
            raise ToolError("This client cannot be asked for input here.", code="input_unavailable")
        timeout = client_request_timeout(self.endpoint, self.context)
        pending = pending_requests(self.endpoint, self.context, timeout)
        if not pending.acquire():
            # Refused before anything is sent: the client is not asked a question whose
            # answer nobody would wait for.
            raise ToolError(
                f"Not done: {pending.limit} calls of this credential are waiting for the "
                "client's answer already, the most there may be. Answer or cancel those, "
                "then call again.",
                code=TOO_MANY_WAITING,
                limit=pending.limit,
            )
        try:
            return self.wait_for_answer(session, method, params, timeout)
        finally:
            pending.release()

    def wait_for_answer(
        self, session: Any, method: str, params: dict[str, Any], timeout: float
    ) -> dict[str, Any]:
        request_id = f"mcp-{secrets.token_urlsafe(12)}"
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        store = sessions.SessionStore(self.endpoint)
        deadline = time.monotonic() + timeout
        pause = 0.02
        while True:
            if self.closed.is_set():
                raise StreamClosed()
            reply = store.take_reply(session, request_id)
            if reply is not None:
                break
            if time.monotonic() > deadline:
                raise ToolError(
                    f"The client did not answer {method} within {timeout:g} s.",
                    code="client_timeout",
                )
            time.sleep(pause)
            pause = min(pause * 1.5, 0.25)
        error = reply.get("error")
        if isinstance(error, dict):
            raise ToolError(
                f"The client refused {method}: {error.get('message', 'no reason given')}",
                code="client_error",
                client_error=error,
            )
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    # -- what the view reads --------------------------------------------------------------

    def finish(self, answer: dict[str, Any] | None) -> None:
        try:
            event_id = self.remember(answer, final=True)
        except Exception:  # the event store's cache is out: the answer, not resumable
            logger.warning(
                "could not keep the answer for a resumed stream",
                exc_info=True,
                extra=client_logging.SERVER_ONLY,
            )
            event_id = None
        self.events.put((DONE, answer, event_id))

    def priming(self) -> bytes:
        """The event a resumable stream starts with: an id to resume from, and ``retry``."""
        if self.stream_id is None:
            return b""
        return sse_event(None, event_id(self.stream_id, 0), retry_ms=RETRY_MS)

    def next_event(self, timeout: float) -> Event | None:
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def release(self) -> None:
        """The client's stream ended: the call is cancelled, unless the server ended it."""
        if not self.detached.is_set():
            self.closed.set()


class Unstreamed:
    """In place of a channel, for a call that wanted to stream but could not: its
    credential runs as many streamed calls as it may, or no thread of the pool is idle.

    The call runs in the request thread and answers as plain JSON; its progress and log
    messages go nowhere. A request to its client is refused with a tool error that says
    why, rather than the "this client cannot be asked" of a call that never streams: this
    client can be asked, later.
    """

    def __init__(self, endpoint: EndpointLike, context: RequestContext, reason: str) -> None:
        self.endpoint = endpoint
        self.context = context
        self.reason = reason
        self.closed = threading.Event()
        self.can_request = can_request(context)

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        pass

    def log(self, level: str, data: Any, logger: str = "mcp") -> None:
        pass

    def close_stream(self) -> bool:
        return False

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise ToolError(
            f"Not done: {self.reason}, so this call cannot ask the client for input now. "
            "Let those calls finish, then call again.",
            code=STREAM_CAPACITY,
        )


def log_threshold(endpoint: EndpointLike, context: RequestContext) -> str | None:
    """The lowest level to send, or None for no log messages at all.

    A 2026-07-28 request gets log messages only when its ``_meta`` names a level; a legacy
    one at the level its session set (``logging/setLevel``), ``info`` by default.
    """
    if not endpoint.settings.LOGGING:
        return None
    if context.modern:
        return context.log_level
    return context.log_level or DEFAULT_LEGACY_LOG_LEVEL


def sends_level(endpoint: EndpointLike, context: RequestContext, level: str) -> bool:
    """Whether a log message at ``level`` goes to the call's client. Asked per message:
    a 2026-07-28 request's level is known once the request is parsed."""
    threshold = log_threshold(endpoint, context)
    if threshold is None or level not in LOG_LEVELS:
        return False
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)


def accepts_event_stream(request: HttpRequest) -> bool:
    accept = request.META.get("HTTP_ACCEPT", "")
    return any(part.split(";")[0].strip() == "text/event-stream" for part in accept.split(","))


# How a request's answer is sent (see :func:`delivery`).
PLAIN = "plain"
BUFFERED = "buffered"
LIVE = "live"


def delivery(
    endpoint: EndpointLike, request: HttpRequest, message: Any, context: RequestContext
) -> str:
    """How this request's answer is sent: :data:`LIVE` for a tool call whose client hears
    it as it runs (it carries a ``progressToken``, or its legacy session's client can be
    asked for input, or its tool may use the stream itself: :meth:`Tool.speaks`);
    :data:`BUFFERED` for one that can only log (its records are kept and sent ahead of
    the answer, on the answer's own stream, when there are some);
    :data:`PLAIN` otherwise.

    A call that can only log runs in the request thread: handing it to the stream pool
    would cost every such call (every legacy call of a client that reads streams) a
    thread hand-off and the credential's count of streamed calls, for records that most
    calls never emit.
    """
    if not endpoint.settings.STREAMING or not isinstance(message, dict):
        return PLAIN
    if message.get("method") != "tools/call" or "id" not in message:
        return PLAIN
    if not accepts_event_stream(request):
        return PLAIN
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and meta.get("progressToken") is not None:
        return LIVE
    if can_request(context):
        return LIVE
    if endpoint.settings.LOGGING and (
        not context.modern or (isinstance(meta, dict) and meta.get(META_LOG_LEVEL))
    ):
        call = params if isinstance(params, dict) else {}
        name = call.get("name")
        tool = endpoint.tools.get(name) if isinstance(name, str) else None
        if tool is not None and tool.speaks(call.get("arguments") or {}, endpoint.tools):
            return LIVE  # it may close its stream for the client to resume, say
        return BUFFERED
    return PLAIN


class Buffered:
    """In place of a channel, for a call that can only log (:data:`BUFFERED`): it runs
    in the request thread, and what it says (log messages, a tools list that changed)
    is kept in ``context.notifications`` in the order said, for the view to send ahead
    of the answer. It cannot ask its client anything, as a call that never streams."""

    can_request = False

    def __init__(self, endpoint: EndpointLike, context: RequestContext) -> None:
        self.endpoint = endpoint
        self.context = context
        self.closed = threading.Event()  # never set: nobody closes a stream not yet open

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.context.notifications.append({"jsonrpc": "2.0", "method": method, "params": params})

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        pass  # no progressToken: nobody asked (a call with one is LIVE)

    def log(self, level: str, data: Any, logger: str = "mcp") -> None:
        if sends_level(self.endpoint, self.context, level):
            self.notify("notifications/message", {"level": level, "logger": logger, "data": data})

    def close_stream(self) -> bool:
        return False

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise ToolError("This client cannot be asked for input here.", code="input_unavailable")


@contextlib.contextmanager
def buffering(endpoint: EndpointLike, context: RequestContext) -> Iterator[None]:
    """Run the block (the call, in the request thread) with a :class:`Buffered` channel:
    the host's records of the call are kept with its own log messages."""
    channel = Buffered(endpoint, context)
    context.channel = channel
    client_logging.install(endpoint.settings.CLIENT_LOGGERS)
    with client_logging.sending_to(channel):
        yield


def start(
    endpoint: EndpointLike, message: dict[str, Any], context: RequestContext
) -> Channel | None:
    """Run the call in the stream pool; the transport reads what it produces from the
    channel. None when the call cannot stream now (its credential holds
    ``STREAMED_CALLS_PER_CREDENTIAL`` streamed calls, or no thread of the pool is idle):
    ``context.channel`` is then an :class:`Unstreamed` and the caller answers the call
    itself, as plain JSON, in the request thread.
    """
    held = streamed_calls(endpoint, context)
    if not held.acquire():
        reason = f"this credential runs {held.limit} streamed calls already, the most it may"
        context.channel = Unstreamed(endpoint, context, reason)
        return None
    if not stream_pool.reserve():
        held.release()
        reason = "every thread that runs streamed calls on this server is busy"
        context.channel = Unstreamed(endpoint, context, reason)
        return None
    try:
        channel = Channel(endpoint, context)
    except BaseException:
        stream_pool.cancel()
        held.release()
        raise
    context.channel = channel
    if endpoint.settings.LOGGING:
        client_logging.install(endpoint.settings.CLIENT_LOGGERS)
    stream_pool.run(tracing.carried(lambda: run_call(endpoint, message, context, channel, held)))
    return channel


def run_call(
    endpoint: EndpointLike,
    message: dict[str, Any],
    context: RequestContext,
    channel: Channel,
    held: CredentialLimit,
) -> None:
    """The worker's side: answer the message, whatever happens, then release the database
    and the credential's hold on the pool."""
    answer: dict[str, Any] | None = None
    close_old_connections()
    try:
        with client_logging.sending_to(channel if endpoint.settings.LOGGING else None):
            answer = endpoint.handle(message, context)
    except StreamClosed:
        logger.info("tool call %s cancelled: the client closed the stream", message.get("id"))
    except outages.ServiceUnavailable as exc:
        answer = outages.error_body(message.get("id"), exc, endpoint.settings)
    except Exception:
        logger.exception("MCP request failed")
        answer = jsonrpc.error(message.get("id"), jsonrpc.INTERNAL_ERROR, "Internal error")
    finally:
        # The stream ends with the answer whatever else fails here: a cache that went away
        # meanwhile must not leave the client on keep-alives with no answer.
        try:
            close_old_connections()
            held.release()
        finally:
            channel.finish(answer)


def _frame(event: Event | None) -> tuple[bytes, bool]:
    """An event as bytes, and whether it ends the stream."""
    if event is None:
        return KEEPALIVE, False
    kind, payload, event_id = event
    if kind == CLOSE:
        return b"", True
    if kind == DONE:
        return (sse_event(payload, event_id) if payload is not None else b""), True
    return sse_event(payload, event_id), False


def frames(
    channel: Channel, first: Event | None, keepalive: float, *, asynchronous: bool
) -> Iterator[bytes] | AsyncIterator[bytes]:
    """The rest of the stream after ``first``: an async iterator under ASGI, so no server
    buffers it and no thread is held while the call is silent."""
    if asynchronous:
        return async_events(channel, first, keepalive)
    return sync_events(channel, first, keepalive)


def _opening(channel: Channel, first: Event | None) -> tuple[bytes, bool]:
    """What a stream sends at once: the priming event when it is resumable, and ``first``
    (in one write, as the view has both in hand); and whether that ends the stream."""
    data, done = _frame(first)
    return channel.priming() + data, done


# The two loops differ only in how they wait for the next event.


def sync_events(channel: Channel, first: Event | None, keepalive: float) -> Iterator[bytes]:
    try:
        data, done = _opening(channel, first)
        yield data
        while not done:
            data, done = _frame(channel.next_event(keepalive))
            if data:
                yield data
    finally:
        # Reached on the last event and when the server closes the iterator (client gone).
        channel.release()


async def async_events(
    channel: Channel, first: Event | None, keepalive: float
) -> AsyncIterator[bytes]:
    wait = sync_to_async(channel.next_event, thread_sensitive=False)
    try:
        # The call runs in a thread of its own; the request's connection would sit idle.
        await sync_to_async(release_request_connections)()
        data, done = _opening(channel, first)
        yield data
        while not done:
            data, done = _frame(await wait(keepalive))
            if data:
                yield data
    finally:
        channel.release()


# -- resuming a stream (GET with Last-Event-ID) ------------------------------------------------


def resume(
    endpoint: EndpointLike, session_id: str, last_event_id: str, *, asynchronous: bool
) -> Iterator[bytes] | AsyncIterator[bytes]:
    """The events after ``last_event_id``, then the rest of the stream until its answer.

    Raises :class:`~mcp_endpoint.event_store.UnknownStream` when the id names no stream of
    this session. Follows the stream through the cache, so any worker can serve it; it ends
    with the answer, or when the stream has produced nothing for ``STREAM_RESUME_SECONDS``.
    """
    store = EventStore(endpoint)
    stream_id, seq = store.locate(last_event_id, session_id)
    keepalive: float = endpoint.settings.STREAM_KEEPALIVE_SECONDS
    if asynchronous:
        return async_replay(store, stream_id, seq, keepalive)
    return sync_replay(store, stream_id, seq, keepalive)


def _replay_poll(
    events: list[StoredEvent],
    alive: bool,
    seq: int,
    waited: float,
    quiet_since: float,
    keepalive: float,
) -> tuple[bytes, int, float | None]:
    """One poll of a resumed stream, the same for both loops below.

    From the events after ``seq`` and whether the stream was alive before they were read:
    what to send (``b""`` for nothing), the sequence number to read after next, and how long
    to wait before that (0 for at once, None when the stream is over). ``waited`` is the last
    wait, which a quiet stream lengthens.
    """
    if events:
        data = b"".join(sse_event(e.message, e.event_id) for e in events if e.message is not None)
        if any(e.final for e in events):
            return data, seq, None
        return data, events[-1].seq, 0.0
    if not alive:
        return b"", seq, None
    wait = min(waited * 1.5, POLL_MAX) if waited else POLL_FIRST
    if time.monotonic() - quiet_since >= keepalive:
        return KEEPALIVE, seq, wait
    return b"", seq, wait


# The two loops differ only in how they read the store and wait. Whatever they send resets
# the keep-alive clock, once it is sent.


def sync_replay(store: EventStore, stream_id: str, seq: int, keepalive: float) -> Iterator[bytes]:
    wait: float | None = 0.0
    quiet_since = time.monotonic()
    while wait is not None:
        # Asked before the events are read, so a final event written in between is not lost.
        alive = store.alive(stream_id)
        data, seq, wait = _replay_poll(
            store.after(stream_id, seq), alive, seq, wait, quiet_since, keepalive
        )
        if data:
            yield data
            quiet_since = time.monotonic()
        if wait:
            time.sleep(wait)


async def async_replay(
    store: EventStore, stream_id: str, seq: int, keepalive: float
) -> AsyncIterator[bytes]:
    # The executor's threads are shared and live on: what they open (a database cache) is
    # handed back after each read.
    after = sync_to_async(released(store.after), thread_sensitive=False)
    is_alive = sync_to_async(released(store.alive), thread_sensitive=False)
    wait: float | None = 0.0
    quiet_since = time.monotonic()
    await sync_to_async(release_request_connections)()
    while wait is not None:
        alive = await is_alive(stream_id)
        data, seq, wait = _replay_poll(
            await after(stream_id, seq), alive, seq, wait, quiet_since, keepalive
        )
        if data:
            yield data
            quiet_since = time.monotonic()
        if wait:
            await asyncio.sleep(wait)
