"""The product's team tokens: ``Authorization: Team <key>``, the caller an ``AnonymousUser``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AnonymousUser
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from tests.hosts.teamtokens.models import TeamToken


class TeamTokenAuthentication(BaseAuthentication):
    """``Authorization: Team <key>``; another scheme, no opinion; an unknown key is refused."""

    keyword = b"team"
    mcp_credential_name = "team tokens"

    def authenticate(self, request: Request) -> tuple[Any, TeamToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Invalid team token.")
        token = TeamToken.objects.select_related("team").filter(key=parts[1].decode()).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid team token.")
        return AnonymousUser(), token

    def authenticate_header(self, request: Request) -> str:
        return 'Team realm="teamtokens"'


class HasTeamToken(BasePermission):
    """A team token, and for writes one that may write."""

    message = "This team token is read-only."

    def has_permission(self, request: Request, view: Any) -> bool:
        token = request.auth
        if not isinstance(token, TeamToken):
            return False
        return request.method in SAFE_METHODS or token.can_write
