"""The caller's credential, read once per request by the view's DRF authentication classes,
and the 401 challenge that tells a client where to get one."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request

from mcp_endpoint import authentication
from mcp_endpoint.credential import accepted_kinds
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.responses import error_response
from mcp_endpoint.transport.base import TransportView


class CredentialMixin(TransportView):
    """Who is calling: the credential, or the 401 or 403 that refuses the request."""

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
        drf_request = authentication.drf_request(request, self.get_authentication_classes())
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
        if credential is None and self.get_require_credential():
            missing = self.unauthorized(request, refused=False, request_id=request_id)
            return None, drf_request, missing
        return credential, drf_request, None

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
        accepted = accepted_kinds(self.get_authentication_classes())
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
