"""The product's request path for a tool call: its middleware, its URL resolution.

A tool call is the REST request the product would have served, so the inner request goes
through what a REST request goes through before and after its view: the product's
``MIDDLEWARE`` (a tenant read from the path, row scoping switched on, a per-request
``request.urlconf``, a refusal by path), then URL resolution as Django does it, then the
view middleware, the view, the exception and template-response middleware, and the
response middleware on the way out. One thing differs: the view the URL resolves to is
answered by the tool's subclass of it (:func:`~mcp_endpoint.rest_framework.calling.
tool_view_class`), with the same args and kwargs, so the caller's credential reaches the
view as an init argument and never as an attribute of the request.

:class:`ToolRequestHandler` is Django's :class:`~django.core.handlers.base.BaseHandler`
with two differences. It loads a chosen list of middleware (the product's, less those
that make no sense for a request made inside another: :data:`ALWAYS_SKIPPED` and
``MCP_ENDPOINT["TOOL_MIDDLEWARE_SKIP"]``), always in the synchronous mode (a tool runs in a
thread, under ASGI too; an async-only middleware is adapted as Django adapts it). And an
exception that no middleware turned into an answer leaves the chain as it is, instead of
becoming a 500 page: an integrity error is then the tool's ``conflict``, an outage the
endpoint's 503, anything else the endpoint's one logged ``internal_error``. The
exceptions Django answers with a 4xx (``Http404``, ``PermissionDenied``, ``BadRequest``,
``SuspiciousOperation``) get the answer Django gives them, through the product's
``handler404``/``handler403``/``handler400``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import wraps
from typing import Any, cast

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.conf import settings
from django.core.exceptions import (
    BadRequest,
    ImproperlyConfigured,
    MiddlewareNotUsed,
    PermissionDenied,
    SuspiciousOperation,
)
from django.core.handlers.base import BaseHandler
from django.core.handlers.exception import response_for_exception
from django.http import Http404, HttpRequest, HttpResponseBase
from django.http.multipartparser import MultiPartParserError
from django.urls import ResolverMatch, get_urlconf, set_urlconf
from django.utils.module_loading import import_string

from mcp_endpoint.tools import ToolError

# Middleware a tool call never runs, whatever the product lists: each has done its work on
# the MCP request the call is part of, or has none to do on a request whose answer is read
# by the tool and never sent.
ALWAYS_SKIPPED = frozenset(
    {
        # An outage met inside a call is answered by the endpoint (503, Retry-After).
        "mcp_endpoint.outages.ServiceUnavailableMiddleware",
        # CORS headers go on the MCP answer; the inner answer is never sent.
        "corsheaders.middleware.CorsMiddleware",
        # Static files: never a tool's URL.
        "whitenoise.middleware.WhiteNoiseMiddleware",
    }
)

# The inner request shares the MCP request's session, which that request saves once; an
# MCP request made without the product's middleware (a test's) lets it run.
SESSION_MIDDLEWARE = "django.contrib.sessions.middleware.SessionMiddleware"

# Exceptions Django answers with a 4xx page (``response_for_exception``).
ANSWERED_EXCEPTIONS = (Http404, PermissionDenied, BadRequest, SuspiciousOperation)


@dataclass(frozen=True)
class ToolView:
    """The view that answers one call, and the routed view it stands in for."""

    view: Callable[..., HttpResponseBase]
    callback: Any
    path: str


_current: ContextVar[ToolView | None] = ContextVar("mcp_endpoint_tool_view", default=None)


def same_view(resolved: Any, callback: Any) -> bool:
    """Whether the view a URL resolved to is ``callback``: the same function, or the same
    view class with the same actions (the router's URLs included in a second URLconf)."""
    if resolved is callback:
        return True
    cls = getattr(callback, "cls", None)
    return (
        cls is not None
        and getattr(resolved, "cls", None) is cls
        and routed_actions(resolved) == routed_actions(callback)
    )


def routed_actions(callback: Any) -> dict[str, str] | None:
    """A viewset view's method-to-action map, less the ``head`` that DRF's view adds to it
    for ``get`` the first time it serves a request (a view that has served one and one
    that has not route the same actions)."""
    actions = getattr(callback, "actions", None)
    if not isinstance(actions, dict):
        return actions
    return {
        method: action
        for method, action in actions.items()
        if not (method == "head" and action == actions.get("get"))
    }


def answering_4xx(
    get_response: Callable[[HttpRequest], Any], *, is_async: bool = False
) -> Callable[[HttpRequest], Any]:
    """``get_response`` (a coroutine function when ``is_async``) with the exceptions Django
    answers with a 4xx turned into that answer; every other exception goes on up (see the
    module's docstring)."""
    if is_async or iscoroutinefunction(get_response):

        @wraps(get_response)
        async def inner_async(request: HttpRequest) -> Any:
            try:
                return await get_response(request)
            except (*ANSWERED_EXCEPTIONS, MultiPartParserError) as exc:
                return await sync_to_async(response_for_exception, thread_sensitive=False)(
                    request, exc
                )

        return inner_async

    @wraps(get_response)
    def inner(request: HttpRequest) -> Any:
        try:
            return get_response(request)
        except (*ANSWERED_EXCEPTIONS, MultiPartParserError) as exc:
            return response_for_exception(request, exc)

    return inner


class ToolRequestHandler(BaseHandler):
    """Django's request handler for tool calls, over a chosen list of middleware."""

    def __init__(self, middleware: Sequence[str]) -> None:
        self.middleware = tuple(middleware)
        self.load_middleware()

    def load_middleware(self, is_async: bool = False) -> None:
        """The lists ``BaseHandler`` reads, from :attr:`middleware` (in the order Django
        loads ``MIDDLEWARE``), every one in the synchronous mode."""
        self._view_middleware: list[Any] = []
        self._template_response_middleware: list[Any] = []
        self._exception_middleware: list[Any] = []
        # BaseHandler's own: resolve, view middleware, the view, exception and
        # template-response middleware (the stubs do not declare it).
        handler: Callable[..., Any] = answering_4xx(self._get_response)  # type: ignore[attr-defined]
        handler_is_async = False
        for path in reversed(self.middleware):
            factory = import_string(path)
            if not getattr(factory, "sync_capable", True) and not getattr(
                factory, "async_capable", False
            ):
                raise ImproperlyConfigured(
                    f"Middleware {path} must have at least one of sync_capable/async_capable "
                    "set to True."
                )
            # A middleware that can run synchronously does; an async-only one is adapted.
            is_async_middleware = not getattr(factory, "sync_capable", True)
            adapted = self.adapt_method_mode(
                is_async_middleware, handler, handler_is_async, name=f"middleware {path}"
            )
            try:
                instance = factory(adapted)
            except MiddlewareNotUsed:
                continue
            if instance is None:
                raise ImproperlyConfigured(f"Middleware factory {path} returned None.")
            if hasattr(instance, "process_view"):
                self._view_middleware.insert(
                    0, self.adapt_method_mode(False, instance.process_view)
                )
            if hasattr(instance, "process_template_response"):
                self._template_response_middleware.append(
                    self.adapt_method_mode(False, instance.process_template_response)
                )
            if hasattr(instance, "process_exception"):
                self._exception_middleware.append(
                    self.adapt_method_mode(False, instance.process_exception)
                )
            handler = answering_4xx(instance, is_async=is_async_middleware)
            handler_is_async = is_async_middleware
        self._middleware_chain = self.adapt_method_mode(False, handler, handler_is_async)

    def resolve_request(self, request: HttpRequest) -> Any:
        """Resolve as Django does (``request.urlconf`` when a middleware set one), then
        answer with the tool's view when the URL resolves to the view it stands for."""
        match: ResolverMatch = super().resolve_request(request)
        tool = _current.get()
        if tool is None:  # pragma: no cover - only ever called inside answer()
            raise RuntimeError("ToolRequestHandler.resolve_request outside a call")
        if not same_view(match.func, tool.callback):
            # The product routes this URL elsewhere for this request (a per-request
            # URLconf): the REST request would not reach the action's view.
            raise ToolError(
                f"The product routes {tool.path} to another view for this request "
                f"({match.view_name or match.route}), so the action cannot run here",
                code="not_found",
            )
        return tool.view, match.args, match.kwargs

    def answer(self, request: HttpRequest, tool: ToolView) -> HttpResponseBase:
        """The product's answer to ``request``, its view answered by ``tool``."""
        with _calling(tool):
            response = self._middleware_chain(request)
        return cast(HttpResponseBase, response)


@contextmanager
def _calling(tool: ToolView) -> Iterator[None]:
    token = _current.set(tool)
    # The URLconf of the MCP request's thread is put back afterwards: the inner request
    # starts from ROOT_URLCONF, as any request does, and may set its own.
    previous = get_urlconf()
    set_urlconf(None)
    try:
        yield
    finally:
        set_urlconf(previous)
        _current.reset(token)


_handlers: dict[tuple[str, ...], ToolRequestHandler] = {}
_lock = threading.Lock()


def tool_middleware(skip: Sequence[str] = (), *, shares_session: bool) -> tuple[str, ...]:
    """The product's ``MIDDLEWARE`` a tool call runs: all but :data:`ALWAYS_SKIPPED` and
    ``skip``, and the session middleware when the inner request shares the MCP request's
    session."""
    skipped = ALWAYS_SKIPPED | set(skip) | ({SESSION_MIDDLEWARE} if shares_session else set())
    return tuple(m for m in settings.MIDDLEWARE if m not in skipped)


def handler_for(middleware: tuple[str, ...]) -> ToolRequestHandler:
    """The handler over ``middleware``, loaded once per process (the middleware's
    ``__init__`` runs once, as it does for the product's own handler)."""
    handler = _handlers.get(middleware)
    if handler is None:
        with _lock:
            handler = _handlers.get(middleware)
            if handler is None:
                handler = _handlers[middleware] = ToolRequestHandler(middleware)
    return handler
