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
from django.test import Client

from tests.hosts.headerauth.authentication import issue
from tests.hosts.parity import (
    Operation,
    call_rest,
    check_challenge,
    check_refused_as_no_credential,
)
from tests.hosts.tutorial.parity import (
    check_operation,
    each_operation,
    owner_with_snippets,
    product_credential,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.headerauth.urls")]

PRODUCT = product_credential(
    "product_token",
    issue,
    mcp_url="/mcp-header",
    view="header",
    accepts="product API tokens",
    header="X-Api-Token",
    scheme=None,
)


@pytest.fixture
def people() -> tuple[Any, dict[str, int]]:
    """The owner, and the ids of their snippet and of another owner's."""
    return owner_with_snippets()


@pytest.mark.parametrize("kind", PRODUCT.every_kind)
@each_operation
def test_rest_and_mcp_agree_for_every_kind(
    kind: str, operation: Operation, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    check_operation(client, PRODUCT.credential(kind, owner), operation, snippets, PRODUCT.mcp_url)


def test_the_token_only_view_takes_the_products_token(
    client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    mine = PRODUCT.check_own_view(client, owner, snippets["mine"])
    assert [rest.status_code for rest, _ in mine] == [200, 200, 201, 400, 200, 200, 404, 204]
    created = mine[2][1]["structuredContent"]
    assert created["owner"] == mine[2][0].json()["owner"] == "olive"


@pytest.mark.parametrize("mcp_url", ["/mcp", PRODUCT.mcp_url])
@pytest.mark.parametrize("kind", sorted(PRODUCT.app_kinds))
def test_the_token_only_view_refuses_keys_and_oauth_tokens_through_both(
    kind: str, mcp_url: str, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    PRODUCT.check_refused(client, kind, owner, snippets["mine"], mcp_url)


@pytest.mark.parametrize(
    "token",
    [lambda user: issue(user)[:-1] + "x", lambda user: "not-signed", lambda user: ""],
    ids=["tampered", "unsigned", "empty"],
)
def test_a_bad_product_token_is_refused_at_both_doors(
    token: Any, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    credential = PRODUCT.carrying(token(owner))
    rest = call_rest(client, credential, "GET", "/header-snippets/", {})
    assert rest.status_code in (401, 403)
    challenge = check_refused_as_no_credential(client, credential, PRODUCT.mcp_url)
    # A token was sent and refused: the client is told so; none sent, none refused.
    assert ('error="invalid_token"' in challenge) is bool(credential.bearer)


def test_the_endpoint_without_the_class_refuses_the_token(
    client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    credential = PRODUCT.credential(PRODUCT.kind, owner)
    assert call_rest(client, credential, "GET", "/snippets/", {}).status_code == 200
    check_refused_as_no_credential(client, credential, "/mcp")


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
