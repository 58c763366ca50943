"""The HTTP answers of the transport: JSON-RPC bodies, errors, and empty answers."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse

from mcp_endpoint.protocol import jsonrpc


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
