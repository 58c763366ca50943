"""Request headers that mirror the body (2026-07-28): encoded values and ``x-mcp-header``.

:func:`modern_header_problem` holds the revision's rules for ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``; the transport gives it the headers as a
lookup (``request.headers.get``) and answers what it returns with 400.

A tool's input schema may mark a property with ``"x-mcp-header": "Region"``; a client then
repeats that argument's value in an ``Mcp-Param-Region`` header, so that proxies and load
balancers can route on it without reading the body. The server checks that the header and
the body agree, since a proxy may have acted on the header alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.versions import META_PROTOCOL_VERSION, is_legacy, unsupported_version

BASE64_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$")
HEADER_KEYWORD = "x-mcp-header"
PARAM_PREFIX = "Mcp-Param-"
# An RFC 9110 token: the characters a header field name may use.
TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
HEADER_TYPES = ("string", "integer", "boolean")
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
# A request header by its name (case-insensitive, as ``request.headers.get``), or None.
HeaderLookup = Callable[[str], "str | None"]


def decode_header_value(raw: str) -> str | None:
    """A header value, with the ``=?base64?...?=`` form decoded; None when it is broken."""
    found = BASE64_SENTINEL.match(raw)
    if found is None:
        return raw
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


@dataclass(frozen=True)
class HeaderParameter:
    """One argument a client mirrors in a header: where it sits, the header, its type."""

    path: tuple[str, ...]
    header: str
    type: Any

    @property
    def header_name(self) -> str:
        return PARAM_PREFIX + self.header


def header_parameters(schema: Mapping[str, Any]) -> Iterator[HeaderParameter]:
    """The ``x-mcp-header`` properties of an input schema, through ``properties`` only."""

    def walk(node: Mapping[str, Any], path: tuple[str, ...]) -> Iterator[HeaderParameter]:
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            return
        for name, sub in properties.items():
            if not isinstance(sub, Mapping):
                continue
            if HEADER_KEYWORD in sub:
                yield HeaderParameter((*path, name), sub[HEADER_KEYWORD], sub.get("type"))
            yield from walk(sub, (*path, name))

    yield from walk(schema, ())


def schema_problems(schema: Mapping[str, Any]) -> list[str]:
    """Why clients would drop a tool for its ``x-mcp-header`` marks (empty when fine)."""
    problems: list[str] = []
    seen: set[str] = set()
    for parameter in header_parameters(schema):
        where = ".".join(parameter.path)
        header = parameter.header
        if not isinstance(header, str) or not TOKEN.match(header):
            problems.append(f"{where}: {HEADER_KEYWORD} must be a non-empty header token")
            continue
        if header.lower() in seen:
            problems.append(f"{where}: {HEADER_KEYWORD} {header!r} is used twice")
        seen.add(header.lower())
        if parameter.type not in HEADER_TYPES:
            problems.append(
                f"{where}: {HEADER_KEYWORD} only marks string, integer or boolean properties"
            )
    return problems


def _value_at(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _matches(decoded: str, value: Any) -> bool:
    if isinstance(value, bool):
        return decoded == ("true" if value else "false")
    if isinstance(value, int):
        try:
            return int(decoded) == value  # compared as numbers: "+7" and "07" are 7
        except ValueError:
            return False
    return isinstance(value, str) and decoded == value


@dataclass(frozen=True)
class ParamHeaderMismatch:
    header: str
    message: str


def param_header_mismatch(
    schema: Mapping[str, Any],
    arguments: Mapping[str, Any],
    header: Callable[[str], str | None],
) -> ParamHeaderMismatch | None:
    """The first ``Mcp-Param-*`` header that disagrees with the arguments, if any.

    ``header`` looks a header up by name (case-insensitively, as HTTP does). A header is
    needed exactly when its argument is present and not null.
    """
    for parameter in header_parameters(schema):
        if not isinstance(parameter.header, str):
            continue
        name = parameter.header_name
        value = _value_at(arguments, parameter.path)
        raw = header(name)
        if value is None:
            if raw is not None:
                return ParamHeaderMismatch(
                    name, f"Header mismatch: {name} header sent, but the argument is absent"
                )
            continue
        if raw is None:
            return ParamHeaderMismatch(name, f"Header mismatch: missing {name} header")
        decoded = decode_header_value(raw)
        if decoded is None:
            return ParamHeaderMismatch(
                name, f"Header mismatch: {name} header value {raw!r} is not valid base64"
            )
        if not _matches(decoded, value):
            return ParamHeaderMismatch(
                name,
                f"Header mismatch: {name} header value {raw!r} does not match body value {value!r}",
            )
    return None


def modern_header_problem(
    message: Any,
    header: HeaderLookup,
    supported: Sequence[str],
    input_schema: Callable[[Any], Mapping[str, Any] | None],
) -> ProtocolError | None:
    """What is wrong with the headers that mirror a 2026-07-28 message's body, checked
    before dispatch: a version that contradicts the body or is not supported, a missing or
    contradicting ``Mcp-Method`` or ``Mcp-Name``, or an ``Mcp-Param-*`` header that does not
    match its argument (``input_schema`` gives a tool's schema by name, or None)."""
    header_version = header("MCP-Protocol-Version")
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    body_version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    # A header that contradicts the body is a header problem first, as the SDKs check it.
    if (
        isinstance(header_version, str)
        and isinstance(body_version, str)
        and decode_header_value(header_version) != body_version
    ):
        return ProtocolError(
            jsonrpc.HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version header value {header_version!r} does "
            f"not match body value {body_version!r}",
            {"header": "MCP-Protocol-Version"},
        )
    # An unknown version is named as such, whether the header or the body carries it.
    for version in (header_version, body_version):
        if isinstance(version, str) and not is_legacy(version) and version not in supported:
            return unsupported_version(version, supported)
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None  # the protocol layer answers -32600
    if body_version is None:
        if header_version is not None and header_version not in supported:
            return unsupported_version(header_version, supported)
        return None  # the protocol layer answers -32602 for the missing _meta
    method = message["method"]
    checks = [
        ("MCP-Protocol-Version", header_version, body_version),
        ("Mcp-Method", header("Mcp-Method"), method),
    ]
    named = isinstance(params, dict) and method in NAME_PARAM
    if isinstance(params, dict) and method.startswith("tasks/"):
        # No task id to route by: the protocol layer answers -32602.
        named = named and isinstance(params.get("taskId"), str)
    if named and isinstance(params, dict):
        checks.append(("Mcp-Name", header("Mcp-Name"), params.get(NAME_PARAM[method])))
    for name, raw, expected in checks:
        problem = mirror_problem(name, raw, expected)
        if problem is not None:
            return problem
    return param_headers_problem(method, params, header, input_schema)


def mirror_problem(name: str, raw: str | None, expected: Any) -> ProtocolError | None:
    """A header that must repeat a value of the body, missing or saying another."""
    if raw is None:
        return ProtocolError(
            jsonrpc.HEADER_MISMATCH, f"Header mismatch: missing {name} header", {"header": name}
        )
    value = decode_header_value(raw)
    if value is None or value != expected:
        return ProtocolError(
            jsonrpc.HEADER_MISMATCH,
            f"Header mismatch: {name} header value {raw!r} does not match body value {expected!r}",
            {"header": name},
        )
    return None


def param_headers_problem(
    method: str,
    params: Any,
    header: HeaderLookup,
    input_schema: Callable[[Any], Mapping[str, Any] | None],
) -> ProtocolError | None:
    """``Mcp-Param-*`` headers of a tool whose schema marks arguments ``x-mcp-header``."""
    if method != "tools/call" or not isinstance(params, dict):
        return None
    schema = input_schema(params.get("name"))
    arguments = params.get("arguments")
    if schema is None or not isinstance(arguments, dict):
        return None  # the protocol layer answers for an unknown tool or bad arguments
    mismatch = param_header_mismatch(schema, arguments, header)
    if mismatch is None:
        return None
    return ProtocolError(jsonrpc.HEADER_MISMATCH, mismatch.message, {"header": mismatch.header})
