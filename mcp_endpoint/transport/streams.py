"""Streams a client opens or resumes: a legacy session's ``GET`` (its resource updates) and
``DELETE``, a ``GET`` with ``Last-Event-ID`` (the rest of a streamed answer), and the
2026-07-28 ``subscriptions/listen``. Each takes a place under ``STREAMS_PER_CREDENTIAL``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase

from mcp_endpoint import sessions, streaming, subscriptions
from mcp_endpoint.event_store import UnknownStream
from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.server import RequestContext
from mcp_endpoint.protocol.versions import LEGACY
from mcp_endpoint.responses import (
    answer_response,
    empty_response,
    error_response,
    event_stream_response,
)
from mcp_endpoint.transport.credentials import CredentialMixin

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_endpoint.interfaces import EndpointLike

# What a session step returns: the session entered, or None for one ended.
StepResult = TypeVar("StepResult")


class StreamsMixin(CredentialMixin):
    """A session's ``GET`` and ``DELETE``, resumed streams, and listen streams."""

    def delete_session(self, request: HttpRequest) -> HttpResponse:
        """``DELETE`` with sessions on: end the caller's session named by the header."""
        ended = self.session_step(request, sessions.end)
        if isinstance(ended, HttpResponse):
            return ended
        return empty_response(204)

    def resume_stream(self, request: HttpRequest) -> HttpResponseBase:
        """``GET`` with ``Last-Event-ID`` in a session: the rest of a streamed answer."""
        assert self.endpoint is not None
        entered = self.session_step(request, sessions.enter)
        if isinstance(entered, HttpResponse):
            return entered
        session, context = entered
        # A resumed stream is as long-lived as a new one: it takes a place under the cap.
        limit = subscriptions.StreamLimit(self.endpoint, session.owner)
        if not limit.acquire():
            return too_many_streams(limit)
        try:
            stream = streaming.resume(
                self.endpoint,
                session.id,
                request.META["HTTP_LAST_EVENT_ID"],
                asynchronous=isinstance(request, ASGIRequest),
            )
        except UnknownStream as exc:
            limit.release()
            return error_response(exc.status, jsonrpc.INVALID_REQUEST, exc.message)
        access = subscriptions.StreamAccess(self.endpoint, request, context)
        return event_stream_response(subscriptions.guarded(stream, access, limit))

    def session_stream(self, request: HttpRequest) -> HttpResponseBase:
        """``GET`` in a session: the stream of its resource updates."""
        assert self.endpoint is not None
        entered = self.session_step(request, sessions.enter)
        if isinstance(entered, HttpResponse):
            return entered
        session, context = entered
        access = subscriptions.StreamAccess(self.endpoint, request, context)
        if not access.may_read(session.subscriptions):
            # The stream would end at once, and the client would open it again and again.
            return error_response(
                403,
                jsonrpc.REQUEST_REFUSED,
                "Forbidden: the credential's scopes no longer allow reading every resource "
                "this session subscribes to; unsubscribe from those first",
            )
        limit = subscriptions.StreamLimit(self.endpoint, session.owner)
        if not limit.acquire():
            return too_many_streams(limit)
        if isinstance(request, ASGIRequest):
            stream: Any = subscriptions.async_updates(self.endpoint, session.id, access, limit)
        else:
            stream = subscriptions.sync_updates(self.endpoint, session.id, access, limit)
        return event_stream_response(stream)

    def session_step(
        self,
        request: HttpRequest,
        step: Callable[[EndpointLike, str | None, RequestContext], StepResult],
    ) -> tuple[StepResult, RequestContext] | HttpResponse:
        """Authenticate a session's ``GET`` or ``DELETE`` (legacy era), then run ``step``
        (:func:`sessions.enter` or :func:`sessions.end`) on the session its header names.

        The step's result and the request's context; or the refusal: 401 or 403 for the
        credential, 400 or 404 for the session.
        """
        assert self.endpoint is not None
        credential, refusal = self.authenticate(request)
        if refusal is not None:
            return refusal
        context = RequestContext(era=LEGACY, credential=credential, transport=request)
        try:
            result = step(self.endpoint, request.META.get(sessions.META_HEADER), context)
        except sessions.SessionRefused as exc:
            return error_response(exc.status, jsonrpc.INVALID_REQUEST, exc.message)
        return result, context

    def listen(
        self, request: HttpRequest, message: dict[str, Any], context: RequestContext
    ) -> HttpResponseBase:
        """``subscriptions/listen`` (2026-07-28): a stream, once the protocol layer agrees."""
        assert self.endpoint is not None
        asynchronous = isinstance(request, ASGIRequest)
        limit = None
        if asynchronous:  # under WSGI the stream is acknowledged and ended at once
            # The place first: a credential at its cap has no resources read for it.
            limit = subscriptions.StreamLimit(self.endpoint, principal(context))
            if not limit.acquire():
                return too_many_streams(limit, jsonrpc.request_id_of(message))
        try:
            answer = self.endpoint.handle(message, context)
        except BaseException:
            if limit is not None:
                limit.release()
            raise
        if answer is None or "result" not in answer:
            if limit is not None:
                limit.release()
            return answer_response(answer, context.era)
        access = subscriptions.StreamAccess(self.endpoint, request, context)
        stream = subscriptions.listen_stream(
            self.endpoint, answer, access, asynchronous=asynchronous, limit=limit
        )
        return event_stream_response(stream)


def too_many_streams(
    limit: subscriptions.StreamLimit, request_id: jsonrpc.RequestId | None = None
) -> HttpResponse:
    """The one answer to a stream over ``STREAMS_PER_CREDENTIAL``: new, resumed or listen."""
    return error_response(
        429,
        jsonrpc.REQUEST_REFUSED,
        f"Too Many Requests: at most {limit.limit} open streams per credential; close one first",
        {"limit": limit.limit},
        request_id,
    )
