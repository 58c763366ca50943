"""The account pages, through the real URLs: connect, personal API keys, connected apps."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken
from oauth2_provider.scopes import SettingsScopes

from mcp_endpoint import reveal
from mcp_endpoint.models import APIKey, digest_of
from tests.conftest import MCPClient, make_key

CONNECT = "/account/ai/"
KEYS = "/account/ai/keys/"
APPS = "/account/ai/apps/"
RAW_KEY = re.compile(r"mcp_[0-9a-f]{8}_[0-9a-f]{64}")
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
RESOURCE = "http://testserver/mcp"


class ReadOnlyUnlessStaff(SettingsScopes):
    """A host's scopes backend: only staff may grant ``write``."""

    def get_available_scopes(
        self, application: Any = None, request: Any = None, *args: Any, **kwargs: Any
    ) -> list[str]:
        user = getattr(request, "user", None)
        return ["read", "write"] if user is not None and user.is_staff else ["read"]


@pytest.fixture
def signed_in(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


def create(browser: Client, **data: Any) -> Any:
    post = {"name": "laptop", "scopes": ["read"], "expires_in": "90", "client": "cursor"}
    post.update(data)
    return browser.post(KEYS, post)


# -- who may see the pages ------------------------------------------------------------------


@pytest.mark.parametrize("url", [CONNECT, KEYS, APPS, "/account/ai/keys/1/created/"])
def test_pages_need_a_signed_in_user(client: Client, db: Any, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/accounts/login/?next=")


def test_no_staff_status_is_needed(signed_in: Client, alice: Any) -> None:
    assert not alice.is_staff
    for url in [CONNECT, KEYS, APPS]:
        assert signed_in.get(url).status_code == 200


def test_no_page_may_be_framed(signed_in: Client) -> None:
    reveal_page = create(signed_in).headers["Location"]
    for url in [CONNECT, KEYS, APPS, reveal_page]:
        response = signed_in.get(url)
        assert response.headers["X-Frame-Options"] == "DENY", url
        assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"], url


# -- connect --------------------------------------------------------------------------------


def test_connect_page_names_the_url_and_every_client(signed_in: Client) -> None:
    response = signed_in.get(CONNECT)
    body = response.content.decode()
    assert f'value="{RESOURCE}"' in body
    for name in ["Claude Code", "Claude (claude.ai and Claude Desktop)", "ChatGPT", "Cursor"]:
        assert name in body
    assert "VS Code" in body and "MCP Inspector" in body
    assert (
        "claude mcp add --transport http task-tracker http://testserver/mcp "
        "--header &quot;Authorization: Bearer YOUR_API_KEY&quot;"
    ) in body
    # Browser connectors sign in; they are never offered a key.
    assert body.count("OAuth</span>") == 2
    assert 'href="/account/ai/keys/?client=vscode"' in body
    assert 'href="/account/ai/keys/?client=chatgpt"' not in body


def snippet(body: str, element_id: str) -> Any:
    match = re.search(rf'id="{element_id}" tabindex="0">(.*?)</pre>', body, re.S)
    assert match, element_id
    text = match.group(1).replace("&quot;", '"')
    return json.loads(text) if text.startswith("{") else text


def test_connect_page_configurations_have_each_clients_shape(signed_in: Client) -> None:
    body = signed_in.get(CONNECT).content.decode()
    headers = {"Authorization": "Bearer YOUR_API_KEY"}
    assert snippet(body, "vscode-snippet") == {
        "servers": {"task-tracker": {"type": "http", "url": RESOURCE, "headers": headers}}
    }
    assert snippet(body, "cursor-snippet") == {
        "mcpServers": {"task-tracker": {"url": RESOURCE, "headers": headers}}
    }
    assert snippet(body, "claude-snippet") == RESOURCE
    assert snippet(body, "chatgpt-snippet") == RESOURCE


def test_connect_page_offers_the_toolsets_and_read_only(signed_in: Client) -> None:
    body = signed_in.get(CONNECT).content.decode()
    for toolset in ("projects", "tasks", "comments", "general"):
        assert f'name="toolset" value="{toolset}"' in body
    assert 'name="read_only" value="1"' in body
    assert '<details class="mcp-choice">' in body  # closed until a choice is made


def test_connect_page_gives_the_address_with_the_choice(signed_in: Client) -> None:
    response = signed_in.get(
        CONNECT, {"toolset": ["tasks", "projects", "nowhere"], "read_only": "1"}
    )
    body = response.content.decode()
    chosen = f"{RESOURCE}?toolsets=projects,tasks&amp;read_only=1"
    assert f'value="{chosen}"' in body
    assert snippet(body, "claude-snippet") == chosen  # HTML-escaped in the page
    assert "nowhere" not in body
    ticked = re.findall(r'name="toolset" value="(\w+)" id="[\w-]+" checked', body)
    assert sorted(ticked) == ["projects", "tasks"]
    assert 'id="read-only" checked' in body
    # Every toolset ticked is the same as none: the plain address.
    every = ["projects", "tasks", "comments", "general"]
    assert f'value="{RESOURCE}"' in signed_in.get(CONNECT, {"toolset": every}).content.decode()


def test_the_address_with_the_choice_serves_it(
    signed_in: Client, alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    _, key = APIKey.objects.create_key(user=alice, scopes="read write", name="choice")
    rpc = mcp_client(key, "/mcp?toolsets=tasks&read_only=1")
    names = {t["name"] for t in rpc.result("tools/list")["tools"]}
    assert names == {"list_tasks", "get_task", "overdue_tasks"}


def test_connect_page_uses_the_configured_resource_url(signed_in: Client, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "RESOURCE_URL": "https://ai.example/mcp"}
    body = signed_in.get(CONNECT).content.decode()
    assert 'value="https://ai.example/mcp"' in body


# -- creating a key ---------------------------------------------------------------------------


def test_creating_a_key_redirects_and_shows_it_once(
    signed_in: Client, alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    response = create(signed_in, scopes=["read", "write"], client="vscode")
    assert response.status_code == 303
    key = APIKey.objects.get()
    location = response.headers["Location"]
    assert location == f"/account/ai/keys/{key.pk}/created/?client=vscode"
    assert key.user == alice and key.name == "laptop" and key.scope == "read write"
    assert key.expires is not None
    assert timedelta(days=89) < key.expires - timezone.now() <= timedelta(days=90)

    page = signed_in.get(location)
    assert page.status_code == 200
    assert "no-store" in page.headers["Cache-Control"]
    body = page.content.decode()
    raw = RAW_KEY.findall(body)[0]
    assert key.digest == digest_of(raw)
    # The chosen client's configuration carries the key.
    assert snippet(body, "chosen-vscode-snippet")["servers"]["task-tracker"]["headers"] == {
        "Authorization": f"Bearer {raw}"
    }
    assert mcp_client(raw).post(PING).status_code == 200
    # The cookie that carried it is deleted.
    assert page.cookies[reveal.COOKIE].value == ""

    # A reload shows no key and creates none.
    again = signed_in.get(location)
    assert again.status_code == 200
    assert "not shown again" in again.content.decode()
    assert not RAW_KEY.search(again.content.decode())
    assert APIKey.objects.count() == 1


def test_the_raw_key_rests_nowhere_on_the_server(signed_in: Client) -> None:
    from tests.test_admin import database_dump

    response = create(signed_in)
    raw = signed_in.get(response.headers["Location"]).content.decode()
    raw_key = RAW_KEY.findall(raw)[0]
    assert raw_key not in database_dump()


def test_no_log_line_carries_the_raw_key(
    signed_in: Client, caplog: pytest.LogCaptureFixture
) -> None:
    # A template variable that fails to resolve is logged with the whole context, which
    # holds the raw key on its one page.
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="django")
    with CaptureQueriesContext(connection) as queries:
        response = create(signed_in)
        body = signed_in.get(response.headers["Location"]).content.decode()
        raw = RAW_KEY.findall(body)[0]
        signed_in.get(response.headers["Location"])
    assert {r.name for r in caplog.records} >= {"django.db.backends"}
    secret = raw.rsplit("_", 1)[1]
    for record in caplog.records:
        texts = [record.getMessage(), repr(record.args), record.exc_text or ""]
        assert not any(secret in text for text in texts), record
    assert not any(secret in query["sql"] for query in queries.captured_queries)


def test_the_default_expiry_is_a_setting(signed_in: Client, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "API_KEY_DEFAULT_EXPIRY_DAYS": 45}
    body = signed_in.get(KEYS).content.decode()
    assert '<option value="45" selected>45 days</option>' in body
    create(signed_in, expires_in="45")
    expires = APIKey.objects.get().expires
    assert expires is not None
    assert timedelta(days=44) < expires - timezone.now() <= timedelta(days=45)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": ""}, "name", "This field is required."),
        ({"name": "x" * 101}, "name", "Ensure this value has at most 100 characters"),
        ({"scopes": []}, "scopes", "Choose at least one kind of access for the key."),
        ({"scopes": ["admin"]}, "scopes", "Select a valid choice. admin is not one of"),
        ({"expires_in": "3"}, "expires_in", "Select a valid choice. 3 is not one of"),
        ({"expires_in": "never"}, "expires_in", "Select a valid choice."),
        ({"client": "chatgpt"}, "client", "Select a valid choice. chatgpt is not one of"),
    ],
)
def test_malformed_key_requests_create_nothing(
    signed_in: Client, data: dict[str, Any], field: str, message: str
) -> None:
    response = create(signed_in, **data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert field in response.context["form"].errors
    assert not APIKey.objects.exists()
    assert reveal.COOKIE not in response.cookies


def test_scopes_are_no_wider_than_the_user_may_grant(
    signed_in: Client, settings: Any, alice: Any
) -> None:
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "SCOPES_BACKEND_CLASS": "tests.test_account.ReadOnlyUnlessStaff",
    }
    body = signed_in.get(KEYS).content.decode()
    assert 'value="read"' in body
    assert 'value="write"' not in body
    response = create(signed_in, scopes=["read", "write"])
    assert response.status_code == 400
    assert "write is not one of the available choices" in response.content.decode()
    assert not APIKey.objects.exists()

    alice.is_staff = True
    alice.save()
    assert create(signed_in, scopes=["read", "write"]).status_code == 303
    assert APIKey.objects.get().scope == "read write"


def test_another_users_key_is_not_found(signed_in: Client, bob: Any) -> None:
    key, _ = APIKey.objects.create_key(user=bob, scopes="read")
    assert signed_in.get(f"/account/ai/keys/{key.pk}/created/").status_code == 404
    assert signed_in.get("/account/ai/keys/not-a-number/created/").status_code == 404
    response = signed_in.post(f"/account/ai/keys/{key.pk}/revoke/")
    assert response.status_code == 404
    key.refresh_from_db()
    assert not key.is_revoked()


def test_a_tampered_or_foreign_cookie_shows_nothing(signed_in: Client, alice: Any) -> None:
    response = create(signed_in)
    location = response.headers["Location"]
    other, other_raw = APIKey.objects.create_key(user=alice, scopes="read")
    # The cookie for one key does not reveal another, even with a valid signature.
    signed_in.cookies[reveal.COOKIE] = response.cookies[reveal.COOKIE].value
    page = signed_in.get(f"/account/ai/keys/{other.pk}/created/")
    assert "not shown again" in page.content.decode()
    assert other_raw not in page.content.decode()
    signed_in.cookies[reveal.COOKIE] = "1:mcp_00000000_" + "0" * 64 + ":forged"
    page = signed_in.get(location)
    assert "not shown again" in page.content.decode()


def test_the_key_list_shows_last_use_and_status(signed_in: Client, alice: Any) -> None:
    used, raw = APIKey.objects.create_key(user=alice, scopes="read", name="used one")
    used.touch()
    revoked, _ = APIKey.objects.create_key(user=alice, scopes="read", name="old one")
    revoked.revoke()
    body = signed_in.get(KEYS).content.decode()
    assert "used one" in body and "old one" in body
    assert body.count(">revoked</span>") == 1 and body.count(">active</span>") == 1
    assert raw not in body
    # One revoke button: for the key that still works.
    assert body.count("Revoke<span") == 1


# -- revoking a key ---------------------------------------------------------------------------


def test_revoking_a_key(
    signed_in: Client, alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    raw = make_key(alice, "read", name="laptop")
    key = APIKey.objects.get()
    assert signed_in.get(f"/account/ai/keys/{key.pk}/revoke/").status_code == 405
    assert not APIKey.objects.get().is_revoked()
    response = signed_in.post(f"/account/ai/keys/{key.pk}/revoke/", follow=True)
    assert response.redirect_chain == [(KEYS, 302)]
    assert "Revoked the key" in response.content.decode()
    assert APIKey.objects.get().is_revoked()
    assert mcp_client(raw).post(PING).status_code == 401
    again = signed_in.post(f"/account/ai/keys/{key.pk}/revoke/", follow=True)
    assert "already revoked" in again.content.decode()


# -- connected apps ---------------------------------------------------------------------------


@pytest.fixture
def connected(alice: Any) -> dict[str, Any]:
    app = Application.objects.create(
        name="Claude",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://claude.ai/api/mcp/auth_callback",
        registration_source=Application.RegistrationSource.DCR,
    )
    access = AccessToken.objects.create(
        user=alice,
        application=app,
        token="connected-app-token-0123456789abcdef",
        scope="read write",
        expires=timezone.now() + timedelta(hours=1),
        resource=[RESOURCE],
    )
    refresh = RefreshToken.objects.create(
        user=alice, application=app, token="connected-app-refresh-0123456789", access_token=access
    )
    grant = Grant.objects.create(
        user=alice,
        application=app,
        code="pending-code-0123456789",
        expires=timezone.now() + timedelta(minutes=1),
        redirect_uri="https://claude.ai/api/mcp/auth_callback",
        scope="read",
        code_challenge="x" * 43,
        code_challenge_method="S256",
    )
    return {"app": app, "access": access, "refresh": refresh, "grant": grant}


def test_connected_apps_lists_the_users_applications(
    signed_in: Client, connected: dict[str, Any], bob: Any
) -> None:
    other = Application.objects.create(
        name="Bob's tool",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://claude.ai/cb",
    )
    AccessToken.objects.create(
        user=bob, application=other, token="bobs-token-0123456789abcdef", scope="read",
        expires=timezone.now() + timedelta(hours=1),
    )  # fmt: skip
    body = signed_in.get(APPS).content.decode()
    assert "Claude" in body
    assert "See your projects, tasks and comments" in body
    assert "Create, change and delete tasks" in body
    # In words a person reads, not the protocol's name for how the app registered.
    assert "it registered itself when you connected it" in body
    assert "Dynamic Client Registration" not in body
    assert "Bob&#x27;s tool" not in body and "Bob's tool" not in body


def test_the_last_use_of_a_token_is_recorded(
    signed_in: Client, connected: dict[str, Any], mcp_client: Callable[..., MCPClient]
) -> None:
    long_ago = timezone.now() - timedelta(days=3)
    AccessToken.objects.filter(pk=connected["access"].pk).update(updated=long_ago)
    assert mcp_client(connected["access"].token).post(PING).status_code == 200
    updated = AccessToken.objects.get(pk=connected["access"].pk).updated
    assert updated > long_ago + timedelta(days=2)


def test_revoking_an_app_revokes_its_tokens(
    signed_in: Client, connected: dict[str, Any], mcp_client: Callable[..., MCPClient]
) -> None:
    token = connected["access"].token
    assert mcp_client(token).post(PING).status_code == 200
    app = connected["app"]
    assert signed_in.get(f"/account/ai/apps/{app.pk}/revoke/").status_code == 405
    assert AccessToken.objects.filter(application=app).count() == 1
    response = signed_in.post(f"/account/ai/apps/{app.pk}/revoke/", follow=True)
    assert response.redirect_chain == [(APPS, 302)]
    assert "Claude can no longer use your account." in response.content.decode()
    assert not AccessToken.objects.filter(application=app).exists()
    assert not RefreshToken.objects.filter(application=app, revoked__isnull=True).exists()
    assert not Grant.objects.filter(application=app).exists()
    assert mcp_client(token).post(PING).status_code == 401
    assert "No application is connected" in response.content.decode()


def test_an_app_the_user_never_allowed_cannot_be_revoked(
    client: Client, connected: dict[str, Any], bob: Any
) -> None:
    client.force_login(bob)
    app = connected["app"]
    assert client.post(f"/account/ai/apps/{app.pk}/revoke/").status_code == 404
    assert client.post("/account/ai/apps/nope/revoke/").status_code == 404
    assert AccessToken.objects.filter(application=app).count() == 1
    assert Grant.objects.filter(application=app).count() == 1
