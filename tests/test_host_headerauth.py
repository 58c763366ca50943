"""The host with an authentication class of its own (:mod:`tests.hosts.headerauth`): a
signed token in an ``X-Api-Token`` header, with its own ``authenticate_header``.

Registered in an endpoint's ``AUTHENTICATION_CLASSES``, the product's token works for
every tool its views take it for, as on REST; an endpoint without it refuses the token as
no credential (401 with the endpoint's challenge), hides the token-only view from keys and
OAuth tokens, refuses them as REST does, and ``mcp_endpoint.W030`` names the mismatch.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.hosts.headerauth.authentication import issue
from tests.hosts.parity import (
    Credential,
    CredentialClient,
    call_rest,
    check_challenge,
    check_each,
    check_refused,
    credential_kinds,
)
from tests.hosts.tutorial.parity import (
    check_operation,
    each_operation,
    owner_with_snippets,
    snapshot,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.headerauth.urls")]

User = get_user_model()
KINDS = credential_kinds(("/mcp", "/mcp-header"))
HEADER_TOOLS = [
    "list_header_snippets",
    "get_header_snippet",
    "create_header_snippet",
    "replace_header_snippet",
    "update_header_snippet",
    "delete_header_snippet",
]


def product_token(user: Any) -> Credential:
    return Credential(issue(user), frozenset(), header="X-Api-Token", scheme=None)


def kind_credential(kind: str, user: Any) -> Credential:
    return product_token(user) if kind == "product_token" else KINDS[kind](user)


@pytest.fixture
def people() -> tuple[Any, dict[str, int]]:
    """The owner, and the ids of their snippet and of another owner's."""
    return owner_with_snippets()


@pytest.mark.parametrize("kind", [*sorted(KINDS), "product_token"])
@each_operation
def test_rest_and_mcp_agree_for_every_kind(
    kind: str,
    operation: tuple[str, str, str, dict[str, Any]],
    client: Client,
    people: tuple[Any, dict[str, int]],
) -> None:
    owner, snippets = people
    check_operation(client, kind_credential(kind, owner), operation, snippets, "/mcp-header")


def header_operations(pk: int) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        ("list_header_snippets", "GET", "/header-snippets/", {}),
        ("get_header_snippet", "GET", f"/header-snippets/{pk}/", {"id": pk}),
        ("create_header_snippet", "POST", "/header-snippets/", {"code": "y = 2"}),
        ("create_header_snippet", "POST", "/header-snippets/", {"code": "y", "language": "x"}),
        ("replace_header_snippet", "PUT", f"/header-snippets/{pk}/", {"id": pk, "code": "z"}),
        ("update_header_snippet", "PATCH", f"/header-snippets/{pk}/", {"id": pk, "title": "t"}),
        ("delete_header_snippet", "DELETE", f"/header-snippets/{pk}/", {"id": pk}),
    ]


def test_the_token_only_view_takes_the_products_token(
    client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    credential = product_token(owner)
    listed = CredentialClient(client, "/mcp-header", credential).result("tools/list")["tools"]
    assert set(HEADER_TOOLS) <= {t["name"] for t in listed}
    mine = check_each(
        client,
        credential,
        header_operations(snippets["mine"]),
        snapshot=snapshot,
        mcp_url="/mcp-header",
    )
    assert [rest.status_code for rest, _ in mine] == [200, 200, 201, 400, 200, 200, 204]
    created = mine[2][1]["structuredContent"]
    assert created["owner"] == mine[2][0].json()["owner"] == "olive"


@pytest.mark.parametrize("mcp_url", ["/mcp", "/mcp-header"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_token_only_view_refuses_keys_and_oauth_tokens_through_both(
    kind: str, mcp_url: str, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    check_refused(
        client,
        KINDS[kind](owner),
        header_operations(snippets["mine"]),
        snapshot=snapshot,
        mcp_url=mcp_url,
        accepts="product API tokens",
    )


@pytest.mark.parametrize(
    "token",
    [lambda user: issue(user)[:-1] + "x", lambda user: "not-signed", lambda user: ""],
    ids=["tampered", "unsigned", "empty"],
)
def test_a_bad_product_token_is_refused_at_both_doors(
    token: Any, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    credential = Credential(token(owner), frozenset(), header="X-Api-Token", scheme=None)
    rest = call_rest(client, credential, "GET", "/header-snippets/", {})
    assert rest.status_code in (401, 403)
    response = CredentialClient(client, "/mcp-header", credential).request("tools/list")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == -32001
    challenge = response["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
    # A token was sent and refused: the client is told so; none sent, none refused.
    assert ('error="invalid_token"' in challenge) is bool(credential.bearer)


def test_the_endpoint_without_the_class_refuses_the_token(
    client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    credential = product_token(owner)
    assert call_rest(client, credential, "GET", "/snippets/", {}).status_code == 200
    response = CredentialClient(client, "/mcp", credential).request("tools/list")
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("/mcp", "API keys or OAuth access tokens"),
        # The host's class names its credential with ``mcp_credential_name``.
        ("/mcp-header", "API keys, OAuth access tokens or product API tokens"),
    ],
)
def test_the_401_names_what_each_endpoint_takes(client: Client, url: str, accepted: str) -> None:
    check_challenge(client, url, accepted)


def test_w030_explains_the_mismatch() -> None:
    from tests.hosts.headerauth.urls import header_endpoint, keys_endpoint

    [warning] = [m for m in keys_endpoint.check() if m.id == "mcp_endpoint.W030"]
    assert warning.msg.startswith(
        "HeaderSnippetViewSet accepts product API tokens only, none of the credentials "
        "endpoint 'headerauth-keys' authenticates (API keys or OAuth access tokens)"
    )
    assert warning.hint.startswith(
        "Add tests.hosts.headerauth.authentication.HeaderTokenAuthentication to the "
        "endpoint's AUTHENTICATION_CLASSES"
    )
    assert [m for m in header_endpoint.check() if m.id == "mcp_endpoint.W030"] == []
