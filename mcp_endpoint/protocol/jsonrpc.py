"""JSON-RPC 2.0 messages and the error codes MCP gives meaning to."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import orjson

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Server-defined codes of the legacy era, and the 2026-07-28 codes.
UNAUTHORIZED = -32001
RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
# Not JSON-RPC: the transport refused the request before it was a message.
REQUEST_REFUSED = -32000

RequestId = str | int


class ProtocolError(Exception):
    """A JSON-RPC error answer: ``code``, ``message`` and optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclass(frozen=True)
class Request:
    """A JSON-RPC request or, with ``id`` None, a notification."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)
    id: RequestId | None = None

    @property
    def is_notification(self) -> bool:
        return self.id is None


def parse(message: Any) -> Request:
    """A validated :class:`Request`, or :class:`ProtocolError` ``-32600``.

    Client responses (``result``/``error`` without ``method``) are read as notifications:
    the server sent no request they could answer, so they are acknowledged and dropped.
    """
    if not isinstance(message, dict):
        raise ProtocolError(INVALID_REQUEST, "Invalid Request: a JSON-RPC message is an object")
    if message.get("jsonrpc") != "2.0":
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    has_id = "id" in message
    request_id = message.get("id")
    if has_id and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
    if "method" not in message and ("result" in message or "error" in message) and has_id:
        return Request(method="", id=None)
    method = message.get("method")
    if not isinstance(method, str):
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "method" must be a string')
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "params" must be an object')
    return Request(method=method, params=params, id=request_id if has_id else None)


def request_id_of(message: Any) -> RequestId | None:
    """The id to echo in an error about ``message``, when it has a usable one."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str | int) and not isinstance(value, bool):
            return value
    return None


def result(request_id: RequestId | None, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(
    request_id: RequestId | None, code: int, message: str, data: Any = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


class Encoded(dict[str, Any]):
    """A JSON object that carries its own encoding, made once (a tool's descriptor, say).

    :func:`dumps` splices the text into the answer instead of encoding the object again on
    every request; anything else that reads it sees an ordinary dict.
    """

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any]) -> None:
        super().__init__(value)
        self.text = encode(value)


# A string no answer can contain by accident: NUL characters and a per-process secret.
_SPLICE = f"\x00{secrets.token_hex(8)}:"


def loads(body: bytes) -> Any:
    """A request body as JSON: ``UnicodeDecodeError`` or ``ValueError`` when it is not.

    The one place the transport decodes JSON, as :func:`dumps` is the one place it encodes.
    """
    return json.loads(body.decode("utf-8"))


def encode(value: Any) -> str:
    """``value`` as compact JSON text: the one encoder of every answer.

    orjson, measured about twenty times faster than the standard library on answers
    (benchmarks), writes the same text for what answers hold (UTF-8 as is, ``\\u0000``
    escapes, ISO dates); what it refuses (integers past 64 bits) goes to the standard
    library instead.
    """
    try:
        return orjson.dumps(value, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)


def dumps(message: Any) -> str:
    """A message as compact JSON, with lists of :class:`Encoded` items spliced in as text."""
    result = message.get("result") if isinstance(message, dict) else None
    pieces: dict[str, str] = {}
    if isinstance(result, dict):
        for key, value in result.items():
            if isinstance(value, list) and value and all(type(v) is Encoded for v in value):
                pieces[key] = "[" + ",".join(v.text for v in value) + "]"
    if not pieces or not isinstance(result, dict):
        return encode(message)
    shallow = {
        **message,
        "result": {k: (_SPLICE + k if k in pieces else v) for k, v in result.items()},
    }
    text = encode(shallow)
    for key, piece in pieces.items():
        text = text.replace(encode(_SPLICE + key), piece, 1)
    return text


def _default(value: Any) -> Any:
    """What json cannot encode by itself: lazy translations, dates, decimals, UUIDs."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, Decimal):
        # A number, as DRF's own encoder writes it: a serializer that wanted a string
        # (COERCE_DECIMAL_TO_STRING) made one already.
        return float(value)
    return str(value)
