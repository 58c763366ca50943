"""An ASGI handler that serves a request to an MCP endpoint in one thread hand-off.

Django's :class:`~django.core.handlers.asgi.ASGIHandler` runs a synchronous stack (the
``request_started`` signal's receivers, each run of synchronous middleware, a synchronous
middleware's hooks such as ``process_view``, the view, ``response.close()`` and the
``request_finished`` receivers) as several hops between the event loop and a thread, each
with its own context copy and future: about six for one request to ``/mcp`` in the demo,
several times the CPU of the same request under WSGI (docs/performance.md).

:class:`EndpointASGIHandler` is that handler, with one difference for a request whose path
resolves to an MCP endpoint's view: what a WSGI worker would do for it
(``request_started``, the synchronous middleware chain, the view, ``response.close()``)
runs in ONE ``sync_to_async`` call, on a thread of the handler's own pool, and the finished
response is then sent from the event loop. A streaming response (an SSE stream) is
iterated on the event loop as Django's handler does, with the client's disconnect
cancelling it, and closed afterwards. Every other path goes through Django's handler
unchanged. A host serves it with::

    # asgi.py
    from mcp_endpoint.asgi import get_asgi_application

    application = get_asgi_application()

Why a pool and not ``thread_sensitive=True``: within the ``ThreadSensitiveContext`` that
Django's handler opens per request, a thread-sensitive call starts a new thread for the
request and joins it at the end, which costs more CPU than every hand-off together (about
1.5 ms of the 2.5 ms a ``ping`` costs: docs/performance.md). One hop needs no thread
affinity between hops; a pool thread is reused as a WSGI server's threads are, and keeps
its database connections per thread as they do (``request_started`` and
``request_finished`` run in it, so ``CONN_MAX_AGE`` applies as under WSGI).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import django
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import FileResponse, HttpResponse, StreamingHttpResponse
from django.urls import Resolver404, get_resolver, set_script_prefix

from mcp_endpoint.database import release_request_connections

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping
    from typing import IO

    from django.http.response import HttpResponseBase

    Scope = dict[str, Any]
    Receive = Callable[[], Awaitable[Mapping[str, Any]]]
    Send = Callable[[Mapping[str, Any]], Awaitable[None]]

# As many requests to an endpoint at once as a threaded WSGI worker of this many threads.
DEFAULT_MAX_THREADS = 64
# Paths seen, resolved once each: clients send the same few, but any client can send any
# path, so the memory of them is bounded.
RESOLVED_PATHS = 1024


class SyncMiddlewareChain(BaseHandler):
    """The host's ``MIDDLEWARE`` loaded as a WSGI handler loads it: synchronous middleware
    called directly, a synchronous view called directly (an async-only middleware or view
    is adapted, as under WSGI)."""

    def __init__(self) -> None:
        super().__init__()
        self.load_middleware(is_async=False)


class EndpointASGIHandler(ASGIHandler):
    """Django's ASGI handler, serving requests to MCP endpoints in one thread hand-off.

    ``max_threads`` bounds the pool those requests run on: at most that many run their
    synchronous part at once in this process, as a threaded WSGI worker's thread count
    does (the others wait for a thread). ``endpoint_path()`` decides which requests take
    that way; a subclass may override it (for instance for an endpoint that a middleware's
    ``request.urlconf`` mounts).
    """

    def __init__(self, *, max_threads: int = DEFAULT_MAX_THREADS) -> None:
        super().__init__()
        self.sync_chain = SyncMiddlewareChain()
        self.executor = ThreadPoolExecutor(max_threads, thread_name_prefix="mcp-endpoint")

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.endpoint_path(scope):
            await super().handle(scope, receive, send)
            return
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(script_prefix(scope))
        try:
            respond = sync_to_async(self.respond, thread_sensitive=False, executor=self.executor)
            response = await respond(scope, body_file)
            if response.streaming:
                try:
                    await self.send_stream(response, receive, send)
                finally:
                    await sync_to_async(response.close, thread_sensitive=True)()
            else:
                await send_answer(response, send, self.chunk_size)
        finally:
            body_file.close()

    def endpoint_path(self, scope: Scope) -> bool:
        """Whether the request's path resolves, in ``ROOT_URLCONF``, to an MCP endpoint."""
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :]
        return serves_endpoint(path)

    def respond(self, scope: Scope, body_file: IO[bytes]) -> HttpResponseBase:
        """In the request's thread: the whole synchronous part of the request, as Django's
        WSGI handler runs it, and for a complete response its ``close()`` too (which sends
        ``request_finished``, closing the thread's old database connections): the body is
        already in memory, so nothing the closing releases is still needed to send it."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None  # Django gives one or the other
            response: HttpResponseBase = error_response
        else:
            response = self.sync_chain.get_response(request)
        close_as(response, self.__class__)
        if isinstance(response, FileResponse):
            # As Django's handler does: the ASGI server does its own chunking.
            response.block_size = self.chunk_size
        if response.streaming:
            # The stream's own work runs on other threads: the view's connections go back
            # now rather than stay with this pool thread while the stream lasts.
            release_request_connections()
        else:
            response.close()
        return response

    async def send_stream(self, response: HttpResponseBase, receive: Receive, send: Send) -> None:
        """Send a streaming response until it ends or the client leaves (which cancels its
        iteration, as Django's handler cancels it)."""
        sending = asyncio.create_task(send_answer(response, send, self.chunk_size))
        leaving = asyncio.create_task(disconnected(receive))
        await asyncio.wait({sending, leaving}, return_when=asyncio.FIRST_COMPLETED)
        # Both cancelled before either is awaited: a failure of one leaves no other running.
        for task in (leaving, sending):
            task.cancel()
        for task in (leaving, sending):
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def send_answer(response: HttpResponseBase, send: Send, chunk_size: int) -> None:
    """Send ``response`` as Django's ``ASGIHandler.send_response()`` sends it, without closing
    it (Django 4.2's closes the response there, in a hand-off of its own)."""
    headers = [
        (
            header.encode("ascii") if isinstance(header, str) else bytes(header),
            value.encode("latin1") if isinstance(value, str) else bytes(value),
        )
        for header, value in response.items()
    ]
    # Header case kept, as Django keeps it: some clients need e.g. Content-Type.
    headers += [
        (b"Set-Cookie", cookie.output(header="").encode("ascii").strip())
        for cookie in response.cookies.values()
    ]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    if isinstance(response, StreamingHttpResponse):
        # Through __aiter__, which maps a synchronous iterator too; aclosing() so that an
        # async generator's cleanup runs here, when the client leaves as well.
        # (Django's __aiter__ is an async generator; its stubs say only AsyncIterator.)
        async with contextlib.aclosing(aiter(response)) as parts:  # type: ignore[type-var]
            async for part in parts:
                for start in range(0, len(part), chunk_size):
                    body = part[start : start + chunk_size]
                    await send({"type": "http.response.body", "body": body, "more_body": True})
        await send({"type": "http.response.body"})
        return
    content = response.content if isinstance(response, HttpResponse) else b""
    last = max(len(content) - 1, 0) // chunk_size * chunk_size
    for start in range(0, last + 1, chunk_size):
        body = content[start : start + chunk_size]
        await send({"type": "http.response.body", "body": body, "more_body": start < last})


def script_prefix(scope: Scope) -> str:
    """The request's script prefix, as Django's handler finds it (a method before Django
    5.0, a function of ``django.core.handlers.asgi`` since)."""
    if settings.FORCE_SCRIPT_NAME:
        return str(settings.FORCE_SCRIPT_NAME)
    return str(scope.get("root_path", "") or "")


async def disconnected(receive: Receive) -> None:
    """Return once the client has gone (an ASGI server sends nothing else after the body)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def close_as(response: HttpResponseBase, handler_class: type[BaseHandler]) -> None:
    """Make ``response.close()`` send ``request_finished`` from ``handler_class``, as the
    response of Django's own handlers does (Django keeps the sender on a private attribute:
    tests/test_asgi_handler.py fails if it stops reading it)."""
    response._handler_class = handler_class  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=RESOLVED_PATHS)
def serves_endpoint(path: str) -> bool:
    """Whether ``path`` resolves, in ``ROOT_URLCONF``, to an MCP endpoint's view."""
    from mcp_endpoint.views import MCPView

    try:
        match = get_resolver().resolve(path)
    except Resolver404:
        return False
    view_class = getattr(match.func, "view_class", None)
    return isinstance(view_class, type) and issubclass(view_class, MCPView)


@receiver(setting_changed)
def forget_resolved_paths(*, setting: str, **kwargs: Any) -> None:
    if setting == "ROOT_URLCONF":
        serves_endpoint.cache_clear()


def get_asgi_application(*, max_threads: int = DEFAULT_MAX_THREADS) -> EndpointASGIHandler:
    """What ``django.core.asgi.get_asgi_application()`` is, with :class:`EndpointASGIHandler`:
    set Django up and return the handler, for a host's ``asgi.py``."""
    django.setup(set_prefix=False)
    return EndpointASGIHandler(max_threads=max_threads)
