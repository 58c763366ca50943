"""REST against MCP for the host apps: one call through each, the same outcome.

:func:`check_parity` makes the REST request and the tool call with the same credential,
each in a transaction that is rolled back (so both start from the same data), and checks
that the outcomes agree the way PROTOCOL.md §6 maps them; a refused call must leave the
data as it was.
"""

from __future__ import annotations

import datetime
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application

from mcp_endpoint.models import APIKey
from tests.mcp_client import MCPClient

# Fields a write stamps with the time of the call: REST and MCP run a moment apart.
CALL_TIME_FIELDS = {"created", "updated"}

# One operation on both sides: (tool, HTTP method, REST URL, the tool's arguments).
Operation = tuple[str, str, str, dict[str, Any]]


@dataclass(frozen=True)
class Credential:
    """A secret and the header that carries it (``Authorization: Bearer <secret>`` unless
    said otherwise; with no ``scheme`` the header's value is the secret alone)."""

    bearer: str
    scopes: frozenset[str]
    header: str = "Authorization"
    scheme: str | None = "Bearer"

    def headers(self) -> dict[str, str]:
        return {self.header: f"{self.scheme} {self.bearer}" if self.scheme else self.bearer}


class CredentialClient(MCPClient):
    """An MCP client that sends a :class:`Credential` the way its host reads it."""

    def __init__(self, client: Client, url: str, credential: Credential) -> None:
        super().__init__(client, url)
        self.credential = credential

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {**self.credential.headers(), **(extra or {})}


def api_key(user: Any, scopes: str) -> Credential:
    _, raw = APIKey.objects.create_key(user=user, scopes=scopes, name="host parity")
    return Credential(raw, frozenset(scopes.split()))


def oauth_token(
    user: Any, scope: str, mcp_paths: tuple[str, ...] = ("/mcp",), host: str = "testserver"
) -> Credential:
    """An access token bound (RFC 8707) to the resources compared: the host's REST API at
    the root of the site ``host``, and its MCP endpoints (``mcp_paths``)."""
    application = Application.objects.create(
        name="host parity",
        user=user,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    raw = secrets.token_urlsafe(32)
    AccessToken.objects.create(
        user=user,
        application=application,
        token=raw,
        scope=scope,
        expires=timezone.now() + datetime.timedelta(hours=1),
        resource=[f"http://{host}/", *(f"http://{host}{p}" for p in mcp_paths)],
    )
    return Credential(raw, frozenset(scope.split()))


def credential_kinds(
    mcp_paths: tuple[str, ...] = ("/mcp",), host: str = "testserver"
) -> dict[str, Callable[[Any], Credential]]:
    """The credential kinds every host is checked with, OAuth tokens bound to ``mcp_paths``
    on ``host``."""
    return {
        "key_read": lambda user: api_key(user, "read"),
        "key_read_write": lambda user: api_key(user, "read write"),
        "oauth_read_write": lambda user: oauth_token(user, "read write", mcp_paths, host),
        "oauth_read": lambda user: oauth_token(user, "read", mcp_paths, host),
    }


CREDENTIAL_KINDS = credential_kinds()


def rolled_back(run: Callable[[], Any], snapshot: Callable[[], Any]) -> tuple[Any, Any]:
    """Run ``run`` in a transaction that is then rolled back; its answer and the data after."""
    with transaction.atomic():
        outcome = run()
        after = snapshot()
        transaction.set_rollback(True)
    return outcome, after


def call_rest(
    client: Client, bearer: str | Credential | None, method: str, url: str, arguments: Any
) -> Any:
    if isinstance(bearer, Credential):
        headers = bearer.headers()
    else:
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    if method == "GET":
        return client.get(url, arguments, headers=headers)
    return client.generic(
        method, url, json.dumps(arguments), content_type="application/json", headers=headers
    )


def same_data(rest: Any, mcp: Any) -> None:
    if isinstance(rest, dict) and isinstance(mcp, dict):
        assert mcp.keys() == rest.keys()
        # Ids are allocated, not chosen: PostgreSQL's sequences do not roll back with the
        # transaction that undid the REST write, so a created object's id (and the links
        # that carry it) may differ.
        rest_id, mcp_id = rest.get("id"), mcp.get("id")
        for key in rest:
            if key in CALL_TIME_FIELDS or (key == "id" and isinstance(rest[key], int)):
                continue  # a moment apart; allocated
            value = rest[key]
            if isinstance(value, str) and isinstance(rest_id, int) and isinstance(mcp_id, int):
                value = value.replace(f"/{rest_id}/", f"/{mcp_id}/")
            assert mcp[key] == value, key
    elif isinstance(rest, list) and isinstance(mcp, list):
        # A list an action answers with after a write (the notes it added one to): item by
        # item, each with the allowances above.
        assert len(mcp) == len(rest)
        for rest_item, mcp_item in zip(rest, mcp, strict=True):
            same_data(rest_item, mcp_item)
    else:
        assert mcp == rest


def check_parity(
    client: Client,
    credential: Credential,
    *,
    tool: str,
    method: str,
    url: str,
    arguments: dict[str, Any],
    rest_arguments: Any = None,
    snapshot: Callable[[], Any],
    mcp_url: str = "/mcp",
) -> tuple[Any, dict[str, Any]]:
    """Both sides of one operation; returns the REST response and the tool result."""
    before = snapshot()
    rest, rest_after = rolled_back(
        lambda: call_rest(
            client,
            credential,
            method,
            url,
            arguments if rest_arguments is None else rest_arguments,
        ),
        snapshot,
    )
    rpc = CredentialClient(client, mcp_url, credential)
    answer, mcp_after = rolled_back(lambda: rpc.call(tool, arguments), snapshot)
    status = rest.status_code
    if status >= 400:
        # A refused call leaves the data as it was, on both sides.
        assert rest_after == before and mcp_after == before
    media = rest.get("Content-Type", "")
    rest_data = rest.json() if rest.content and media.startswith("application/json") else None
    if 200 <= status < 300:
        assert answer["isError"] is False, (answer, rest.content)
        if media.startswith("text/"):
            assert answer["content"][0]["text"] == rest.content.decode()
        elif rest_data is not None:
            structured = answer["structuredContent"]
            if isinstance(rest_data, list):
                structured = structured["results"]
            same_data(rest_data, structured)
        return rest, answer
    assert answer["isError"] is True, (answer, status, rest.content)
    error = answer["structuredContent"]["error"]
    if status == 400:
        assert error["code"] == "invalid_arguments"
        assert error["fields"] == rest_data
    elif status in (401, 403):
        assert error["code"] in {"permission_denied", "insufficient_scope"}, error
        if error["code"] == "insufficient_scope":
            assert not set(error["required_scopes"]) <= credential.scopes
    elif status == 404:
        assert error["code"] == "not_found"
    elif status == 409:
        assert error["code"] == "conflict", error
    elif 300 <= status < 400:
        # Sent elsewhere (a sign-in page) instead of answered: the action did not run.
        assert error["code"] == "permission_denied", error
        assert error["location"] == rest["Location"]
    else:
        raise AssertionError(f"no MCP outcome is mapped for REST {status}")
    return rest, answer


def check_each(
    client: Client,
    credential: Credential,
    operations: list[Operation],
    *,
    snapshot: Callable[[], Any],
    mcp_url: str = "/mcp",
) -> list[tuple[Any, dict[str, Any]]]:
    """:func:`check_parity` for each ``(tool, method, url, arguments)``; the REST request
    gets the arguments less ``id``, which its URL carries."""
    return [
        check_parity(
            client,
            credential,
            tool=tool,
            method=method,
            url=url,
            arguments=arguments,
            rest_arguments={k: v for k, v in arguments.items() if k != "id"},
            snapshot=snapshot,
            mcp_url=mcp_url,
        )
        for tool, method, url, arguments in operations
    ]


def check_refused(
    client: Client,
    credential: Credential,
    operations: list[Operation],
    *,
    snapshot: Callable[[], Any],
    mcp_url: str = "/mcp",
    accepts: str,
) -> None:
    """A view that cannot authenticate ``credential``: REST answers 401 to each operation,
    ``tools/list`` hides its tools, and each call is ``permission_denied`` saying that the
    action accepts ``accepts`` only."""
    listed = CredentialClient(client, mcp_url, credential).result("tools/list")["tools"]
    assert not {tool for tool, *_ in operations} & {t["name"] for t in listed}
    outcomes = check_each(client, credential, operations, snapshot=snapshot, mcp_url=mcp_url)
    for rest, answer in outcomes:
        assert rest.status_code == 401
        error = answer["structuredContent"]["error"]
        assert error["code"] == "permission_denied"
        assert error["message"].startswith(f"This action accepts {accepts} only")


def check_refused_as_no_credential(client: Client, credential: Credential, mcp_url: str) -> str:
    """``tools/list`` at ``mcp_url`` refused as no credential (401, JSON-RPC -32001), with a
    challenge that points at the resource metadata; returns the challenge."""
    response = CredentialClient(client, mcp_url, credential).request("tools/list")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == -32001
    challenge: str = response["WWW-Authenticate"]
    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge
    return challenge


def check_challenge(client: Client, mcp_url: str, accepted: str) -> None:
    """A message without a credential at ``mcp_url``: 401 whose message names the kinds of
    credential the endpoint takes (``accepted``) and whose challenge is the endpoint's."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    response = client.post(mcp_url, data=body, content_type="application/json")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == f"Unauthorized: this endpoint accepts {accepted}"
    assert response["WWW-Authenticate"].startswith('Bearer resource_metadata="http://')


@dataclass(frozen=True)
class ProductCredential:
    """A credential the host's product issues itself (a JSON Web Token, a signed header
    token), beside the app's API keys and OAuth tokens.

    The endpoint at ``mcp_url`` lists the product's authentication class after the app's;
    ``/mcp`` lists the app's only. One of the host's views takes the product's credential
    only: its ``tools``, and its ``operations`` on an object (``accepts`` is how a refusal
    names what it takes); ``snapshot`` is the data those operations may change.
    """

    kind: str
    mint: Callable[[Any], str]
    mcp_url: str
    tools: list[str]
    operations: Callable[[int], list[Operation]]
    accepts: str
    snapshot: Callable[[], Any]
    header: str = "Authorization"
    scheme: str | None = "Bearer"

    @property
    def app_kinds(self) -> dict[str, Callable[[Any], Credential]]:
        """The app's kinds, OAuth tokens bound to both endpoints."""
        return credential_kinds(("/mcp", self.mcp_url))

    @property
    def every_kind(self) -> list[str]:
        return [*sorted(self.app_kinds), self.kind]

    def carrying(self, secret: str) -> Credential:
        """``secret`` sent where the product's credential goes."""
        return Credential(secret, frozenset(), header=self.header, scheme=self.scheme)

    def credential(self, kind: str, user: Any) -> Credential:
        """A credential of ``kind`` (one of :attr:`every_kind`) for ``user``."""
        if kind == self.kind:
            return self.carrying(self.mint(user))
        return self.app_kinds[kind](user)

    def check_own_view(
        self, client: Client, user: Any, pk: int
    ) -> list[tuple[Any, dict[str, Any]]]:
        """The product's credential at the view that takes it only: ``tools/list`` at
        :attr:`mcp_url` lists the view's tools, and each operation on ``pk`` is answered
        alike on both sides (the outcomes, as :func:`check_each` returns them)."""
        credential = self.credential(self.kind, user)
        listed = CredentialClient(client, self.mcp_url, credential).result("tools/list")["tools"]
        assert set(self.tools) <= {t["name"] for t in listed}
        return check_each(
            client, credential, self.operations(pk), snapshot=self.snapshot, mcp_url=self.mcp_url
        )

    def check_refused(self, client: Client, kind: str, user: Any, pk: int, mcp_url: str) -> None:
        """:func:`check_refused`: the app's ``kind`` at the view that takes the product's
        credential only, through ``mcp_url``."""
        check_refused(
            client,
            self.app_kinds[kind](user),
            self.operations(pk),
            snapshot=self.snapshot,
            mcp_url=mcp_url,
            accepts=self.accepts,
        )
