"""JSON-RPC 2.0 messages and the error codes MCP gives meaning to."""

from __future__ import annotations

import json
import math
import re
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


def loads(body: bytes, max_depth: int) -> Any:
    """A message parsed from a request body, or :class:`ProtocolError` ``-32700``.

    Strict JSON: ``NaN`` and ``Infinity`` are not JSON (nor is a number that overflows to
    infinity, ``1e999``), and nothing nests deeper than
    ``max_depth`` arrays and objects (the decoder recurses, so a body of 100,000 ``[`` would
    otherwise end in a ``RecursionError``).
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(PARSE_ERROR, "Parse error: the body is not UTF-8") from exc
    try:
        message = _DECODER.decode(text)
    except RecursionError as exc:
        raise _too_deep(max_depth) from exc
    except ValueError as exc:
        raise ProtocolError(PARSE_ERROR, f"Parse error: the body is not JSON ({exc})") from exc
    # Depth cannot exceed the number of brackets, which is cheap to count: most messages
    # never need the walk.
    openers = body.count(b"[") + body.count(b"{")
    if openers > max_depth and depth_exceeds(message, max_depth):
        raise _too_deep(max_depth)
    return message


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(text: str) -> float:
    # 1e999 is valid JSON but no float: it would come back out as Infinity, which is not.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


# One decoder for every request: json.loads with options would build a new one each time.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)


def _too_deep(max_depth: int) -> ProtocolError:
    return ProtocolError(
        PARSE_ERROR,
        f"Parse error: the body nests arrays and objects deeper than {max_depth} levels",
        {"max_depth": max_depth},
    )


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays and objects more than ``limit`` levels deep.

    Level by level rather than recursive, so that it is safe on any value the decoder
    produced; a scalar is depth 0.
    """
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            children = node.values() if isinstance(node, dict) else node
            below.extend(c for c in children if isinstance(c, dict | list))
        level = below
    return False


# Characters no value a handler sees may hold: NUL (PostgreSQL text refuses it, C libraries
# cut at it) and UTF-16 surrogates, which JSON can escape but which are not characters and
# have no UTF-8 form.
FORBIDDEN_CHARACTERS = re.compile("[\x00\ud800-\udfff]")


def holds_forbidden_characters(value: Any) -> bool:
    """Whether any string in ``value`` (keys included) holds a NUL or a surrogate."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if FORBIDDEN_CHARACTERS.search(node):
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


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
    every request; anything else that reads it sees an ordinary dict. ``text``, when given,
    is the object's JSON as another encoder wrote it (the REST API's answer, which a tool
    result carries as it is): valid JSON on one line (SSE sends an answer as one ``data:``
    line), with no NaN or Infinity, which no JSON parser reads.
    """

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any], text: str | None = None) -> None:
        super().__init__(value)
        self.text = encode(value) if text is None else text


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
    """A message as compact JSON, with :class:`Encoded` values of its result (and lists of
    them) spliced in as the text they carry."""
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return encode(message)
    pieces: dict[str, orjson.Fragment] = {}
    for key, value in result.items():
        if type(value) is Encoded:
            pieces[key] = orjson.Fragment(value.text)
        elif isinstance(value, list) and value and all(type(v) is Encoded for v in value):
            pieces[key] = orjson.Fragment("[" + ",".join(v.text for v in value) + "]")
    if not pieces:
        return encode(message)
    shallow = {**message, "result": {**result, **pieces}}
    try:
        return orjson.dumps(shallow, default=_default, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        # What orjson refuses elsewhere in the answer: the whole of it by the standard
        # library, which encodes the objects themselves.
        return encode(message)


def _default(value: Any) -> Any:
    """What json cannot encode by itself: lazy translations, dates, decimals, UUIDs."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, Decimal):
        # A number, as DRF's own encoder writes it: a serializer that wanted a string
        # (COERCE_DECIMAL_TO_STRING) made one already.
        return float(value)
    return str(value)
