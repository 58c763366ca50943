"""The OAuth application admin: what the add form offers, who registered itself, revoking."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken

ADD = "/admin/oauth2_provider/application/add/"
CHANGELIST = "/admin/oauth2_provider/application/"


def application(name: str, source: str = "manual") -> Application:
    return Application.objects.create(
        name=name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://claude.ai/api/mcp/auth_callback",
        registration_source=source,
    )


def token(user: Any, app: Application, value: str) -> AccessToken:
    access = AccessToken.objects.create(
        user=user,
        application=app,
        token=value,
        scope="read",
        expires=timezone.now() + timedelta(hours=1),
    )
    RefreshToken.objects.create(user=user, application=app, token=f"r-{value}", access_token=access)
    return access


def test_the_add_form_offers_only_the_allowed_grant_types(admin_client: Client) -> None:
    body = admin_client.get(ADD).content.decode()
    # The demo advertises the code grant (and refresh), and client credentials for machine
    # clients; RFC 9700 rules out the rest.
    assert 'name="authorization_grant_type" value="authorization-code"' in body
    assert 'name="authorization_grant_type" value="client-credentials"' in body
    for refused in ["implicit", "password", "openid-hybrid"]:
        assert f'name="authorization_grant_type" value="{refused}"' not in body
    # No OpenID Connect: no ID token algorithm to choose.
    assert '<option value="RS256"' not in body and '<option value="HS256"' not in body


def test_a_grant_type_the_settings_refuse_is_not_saved(admin_client: Client) -> None:
    response = admin_client.post(
        ADD,
        {
            "client_id": "handmade",
            "name": "Handmade",
            "client_type": "confidential",
            "authorization_grant_type": "password",
            "client_secret": "s" * 40,
            "redirect_uris": "",
            "post_logout_redirect_uris": "",
            "allowed_origins": "",
            "algorithm": "",
        },
    )
    assert response.status_code == 200
    assert "Select a valid choice. password is not one of" in response.content.decode()
    assert not Application.objects.exists()


def test_the_add_form_follows_the_settings(admin_client: Client, settings: Any) -> None:
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "client_credentials"],
    }
    body = admin_client.get(ADD).content.decode()
    assert 'name="authorization_grant_type" value="client-credentials"' in body
    assert 'name="authorization_grant_type" value="password"' not in body


def test_self_registered_applications_are_marked(admin_client: Client, db: Any) -> None:
    application("By hand")
    application("Claude", source="dcr")
    application("From a document", source="cimd")
    body = admin_client.get(CHANGELIST).content.decode()
    assert "Self-registered" in body
    assert body.count('alt="True"') == 2
    assert body.count('alt="False"') == 1


@pytest.mark.parametrize("count", [1, 2])
def test_revoke_tokens_action(admin_client: Client, alice: Any, bob: Any, count: int) -> None:
    claude, other = application("Claude", source="dcr"), application("Other")
    token(alice, claude, "alice-claude-0123456789")
    if count == 2:
        token(bob, claude, "bob-claude-0123456789")
    token(alice, other, "alice-other-0123456789")
    Grant.objects.create(
        user=alice, application=claude, code="code-0123456789",
        expires=timezone.now() + timedelta(minutes=1),
        redirect_uri="https://claude.ai/api/mcp/auth_callback", scope="read",
        code_challenge="x" * 43, code_challenge_method="S256",
    )  # fmt: skip
    response = admin_client.post(
        CHANGELIST, {"action": "revoke_tokens", "_selected_action": [claude.pk]}, follow=True
    )
    assert response.status_code == 200
    noun = "token" if count == 1 else "tokens"
    assert f"Revoked {count} {noun}." in response.content.decode()
    assert not AccessToken.objects.filter(application=claude).exists()
    assert not RefreshToken.objects.filter(application=claude, revoked__isnull=True).exists()
    assert not Grant.objects.filter(application=claude).exists()
    assert AccessToken.objects.filter(application=other).count() == 1
