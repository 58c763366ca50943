"""The HTTP answers of the transport: JSON-RPC bodies, errors, empty answers, SSE framing.

The transport owns how an answer is framed and which status it gets; sessions and streams
are state it consults, and never build an HTTP response themselves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.versions import MODERN

# JSON-RPC errors the modern revision answers with an HTTP status other than 200.
MODERN_STATUS = {
    jsonrpc.PARSE_ERROR: 400,
    jsonrpc.INVALID_REQUEST: 400,
    jsonrpc.INVALID_PARAMS: 400,
    jsonrpc.HEADER_MISMATCH: 400,
    jsonrpc.MISSING_CAPABILITY: 400,
    jsonrpc.UNSUPPORTED_VERSION: 400,
    jsonrpc.METHOD_NOT_FOUND: 404,
}
SSE_HEADERS = {"Cache-Control": "no-cache, no-transform", "X-Accel-Buffering": "no"}
KEEPALIVE = b": keepalive\n\n"
FRAME_ANCESTORS_NONE = "frame-ancestors 'none'"


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> HttpResponse:
    # A lone surrogate (JSON allows "\ud800") has no UTF-8 form: written back as the same
    # JSON escape, so echoing a hostile value can never fail the answer.
    content = jsonrpc.dumps(body).encode("utf-8", "backslashreplace")
    response = HttpResponse(content, status=status, content_type="application/json")
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def empty_response(status: int) -> HttpResponse:
    """An answer with no body (202 for notifications, 204): and so no Content-Type."""
    response = HttpResponse(status=status)
    del response["Content-Type"]
    return response


def error_response(
    status: int,
    code: int,
    message: str,
    data: Any = None,
    request_id: Any = None,
    headers: dict[str, str] | None = None,
) -> HttpResponse:
    return json_response(jsonrpc.error(request_id, code, message, data), status, headers)


def status_of(answer: dict[str, Any], era: str) -> int:
    """The HTTP status of one JSON-RPC answer, by era (the modern revision maps errors)."""
    error = answer.get("error")
    if error is None:
        return 200
    if outage_retry_after(answer) is not None:
        return 503
    code = error.get("code")
    if code in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST):
        return 400
    if era == MODERN:
        return MODERN_STATUS.get(code, 200)
    return 200


def answer_response(
    answer: dict[str, Any] | None, era: str, headers: dict[str, str] | None = None
) -> HttpResponse:
    """One message's answer as JSON with its status; 202 and no body for a notification."""
    if answer is None:
        return empty_response(202)
    retry_after = outage_retry_after(answer)
    if retry_after is not None:
        headers = {**(headers or {}), "Retry-After": str(retry_after)}
    return json_response(answer, status_of(answer, era), headers)


def outage_retry_after(answer: dict[str, Any]) -> int | None:
    """The seconds an outage's answer (see :mod:`mcp_endpoint.outages`) asks a client to wait;
    None for any other answer."""
    error = answer.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    if (
        isinstance(data, dict)
        and "unavailable" in data
        and isinstance(data.get("retry_after"), int)
    ):
        retry_after: int = data["retry_after"]
        return retry_after
    return None


def sse_event(
    message: dict[str, Any] | None, event_id: str | None = None, *, retry_ms: int | None = None
) -> bytes:
    """One SSE event; with no message, a priming event (an id and empty data)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    if retry_ms is not None:
        head += f"retry: {retry_ms}\n"
    if message is None:
        return f"{head}data: \n\n".encode()
    return f"{head}event: message\ndata: {jsonrpc.dumps(message)}\n\n".encode()


def event_stream_response(
    stream: Iterator[bytes] | AsyncIterator[bytes], headers: dict[str, str] | None = None
) -> StreamingHttpResponse:
    response = StreamingHttpResponse(stream, content_type="text/event-stream")
    for name, value in {**SSE_HEADERS, **(headers or {})}.items():
        response[name] = value
    return response


def deny_framing(response: HttpResponseBase) -> HttpResponseBase:
    """Forbid every site to frame ``response``, in the old header and in CSP's.

    A policy already on the response (the host's) keeps its directives and gains
    ``frame-ancestors`` unless it has one; ``X-Frame-Options`` set here wins over
    ``XFrameOptionsMiddleware``'s default, which leaves a present header alone.
    """
    response["X-Frame-Options"] = "DENY"
    policy = response.get("Content-Security-Policy", "").strip().rstrip(";")
    if "frame-ancestors" not in policy:
        policy = f"{policy}; {FRAME_ANCESTORS_NONE}" if policy else FRAME_ANCESTORS_NONE
    response["Content-Security-Policy"] = policy
    return response
