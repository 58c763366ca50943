"""The token-auth host (:mod:`tests.hosts.tokenauth`): a view that takes DRF tokens only
refuses API keys and OAuth tokens through /mcp exactly as through REST, and takes a DRF
token through an endpoint that authenticates DRF tokens."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.hosts.parity import CREDENTIAL_KINDS, call_rest, check_challenge, check_refused
from tests.hosts.tutorial.models import Snippet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.tokenauth.urls")]

TOOLS = [
    "list_snippets",
    "get_snippet",
    "create_snippet",
    "replace_snippet",
    "update_snippet",
    "delete_snippet",
]


@pytest.fixture
def owner() -> Any:
    user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
    Snippet.objects.create(title="hello", code="print(1)", owner=user)
    return user


def snapshot() -> list[Any]:
    return list(Snippet.objects.order_by("pk").values_list("pk", "title", "code"))


def operations(pk: int) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        ("list_snippets", "GET", "/token-snippets/", {}),
        ("get_snippet", "GET", f"/token-snippets/{pk}/", {"id": pk}),
        ("create_snippet", "POST", "/token-snippets/", {"code": "y = 2"}),
        ("create_snippet", "POST", "/token-snippets/", {"code": "y", "language": "cobol"}),
        ("replace_snippet", "PUT", f"/token-snippets/{pk}/", {"id": pk, "code": "z"}),
        ("update_snippet", "PATCH", f"/token-snippets/{pk}/", {"id": pk, "title": "t"}),
        ("delete_snippet", "DELETE", f"/token-snippets/{pk}/", {"id": pk}),
    ]


def test_the_tools() -> None:
    from tests.hosts.tokenauth.urls import keys_endpoint

    assert [t.name for t in keys_endpoint.tools] == TOOLS


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
def test_keys_and_oauth_tokens_are_refused_through_both(
    kind: str, client: Client, owner: Any
) -> None:
    pk = Snippet.objects.get().pk
    check_refused(
        client,
        CREDENTIAL_KINDS[kind](owner),
        operations(pk),
        snapshot=snapshot,
        accepts="DRF tokens",
    )


def test_a_drf_token_works_through_an_endpoint_that_takes_them(client: Client, owner: Any) -> None:
    token = Token.objects.create(user=owner)
    headers = {"Authorization": f"Token {token.key}"}

    def rpc(method: str, params: dict[str, Any] | None = None) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        answer = client.post(
            "/mcp-tokens", data=json.dumps(body), content_type="application/json", headers=headers
        )
        return answer.json()["result"]

    assert [t["name"] for t in rpc("tools/list")["tools"]] == TOOLS
    pk = Snippet.objects.get().pk
    for tool, method, url, arguments in operations(pk):
        rest_arguments = {k: v for k, v in arguments.items() if k != "id"}
        with transaction.atomic():
            if method == "GET":
                rest = client.get(url, rest_arguments, headers=headers)
            else:
                rest = client.generic(
                    method,
                    url,
                    json.dumps(rest_arguments),
                    content_type="application/json",
                    headers=headers,
                )
            transaction.set_rollback(True)
        with transaction.atomic():
            answer = rpc("tools/call", {"name": tool, "arguments": arguments})
            transaction.set_rollback(True)
        if rest.status_code < 300:
            assert answer["isError"] is False, answer
            if rest.content and method == "GET":
                structured = answer["structuredContent"]
                assert structured.get("results", structured) == rest.json()
        else:
            assert rest.status_code == 400
            assert answer["isError"] is True
            assert answer["structuredContent"]["error"]["fields"] == rest.json()


@pytest.mark.parametrize(
    ("url", "accepted"),
    [("/mcp", "API keys or OAuth access tokens"), ("/mcp-tokens", "DRF tokens or API keys")],
)
def test_the_401_names_what_each_endpoint_takes(client: Client, url: str, accepted: str) -> None:
    check_challenge(client, url, accepted)


def test_w030_names_the_mismatch() -> None:
    from tests.hosts.tokenauth.urls import keys_endpoint, tokens_endpoint

    [warning] = [m for m in keys_endpoint.check() if m.id == "mcp_endpoint.W030"]
    assert warning.msg.startswith("TokenSnippetViewSet accepts DRF tokens only")
    assert [m for m in tokens_endpoint.check() if m.id == "mcp_endpoint.W030"] == []


def test_a_key_through_rest_is_refused(client: Client, owner: Any) -> None:
    rest = call_rest(
        client, CREDENTIAL_KINDS["key_read_write"](owner).bearer, "GET", "/token-snippets/", {}
    )
    assert rest.status_code == 401
