"""OAuth for MCP clients through django-oauth-toolkit, over the real URLs with Django's client:
the metadata documents, registration and its limits, consent, tokens at ``/mcp``, refusals,
and the trailing-slash rule.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant
from oauth2_provider.settings import oauth2_settings

from mcp_endpoint import site
from mcp_endpoint.oauth.registration import RedirectURIPolicy
from mcp_endpoint.oauth.views import with_issuer
from tests.oauth_helpers import Document, DocumentServer, form_fields, query_of

BASE = "http://testserver"
RESOURCE = f"{BASE}/mcp"
ISSUER = f"{BASE}/o"
REDIRECT = "http://127.0.0.1:9999/callback"
PROTOCOL = {"MCP-Protocol-Version": "2025-11-25"}


# -- helpers -------------------------------------------------------------------------------


def pkce() -> tuple[str, str]:
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def register(client: Client, path: str = "/o/register", **metadata: Any) -> Any:
    body = {
        "client_name": "Test client",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    return client.post(path, json.dumps(body), content_type="application/json")


def authorize_query(client_id: str, challenge: str | None, **extra: str) -> str:
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "scope": "read write",
        "state": "st-123",
        "resource": RESOURCE,
        **extra,
    }
    if challenge is not None:
        params.update(code_challenge=challenge, code_challenge_method="S256")
    return "/o/authorize/?" + urlencode({k: v for k, v in params.items() if v is not None})


def approve(client: Client, url: str, allow: bool = True) -> Any:
    page = client.get(url)
    assert page.status_code == 200, page.content[:500]
    fields = form_fields(page.content.decode(), "authorizationForm")
    if allow:
        fields["allow"] = "Allow"
    return client.post(url, fields)


def exchange(client: Client, client_id: str, code: str, verifier: str, **extra: str) -> Any:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
        "resource": RESOURCE,
        **extra,
    }
    return client.post(
        "/o/token", urlencode(data), content_type="application/x-www-form-urlencoded"
    )


def get_token(client: Client, app: Application, scope: str = "read write", **extra: str) -> str:
    """A token through the real code flow, for the user signed in on ``client``."""
    verifier, challenge = pkce()
    answer = approve(client, authorize_query(app.client_id, challenge, scope=scope, **extra))
    code = query_of(answer["Location"])["code"]
    response = exchange(client, app.client_id, code, verifier, **extra)
    assert response.status_code == 200, response.content
    token: str = response.json()["access_token"]
    return token


def mcp(client: Client, token: str, method: str, params: dict[str, Any] | None = None) -> Any:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post(
        "/mcp",
        json.dumps(message),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}", **PROTOCOL},
    )


@pytest.fixture
def app(db: Any) -> Application:
    """A public client registered the way MCP clients register."""
    return Application.objects.create(
        name="Inspector",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
        registration_source=Application.RegistrationSource.DCR,
    )


@pytest.fixture
def signed_in(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


# -- metadata documents --------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/mcp/",
        "/o/.well-known/oauth-protected-resource",
    ],
)
@pytest.mark.backends
def test_protected_resource_metadata_names_the_endpoint(client: Client, path: str) -> None:
    data = client.get(path).json()
    assert data["resource"] == RESOURCE
    assert data["authorization_servers"] == [ISSUER]
    assert data["scopes_supported"] == site.scopes() == ["read", "write"]
    assert data["bearer_methods_supported"] == ["header"]


@pytest.mark.backends
def test_resource_url_setting_is_the_resource(client: Client, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "RESOURCE_URL": "https://tasks.example/mcp"}
    data = client.get("/.well-known/oauth-protected-resource/mcp").json()
    assert data["resource"] == "https://tasks.example/mcp"


@pytest.mark.backends
def test_protected_resource_metadata_only_for_mcp_endpoints(client: Client) -> None:
    response = client.get("/.well-known/oauth-protected-resource/api/projects")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.backends
def test_the_401_points_at_the_metadata_and_names_the_scopes(client: Client) -> None:
    response = client.post("/mcp", "{}", content_type="application/json")
    assert response.status_code == 401
    challenge = response["WWW-Authenticate"]
    url = f"{BASE}/.well-known/oauth-protected-resource/mcp"
    assert f'resource_metadata="{url}"' in challenge
    assert 'scope="read write"' in challenge
    assert client.get(url).json()["resource"] == RESOURCE


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-authorization-server/o",
        "/.well-known/oauth-authorization-server/o/",
        "/.well-known/oauth-authorization-server",
        "/o/.well-known/oauth-authorization-server",
    ],
)
@pytest.mark.backends
def test_authorization_server_metadata(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    data = response.json()
    assert data["issuer"] == ISSUER
    assert data["code_challenge_methods_supported"] == ["S256"]
    assert data["registration_endpoint"].startswith(f"{ISSUER}/register")
    assert data["client_id_metadata_document_supported"] is True
    assert data["authorization_response_iss_parameter_supported"] is True
    assert data["response_types_supported"] == ["code"]
    assert "none" in data["token_endpoint_auth_methods_supported"]
    assert "implicit" not in data["grant_types_supported"]


@pytest.mark.backends
def test_metadata_for_another_issuer_is_not_made_up(client: Client) -> None:
    response = client.get("/.well-known/oauth-authorization-server/tenant1")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


@pytest.mark.backends
def test_metadata_documents_answer_post_with_405(client: Client) -> None:
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server/o",
    ):
        assert client.post(path).status_code == 405


# -- dynamic registration ------------------------------------------------------------------


def test_anonymous_registration_of_a_native_client(client: Client, db: Any) -> None:
    response = register(client, application_type="native")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["application_type"] == "native"
    assert data["token_endpoint_auth_method"] == "none"
    application = Application.objects.get(client_id=data["client_id"])
    assert application.registration_source == Application.RegistrationSource.DCR
    assert application.client_type == Application.CLIENT_PUBLIC


@pytest.mark.parametrize(
    ("uri", "application_type"),
    [
        ("https://claude.ai/api/mcp/auth_callback", "web"),
        ("https://chatgpt.com/connector_platform_oauth_redirect", None),
        ("http://localhost:33418/callback", "native"),
        ("http://[::1]:5000/cb", "native"),
        ("cursor://anysphere.cursor-mcp/oauth/callback", "native"),
    ],
)
def test_registration_allows_known_clients(
    client: Client, db: Any, uri: str, application_type: str | None
) -> None:
    extra = {"application_type": application_type} if application_type else {}
    response = register(client, redirect_uris=[uri], **extra)
    assert response.status_code == 201, response.content
    assert response.json()["application_type"] == (application_type or "web")


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://evil.example/callback"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://evil.example/callback"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["data:text/html,hi"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://claude.ai/cb#fragment"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://user:pw@claude.ai/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"application_type": "web"}, "invalid_redirect_uri"),
        ({"application_type": "desktop"}, "invalid_client_metadata"),
    ],
)
def test_registration_refusals_change_nothing(
    client: Client, db: Any, metadata: dict[str, Any], error: str
) -> None:
    response = register(client, **metadata)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == error
    assert Application.objects.count() == 0
    assert AccessToken.objects.count() == 0


def test_registration_is_rate_limited(client: Client, db: Any, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_REGISTRATION_RATE": "2/hour"}
    assert register(client).status_code == 201
    assert register(client).status_code == 201
    response = register(client)
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert response.json()["error"] == "temporarily_unavailable"
    assert Application.objects.count() == 2


def test_registration_update_passes_the_same_policy(client: Client, db: Any) -> None:
    data = register(client).json()
    path = data["registration_client_uri"].removeprefix(BASE)
    auth = {"Authorization": f"Bearer {data['registration_access_token']}"}
    refused = client.put(
        path,
        json.dumps(
            {"redirect_uris": ["http://evil.example/cb"], "token_endpoint_auth_method": "none"}
        ),
        content_type="application/json",
        headers=auth,
    )
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_redirect_uri"
    assert Application.objects.get(client_id=data["client_id"]).redirect_uris == REDIRECT
    stranger = client.put(
        path, json.dumps({"redirect_uris": [REDIRECT]}), content_type="application/json"
    )
    assert stranger.status_code == 401


@pytest.mark.parametrize(
    ("uri", "allowed"),
    [
        ("http://127.0.0.1:1234/cb", True),
        ("https://127.0.0.1/cb", True),
        ("https://vscode.dev/redirect", True),
        ("http://claude.ai/cb", False),
        ("file:///etc/passwd", False),
        ("http://127.0.0.1:99999/cb", False),
        ("not a uri", False),
    ],
)
def test_redirect_uri_policy(uri: str, allowed: bool) -> None:
    assert (RedirectURIPolicy().refusal(uri) is None) is allowed


# -- authorisation and consent ---------------------------------------------------------------


def test_an_anonymous_user_is_sent_to_log_in(client: Client, app: Application) -> None:
    _, challenge = pkce()
    response = client.get(authorize_query(app.client_id, challenge))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    login = client.get(response["Location"])
    assert login.status_code == 200
    assert b"An application asks to use your account" in login.content


def test_the_consent_page_shows_client_scopes_and_resource(
    signed_in: Client, app: Application
) -> None:
    _, challenge = pkce()
    page = signed_in.get(authorize_query(app.client_id, challenge)).content.decode()
    assert "Inspector wants to use your account" in page
    assert "Registered itself with this site" in page
    assert "an application on this computer" in page
    assert "See your projects, tasks and comments" in page
    assert "Create, change and delete tasks and comments in your name" in page
    assert f"Task tracker &mdash; <code>{RESOURCE}</code>" in page
    # The account page of connected apps, where the host mounts it.
    assert 'href="/account/ai/apps/"' in page


def test_consent_for_an_admin_created_client(signed_in: Client, app: Application) -> None:
    app.registration_source = Application.RegistrationSource.MANUAL
    app.save()
    _, challenge = pkce()
    page = signed_in.get(authorize_query(app.client_id, challenge)).content.decode()
    assert "Created by an administrator of this site" in page


def test_approval_returns_code_state_and_iss(signed_in: Client, app: Application) -> None:
    verifier, challenge = pkce()
    answer = approve(signed_in, authorize_query(app.client_id, challenge))
    assert answer.status_code == 302
    assert answer["Location"].startswith(REDIRECT + "?")
    query = query_of(answer["Location"])
    assert query["state"] == "st-123"
    assert query["iss"] == ISSUER
    response = exchange(signed_in, app.client_id, query["code"], verifier)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    token = AccessToken.objects.get()
    assert token.resource == [RESOURCE]
    assert set(token.scope.split()) == {"read", "write"}


def test_deny_returns_access_denied_with_iss(signed_in: Client, app: Application) -> None:
    _, challenge = pkce()
    answer = approve(signed_in, authorize_query(app.client_id, challenge), allow=False)
    assert answer.status_code == 302
    query = query_of(answer["Location"])
    assert query == {"error": "access_denied", "state": "st-123", "iss": ISSUER}
    assert Grant.objects.count() == 0


@pytest.mark.parametrize(
    "pkce_params",
    [
        {},
        {"code_challenge": "abc" * 15, "code_challenge_method": "plain"},
    ],
    ids=["without-pkce", "plain"],
)
def test_authorisation_needs_s256_pkce(
    signed_in: Client, app: Application, pkce_params: dict[str, str]
) -> None:
    response = signed_in.get(authorize_query(app.client_id, None, **pkce_params))
    assert response.status_code == 302, "refused before the consent page"
    assert response["Location"].startswith(REDIRECT + "?")
    query = query_of(response["Location"])
    assert query["error"] == "invalid_request"
    assert query["state"] == "st-123"
    assert query["iss"] == ISSUER
    assert Grant.objects.count() == 0


def test_a_code_replayed_is_refused(signed_in: Client, app: Application) -> None:
    verifier, challenge = pkce()
    code = query_of(approve(signed_in, authorize_query(app.client_id, challenge))["Location"])[
        "code"
    ]
    assert exchange(signed_in, app.client_id, code, verifier).status_code == 200
    replay = exchange(signed_in, app.client_id, code, verifier)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    # ...and the token of its first use is revoked (RFC 6749 §4.1.2).
    assert AccessToken.objects.count() == 0


def test_a_token_for_another_resource_cannot_be_asked_for(
    signed_in: Client, app: Application
) -> None:
    verifier, challenge = pkce()
    code = query_of(approve(signed_in, authorize_query(app.client_id, challenge))["Location"])[
        "code"
    ]
    response = exchange(
        signed_in, app.client_id, code, verifier, resource="https://other.example/mcp"
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_target"
    assert AccessToken.objects.count() == 0


# -- client ID metadata documents ----------------------------------------------------------


@pytest.fixture
def documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[DocumentServer]:
    with DocumentServer(tmp_path) as server:
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_path))
        yield server


def client_document(client_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "client_id": client_id,
        "client_name": "Document client",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        **extra,
    }


LOOPBACK_FETCHER = {"CIMD_METADATA_FETCHER": "tests.oauth_helpers.LoopbackMetadataFetcher"}


def with_toolkit_settings(**values: Any) -> Any:
    return override_settings(OAUTH2_PROVIDER={**oauth2_settings.user_settings, **values})


def test_a_metadata_document_makes_a_client(signed_in: Client, documents: DocumentServer) -> None:
    client_id = documents.url("/client.json")
    documents.serve_json("/client.json", client_document(client_id))
    _, challenge = pkce()
    with with_toolkit_settings(**LOOPBACK_FETCHER):
        page = signed_in.get(authorize_query(client_id, challenge))
    assert page.status_code == 200
    text = page.content.decode()
    assert "Described by its client metadata document" in text
    assert f"<code>{client_id}</code>" in text
    assert Application.objects.get().registration_source == Application.RegistrationSource.CIMD


def refused_document(client: Client, client_id: str) -> None:
    """An authorisation request naming ``client_id`` is refused, and nothing is created."""
    _, challenge = pkce()
    response = client.get(authorize_query(client_id, challenge))
    assert response.status_code == 400
    assert b"invalid_client_id" in response.content or b"invalid_request" in response.content
    assert Application.objects.count() == 0
    assert Grant.objects.count() == 0


def test_a_metadata_document_that_is_too_large(
    signed_in: Client, documents: DocumentServer
) -> None:
    client_id = documents.url("/large.json")
    padding = "x" * (oauth2_settings.CIMD_MAX_DOCUMENT_SIZE + 100)
    documents.serve_json("/large.json", client_document(client_id, padding=padding))
    with with_toolkit_settings(**LOOPBACK_FETCHER):
        refused_document(signed_in, client_id)
    assert "/large.json" in documents.requests


def test_a_metadata_document_that_is_not_json(signed_in: Client, documents: DocumentServer) -> None:
    client_id = documents.url("/page.html")
    documents.documents["/page.html"] = Document(b"<html></html>", "text/html")
    with with_toolkit_settings(**LOOPBACK_FETCHER):
        refused_document(signed_in, client_id)


def test_a_metadata_document_with_a_foreign_redirect(
    signed_in: Client, documents: DocumentServer
) -> None:
    client_id = documents.url("/foreign.json")
    documents.serve_json(
        "/foreign.json", client_document(client_id, redirect_uris=["https://evil.example/cb"])
    )
    with with_toolkit_settings(**LOOPBACK_FETCHER):
        refused_document(signed_in, client_id)


def test_a_metadata_document_not_on_https(signed_in: Client, db: Any) -> None:
    refused_document(signed_in, "http://127.0.0.1:9/client.json")


def test_a_metadata_document_on_a_private_address(
    signed_in: Client, documents: DocumentServer
) -> None:
    # The production fetcher, with a server that would answer: the address alone refuses it.
    client_id = documents.url("/client.json")
    documents.serve_json("/client.json", client_document(client_id))
    refused_document(signed_in, client_id)
    assert documents.requests == []


# -- tokens at /mcp ------------------------------------------------------------------------


def test_a_token_drives_tool_visibility(signed_in: Client, app: Application, project: Any) -> None:
    token = get_token(signed_in, app, scope="read")
    tools = {t["name"] for t in mcp(signed_in, token, "tools/list").json()["result"]["tools"]}
    assert "summarize_project" in tools and "list_tasks" in tools
    assert "create_task" not in tools
    result = mcp(
        signed_in,
        token,
        "tools/call",
        {"name": "summarize_project", "arguments": {"project_id": project.pk}},
    )
    assert result.json()["result"]["structuredContent"]["name"] == "Launch"


def test_a_token_without_the_scope_cannot_call_the_tool(
    signed_in: Client, app: Application, project: Any
) -> None:
    token = get_token(signed_in, app, scope="read")
    arguments = {"project": project.pk, "title": "Sneaky"}
    result = mcp(signed_in, token, "tools/call", {"name": "create_task", "arguments": arguments})
    body = result.json()["result"]
    assert body["isError"] is True
    assert body["structuredContent"]["error"]["code"] == "insufficient_scope"
    assert not project.tasks.filter(title="Sneaky").exists()


def test_an_unbound_token_passes_the_viewset_permissions(
    signed_in: Client, app: Application, project: Any, settings: Any
) -> None:
    # A token asked for without a resource is not bound to one (RFC 8707 is opt-in); a host
    # may accept such tokens at /mcp (they are refused by default).
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_ACCEPT_UNBOUND_TOKENS": True}
    verifier, challenge = pkce()
    url = authorize_query(app.client_id, challenge, scope="read")
    url = url.replace("&resource=" + urlencode({"r": RESOURCE})[2:], "")
    code = query_of(approve(signed_in, url)["Location"])["code"]
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
            "client_id": app.client_id, "code_verifier": verifier}  # fmt: skip
    token = signed_in.post("/o/token", data).json()["access_token"]
    assert AccessToken.objects.get().resource == []
    result = mcp(signed_in, token, "tools/call", {"name": "list_projects", "arguments": {}})
    body = result.json()["result"]
    assert body["isError"] is False, body
    assert [p["name"] for p in body["structuredContent"]["results"]] == ["Launch"]


def test_a_token_bound_to_mcp_passes_the_viewset_permissions(
    signed_in: Client, app: Application, project: Any
) -> None:
    token = get_token(signed_in, app, scope="read")
    result = mcp(signed_in, token, "tools/call", {"name": "list_projects", "arguments": {}})
    body = result.json()["result"]
    assert body["isError"] is False, body
    # ...and its scopes still decide: a read token may not write through the viewset.
    result = mcp(signed_in, token, "tools/call",
                 {"name": "create_project", "arguments": {"name": "Nope"}})  # fmt: skip
    error = result.json()["result"]["structuredContent"]["error"]
    assert error["code"] == "insufficient_scope"
    assert error["required_scopes"] == ["write"]


def test_the_same_token_is_refused_by_the_rest_api(
    signed_in: Client, app: Application, project: Any
) -> None:
    # Bound to /mcp by its resource: the REST API is another resource and refuses it (401
    # without the browser session; 403 here, where the session signs the user in but no
    # token with a scope comes with it).
    token = get_token(signed_in, app, scope="read")
    response = signed_in.get("/api/projects/", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 403
    anonymous = Client().get("/api/projects/", headers={"Authorization": f"Bearer {token}"})
    assert anonymous.status_code == 401


def refused(response: Any) -> None:
    assert response.status_code == 401
    assert response.json()["error"]["code"] == -32001
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert "resource_metadata=" in response["WWW-Authenticate"]


def test_a_token_for_another_resource_is_refused(
    signed_in: Client, app: Application, alice: Any
) -> None:
    AccessToken.objects.create(
        user=alice,
        application=app,
        token="other-resource-token-0123456789abcdef",
        scope="read write",
        expires=timezone.now() + timedelta(hours=1),
        resource=["https://other.example/mcp"],
    )
    refused(mcp(signed_in, "other-resource-token-0123456789abcdef", "tools/list"))


def test_a_token_for_a_sibling_path_is_refused(
    signed_in: Client, app: Application, alice: Any
) -> None:
    AccessToken.objects.create(
        user=alice,
        application=app,
        token="sibling-resource-token-0123456789abcd",
        scope="read write",
        expires=timezone.now() + timedelta(hours=1),
        resource=[f"{BASE}/conformance/mcp"],
    )
    refused(mcp(signed_in, "sibling-resource-token-0123456789abcd", "tools/list"))


def test_a_token_of_a_deactivated_user_is_refused(
    signed_in: Client, app: Application, alice: Any
) -> None:
    # As DRF's own token and password classes refuse them, and as an API key is.
    token = get_token(signed_in, app)
    alice.is_active = False
    alice.save()
    refused(mcp(signed_in, token, "tools/list"))
    rest = signed_in.get("/api/projects/", headers={"Authorization": f"Bearer {token}"})
    assert rest.status_code == 401


def test_an_expired_token_is_refused(signed_in: Client, app: Application) -> None:
    token = get_token(signed_in, app)
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    refused(mcp(signed_in, token, "tools/list"))


def test_a_revoked_token_is_refused(signed_in: Client, app: Application) -> None:
    token = get_token(signed_in, app)
    assert mcp(signed_in, token, "tools/list").status_code == 200
    revoked = signed_in.post("/o/revoke_token", {"token": token, "client_id": app.client_id})
    assert revoked.status_code == 200
    refused(mcp(signed_in, token, "tools/list"))


# -- trailing slashes ------------------------------------------------------------------------


@pytest.mark.parametrize("slash", ["", "/"], ids=["bare", "slash"])
@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("get", "/.well-known/oauth-protected-resource", 200),
        ("get", "/.well-known/oauth-protected-resource/mcp", 200),
        ("get", "/.well-known/oauth-authorization-server", 200),
        ("get", "/.well-known/oauth-authorization-server/o", 200),
        ("get", "/o/.well-known/oauth-authorization-server", 200),
        ("get", "/o/authorize", 200),
        ("post", "/o/token", 400),
        ("post", "/o/register", 201),
        ("post", "/o/revoke_token", 400),
        ("post", "/o/introspect", 403),
    ],
)
def test_every_oauth_endpoint_answers_with_and_without_the_slash(
    signed_in: Client, app: Application, method: str, path: str, expected: int, slash: str
) -> None:
    url = path + slash
    if path == "/o/authorize":
        _, challenge = pkce()
        url += authorize_query(app.client_id, challenge).removeprefix("/o/authorize/")
        response = signed_in.get(url)
    elif path == "/o/register":
        response = register(signed_in, url)
    elif method == "post":
        response = signed_in.post(url, {"client_id": app.client_id})
    else:
        response = signed_in.get(url)
    assert response.status_code == expected, (url, response.status_code, response.content[:300])
    if response.status_code >= 400 and path != "/o/introspect":
        assert response["Content-Type"].startswith("application/json")


# -- connected clients and the admin ---------------------------------------------------------


def test_a_user_sees_and_revokes_connected_clients(
    signed_in: Client, app: Application, bob: Any
) -> None:
    token = get_token(signed_in, app)
    page = signed_in.get("/o/authorized_tokens/")
    assert b"Inspector" in page.content and RESOURCE.encode() in page.content
    row = AccessToken.objects.get()
    bob_client = Client()
    bob_client.force_login(bob)
    assert b"Inspector" not in bob_client.get("/o/authorized_tokens/").content
    assert bob_client.post(f"/o/authorized_tokens/{row.pk}/delete/").status_code == 404
    assert signed_in.post(f"/o/authorized_tokens/{row.pk}/delete/").status_code == 302
    refused(mcp(signed_in, token, "tools/list"))


def test_the_admin_shows_how_clients_registered(
    client: Client, app: Application, alice: Any
) -> None:
    AccessToken.objects.create(
        user=alice,
        application=app,
        token="admin-listed-token-0123456789abcdef",
        scope="read",
        expires=timezone.now() + timedelta(hours=1),
        resource=[RESOURCE],
    )
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")
    client.force_login(admin)
    applications = client.get("/admin/oauth2_provider/application/")
    assert applications.status_code == 200
    assert b"Dynamic Client Registration" in applications.content
    tokens = client.get("/admin/oauth2_provider/accesstoken/")
    assert tokens.status_code == 200
    assert RESOURCE.encode() in tokens.content
    assert b"admin-listed-token" not in tokens.content


def test_with_issuer_puts_one_iss_where_the_response_carries_its_parameters() -> None:
    issuer = "https://as.example/o"
    assert with_issuer("http://127.0.0.1/cb?error=access_denied&iss=forged", issuer) == (
        "http://127.0.0.1/cb?error=access_denied&iss=https%3A%2F%2Fas.example%2Fo"
    )
    assert with_issuer("http://127.0.0.1/cb#access_token=t&iss=x", issuer) == (
        "http://127.0.0.1/cb#access_token=t&iss=https%3A%2F%2Fas.example%2Fo"
    )
    bare = with_issuer("http://127.0.0.1/cb", issuer)
    assert bare == "http://127.0.0.1/cb?iss=https%3A%2F%2Fas.example%2Fo"
