"""A product with an OAuth set-up of its own (:mod:`tests.hosts.ownoauth`): after
``provider_settings(existing=...)`` its partner client still gets a token without PKCE and
uses its own scopes on the product's REST API, while an MCP client that registers through
``/o/register`` must use PKCE with S256."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client
from oauth2_provider.models import Application, Grant

from mcp_endpoint.oauth.checks import check_oauth_settings
from tests.hosts.ownoauth import oauth_settings
from tests.oauth_helpers import form_fields, query_of

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.ownoauth.urls")]

PARTNER_REDIRECT = "https://partner.example/callback"
PARTNER_SECRET = "partner-secret-0123456789"
MCP_REDIRECT = "http://127.0.0.1:9999/callback"
RESOURCE = "http://testserver/mcp"


@pytest.fixture(autouse=True)
def product_settings(settings: Any) -> None:
    settings.OAUTH2_PROVIDER = oauth_settings.OAUTH2_PROVIDER


@pytest.fixture
def partner(db: Any) -> Application:
    """The product's own confidential client, made by its administrators long ago."""
    return Application.objects.create(
        name="Partner",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=PARTNER_REDIRECT,
        client_secret=PARTNER_SECRET,
    )


@pytest.fixture
def signed_in(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


def authorize(client_id: str, redirect_uri: str, scope: str, **extra: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "scope": scope,
        "state": "st-1",
        **extra,
    }
    return "/o/authorize/?" + urlencode(params)


def approve(client: Client, url: str) -> dict[str, str]:
    page = client.get(url)
    assert page.status_code == 200, page.content[:500]
    fields = form_fields(page.content.decode(), "authorizationForm")
    answer = client.post(url, {**fields, "allow": "Allow"})
    assert answer.status_code == 302, answer.content[:500]
    return query_of(answer["Location"])


def s256() -> tuple[str, str]:
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_the_products_settings_keep_its_scopes_and_pass_the_checks() -> None:
    scopes = oauth_settings.OAUTH2_PROVIDER["SCOPES"]
    assert {"orders:read", "orders:write", "read", "write"} <= set(scopes)
    assert check_oauth_settings() == []


def test_the_partner_still_gets_a_token_without_pkce(signed_in: Client, partner: Any) -> None:
    query = approve(signed_in, authorize(partner.client_id, PARTNER_REDIRECT, "orders:read"))
    assert "error" not in query, query
    basic = base64.b64encode(f"{partner.client_id}:{PARTNER_SECRET}".encode()).decode()
    token = signed_in.post(
        "/o/token/",
        urlencode(
            {
                "grant_type": "authorization_code",
                "code": query["code"],
                "redirect_uri": PARTNER_REDIRECT,
            }
        ),
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Basic {basic}"},
    )
    assert token.status_code == 200, token.content
    assert token.json()["scope"] == "orders:read"
    bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
    orders = Client().get("/api/orders/", headers=bearer)
    assert orders.status_code == 200, orders.content
    assert [o["item"] for o in orders.json()] == ["teapot", "kettle"]


def test_a_partner_token_without_the_products_scope_is_refused_on_rest(
    signed_in: Client, partner: Any
) -> None:
    query = approve(signed_in, authorize(partner.client_id, PARTNER_REDIRECT, "orders:write"))
    basic = base64.b64encode(f"{partner.client_id}:{PARTNER_SECRET}".encode()).decode()
    token = signed_in.post(
        "/o/token/",
        urlencode(
            {
                "grant_type": "authorization_code",
                "code": query["code"],
                "redirect_uri": PARTNER_REDIRECT,
            }
        ),
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Basic {basic}"},
    )
    bearer = {"Authorization": f"Bearer {token.json()['access_token']}"}
    assert Client().get("/api/orders/", headers=bearer).status_code == 403


def register_mcp_client(client: Client) -> str:
    body = {
        "client_name": "An MCP client",
        "redirect_uris": [MCP_REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    answer = client.post("/o/register/", json.dumps(body), content_type="application/json")
    assert answer.status_code == 201, answer.content
    client_id: str = answer.json()["client_id"]
    return client_id


@pytest.mark.parametrize(
    "pkce",
    [
        {},
        {"code_challenge": "abc" * 15, "code_challenge_method": "plain"},
        {"code_challenge": "abc" * 15},
    ],
    ids=["without-pkce", "plain", "no-method-means-plain"],
)
def test_an_mcp_client_is_refused_without_s256(signed_in: Client, pkce: dict[str, str]) -> None:
    client_id = register_mcp_client(signed_in)
    url = authorize(client_id, MCP_REDIRECT, "orders:read", resource=RESOURCE, **pkce)
    answer = signed_in.get(url)
    assert answer.status_code == 302, "refused before the consent page"
    assert answer["Location"].startswith(MCP_REDIRECT + "?")
    assert query_of(answer["Location"])["error"] == "invalid_request"
    assert Grant.objects.count() == 0


def test_an_mcp_client_with_s256_gets_a_token_for_the_endpoint(signed_in: Client) -> None:
    client_id = register_mcp_client(signed_in)
    verifier, challenge = s256()
    query = approve(
        signed_in,
        authorize(
            client_id,
            MCP_REDIRECT,
            "orders:read",
            resource=RESOURCE,
            code_challenge=challenge,
            code_challenge_method="S256",
        ),
    )
    token = signed_in.post(
        "/o/token",
        urlencode(
            {
                "grant_type": "authorization_code",
                "code": query["code"],
                "redirect_uri": MCP_REDIRECT,
                "client_id": client_id,
                "code_verifier": verifier,
                "resource": RESOURCE,
            }
        ),
        content_type="application/x-www-form-urlencoded",
    )
    assert token.status_code == 200, token.content
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    listed = Client().post(
        "/mcp",
        json.dumps(message),
        content_type="application/json",
        headers={
            "Authorization": f"Bearer {token.json()['access_token']}",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    assert listed.status_code == 200, listed.content
    assert [t["name"] for t in listed.json()["result"]["tools"]] == ["list_orders"]
