"""The HTTP transport: status codes, headers, Origin, credential and rate limit.

A request flows view -> credential -> throttle -> protocol, and the answer comes back as
JSON. This module knows HTTP and nothing of DRF viewsets; the protocol layer it feeds knows
nothing of HTTP. :class:`MCPView` routes a request and answers its one message; the pieces
it is made of (policies, origins, the credential, session streams, batches) are in
:mod:`mcp_endpoint.transport`.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from mcp_endpoint import outages, sessions, streaming, throttling
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.headers import modern_header_problem
from mcp_endpoint.protocol.server import RequestContext
from mcp_endpoint.protocol.versions import (
    MODERN,
    era_of,
)
from mcp_endpoint.responses import (
    answer_response,
    empty_response,
    error_response,
    event_stream_response,
    sse_event,
)
from mcp_endpoint.toolsets import (
    HEADER_READ_ONLY,
    HEADER_TOOLSETS,
    QUERY_READ_ONLY,
    QUERY_TOOLSETS,
    SelectionError,
    path_choice,
)
from mcp_endpoint.transport.base import declared_length, retry_after
from mcp_endpoint.transport.batches import BatchMixin
from mcp_endpoint.transport.origins import cors_allows, is_loopback, origin_is_allowed
from mcp_endpoint.transport.streams import StreamsMixin, too_many_streams

__all__ = [
    "MCPView",
    "cors_allows",
    "declared_length",
    "is_json_media_type",
    "is_loopback",
    "origin_is_allowed",
    "retry_after",
    "too_many_streams",
    "toolset_choice",
]

logger = logging.getLogger("mcp_endpoint.transport")


class MCPView(StreamsMixin, BatchMixin):
    """``POST`` JSON-RPC to an :class:`~mcp_endpoint.endpoint.Endpoint`; ``GET`` and ``DELETE``
    for sessions' streams (see :mod:`mcp_endpoint.transport` for the pieces and the policy
    attributes a subclass may set)."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        assert self.endpoint is not None
        try:
            return self.route(request)
        except Exception as exc:
            # Tools have their own boundary; this one keeps a JSON-RPC body on any other
            # fault, and tells an outage (503, logged once in a while) from a bug (500).
            kind = outages.diagnose(exc)
            if kind is not None:
                return self.unavailable(request, outages.ServiceUnavailable(kind), exc)
            logger.exception("MCP request failed")
            return error_response(
                500, jsonrpc.INTERNAL_ERROR, "Internal error", request_id=self.request_id(request)
            )

    def route(self, request: HttpRequest) -> HttpResponseBase:
        assert self.endpoint is not None
        if self.get_loopback_only() and not is_loopback(request.META.get("REMOTE_ADDR")):
            return error_response(
                403,
                jsonrpc.REQUEST_REFUSED,
                "Forbidden: this endpoint answers loopback clients only",
                request_id=self.request_id(request),
            )
        if not self.origin_allowed(request):
            return error_response(
                403,
                jsonrpc.REQUEST_REFUSED,
                "Forbidden: Origin not allowed",
                {"origin": request.META.get("HTTP_ORIGIN")},
                request_id=self.request_id(request),
            )
        if request.method == "OPTIONS":
            response = empty_response(204)
            response["Allow"] = self.allowed_methods_header(request)
            return response
        if request.method == "DELETE" and self.endpoint.settings.SESSIONS:
            return self.delete_session(request)
        if (
            request.method == "GET"
            and self.endpoint.settings.SESSIONS
            and "HTTP_LAST_EVENT_ID" in request.META
        ):
            return self.resume_stream(request)
        if (
            request.method == "GET"
            and self.endpoint.settings.SESSIONS
            and self.serves_get_streams(request)
        ):
            return self.session_stream(request)
        if request.method != "POST":
            return error_response(
                405,
                jsonrpc.REQUEST_REFUSED,
                f"Method Not Allowed: send JSON-RPC messages with POST, not {request.method}",
                request_id=self.request_id(request),
                headers={"Allow": self.allowed_methods_header(request)},
            )
        return self.post(request)

    def post(self, request: HttpRequest) -> HttpResponseBase:
        assert self.endpoint is not None
        settings = self.endpoint.settings
        limit: int = settings.MAX_REQUEST_BYTES
        if declared_length(request) > limit:
            return self.too_large(limit)
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type and not is_json_media_type(content_type):
            return error_response(
                415,
                jsonrpc.INVALID_REQUEST,
                f"Unsupported Media Type {content_type.split(';')[0]!r}: send the JSON-RPC "
                "message as Content-Type: application/json",
                request_id=self.request_id(request),
            )

        # Read and parse the body before the credential step: an authentication class that
        # looks at the body finds it cached rather than consumed, and the refusals below
        # can name the request's id. A parse error is answered only after them.
        try:
            message, problem = self.parsed(request)
        except RequestDataTooBig:
            # Django's own cap (DATA_UPLOAD_MAX_MEMORY_SIZE) may be lower than the setting's.
            return self.too_large(min(limit, django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE))
        request_id = self.request_id(request)

        credential, drf_request, refusal = self.authenticate_with_request(request, request_id)
        if refusal is not None:
            return refusal
        limits = throttling.RateLimits(
            drf_request,
            credential,
            throttling.throttle_classes(self.get_throttle_classes()),
            settings.PROTOCOL_RATE,
        )

        if problem is not None:
            return error_response(400, problem.code, problem.message, problem.data)
        try:
            selection = self.endpoint.select(*toolset_choice(request)).narrowed(
                self.endpoint.select(*path_choice(self.kwargs))
            )
        except SelectionError as exc:
            return error_response(400, jsonrpc.INVALID_PARAMS, str(exc), request_id=request_id)
        return self.answer(request, message, credential, limits, selection)

    def rate_limited(self, wait: float, request_id: Any = None) -> HttpResponse:
        seconds = retry_after(wait)
        return error_response(
            429,
            jsonrpc.REQUEST_REFUSED,
            f"Too Many Requests: rate limit reached, retry in {seconds} s",
            {"retry_after": seconds},
            request_id,
            headers={"Retry-After": str(seconds)},
        )

    def too_large(self, limit: int) -> HttpResponse:
        return error_response(
            413,
            jsonrpc.INVALID_REQUEST,
            f"Request body over the limit of {limit} bytes",
            {"limit": limit},
        )

    # -- messages ----------------------------------------------------------------------

    def answer(
        self,
        request: HttpRequest,
        message: Any,
        credential: Any,
        limits: throttling.RateLimits,
        selection: Any = None,
    ) -> HttpResponseBase:
        header_version = request.META.get("HTTP_MCP_PROTOCOL_VERSION")
        if isinstance(message, list):
            return self.answer_batch(
                request, message, credential, header_version, limits, selection
            )
        wait = limits.check(message)
        if wait is not None:
            return self.rate_limited(wait, jsonrpc.request_id_of(message))
        era = era_of(message, header_version)
        context = self.message_context(request, era, credential, limits, selection)
        if era == MODERN:
            problem = self.modern_headers_problem(request, message)
            if problem is not None:
                return problem
            if isinstance(message, dict) and message.get("method") == "subscriptions/listen":
                return self.listen(request, message, context)
        elif self.endpoint.settings.SESSIONS:  # type: ignore[union-attr]
            return self.respond_in_session(request, message, context)
        return self.respond(request, message, context)

    def respond_in_session(
        self, request: HttpRequest, message: Any, context: RequestContext
    ) -> HttpResponseBase:
        """A legacy message when sessions are on: ``initialize`` opens one, the rest use it."""
        assert self.endpoint is not None
        if isinstance(message, dict) and message.get("method") == "initialize":
            answer = self.endpoint.handle(message, context)
            session = sessions.opened_by(self.endpoint, message, answer, context)
            headers = {sessions.HEADER: session.id} if session is not None else None
            return answer_response(answer, context.era, headers)
        try:
            session = sessions.enter(self.endpoint, request.META.get(sessions.META_HEADER), context)
        except sessions.SessionRefused as exc:
            return error_response(
                exc.status,
                jsonrpc.INVALID_REQUEST,
                exc.message,
                request_id=jsonrpc.request_id_of(message),
            )
        if sessions.is_client_response(message):
            # An answer to a request a streamed call sent; the call waits for it.
            sessions.SessionStore(self.endpoint).store_reply(session, message)
            return empty_response(202)
        return self.respond(request, message, context)

    def respond(
        self, request: HttpRequest, message: Any, context: RequestContext
    ) -> HttpResponseBase:
        """One message's answer: streamed (SSE) when it may be, plain JSON otherwise."""
        assert self.endpoint is not None
        how = streaming.delivery(self.endpoint, request, message, context)
        if how == streaming.PLAIN:
            return self.respond_plain(message, context)
        if how == streaming.BUFFERED:
            with streaming.buffering(self.endpoint, context):
                return self.respond_plain(message, context)
        channel = streaming.start(self.endpoint, message, context)
        if channel is None:
            # The credential (or this process) runs as many streamed calls as it may.
            return self.respond_plain(message, context)
        keepalive: float = self.endpoint.settings.STREAM_KEEPALIVE_SECONDS
        # A call that ends before saying anything is answered as plain JSON.
        first = channel.next_event(keepalive)
        if first is not None and first[0] == streaming.DONE:
            return answer_response(first[1], context.era)
        asynchronous = isinstance(request, ASGIRequest)
        return event_stream_response(
            streaming.frames(channel, first, keepalive, asynchronous=asynchronous)
        )

    def respond_plain(self, message: Any, context: RequestContext) -> HttpResponseBase:
        assert self.endpoint is not None
        try:
            answer = self.endpoint.handle(message, context)
        except outages.ServiceUnavailable as exc:
            answer = outages.error_body(jsonrpc.request_id_of(message), exc, self.endpoint.settings)
        if answer is not None and context.notifications:
            # Said during the call (a tools list that changed, a buffered call's log
            # messages): on the answer's own stream.
            events = [sse_event(n) for n in context.notifications] + [sse_event(answer)]
            return event_stream_response(iter(events))
        return answer_response(answer, context.era)

    def modern_headers_problem(self, request: HttpRequest, message: Any) -> HttpResponse | None:
        """The 2026-07-28 rules for headers that mirror the body, checked before dispatch
        (:func:`mcp_endpoint.protocol.headers.modern_header_problem`)."""
        assert self.endpoint is not None
        tools = self.endpoint.tools

        def input_schema(name: Any) -> Any:
            tool = tools.get(name)
            return tool.input_schema if tool is not None else None

        problem = modern_header_problem(
            message, request.headers.get, self.endpoint.features.supported_versions(), input_schema
        )
        if problem is None:
            return None
        return error_response(
            400, problem.code, problem.message, problem.data, jsonrpc.request_id_of(message)
        )


def toolset_choice(request: HttpRequest) -> tuple[str | None, str | None]:
    """The toolsets and read-only mode a client asked for: in the endpoint URL's query
    string (where a client that cannot send headers puts them), else in headers."""
    toolsets = request.GET.get(QUERY_TOOLSETS, request.META.get(HEADER_TOOLSETS))
    read_only = request.GET.get(QUERY_READ_ONLY, request.META.get(HEADER_READ_ONLY))
    return toolsets, read_only


def is_json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )
