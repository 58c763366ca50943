"""The HTTP transport: status codes, headers, Origin, credential and rate limit.

A request flows view -> credential -> throttle -> protocol, and the answer comes back as
JSON. This module knows HTTP and nothing of DRF viewsets; the protocol layer it feeds knows
nothing of HTTP.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import re
import time
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request

from mcp_endpoint import authentication, outages, sessions, streaming, subscriptions, throttling
from mcp_endpoint.event_store import UnknownStream
from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.headers import decode_header_value, param_header_mismatch
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.server import RequestContext, unsupported_version
from mcp_endpoint.protocol.versions import (
    DEFAULT_LEGACY_HEADER_VERSION,
    LEGACY,
    META_PROTOCOL_VERSION,
    MODERN,
    era_of,
    is_legacy,
)
from mcp_endpoint.responses import (
    answer_response,
    empty_response,
    error_response,
    event_stream_response,
    json_response,
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

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_endpoint.interfaces import EndpointLike

logger = logging.getLogger("mcp_endpoint.transport")

# What a session step returns: the session entered, or None for one ended.
StepResult = TypeVar("StepResult")

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
# Names in Mcp-Name per method, as the 2026-07-28 transport defines them.
NAME_PARAM = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # The tasks extension routes its methods by task.
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


class MCPView(View):
    """``POST`` JSON-RPC to an :class:`~mcp_endpoint.endpoint.Endpoint`."""

    endpoint: EndpointLike | None = None
    http_method_names = ["post", "options", "get", "delete", "put", "patch", "head"]
    # The body as a message, or why it is not one; read and parsed once per request (Django
    # makes a view instance per request).
    _parsed: tuple[Any, ProtocolError | None] | None = None

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        # Exempt once, here: method_decorator(csrf_exempt) on dispatch wraps it anew on
        # every request.
        return csrf_exempt(super().as_view(**initkwargs))

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
        if self.endpoint.settings.LOOPBACK_ONLY and not is_loopback(
            request.META.get("REMOTE_ADDR")
        ):
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

    def unavailable(
        self, request: HttpRequest, exc: outages.ServiceUnavailable, cause: BaseException
    ) -> HttpResponse:
        assert self.endpoint is not None
        exc.__cause__ = cause
        body = outages.error_body(self.request_id(request), exc, self.endpoint.settings)
        return answer_response(body, LEGACY)  # 503 with Retry-After, in either era

    # -- the body, read once -----------------------------------------------------------

    def parsed(self, request: HttpRequest) -> tuple[Any, ProtocolError | None]:
        """The body as a message and None, or None and the parse error (``-32700``).

        Raises :class:`RequestDataTooBig` when the body is over the size limit.
        """
        assert self.endpoint is not None
        if self._parsed is None:
            settings = self.endpoint.settings
            limit: int = settings.MAX_REQUEST_BYTES
            if declared_length(request) > limit:
                raise RequestDataTooBig(f"Request body over the limit of {limit} bytes")
            body = request.body
            if len(body) > limit:
                raise RequestDataTooBig(f"Request body over the limit of {limit} bytes")
            try:
                self._parsed = (jsonrpc.loads(body, settings.MAX_JSON_DEPTH), None)
            except ProtocolError as exc:
                self._parsed = (None, exc)
        return self._parsed

    def request_id(self, request: HttpRequest) -> jsonrpc.RequestId | None:
        """The id of the body's message, for an error answer; None when there is none to
        read (no body, over the size limit, not JSON, a batch)."""
        try:
            message, problem = self.parsed(request)
        except (RequestDataTooBig, OSError):
            return None  # OSError: the client went away while sending the body
        return jsonrpc.request_id_of(message) if problem is None else None

    def allowed_methods_header(self, request: HttpRequest) -> str:
        assert self.endpoint is not None
        if not self.endpoint.settings.SESSIONS:
            return "POST, OPTIONS"
        if self.serves_get_streams(request):
            return "GET, POST, OPTIONS, DELETE"
        return "POST, OPTIONS, DELETE"

    def serves_get_streams(self, request: HttpRequest) -> bool:
        """Whether a session's ``GET`` opens its stream here: under ASGI, or under WSGI
        when the host accepts that each open stream holds a worker."""
        assert self.endpoint is not None
        return isinstance(request, ASGIRequest) or bool(self.endpoint.settings.WSGI_GET_STREAMS)

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

    def authenticate(
        self, request: HttpRequest, request_id: jsonrpc.RequestId | None = None
    ) -> tuple[Any, HttpResponse | None]:
        """The request's credential (None when it has none and needs none), or a 401."""
        credential, _, refusal = self.authenticate_with_request(request, request_id)
        return credential, refusal

    def authenticate_with_request(
        self, request: HttpRequest, request_id: jsonrpc.RequestId | None = None
    ) -> tuple[Any, Request, HttpResponse | None]:
        """The credential, the one DRF request it was read from, and a 401 or None."""
        assert self.endpoint is not None
        settings = self.endpoint.settings
        drf_request = authentication.drf_request(request, settings.AUTHENTICATION_CLASSES)
        try:
            credential = authentication.authenticate(drf_request)
        except authentication.CredentialRefused as exc:
            if exc.status == 403:
                forbidden = error_response(
                    403, jsonrpc.REQUEST_REFUSED, f"Forbidden: {exc.detail}", request_id=request_id
                )
                return None, drf_request, forbidden
            refused = self.unauthorized(request, refused=True, request_id=request_id)
            return None, drf_request, refused
        if credential is None and settings.REQUIRE_CREDENTIAL:
            missing = self.unauthorized(request, refused=False, request_id=request_id)
            return None, drf_request, missing
        return credential, drf_request, None

    # -- before any method -------------------------------------------------------------

    def origin_allowed(self, request: HttpRequest) -> bool:
        origin = request.META.get("HTTP_ORIGIN")
        if origin is None:
            return True
        assert self.endpoint is not None
        return origin_is_allowed(origin, self.endpoint.settings.ALLOWED_ORIGINS)

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
            throttling.throttle_classes(settings.THROTTLE_CLASSES),
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

    def unauthorized(
        self,
        request: HttpRequest,
        *,
        refused: bool,
        request_id: jsonrpc.RequestId | None = None,
    ) -> HttpResponse:
        assert self.endpoint is not None
        metadata_url = request.build_absolute_uri(
            "/.well-known/oauth-protected-resource" + request.path.rstrip("/")
        )
        params = [f'resource_metadata="{metadata_url}"']
        scopes = self.endpoint.scopes()
        if scopes:
            params.append(f'scope="{" ".join(scopes)}"')
        if refused:
            params.insert(0, 'error="invalid_token"')
        accepted = authentication.accepted_kinds(self.endpoint.settings.AUTHENTICATION_CLASSES)
        message = (
            "Unauthorized: the credential is not valid"
            if refused
            else f"Unauthorized: this endpoint accepts {accepted}"
        )
        return error_response(
            401,
            jsonrpc.UNAUTHORIZED,
            message,
            request_id=request_id,
            headers={"WWW-Authenticate": "Bearer " + ", ".join(params)},
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
        context = RequestContext(
            era=era,
            protocol_version=header_version or DEFAULT_LEGACY_HEADER_VERSION,
            credential=credential,
            transport=request,
            counted_throttle_keys=frozenset(limits.counted),
            selection=selection,
        )
        if era == MODERN:
            problem = self.modern_headers_problem(request, message, header_version)
            if problem is not None:
                return problem
            if isinstance(message, dict) and message.get("method") == "subscriptions/listen":
                return self.listen(request, message, context)
        elif self.endpoint.settings.SESSIONS:  # type: ignore[union-attr]
            return self.respond_in_session(request, message, context)
        return self.respond(request, message, context)

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
        if not streaming.wanted(self.endpoint, request, message, context):
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
            # Said during the call (a tools list that changed): on the answer's own stream.
            events = [sse_event(n) for n in context.notifications] + [sse_event(answer)]
            return event_stream_response(iter(events))
        return answer_response(answer, context.era)

    def answer_batch(
        self,
        request: HttpRequest,
        batch: list[Any],
        credential: Any,
        header_version: str | None,
        limits: throttling.RateLimits,
        selection: Any = None,
    ) -> HttpResponse:
        assert self.endpoint is not None
        settings = self.endpoint.settings
        if not batch:
            return error_response(400, jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch")
        size: int = settings.MAX_BATCH_SIZE
        if len(batch) > size:
            return error_response(
                400,
                jsonrpc.INVALID_REQUEST,
                f"Invalid Request: a batch holds at most {size} messages, this one {len(batch)}; "
                "send the messages in smaller batches",
                {"max_batch_size": size},
            )
        if any(era_of(m, header_version) == MODERN for m in batch):
            return error_response(
                400,
                jsonrpc.INVALID_REQUEST,
                "Invalid Request: batches are not part of the 2026-07-28 revision",
            )
        budget: float | None = settings.BATCH_TIME_BUDGET
        started = time.monotonic()
        answers = []
        waits: list[float] = []
        for index, message in enumerate(batch):
            if budget is not None and index and time.monotonic() - started >= budget:
                # What the budget leaves is answered, not run, so the worker answers before
                # the server's timeout kills it; the first message always runs.
                if not (isinstance(message, dict) and "id" not in message):
                    answers.append(not_run(message, budget))
                continue
            # Each message counts as it would alone; one over the limit is answered so in its
            # place, and the others still run.
            wait = limits.check(message)
            if wait is not None:
                waits.append(wait)
                seconds = retry_after(wait)
                answers.append(
                    jsonrpc.error(
                        jsonrpc.request_id_of(message),
                        jsonrpc.REQUEST_REFUSED,
                        f"Too Many Requests: rate limit reached, retry in {seconds} s",
                        {"retry_after": seconds},
                    )
                )
                continue
            context = RequestContext(
                era=LEGACY,
                protocol_version=header_version or DEFAULT_LEGACY_HEADER_VERSION,
                credential=credential,
                transport=request,
                counted_throttle_keys=frozenset(limits.counted),
                selection=selection,
            )
            if self.endpoint.settings.SESSIONS:
                try:
                    sessions.enter(self.endpoint, request.META.get(sessions.META_HEADER), context)
                except sessions.SessionRefused as exc:
                    return error_response(
                        exc.status,
                        jsonrpc.INVALID_REQUEST,
                        exc.message,
                        request_id=jsonrpc.request_id_of(message),
                    )
            try:
                answer = self.endpoint.handle(message, context)
            except outages.ServiceUnavailable as exc:
                body = outages.error_body(jsonrpc.request_id_of(message), exc, settings)
                return answer_response(body, LEGACY)
            if answer is not None:
                answers.append(answer)
        headers = {"Retry-After": str(retry_after(max(waits)))} if waits else None
        if not answers:
            return empty_response(202)
        # Every message refused: the batch as a whole was over the limit.
        status = 429 if len(waits) == len(batch) else 200
        return json_response(answers, status, headers)

    def modern_headers_problem(
        self, request: HttpRequest, message: Any, header_version: str | None
    ) -> HttpResponse | None:
        """The 2026-07-28 rules for headers that mirror the body, checked before dispatch."""
        assert self.endpoint is not None
        request_id = jsonrpc.request_id_of(message)
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        body_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        supported = self.endpoint.supported_versions()
        # A header that contradicts the body is a header problem first, as the SDKs check it.
        if (
            isinstance(header_version, str)
            and isinstance(body_version, str)
            and decode_header_value(header_version) != body_version
        ):
            return error_response(
                400,
                jsonrpc.HEADER_MISMATCH,
                f"Header mismatch: MCP-Protocol-Version header value {header_version!r} does "
                f"not match body value {body_version!r}",
                {"header": "MCP-Protocol-Version"},
                request_id,
            )
        # An unknown version is named as such, whether the header or the body carries it.
        for version in (header_version, body_version):
            if isinstance(version, str) and not is_legacy(version) and version not in supported:
                error = unsupported_version(version, supported)
                return error_response(400, error.code, error.message, error.data, request_id)
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return None  # the protocol layer answers -32600
        if body_version is None:
            if header_version is not None and header_version not in supported:
                error = unsupported_version(header_version, supported)
                return error_response(400, error.code, error.message, error.data, request_id)
            return None  # the protocol layer answers -32602 for the missing _meta
        checks = [("MCP-Protocol-Version", header_version, body_version)]
        method = message["method"]
        checks.append(("Mcp-Method", request.META.get("HTTP_MCP_METHOD"), method))
        named = isinstance(params, dict) and method in NAME_PARAM
        if isinstance(params, dict) and method.startswith("tasks/"):
            # No task id to route by: the protocol layer answers -32602.
            named = named and isinstance(params.get("taskId"), str)
        if named and isinstance(params, dict):
            checks.append(
                ("Mcp-Name", request.META.get("HTTP_MCP_NAME"), params.get(NAME_PARAM[method]))
            )
        for name, raw, expected in checks:
            if raw is None:
                return error_response(
                    400,
                    jsonrpc.HEADER_MISMATCH,
                    f"Header mismatch: missing {name} header",
                    {"header": name},
                    request_id,
                )
            value = decode_header_value(raw)
            if value is None or value != expected:
                return error_response(
                    400,
                    jsonrpc.HEADER_MISMATCH,
                    f"Header mismatch: {name} header value {raw!r} does not match body value "
                    f"{expected!r}",
                    {"header": name},
                    request_id,
                )
        return self.param_headers_problem(request, method, params, request_id)

    def param_headers_problem(
        self, request: HttpRequest, method: str, params: Any, request_id: Any
    ) -> HttpResponse | None:
        """``Mcp-Param-*`` headers of a tool whose schema marks arguments ``x-mcp-header``."""
        assert self.endpoint is not None
        if method != "tools/call" or not isinstance(params, dict):
            return None
        tool = self.endpoint.tools.get(params.get("name"))  # type: ignore[arg-type]
        arguments = params.get("arguments")
        if tool is None or not isinstance(arguments, dict):
            return None  # the protocol layer answers for an unknown tool or bad arguments
        mismatch = param_header_mismatch(tool.input_schema, arguments, request.headers.get)
        if mismatch is None:
            return None
        return error_response(
            400, jsonrpc.HEADER_MISMATCH, mismatch.message, {"header": mismatch.header}, request_id
        )


def toolset_choice(request: HttpRequest) -> tuple[str | None, str | None]:
    """The toolsets and read-only mode a client asked for: in the endpoint URL's query
    string (where a client that cannot send headers puts them), else in headers."""
    toolsets = request.GET.get(QUERY_TOOLSETS, request.META.get(HEADER_TOOLSETS))
    read_only = request.GET.get(QUERY_READ_ONLY, request.META.get(HEADER_READ_ONLY))
    return toolsets, read_only


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


def not_run(message: Any, budget: float) -> dict[str, Any]:
    """The answer to a batch message the batch's time budget left no time for."""
    return jsonrpc.error(
        jsonrpc.request_id_of(message),
        jsonrpc.REQUEST_REFUSED,
        f"Not run: the batch spent its time budget of {budget:g} s before this message; "
        "send it again, alone or in a smaller batch",
        {"batch_time_budget": budget},
    )


def declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def retry_after(wait: float) -> int:
    """Whole seconds for ``Retry-After``: at least 1, so a client never retries at once."""
    return max(1, math.ceil(wait))


def is_loopback(address: str | None) -> bool:
    if not address:
        return False
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def is_json_media_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


def origin_is_allowed(origin: str, allowed: list[str]) -> bool:
    """Loopback on any port, the configured origins, and django-cors-headers' allowed ones."""
    try:
        parts = urlsplit(origin)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in {"http", "https"} or not host:
        return False
    del port
    if host in LOOPBACK_HOSTS or is_loopback(host):
        return True
    normalized = f"{parts.scheme}://{parts.netloc.lower()}"
    for entry in allowed:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and parts.scheme == "https":
                return True
        elif entry.rstrip("/").lower() == normalized:
            return True
    return cors_allows(normalized)


def cors_allows(origin: str) -> bool:
    """Whether django-cors-headers, when installed, allows ``origin`` for the REST API."""
    if "corsheaders" not in django_settings.INSTALLED_APPS:
        return False
    from corsheaders.conf import conf

    if conf.CORS_ALLOW_ALL_ORIGINS:
        return True
    if origin in {o.rstrip("/").lower() for o in conf.CORS_ALLOWED_ORIGINS}:
        return True
    return any(re.match(pattern, origin) for pattern in conf.CORS_ALLOWED_ORIGIN_REGEXES)
