"""The base of the MCP view: the endpoint it serves, its policies, the body read once."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, HttpResponse
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from mcp_endpoint import outages
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.protocol.versions import DEFAULT_LEGACY_HEADER_VERSION, LEGACY
from mcp_endpoint.responses import answer_response
from mcp_endpoint.transport.origins import origin_is_allowed

if TYPE_CHECKING:
    from mcp_endpoint import throttling
    from mcp_endpoint.interfaces import EndpointLike


class TransportView(View):
    """What every piece of the MCP view stands on.

    Its policies are class attributes, as DRF's ``APIView`` holds them: a subclass, or
    ``MCPView.as_view(endpoint=..., allowed_origins=[...])``, may set each one; left at
    None, each takes the endpoint's setting of the same name (``AUTHENTICATION_CLASSES``,
    ``THROTTLE_CLASSES``, ``ALLOWED_ORIGINS``, ``REQUIRE_CREDENTIAL``, ``LOOPBACK_ONLY``).
    """

    endpoint: EndpointLike | None = None
    http_method_names = ["post", "options", "get", "delete", "put", "patch", "head"]
    authentication_classes: Sequence[type[Any]] | None = None
    throttle_classes: Sequence[type[Any]] | None = None
    allowed_origins: Sequence[str] | None = None
    require_credential: bool | None = None
    loopback_only: bool | None = None
    # The body as a message, or why it is not one; read and parsed once per request (Django
    # makes a view instance per request).
    _parsed: tuple[Any, ProtocolError | None] | None = None

    @classmethod
    def as_view(cls, **initkwargs: Any) -> Any:
        # Exempt once, here: method_decorator(csrf_exempt) on dispatch wraps it anew on
        # every request.
        return csrf_exempt(super().as_view(**initkwargs))

    # -- policies ----------------------------------------------------------------------

    def get_authentication_classes(self) -> Sequence[type[Any]]:
        """The DRF authentication classes that read the caller's credential."""
        assert self.endpoint is not None
        if self.authentication_classes is not None:
            return self.authentication_classes
        classes: Sequence[type[Any]] = self.endpoint.settings.AUTHENTICATION_CLASSES
        return classes

    def get_throttle_classes(self) -> Sequence[type[Any]] | None:
        """The DRF throttles a message that runs host code counts against (None: DRF's
        ``DEFAULT_THROTTLE_CLASSES``, as for REST)."""
        assert self.endpoint is not None
        if self.throttle_classes is not None:
            return self.throttle_classes
        classes: Sequence[type[Any]] | None = self.endpoint.settings.THROTTLE_CLASSES
        return classes

    def get_allowed_origins(self) -> Sequence[str]:
        """Browser origins allowed besides loopback and django-cors-headers' own."""
        assert self.endpoint is not None
        if self.allowed_origins is not None:
            return self.allowed_origins
        origins: Sequence[str] = self.endpoint.settings.ALLOWED_ORIGINS
        return origins

    def get_require_credential(self) -> bool:
        """Whether a request without a credential is answered 401."""
        assert self.endpoint is not None
        if self.require_credential is not None:
            return self.require_credential
        return bool(self.endpoint.settings.REQUIRE_CREDENTIAL)

    def get_loopback_only(self) -> bool:
        """Whether only loopback clients are answered (any other is 403)."""
        assert self.endpoint is not None
        if self.loopback_only is not None:
            return self.loopback_only
        return bool(self.endpoint.settings.LOOPBACK_ONLY)

    def origin_allowed(self, request: HttpRequest) -> bool:
        origin = request.META.get("HTTP_ORIGIN")
        if origin is None:
            return True
        assert self.endpoint is not None
        return origin_is_allowed(origin, self.get_allowed_origins())

    def message_context(
        self,
        request: HttpRequest,
        era: str,
        credential: Any,
        limits: throttling.RateLimits,
        selection: Any = None,
    ) -> RequestContext:
        """What one message of this request runs with: its era, the credential, the
        throttle keys already counted for it, the toolsets the client chose."""
        return RequestContext(
            era=era,
            protocol_version=(
                request.META.get("HTTP_MCP_PROTOCOL_VERSION") or DEFAULT_LEGACY_HEADER_VERSION
            ),
            credential=credential,
            transport=request,
            counted_throttle_keys=frozenset(limits.counted),
            selection=selection,
        )

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


def declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def retry_after(wait: float) -> int:
    """Whole seconds for ``Retry-After``: at least 1, so a client never retries at once."""
    return max(1, math.ceil(wait))
