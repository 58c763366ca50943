"""API keys as credentials, at /mcp and on the REST API, through the real URLs."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from oauth2_provider.models import AccessToken

from mcp_endpoint.credential import Credential, is_api_key
from mcp_endpoint.models import LAST_USED_RESOLUTION, APIKey
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
NEVER_ISSUED = "mcp_00000000_" + "0" * 64


def ping(mcp_client: Callable[..., MCPClient], key: str | None) -> Any:
    return mcp_client(key).post(PING)


def api(client: Client, method: str, path: str, key: str, **kwargs: Any) -> Any:
    call = getattr(client, method)
    return call(path, headers={"Authorization": f"Bearer {key}"}, **kwargs)


def assert_refused(response: Any) -> None:
    assert response.status_code == 401
    assert response.json()["error"]["code"] == -32001
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert "resource_metadata=" in challenge


# -- /mcp -----------------------------------------------------------------------------


def test_a_key_opens_the_endpoint(alice_key: str, mcp_client: Callable[..., MCPClient]) -> None:
    response = ping(mcp_client, alice_key)
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_no_credential(db: Any, mcp_client: Callable[..., MCPClient]) -> None:
    response = ping(mcp_client, None)
    assert response.status_code == 401
    assert 'error="invalid_token"' not in response.headers["WWW-Authenticate"]


def test_wrong_secret_with_a_right_prefix_is_refused(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    prefix, secret = alice_key.rsplit("_", 1)
    wrong = f"{prefix}_{secret[:-1]}{'1' if secret[-1] == '0' else '0'}"
    assert_refused(ping(mcp_client, wrong))
    assert_refused(ping(mcp_client, f"{prefix}_{'f' * 64}"))
    assert_refused(ping(mcp_client, alice_key + "0"))
    # The refusals did not count as uses of the key.
    assert APIKey.objects.get().last_used is None


def test_revoked_key(alice: Any, mcp_client: Callable[..., MCPClient]) -> None:
    key, raw = APIKey.objects.create_key(user=alice)
    assert ping(mcp_client, raw).status_code == 200
    key.revoke()
    assert_refused(ping(mcp_client, raw))


def test_expired_key(alice: Any, mcp_client: Callable[..., MCPClient]) -> None:
    raw = make_key(alice, expires=timezone.now() - timedelta(seconds=1))
    assert_refused(ping(mcp_client, raw))
    soon = make_key(alice, expires=timezone.now() + timedelta(hours=1))
    assert ping(mcp_client, soon).status_code == 200


def test_key_of_an_inactive_user(alice: Any, mcp_client: Callable[..., MCPClient]) -> None:
    raw = make_key(alice)
    alice.is_active = False
    alice.save()
    assert_refused(ping(mcp_client, raw))


def test_refusals_do_not_say_whether_a_key_exists(
    alice: Any, mcp_client: Callable[..., MCPClient], client: Client
) -> None:
    revoked, revoked_raw = APIKey.objects.create_key(user=alice)
    revoked.revoke()
    expired = make_key(alice, expires=timezone.now() - timedelta(seconds=1))
    inactive_user = make_key(alice, name="inactive")
    prefix, secret = make_key(alice).rsplit("_", 1)
    wrong_secret = f"{prefix}_{'f' * len(secret)}"

    def answer(raw: str) -> tuple[int, bytes, str]:
        response = ping(mcp_client, raw)
        return response.status_code, response.content, response.headers["WWW-Authenticate"]

    reference = answer(revoked_raw)
    assert reference[0] == 401
    for raw in [NEVER_ISSUED, expired, wrong_secret, "not-a-key-at-all"]:
        assert answer(raw) == reference, raw

    # The same on the REST API.
    def rest_answer(raw: str) -> tuple[int, bytes]:
        response = api(client, "get", "/api/tasks/", raw)
        return response.status_code, response.content

    rest_reference = rest_answer(revoked_raw)
    assert rest_reference[0] == 401
    for raw in [NEVER_ISSUED, expired, wrong_secret]:
        assert rest_answer(raw) == rest_reference, raw

    alice.is_active = False
    alice.save()
    assert answer(inactive_user) == reference
    assert rest_answer(inactive_user) == rest_reference


def test_credential_of_a_key(alice_read_key: str) -> None:
    key = APIKey.objects.get()
    credential = Credential(user=key.user, auth=key, scopes=key.scopes)
    assert credential.kind == "api_key"
    assert credential.label() == f"api_key:{key.prefix}"
    assert alice_read_key.rsplit("_", 1)[1] not in credential.label()
    assert credential.allows(["read"])
    assert not credential.allows(["read", "write"])


def test_only_the_apps_keys_are_api_keys(alice_read_key: str) -> None:
    # A credential knows an API key by what its model says it is (every model derived from
    # AbstractAPIKey, a swapped key model too), so that reading one imports no models.
    key = APIKey.objects.get()
    assert is_api_key(key)

    class ProductToken:  # a product's own auth object, with a scope as a token has
        scope = "read"
        pk = 7

    assert not is_api_key(ProductToken())
    assert not is_api_key("a token string")
    assert not is_api_key(None)
    assert Credential(user=key.user, auth=ProductToken(), scopes=None).kind == "oauth_token"
    assert Credential(user=key.user, auth="a token", scopes=None).kind == "other"


def test_a_view_with_the_toolkits_oauth_class_takes_the_apps_tokens() -> None:
    from oauth2_provider.contrib.rest_framework import OAuth2Authentication as ToolkitOAuth
    from rest_framework.authentication import BaseAuthentication

    from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
    from mcp_endpoint.rest_framework.credentials import related

    class ProductOAuth(OAuth2TokenAuthentication):
        pass

    class OAuth2Authentication(BaseAuthentication):  # the toolkit's name, not its class
        pass

    # The app's class runs the toolkit's check, and so do its subclasses: either class in
    # a view's list takes the other's tokens, whichever way round.
    assert related(OAuth2TokenAuthentication, ToolkitOAuth)
    assert related(ToolkitOAuth, ProductOAuth)
    assert not related(OAuth2TokenAuthentication, OAuth2Authentication)
    assert not related(APIKeyAuthentication, ToolkitOAuth)


# -- last_used ------------------------------------------------------------------------


def test_last_used_is_written_on_first_use_then_at_most_once_a_minute(
    alice_key: str, mcp_client: Callable[..., MCPClient]
) -> None:
    assert APIKey.objects.get().last_used is None

    before = timezone.now()
    assert ping(mcp_client, alice_key).status_code == 200
    first = APIKey.objects.get().last_used
    assert first is not None and first >= before

    assert ping(mcp_client, alice_key).status_code == 200
    assert APIKey.objects.get().last_used == first

    # Two minutes on (moved back rather than waited for), the next use is recorded.
    moved = first - 2 * LAST_USED_RESOLUTION
    APIKey.objects.update(last_used=moved)
    assert ping(mcp_client, alice_key).status_code == 200
    latest = APIKey.objects.get().last_used
    assert latest is not None and latest > moved and latest >= first


def test_last_used_on_the_rest_api(alice_key: str, client: Client, project: Project) -> None:
    assert api(client, "get", "/api/tasks/", alice_key).status_code == 200
    first = APIKey.objects.get().last_used
    assert first is not None
    assert api(client, "get", "/api/tasks/", alice_key).status_code == 200
    assert APIKey.objects.get().last_used == first


# -- the REST API ---------------------------------------------------------------------


def test_the_same_key_works_on_the_rest_api(
    alice_key: str, client: Client, project: Project
) -> None:
    response = api(client, "get", "/api/tasks/", alice_key)
    assert response.status_code == 200
    assert response.json()["count"] == 3

    response = api(
        client,
        "post",
        "/api/tasks/",
        alice_key,
        data={"project": project.pk, "title": "New task"},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert Task.objects.filter(title="New task").exists()


def test_a_read_only_key_cannot_write(
    alice_read_key: str, client: Client, project: Project
) -> None:
    assert api(client, "get", "/api/tasks/", alice_read_key).status_code == 200
    response = api(
        client,
        "post",
        "/api/tasks/",
        alice_read_key,
        data={"project": project.pk, "title": "Not allowed"},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert not Task.objects.filter(title="Not allowed").exists()


def test_refused_keys_on_the_rest_api(alice: Any, client: Client, project: Project) -> None:
    revoked, raw = APIKey.objects.create_key(user=alice)
    revoked.revoke()
    assert api(client, "get", "/api/tasks/", raw).status_code == 401
    expired = make_key(alice, expires=timezone.now() - timedelta(seconds=1))
    assert api(client, "get", "/api/tasks/", expired).status_code == 401


def test_an_oauth_token_is_not_taken_for_a_key(
    alice: Any, client: Client, project: Project
) -> None:
    token = AccessToken.objects.create(
        user=alice,
        token="oauth-token-not-a-key-0123456789abcdef",
        scope="read",
        expires=timezone.now() + timedelta(hours=1),
    )
    assert api(client, "get", "/api/tasks/", token.token).status_code == 200


# -- nothing logs a raw key -----------------------------------------------------------


def test_no_raw_key_is_logged(
    caplog: pytest.LogCaptureFixture,
    alice: Any,
    project: Project,
    admin_client: Client,
    mcp_client: Callable[..., MCPClient],
) -> None:
    caplog.set_level(logging.DEBUG)
    # Django's own loggers stop at INFO unless told otherwise; the SQL is logged at DEBUG.
    caplog.set_level(logging.DEBUG, logger="django")
    caplog.set_level(logging.DEBUG, logger="mcp_endpoint")
    raws: list[str] = []
    with CaptureQueriesContext(connection) as queries:
        key, raw = APIKey.objects.create_key(user=alice, scopes="read")
        raws.append(raw)

        output = _capture("mcp_key", "create", "--user", "alice", "--scopes", "read write")
        raws.append(output.rstrip("\n").split("\n")[-1])

        response = admin_client.post(
            "/admin/mcp_endpoint/apikey/add/",
            {"user": alice.pk, "name": "", "scopes": ["read"], "expires_0": "", "expires_1": ""},
        )
        assert response.status_code == 302
        # The reveal page after the redirect; its cookie carried the key, never a log line.
        response = admin_client.get(response.headers["Location"])
        assert response.status_code == 200
        made = APIKey.objects.order_by("-pk").first()
        assert made is not None
        raws.extend(
            word.split('"')[0]
            for word in response.content.decode().split('value="')[1:]
            if word.startswith(made.prefix + "_")
        )
        assert len(raws) == 3

        for raw in raws:
            assert ping(mcp_client, raw).status_code == 200
            assert mcp_client(raw).call("summarize_project", {"project_id": project.pk})
            assert mcp_client(raw).request("tools/call", {"name": "nope"}).status_code == 200
            client = Client()
            assert api(client, "get", "/api/tasks/", raw).status_code == 200
            assert api(client, "post", "/api/tasks/", raw, data={}).status_code in {400, 403}

        key.revoke()
        _capture("mcp_key", "revoke", APIKey.objects.order_by("pk")[1].prefix)
        admin_client.post(
            "/admin/mcp_endpoint/apikey/",
            {"action": "revoke_selected", "_selected_action": [made.pk]},
        )
        for raw in raws:
            assert ping(mcp_client, raw).status_code == 401
            assert api(Client(), "get", "/api/tasks/", raw).status_code == 401
        assert _capture("mcp_key", "list").count("revoked") == 3

    names = {record.name for record in caplog.records}
    assert {"django.db.backends", "django.request", "mcp_endpoint"} <= names
    for record in caplog.records:
        texts = [record.getMessage(), str(record.msg), repr(record.args), record.exc_text or ""]
        for raw in raws:
            secret = raw.rsplit("_", 1)[1]
            for text in texts:
                assert raw not in text and secret not in text, record
    # Nor does a raw key reach the database, in a write or in a lookup.
    for query in queries.captured_queries:
        for raw in raws:
            assert raw.rsplit("_", 1)[1] not in query["sql"]


def _capture(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_kind_names_for_messages() -> None:
    from rest_framework.authentication import BaseAuthentication, TokenAuthentication

    from mcp_endpoint.credential import accepted_kinds, kind_name

    class BearerToken(TokenAuthentication):
        keyword = "Bearer"

    class Unnamed(BaseAuthentication):
        pass

    class Named(BaseAuthentication):
        mcp_credential_name = "signed cookies"

    # A well-known base names its subclasses; a class's own name wins; else the class name.
    assert kind_name(BearerToken) == "DRF tokens"
    assert kind_name(Named) == "signed cookies"
    assert kind_name(Unnamed) == "Unnamed"
    assert accepted_kinds([Named, Unnamed, Named]) == "signed cookies or Unnamed"
    assert accepted_kinds([]) == "no credentials at all"
