"""What the OAuth endpoints refuse before django-oauth-toolkit reads a request.

- Text no database column holds: PostgreSQL refuses a NUL character, and no database stores
  a lone surrogate (JSON may carry one as ``"\\ud800"``). Passed on to the toolkit's queries,
  either is a ``DataError`` or an encoding error: a 500. No client id, secret, code, token,
  scope or client name holds one, so a request carrying one is refused as invalid.
- Grant types the server does not advertise: the toolkit's token endpoint would still try
  them (a device code grant without a ``device_code`` is a ``KeyError`` there), and its
  registration endpoint would register a client for them.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote_plus

from django.http import HttpRequest, JsonResponse

from mcp_endpoint.oauth.metadata import advertised_grant_types, advertised_response_types


def oauth_error(error: str, description: str, status: int = 400) -> JsonResponse:
    """An RFC 6749 §5.2 error answer, never cached."""
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    return response


def is_storable(text: str) -> bool:
    """Whether a database stores ``text`` as it is: no NUL, no lone surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def basic_credentials(request: HttpRequest) -> list[str]:
    """The client id and secret of an ``Authorization: Basic`` header, decoded as the
    toolkit decodes them; none when the header is absent or not decodable (the toolkit
    refuses those itself)."""
    scheme, _, encoded = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "basic":
        return []
    try:
        decoded = base64.b64decode(encoded.strip()).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    return [unquote_plus(part) for part in decoded.split(":", 1)]


def unstorable_parameter(request: HttpRequest) -> str | None:
    """The name of the first query or form parameter (or Basic credential) that holds text
    no database stores, or None."""
    for source in (request.GET, request.POST):
        for name, values in source.lists():
            if not is_storable(name) or not all(is_storable(v) for v in values):
                return name if is_storable(name) else repr(name)
    if not all(is_storable(part) for part in basic_credentials(request)):
        return "Authorization"
    return None


def refuse_unstorable(request: HttpRequest) -> JsonResponse | None:
    """``invalid_request`` for a request :func:`unstorable_parameter` finds, else None."""
    name = unstorable_parameter(request)
    if name is None:
        return None
    return oauth_error("invalid_request", f"{name} holds a NUL or an unpaired surrogate character")


def refuse_unadvertised_grant(request: HttpRequest) -> JsonResponse | None:
    """``unsupported_grant_type`` for a token request whose grant the server does not
    advertise (RFC 6749 §5.2), else None; a missing grant type is the toolkit's to refuse."""
    grant_type = request.POST.get("grant_type")
    if grant_type is None or grant_type in advertised_grant_types():
        return None
    return oauth_error(
        "unsupported_grant_type",
        f"This server does not issue tokens for the grant type {grant_type!r}.",
    )


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a parsed JSON value, keys included, without recursing (a body may
    nest as deep as its size allows)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def unadvertised_metadata(metadata: dict[str, Any]) -> str | None:
    """Why client metadata asks for a grant or response type the server does not advertise
    (RFC 7591 §2: the server refuses what it does not support), or None."""
    checks = (
        ("grant_types", advertised_grant_types(), "grant_types_supported"),
        ("response_types", advertised_response_types(), "response_types_supported"),
    )
    if (
        isinstance(metadata.get("grant_types"), list)
        and "client_credentials" in metadata["grant_types"]
    ):
        # Its tokens act as a user an administrator names: never for an anonymous client.
        return "grant_types: 'client_credentials' is for applications an administrator makes"
    for field, advertised, listed_as in checks:
        if field not in metadata:
            continue  # RFC 7591's defaults: the code grant, the code response
        values = metadata[field]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return f"{field} must be an array of strings"
        for value in values:
            if value not in advertised:
                return (
                    f"{field}: {value!r} is not supported by this server ({listed_as}: "
                    f"{', '.join(advertised) or 'none'})"
                )
    return None
