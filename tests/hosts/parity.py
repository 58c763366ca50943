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


def oauth_token(user: Any, scope: str, mcp_paths: tuple[str, ...] = ("/mcp",)) -> Credential:
    """An access token bound (RFC 8707) to the resources compared: the host's REST API at
    the root of the site, and its MCP endpoints (``mcp_paths``)."""
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
        resource=["http://testserver/", *(f"http://testserver{p}" for p in mcp_paths)],
    )
    return Credential(raw, frozenset(scope.split()))


def credential_kinds(
    mcp_paths: tuple[str, ...] = ("/mcp",),
) -> dict[str, Callable[[Any], Credential]]:
    """The credential kinds every host is checked with, OAuth tokens bound to ``mcp_paths``."""
    return {
        "key_read": lambda user: api_key(user, "read"),
        "key_read_write": lambda user: api_key(user, "read write"),
        "oauth_read_write": lambda user: oauth_token(user, "read write", mcp_paths),
        "oauth_read": lambda user: oauth_token(user, "read", mcp_paths),
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
    else:
        raise AssertionError(f"no MCP outcome is mapped for REST {status}")
    return rest, answer


def check_each(
    client: Client,
    credential: Credential,
    operations: list[tuple[str, str, str, dict[str, Any]]],
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
    operations: list[tuple[str, str, str, dict[str, Any]]],
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


def check_challenge(client: Client, mcp_url: str, accepted: str) -> None:
    """A message without a credential at ``mcp_url``: 401 whose message names the kinds of
    credential the endpoint takes (``accepted``) and whose challenge is the endpoint's."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
    response = client.post(mcp_url, data=body, content_type="application/json")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == f"Unauthorized: this endpoint accepts {accepted}"
    assert response["WWW-Authenticate"].startswith('Bearer resource_metadata="http://')
