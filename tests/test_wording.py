"""What a person reads on the pages: the product's name, sentences that read right, the
cloud connectors' need for a public HTTPS address, configurations kept whole."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone, translation

from mcp_endpoint.clients import client_guides, reachable_from_the_internet

pytestmark = pytest.mark.django_db

CONNECT = "/account/ai/"
KEYS = "/account/ai/keys/"
WARNING = "needs the server at a public HTTPS address"


@pytest.fixture
def signed_in(client: Client, alice: Any) -> Client:
    client.force_login(alice)
    return client


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("https://tracker.example.com/mcp", True),
        ("https://203.0.113.9/mcp", False),  # documentation range: not global
        ("https://8.8.8.8/mcp", True),
        ("http://tracker.example.com/mcp", False),
        ("http://127.0.0.1:8000/mcp", False),
        ("https://127.0.0.1/mcp", False),
        ("https://localhost/mcp", False),
        ("https://app.localhost/mcp", False),
        ("https://10.0.0.4/mcp", False),
        ("https://[::1]/mcp", False),
        ("https://intranet/mcp", False),
        ("https://tracker.internal/mcp", False),
    ],
)
def test_what_a_cloud_connector_can_reach(url: str, public: bool) -> None:
    assert reachable_from_the_internet(url) is public


def test_only_the_cloud_connectors_warn_and_only_for_such_urls() -> None:
    local = {g.slug: g.warning for g in client_guides("http://127.0.0.1:8000/mcp", "t")}
    assert WARNING in local["claude"] and WARNING in local["chatgpt"]
    assert "http://127.0.0.1:8000/mcp" in local["claude"]
    assert not local["cursor"] and not local["claude-code"]
    public = client_guides("https://tracker.example.com/mcp", "t")
    assert not any(g.warning for g in public)


def test_the_connect_page_warns_where_the_url_is_not_public(signed_in: Client) -> None:
    body = signed_in.get(CONNECT).content.decode()  # the test client's http://testserver
    assert body.count(WARNING) == 2
    secure = signed_in.get(CONNECT, secure=True, HTTP_HOST="tracker.example.com")
    assert WARNING not in secure.content.decode()


def test_the_new_key_page_reads_right(signed_in: Client) -> None:
    response = signed_in.post(
        KEYS,
        {"name": "Cursor on laptop", "scopes": ["read"], "expires_in": "90", "client": "cursor"},
        follow=True,
    )
    body = response.content.decode()
    assert "The key <strong>Cursor on laptop</strong> is ready, with this access:" in body
    assert ".." not in re.sub(r"<[^>]+>", "", body).replace("...", "")
    # One heading for the chosen client, not "Set up Cursor" and then "Cursor" again.
    assert "<h2" in body and re.search(r"<h2[^>]*>Set up Cursor</h2>", body)
    assert not re.search(r"<h3[^>]*>Cursor</h3>", body)


def test_the_admin_says_when_a_key_expires_with_one_full_stop(
    admin_client: Client, alice: Any
) -> None:
    expires = timezone.localtime(timezone.now() + timedelta(days=3)).replace(
        hour=15, minute=8, second=0, microsecond=0
    )
    response = admin_client.post(
        "/admin/mcp_endpoint/apikey/add/",
        {
            "user": alice.pk,
            "name": "laptop",
            "scopes": ["read"],
            "expires_0": expires.strftime("%Y-%m-%d"),
            "expires_1": "15:08:00",
        },
        follow=True,
    )
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", response.content.decode()))
    assert re.search(r"It expires on \w+\.? \d+, \d{4} at 15:08\. ", text), text[:2000]
    assert "p.m.." not in text and "a.m.." not in text


def test_the_sign_in_page_is_headed_with_the_products_name(client: Client, settings: Any) -> None:
    body = client.get("/accounts/login/").content.decode()
    assert "<h1>Sign in to Task tracker</h1>" in body  # the demo's SERVER_TITLE
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SERVER_TITLE": ""}
    body = client.get("/accounts/login/").content.decode()
    assert "<h1>Sign in to testserver</h1>" in body  # the site's name: here its host
    with translation.override("fr"):
        settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SERVER_TITLE": "Suivi"}
        body = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Connexion à Suivi" in body


def test_no_scope_says_what_to_do(admin_client: Client, alice: Any) -> None:
    response = admin_client.post(
        "/admin/mcp_endpoint/apikey/add/", {"user": alice.pk, "name": "no scope"}
    )
    assert "Choose at least one scope for the key." in response.content.decode()
