"""Machine clients: OAuth applications that get tokens with the client-credentials grant.

A service or a CI job has no user at a browser to approve it. An administrator makes a
confidential application with the client-credentials grant in the admin and a
:class:`~mcp_endpoint.oauth.models.MachineClient` for it, naming the Django user it acts as
(a service account). Its tokens are then that user's tokens: the same scopes, the same
audience (``resource``, RFC 8707) and the same permissions as a user's, and revoking the
machine client revokes them and refuses new ones.

The toolkit issues client-credentials tokens with no user; :class:`MachineCredentials`
(a part of the request validator) gives them the service account and refuses a client
that has no machine client, a revoked one, or one whose user is inactive.
"""

from __future__ import annotations

from typing import Any

from mcp_endpoint.oauth.models import MachineClient

CLIENT_CREDENTIALS = "client_credentials"


def active_machine_client(client_id: str) -> MachineClient | None:
    """The machine client of ``client_id`` that may get tokens now, or None."""
    machine = (
        MachineClient.objects.select_related("user")
        .filter(client_id=client_id, revoked__isnull=True)
        .first()
    )
    if machine is None or not machine.user.is_active:
        return None
    return machine


class MachineCredentials:
    """The request validator's part for the client-credentials grant (a mixin of
    :class:`mcp_endpoint.oauth.validators.OAuth2Validator`)."""

    def validate_grant_type(
        self, client_id: str, grant_type: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        allowed: bool = super().validate_grant_type(  # type: ignore[misc]
            client_id, grant_type, client, request, *args, **kwargs
        )
        if not allowed or grant_type != CLIENT_CREDENTIALS:
            return allowed
        # No service account named (or it was revoked): the application gets no token.
        return active_machine_client(client.client_id) is not None

    def validate_scopes(
        self,
        client_id: str,
        scopes: list[str],
        client: Any,
        request: Any,
        *args: Any,
        **kwargs: Any,
    ) -> bool:
        valid: bool = super().validate_scopes(  # type: ignore[misc]
            client_id, scopes, client, request, *args, **kwargs
        )
        if not valid or getattr(request, "grant_type", None) != CLIENT_CREDENTIALS:
            return valid
        machine = active_machine_client(client.client_id)
        return machine is not None and machine.allows(scopes)

    def _create_access_token(
        self, expires: Any, request: Any, token: Any, source_refresh_token: Any = None
    ) -> Any:
        if request.grant_type == CLIENT_CREDENTIALS:
            machine = active_machine_client(request.client.client_id)
            # The toolkit cleared the user (client-credentials tokens name none); the
            # service account takes its place, so the token is that user's.
            request.user = machine.user if machine is not None else None
        return super()._create_access_token(  # type: ignore[misc]
            expires, request, token, source_refresh_token
        )


def refuse_revoked(token: Any) -> str | None:
    """Why a client-credentials ``token`` is no longer good (its machine client revoked,
    removed, or its user deactivated), or None. Tokens of other grants are not asked."""
    application = getattr(token, "application", None)
    if application is None or application.authorization_grant_type != "client-credentials":
        return None
    if active_machine_client(application.client_id) is None:
        return "This client's access has been revoked."
    return None


def revoke(machine: MachineClient) -> int:
    """Revoke a machine client: no new token, and every token it holds revoked; how many."""
    from django.utils import timezone
    from oauth2_provider.models import get_application_model

    from mcp_endpoint.oauth.revocation import revoke_application_tokens

    machine.revoked = timezone.now()
    machine.save(update_fields=["revoked"])
    application = get_application_model().objects.filter(client_id=machine.client_id).first()
    return revoke_application_tokens(application) if application is not None else 0
