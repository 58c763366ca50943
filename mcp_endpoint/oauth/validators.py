"""django-oauth-toolkit's request validator, with two checks the toolkit leaves out.

Set ``OAUTH2_PROVIDER["OAUTH2_VALIDATOR_CLASS"]`` to :class:`OAuth2Validator` (as
:func:`mcp_endpoint.oauth.provider_settings` does).

- The toolkit refuses a code used twice but leaves the tokens of its first use valid;
  RFC 6749 §4.1.2 says the server SHOULD revoke them, since whoever replays a code has it,
  and the first redemption may have been theirs.
- A redirect URI of a self-registered or metadata-document client must still pass the
  registration policy when a code is sent to it. Registration refuses what it would not
  store faithfully, but rows written before that rule (an entry holding a space, stored
  as two URIs) or under an older policy must not receive codes either.
- MCP clients (registered dynamically or by a client ID metadata document) need PKCE with
  S256 whatever the host's ``PKCE_REQUIRED`` and "plain" gate leave to its own clients.
"""

from __future__ import annotations

from typing import Any

from oauth2_provider.cimd import CIMDError
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator as ToolkitOAuth2Validator
from oauth2_provider.settings import oauth2_settings
from oauthlib.oauth2.rfc6749.errors import InvalidGrantError, UnsupportedCodeChallengeMethodError

from mcp_endpoint.oauth.machine import MachineCredentials
from mcp_endpoint.oauth.models import RedeemedAuthorizationCode, code_digest
from mcp_endpoint.oauth.provider import MCP_REGISTRATION_SOURCES, is_mcp_client
from mcp_endpoint.oauth.registration import RegistrationRefused, check_policies

AUTHORIZATION_CODE = "authorization_code"


def revoke_tokens_from(code: str, client_id: str) -> int:
    """Revoke every token issued from ``code`` to ``client_id``; how many redemptions it had."""
    redeemed = list(
        RedeemedAuthorizationCode.objects.filter(code_digest=code_digest(code), client_id=client_id)
    )
    for redemption in redeemed:
        revoke_redemption(redemption.access_token_checksum, redemption.token_family)
    return len(redeemed)


def revoke_redemption(access_token_checksum: str, token_family: Any) -> None:
    # The family holds every refresh token rotated from the first one, and their access
    # tokens: a replay after the client refreshed still reaches what it holds now.
    if token_family is not None:
        get_refresh_token_model().revoke_family(token_family)
    if access_token_checksum:
        for token in get_access_token_model().objects.filter(token_checksum=access_token_checksum):
            token.revoke()


def redirect_allowed_by_policy(application: Any, redirect_uri: str) -> bool:
    """Whether ``redirect_uri`` passes the policy ``application`` registered under."""
    sources = application.RegistrationSource
    metadata = {"redirect_uris": [redirect_uri]}
    if application.registration_source == sources.DCR:
        try:
            check_policies(None, metadata)
        except RegistrationRefused:
            return False
    elif application.registration_source == sources.CIMD:
        check = getattr(oauth2_settings.CIMD_METADATA_FETCHER(), "check", None)
        if check is not None:
            try:
                check(application.client_id, metadata)
            except CIMDError:
                return False
    # An administrator's client keeps what the administrator registered.
    return True


class OAuth2Validator(MachineCredentials, ToolkitOAuth2Validator):
    """The toolkit's validator, remembering what each redeemed code issued, sending codes
    only to redirect URIs the registration policy allows, asking S256 PKCE of MCP clients,
    and giving client-credentials tokens the service account of their machine client
    (:mod:`mcp_endpoint.oauth.machine`)."""

    def is_pkce_required(self, client_id: str, request: Any) -> bool:
        client = getattr(request, "client", None)
        if client is not None and getattr(client, "client_id", None) == client_id:
            mcp_client = client.registration_source in MCP_REGISTRATION_SOURCES
        else:
            mcp_client = is_mcp_client(client_id)
        if not mcp_client:
            required: bool = super().is_pkce_required(client_id, request)
            return required
        # Asked while the authorisation request is validated, before oauthlib takes
        # "plain" (or no method, which means "plain") as one of the methods it supports.
        if getattr(request, "code_challenge", None) is not None and (
            getattr(request, "code_challenge_method", None) != "S256"
        ):
            raise UnsupportedCodeChallengeMethodError(
                description='MCP clients must use PKCE with code_challenge_method "S256".',
                request=request,
            )
        return True

    def validate_redirect_uri(
        self, client_id: str, redirect_uri: str, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        allowed: bool = super().validate_redirect_uri(
            client_id, redirect_uri, request, *args, **kwargs
        )
        return allowed and redirect_allowed_by_policy(request.client, redirect_uri)

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        valid: bool = super().validate_code(client_id, code, client, request, *args, **kwargs)
        if not valid and client is not None:
            revoke_tokens_from(code, client.client_id)
        return valid

    def _create_access_token(
        self, expires: Any, request: Any, token: Any, source_refresh_token: Any = None
    ) -> Any:
        access_token = super()._create_access_token(expires, request, token, source_refresh_token)
        if request.grant_type == AUTHORIZATION_CODE:
            request.issued_from_code = {"access_token_checksum": access_token.token_checksum}
        return access_token

    def _create_refresh_token(
        self, request: Any, refresh_token_code: Any, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        refresh_token = super()._create_refresh_token(
            request, refresh_token_code, access_token, previous_refresh_token
        )
        issued = getattr(request, "issued_from_code", None)
        if request.grant_type == AUTHORIZATION_CODE and issued is not None:
            issued["token_family"] = refresh_token.token_family
        return refresh_token

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any
    ) -> None:
        issued = getattr(request, "issued_from_code", None) or {}
        try:
            super().invalidate_authorization_code(client_id, code, request, *args, **kwargs)
        except InvalidGrantError:
            # Another request redeemed the same code between the check and now: both are
            # uses of one code, so the tokens of both go.
            revoke_redemption(issued.get("access_token_checksum", ""), issued.get("token_family"))
            revoke_tokens_from(code, request.client.client_id)
            raise
        RedeemedAuthorizationCode.objects.create(
            code_digest=code_digest(code),
            client_id=request.client.client_id,
            access_token_checksum=issued.get("access_token_checksum", ""),
            token_family=issued.get("token_family"),
        )
