"""The product's own token authentication: ``Authorization: Token <key>``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from tests.hosts.inventory.models import Token


class TokenAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request: Request) -> tuple[Any, Token] | None:
        parts = get_authorization_header(request).split()
        if len(parts) != 2 or parts[0].decode("latin-1").lower() != self.keyword.lower():
            return None
        token = Token.objects.select_related("user").filter(key=parts[1].decode("latin-1")).first()
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid token")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return self.keyword


class TokenScheme(OpenApiAuthenticationExtension):
    """Describes the tokens to drf-spectacular, as the product's OpenAPI document does."""

    target_class = TokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "apiKey", "in": "header", "name": "Authorization"}
