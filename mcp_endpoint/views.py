"""The HTTP transport: status codes, headers, Origin, credential and rate limit.

A request flows view -> credential -> throttle -> protocol, and the answer comes back as
JSON. This module knows HTTP and nothing of DRF viewsets; the protocol layer it feeds knows
nothing of HTTP.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import math
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request

from mcp_endpoint import authentication, sessions, streaming, throttling
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.server import RequestContext, unsupported_version
from mcp_endpoint.protocol.versions import (
    DEFAULT_LEGACY_HEADER_VERSION,
    LEGACY,
    META_PROTOCOL_VERSION,
    MODERN,
    era_of,
    is_legacy,
)
from mcp_endpoint.responses import empty_response, error_response, json_response

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint

logger = logging.getLogger("mcp_endpoint.transport")

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}
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
BASE64_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$")
# Names in Mcp-Name per method, as the 2026-07-28 transport defines them.
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@method_decorator(csrf_exempt, name="dispatch")
class MCPView(View):
    """``POST`` JSON-RPC to an :class:`~mcp_endpoint.endpoint.Endpoint`."""

    endpoint: Endpoint | None = None
    http_method_names = ["post", "options", "get", "delete", "put", "patch", "head"]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        assert self.endpoint is not None
        if self.endpoint.settings.LOOPBACK_ONLY and not is_loopback(
            request.META.get("REMOTE_ADDR")
        ):
            return error_response(
                403,
                jsonrpc.REQUEST_REFUSED,
                "Forbidden: this endpoint answers loopback clients only",
            )
        if not self.origin_allowed(request):
            return error_response(
                403,
                jsonrpc.REQUEST_REFUSED,
                "Forbidden: Origin not allowed",
                {"origin": request.META.get("HTTP_ORIGIN")},
            )
        if request.method == "OPTIONS":
            response = empty_response(204)
            response["Allow"] = self.allowed_methods_header()
            return response
        if request.method == "DELETE" and self.endpoint.settings.SESSIONS:
            return self.delete_session(request)
        if request.method != "POST":
            return error_response(
                405,
                jsonrpc.REQUEST_REFUSED,
                f"Method Not Allowed: send JSON-RPC messages with POST, not {request.method}",
                headers={"Allow": self.allowed_methods_header()},
            )
        try:
            return self.post(request)
        except Exception:
            # Tools have their own boundary; this one keeps a JSON-RPC body on any other fault.
            logger.exception("MCP request failed")
            return error_response(500, jsonrpc.INTERNAL_ERROR, "Internal error")

    def allowed_methods_header(self) -> str:
        assert self.endpoint is not None
        return "POST, OPTIONS, DELETE" if self.endpoint.settings.SESSIONS else "POST, OPTIONS"

    def delete_session(self, request: HttpRequest) -> HttpResponse:
        """``DELETE`` with sessions on: end the caller's session named by the header."""
        assert self.endpoint is not None
        credential, refusal = self.authenticate(request)
        if refusal is not None:
            return refusal
        context = RequestContext(era=LEGACY, credential=credential, transport=request)
        return sessions.end_session(self.endpoint, request, context)

    def authenticate(self, request: HttpRequest) -> tuple[Any, HttpResponse | None]:
        """The request's credential (None when it has none and needs none), or a 401."""
        credential, _, refusal = self.authenticate_with_request(request)
        return credential, refusal

    def authenticate_with_request(
        self, request: HttpRequest
    ) -> tuple[Any, Request, HttpResponse | None]:
        """The credential, the one DRF request it was read from, and a 401 or None."""
        assert self.endpoint is not None
        settings = self.endpoint.settings
        drf_request = authentication.drf_request(request, settings.AUTHENTICATION_CLASSES)
        try:
            credential = authentication.authenticate(drf_request)
        except authentication.CredentialRefused:
            return None, drf_request, self.unauthorized(request, refused=True)
        if credential is None and settings.REQUIRE_CREDENTIAL:
            return None, drf_request, self.unauthorized(request, refused=False)
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
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            declared = 0
        if declared > limit:
            return self.too_large(limit)
        content_type = request.META.get("CONTENT_TYPE", "")
        if content_type and not is_json_media_type(content_type):
            return error_response(
                415,
                jsonrpc.INVALID_REQUEST,
                f"Unsupported Media Type {content_type.split(';')[0]!r}: send the JSON-RPC "
                "message as Content-Type: application/json",
            )

        # Read (not parse) the body before the credential step, so an authentication class
        # that looks at the body finds it cached rather than consumed.
        try:
            body = request.body
        except RequestDataTooBig:
            # Django's own cap (DATA_UPLOAD_MAX_MEMORY_SIZE) is lower than the setting's.
            return self.too_large(min(limit, django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE))
        if len(body) > limit:
            return self.too_large(limit)

        credential, drf_request, refusal = self.authenticate_with_request(request)
        if refusal is not None:
            return refusal
        limits = throttling.RateLimits(
            drf_request,
            credential,
            throttling.throttle_classes(settings.THROTTLE_CLASSES),
            settings.PROTOCOL_RATE,
        )

        try:
            message = jsonrpc.loads(body)
        except UnicodeDecodeError:
            return error_response(400, jsonrpc.PARSE_ERROR, "Parse error: the body is not UTF-8")
        except ValueError:
            return error_response(400, jsonrpc.PARSE_ERROR, "Parse error: the body is not JSON")
        return self.answer(request, message, credential, limits)

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

    def unauthorized(self, request: HttpRequest, *, refused: bool) -> HttpResponse:
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
        message = (
            "Unauthorized: the credential is not valid"
            if refused
            else ("Unauthorized: send an API key or an OAuth access token as Authorization: Bearer")
        )
        return error_response(
            401,
            jsonrpc.UNAUTHORIZED,
            message,
            headers={"WWW-Authenticate": "Bearer " + ", ".join(params)},
        )

    # -- messages ----------------------------------------------------------------------

    def answer(
        self,
        request: HttpRequest,
        message: Any,
        credential: Any,
        limits: throttling.RateLimits,
    ) -> HttpResponseBase:
        header_version = request.META.get("HTTP_MCP_PROTOCOL_VERSION")
        if isinstance(message, list):
            return self.answer_batch(request, message, credential, header_version, limits)
        wait = limits.check(message)
        if wait is not None:
            return self.rate_limited(wait, jsonrpc.request_id_of(message))
        era = era_of(message, header_version)
        context = RequestContext(
            era=era,
            protocol_version=header_version or DEFAULT_LEGACY_HEADER_VERSION,
            credential=credential,
            transport=request,
        )
        if era == MODERN:
            problem = self.modern_headers_problem(request, message, header_version)
            if problem is not None:
                return problem
        elif self.endpoint.settings.SESSIONS:  # type: ignore[union-attr]
            return sessions.respond_in_session(self, request, message, context)
        return self.respond(request, message, context)

    def respond(
        self, request: HttpRequest, message: Any, context: RequestContext
    ) -> HttpResponseBase:
        """One message's answer: streamed (SSE) when it may be, plain JSON otherwise."""
        assert self.endpoint is not None
        if streaming.wanted(self.endpoint, request, message, context):
            return streaming.respond(
                self.endpoint, request, message, context, self.status_of, json_response
            )
        answer = self.endpoint.handle(message, context)
        if answer is None:
            return empty_response(202)
        return json_response(answer, self.status_of(answer, context.era))

    def answer_batch(
        self,
        request: HttpRequest,
        batch: list[Any],
        credential: Any,
        header_version: str | None,
        limits: throttling.RateLimits,
    ) -> HttpResponse:
        if not batch:
            return error_response(400, jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch")
        if any(era_of(m, header_version) == MODERN for m in batch):
            return error_response(
                400,
                jsonrpc.INVALID_REQUEST,
                "Invalid Request: batches are not part of the 2026-07-28 revision",
            )
        answers = []
        waits: list[float] = []
        for message in batch:
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
            )
            if self.endpoint.settings.SESSIONS:  # type: ignore[union-attr]
                refusal = sessions.enter(self.endpoint, request, context, None)  # type: ignore[arg-type]
                if refusal is not None:
                    return refusal
            answer = self.endpoint.handle(message, context)  # type: ignore[union-attr]
            if answer is not None:
                answers.append(answer)
        headers = {"Retry-After": str(retry_after(max(waits)))} if waits else None
        if not answers:
            return empty_response(202)
        # Every message refused: the batch as a whole was over the limit.
        status = 429 if len(waits) == len(batch) else 200
        return json_response(answers, status, headers)

    def status_of(self, answer: dict[str, Any], era: str) -> int:
        error = answer.get("error")
        if error is None:
            return 200
        code = error.get("code")
        if code in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST):
            return 400
        if era == MODERN:
            return MODERN_STATUS.get(code, 200)
        return 200

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
        if method in NAME_PARAM and isinstance(params, dict):
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
        return None


def retry_after(wait: float) -> int:
    """Whole seconds for ``Retry-After``: at least 1, so a client never retries at once."""
    return max(1, math.ceil(wait))


def decode_header_value(raw: str) -> str | None:
    """A header value, with the ``=?base64?...?=`` form decoded; None when it is broken."""
    found = BASE64_SENTINEL.match(raw)
    if found is None:
        return raw
    try:
        return base64.b64decode(found.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


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
