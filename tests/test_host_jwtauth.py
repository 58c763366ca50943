"""The JWT host (:mod:`tests.hosts.jwtauth`): simplejwt's ``JWTAuthentication`` beside API
keys and OAuth tokens, all three sent as ``Authorization: Bearer``.

An endpoint whose ``AUTHENTICATION_CLASSES`` list ``JWTAuthentication`` after the app's
classes takes every kind, and each view decides as on REST; one that does not list it
refuses a JSON Web Token (401 with its challenge), and hides the JWT-only view from keys
and tokens, refusing them as REST does. An expired or tampered token is refused at both
doors. Classes are tried in order, as DRF tries them: ``JWTAuthentication`` refuses every
bearer value that is not a JSON Web Token, so listed first it refuses API keys, on REST and
at ``/mcp`` alike (and ``mcp_endpoint.W110`` says so at start-up).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework_simplejwt.tokens import AccessToken

from mcp_endpoint.checks import check_settings
from tests.hosts.parity import (
    Credential,
    CredentialClient,
    Operation,
    api_key,
    call_rest,
    check_challenge,
    check_parity,
    check_refused_as_no_credential,
)
from tests.hosts.tutorial.parity import (
    check_operation,
    each_operation,
    owner_with_snippets,
    product_credential,
    snapshot,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.jwtauth.urls")]

User = get_user_model()
PRODUCT = product_credential(
    "jwt",
    lambda user: str(AccessToken.for_user(user)),
    mcp_url="/mcp-jwt",
    view="jwt",
    accepts="JSON Web Tokens",
)


def jwt(user: Any) -> Credential:
    return PRODUCT.credential("jwt", user)


@pytest.fixture
def people() -> tuple[Any, dict[str, int]]:
    """The owner, and the ids of their snippet and of another owner's."""
    return owner_with_snippets()


def test_the_tools() -> None:
    from tests.hosts.jwtauth.urls import jwt_endpoint

    names = [t.name for t in jwt_endpoint.tools]
    assert names[-6:] == PRODUCT.tools
    assert "highlight_snippet" in names


# -- the view that takes every kind ------------------------------------------------------------


@pytest.mark.parametrize("kind", PRODUCT.every_kind)
@each_operation
def test_rest_and_mcp_agree_for_every_kind(
    kind: str, operation: Operation, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    credential = PRODUCT.credential(kind, owner)
    rest, answer = check_operation(client, credential, operation, snippets, PRODUCT.mcp_url)
    if kind == "jwt" and rest.status_code == 201:
        # The view saw the token's user, on both sides.
        assert rest.json()["owner"] == answer["structuredContent"]["owner"] == "olive"


@pytest.mark.parametrize("kind", sorted(PRODUCT.app_kinds))
def test_keys_and_tokens_work_the_same_without_jwt_at_the_endpoint(
    kind: str, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    credential = PRODUCT.credential(kind, owner)
    rest, _ = check_parity(
        client,
        credential,
        tool="get_snippet",
        method="GET",
        url=f"/snippets/{snippets['mine']}/",
        arguments={"id": snippets["mine"]},
        rest_arguments={},
        snapshot=snapshot,
    )
    assert rest.status_code == 200


def test_a_jwt_is_refused_by_an_endpoint_that_does_not_take_them(
    client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    # REST takes it (the view lists JWTAuthentication); /mcp authenticates keys and OAuth
    # tokens only, so the token is no credential there: 401 with the endpoint's challenge.
    credential = jwt(owner)
    assert call_rest(client, credential, "GET", "/snippets/", {}).status_code == 200
    challenge = check_refused_as_no_credential(client, credential, "/mcp")
    assert challenge.startswith('Bearer error="invalid_token", resource_metadata="http://')


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("/mcp", "API keys or OAuth access tokens"),
        ("/mcp-jwt", "API keys, OAuth access tokens or JSON Web Tokens"),
        ("/mcp-jwt-first", "JSON Web Tokens, API keys or OAuth access tokens"),
    ],
)
def test_the_401_names_what_each_endpoint_takes(client: Client, url: str, accepted: str) -> None:
    check_challenge(client, url, accepted)


# -- the view that takes JSON Web Tokens only ---------------------------------------------------


@pytest.mark.parametrize("mcp_url", ["/mcp", PRODUCT.mcp_url])
@pytest.mark.parametrize("kind", sorted(PRODUCT.app_kinds))
def test_the_jwt_only_view_refuses_keys_and_tokens_through_both(
    kind: str, mcp_url: str, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, snippets = people
    PRODUCT.check_refused(client, kind, owner, snippets["mine"], mcp_url)


def test_the_jwt_only_view_takes_a_jwt(client: Client, people: tuple[Any, dict[str, int]]) -> None:
    owner, snippets = people
    outcomes = PRODUCT.check_own_view(client, owner, snippets["theirs"])
    statuses = [rest.status_code for rest, _ in outcomes]
    # Read, create, a bad value, another owner's snippet (the view's object permission), a
    # missing one: each answered alike on both sides.
    assert statuses == [200, 200, 201, 400, 403, 403, 404, 403]


# -- refused tokens ---------------------------------------------------------------------------


def expired(user: Any) -> str:
    token = AccessToken.for_user(user)
    token.set_exp(lifetime=-datetime.timedelta(minutes=1))
    return str(token)


def tampered(user: Any) -> str:
    # Another user's claims under this user's signature.
    header, _, signature = str(AccessToken.for_user(user)).split(".")
    other = User.objects.create_user("mallory", "m@example.com", "pw-mallory-123")
    claims = str(AccessToken.for_user(other)).split(".")[1]
    return f"{header}.{claims}.{signature}"


@pytest.mark.parametrize(
    "make",
    [expired, tampered, lambda user: "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln"],
    ids=["expired", "tampered", "garbage"],
)
def test_a_bad_jwt_is_refused_at_both_doors(
    make: Any, client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    credential = PRODUCT.carrying(make(owner))
    rest = call_rest(client, credential, "GET", "/snippets/", {})
    assert rest.status_code == 401
    assert rest["WWW-Authenticate"] == 'Bearer realm="api"'
    challenge = check_refused_as_no_credential(client, credential, PRODUCT.mcp_url)
    assert challenge.startswith('Bearer error="invalid_token", ')


# -- the order of the classes ------------------------------------------------------------------


def test_jwt_listed_first_refuses_api_keys_on_rest_and_at_mcp(
    client: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    key = api_key(owner, "read")
    assert call_rest(client, key, "GET", "/jwt-first-snippets/", {}).status_code == 401
    response = CredentialClient(client, "/mcp-jwt-first", key).request("tools/list")
    assert response.status_code == 401
    # A JSON Web Token is read the same whichever comes first.
    token = jwt(owner)
    assert call_rest(client, token, "GET", "/jwt-first-snippets/", {}).status_code == 200
    assert CredentialClient(client, "/mcp-jwt-first", token).result("tools/list")["tools"]


JWT = "rest_framework_simplejwt.authentication.JWTAuthentication"
KEYS = "mcp_endpoint.authentication.APIKeyAuthentication"
OAUTH = "mcp_endpoint.authentication.OAuth2TokenAuthentication"


@pytest.mark.parametrize(
    ("classes", "warned"),
    [
        ([JWT, KEYS, OAUTH], True),
        ([KEYS, JWT, OAUTH], True),
        ([OAUTH, JWT], False),
        ([KEYS, OAUTH, JWT], False),
        ([JWT], False),
    ],
)
def test_w110_warns_of_jwt_before_the_apps_classes(classes: list[str], warned: bool) -> None:
    with override_settings(MCP_ENDPOINT={"AUTHENTICATION_CLASSES": classes}):
        found = [m for m in check_settings() if m.id == "mcp_endpoint.W110"]
    assert bool(found) is warned
    if warned:
        assert "JWTAuthentication" in found[0].msg
        assert found[0].hint


def test_w110_reads_the_rest_apis_classes_too() -> None:
    rest = {"DEFAULT_AUTHENTICATION_CLASSES": [JWT, KEYS]}
    with override_settings(REST_FRAMEWORK=rest):
        [found] = [m for m in check_settings() if m.id == "mcp_endpoint.W110"]
    assert "DEFAULT_AUTHENTICATION_CLASSES" in found.msg


def test_drf_spectacular_knows_every_class_the_views_list() -> None:
    # The app's OAuth class, simplejwt's and the app's key class each have a description,
    # so no action's schema is reported as a guess on their account.
    from tests.hosts.jwtauth.urls import jwt_endpoint

    guesses = [m.msg for m in jwt_endpoint.check() if m.id == "mcp_endpoint.W020"]
    assert [g for g in guesses if "authenticator" in g] == []


# -- the official SDK against a real server ----------------------------------------------------

MINT = """
from django.contrib.auth import get_user_model
from rest_framework_simplejwt.tokens import AccessToken
user = get_user_model().objects.create_user("olive", "o@example.com", "pw-olive-123")
print(AccessToken.for_user(user))
"""


@pytest.mark.e2e
def test_the_sdk_calls_with_a_jwt(tmp_path: Any) -> None:
    import anyio
    import httpx2
    from mcp import Client as SDKClient
    from mcp.client.streamable_http import streamable_http_client

    from tests.live_server import LiveServer, manage

    live = LiveServer(tmp_path, env={"DJANGO_SETTINGS_MODULE": "tests.hosts.settings"})
    seen: dict[str, Any] = {}

    async def main(token: str) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(live.url("/hosts/jwtauth/mcp-jwt"), http_client=http)
            async with SDKClient(transport, mode="auto") as client:
                seen["tools"] = {t.name for t in (await client.list_tools()).tools}
                created = await client.call_tool("create_jwt_snippet", {"code": "print(1)"})
                seen["created"] = created.structured_content
                seen["listed"] = (
                    await client.call_tool("list_jwt_snippets", {})
                ).structured_content

    try:
        live.start()
        token = manage(live.env, "shell", "-c", MINT).strip().splitlines()[-1]
        anyio.run(main, token)
        rest = httpx2.get(
            live.url("/hosts/jwtauth/jwt-snippets/"), headers={"Authorization": f"Bearer {token}"}
        )
        refused = httpx2.post(
            live.url("/hosts/jwtauth/mcp-jwt"),
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={
                "Authorization": f"Bearer {token[:-2]}{'yy' if token.endswith('xx') else 'xx'}"
            },
        )
    finally:
        live.stop()
    assert set(PRODUCT.tools) <= seen["tools"]
    assert seen["created"]["owner"] == "olive"
    assert seen["listed"]["results"] == rest.json()
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
