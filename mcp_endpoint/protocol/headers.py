"""Request headers that mirror the body (2026-07-28): encoded values and ``x-mcp-header``.

A tool's input schema may mark a property with ``"x-mcp-header": "Region"``; a client then
repeats that argument's value in an ``Mcp-Param-Region`` header, so that proxies and load
balancers can route on it without reading the body. The server checks that the header and
the body agree, since a proxy may have acted on the header alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

BASE64_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$")
HEADER_KEYWORD = "x-mcp-header"
PARAM_PREFIX = "Mcp-Param-"
# An RFC 9110 token: the characters a header field name may use.
TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
HEADER_TYPES = ("string", "integer", "boolean")


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
