"""Attacks on the OAuth set-up, reproduced through the real URLs: redirect URIs smuggled into
a registration, forged client addresses, tokens for no or another resource, replayed codes,
and pages framed by another site.
"""

from __future__ import annotations

import hashlib
import io
import json
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import django
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import AccessToken, Application, Grant, RefreshToken
from oauth2_provider.settings import oauth2_settings

from mcp_endpoint.oauth.models import RedeemedAuthorizationCode
from mcp_endpoint.oauth.registration import RedirectURIPolicy, stored_as_checked
from tests.oauth_helpers import DocumentServer, form_fields, query_of
from tests.test_oauth import (
    BASE,
    LOOPBACK_FETCHER,
    REDIRECT,
    app,
    approve,
    authorize_query,
    client_document,
    documents,
    exchange,
    mcp,
    pkce,
    refused_document,
    register,
    signed_in,
    with_toolkit_settings,
)

__all__ = ["app", "documents", "signed_in"]  # fixtures, used by name

EVIL = "https://evil.example/steal"

# One loopback entry that passes every check, with a second URI hidden after a separator
# the toolkit's space-joined storage would split on (or a character no URI may hold).
SMUGGLED = {
    "space": f"http://127.0.0.1/cb {EVIL}",
    "newline": f"http://127.0.0.1/cb\n{EVIL}",
    "carriage-return": f"http://127.0.0.1/cb\r\n{EVIL}",
    "tab": f"http://127.0.0.1/cb\t{EVIL}",
    "vertical-tab": f"http://127.0.0.1/cb\x0b{EVIL}",
    "form-feed": f"http://127.0.0.1/cb\x0c{EVIL}",
    "nul": f"http://127.0.0.1/cb\x00{EVIL}",
    "unit-separator": f"http://127.0.0.1/cb\x1f{EVIL}",
    "next-line": f"http://127.0.0.1/cb\x85{EVIL}",
    "no-break-space": f"http://127.0.0.1/cb\xa0{EVIL}",
    "line-separator": f"http://127.0.0.1/cb\u2028{EVIL}",
    "ideographic-space": f"http://127.0.0.1/cb\u3000{EVIL}",
    "zero-width-space": f"http://127.0.0.1/cb\u200b{EVIL}",
    "delete": "http://127.0.0.1/cb\x7f",
    "leading-space": " http://127.0.0.1/cb",
    "trailing-newline": "http://127.0.0.1/cb\n",
}


def assert_nothing_registered() -> None:
    assert Application.objects.count() == 0
    assert AccessToken.objects.count() == 0
    assert Grant.objects.count() == 0


# -- redirect URIs smuggled into a registration ---------------------------------------------


@pytest.mark.parametrize("uri", list(SMUGGLED.values()), ids=list(SMUGGLED))
def test_a_smuggled_redirect_uri_is_refused_at_registration(
    client: Client, db: Any, uri: str
) -> None:
    response = register(client, redirect_uris=[uri], client_name="Totally Claude")
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_redirect_uri"
    assert_nothing_registered()


@pytest.mark.parametrize("uri", list(SMUGGLED.values()), ids=list(SMUGGLED))
def test_the_redirect_policy_names_the_character(uri: str) -> None:
    reason = RedirectURIPolicy().refusal(uri)
    assert reason is not None and "may not contain" in reason


def test_smuggling_is_refused_even_without_the_policies(
    client: Client, db: Any, settings: Any
) -> None:
    # A host may replace the registration policies; the character rule is not one of them.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_REGISTRATION_POLICY_CLASSES": []}
    response = register(client, redirect_uris=[SMUGGLED["space"]])
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_redirect_uri"
    assert_nothing_registered()


def test_the_smuggling_attack_end_to_end(signed_in: Client) -> None:
    """The reported attack: register a loopback URI with a second one hidden in it, have alice
    approve, and receive her code at the hidden URI. Each step is refused, and no code is
    issued to any redirect but the one registered."""
    attempt = register(signed_in, redirect_uris=[SMUGGLED["space"]], client_name="Totally Claude")
    assert attempt.status_code == 400
    assert attempt.json()["error"] == "invalid_redirect_uri"
    assert Application.objects.count() == 0

    # The attacker registers the innocent half alone and asks for alice's code at the other.
    client_id = register(
        signed_in, redirect_uris=["http://127.0.0.1/cb"], client_name="Totally Claude"
    ).json()["client_id"]
    assert Application.objects.get().redirect_uris == "http://127.0.0.1/cb"
    _, challenge = pkce()
    for redirect in (EVIL, SMUGGLED["space"], SMUGGLED["newline"]):
        page = signed_in.get(authorize_query(client_id, challenge, redirect_uri=redirect))
        assert page.status_code == 400, "an error page, not a redirect"
        assert not page.has_header("Location")
        assert b"evil.example" not in page.content.split(b"<main>")[0]
        posted = signed_in.post(
            authorize_query(client_id, challenge, redirect_uri=redirect),
            {
                "client_id": client_id,
                "redirect_uri": redirect,
                "response_type": "code",
                "scope": "read write",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "allow": "Allow",
            },
        )
        assert not posted.get("Location", "").startswith(EVIL)
    assert Grant.objects.count() == 0
    assert not AccessToken.objects.exclude(scope=oauth2_settings.DCR_REGISTRATION_SCOPE).exists()

    # Approving the registered redirect still works, and the code goes there only.
    answer = approve(
        signed_in, authorize_query(client_id, challenge, redirect_uri="http://127.0.0.1/cb")
    )
    assert answer["Location"].startswith("http://127.0.0.1/cb?")
    assert "code" in query_of(answer["Location"])
    assert list(Grant.objects.values_list("redirect_uri", flat=True)) == ["http://127.0.0.1/cb"]


def test_a_smuggled_redirect_uri_is_refused_in_an_update(client: Client, db: Any) -> None:
    data = register(client).json()
    path = data["registration_client_uri"].removeprefix(BASE)
    auth = {"Authorization": f"Bearer {data['registration_access_token']}"}
    for uri in (SMUGGLED["space"], SMUGGLED["newline"], SMUGGLED["nul"]):
        response = client.put(
            path,
            json.dumps({"redirect_uris": [uri], "token_endpoint_auth_method": "none"}),
            content_type="application/json",
            headers=auth,
        )
        assert response.status_code == 400, response.content
        assert response.json()["error"] == "invalid_redirect_uri"
        assert Application.objects.get(client_id=data["client_id"]).redirect_uris == REDIRECT


def test_a_clean_update_is_stored_as_sent(client: Client, db: Any) -> None:
    data = register(client).json()
    path = data["registration_client_uri"].removeprefix(BASE)
    uris = ["http://127.0.0.1:4000/cb", "http://localhost:4001/cb"]
    response = client.put(
        path,
        json.dumps({"redirect_uris": uris, "token_endpoint_auth_method": "none"}),
        content_type="application/json",
        headers={"Authorization": f"Bearer {data['registration_access_token']}"},
    )
    assert response.status_code == 200, response.content
    assert response.json()["redirect_uris"] == uris
    assert Application.objects.get(client_id=data["client_id"]).redirect_uris.split() == uris


@pytest.mark.parametrize("name", ["space", "newline", "nul", "tab"])
def test_a_smuggled_redirect_uri_in_a_metadata_document(
    signed_in: Client, documents: DocumentServer, name: str
) -> None:
    client_id = documents.url("/smuggled.json")
    documents.serve_json(
        "/smuggled.json", client_document(client_id, redirect_uris=[SMUGGLED[name]])
    )
    with with_toolkit_settings(**LOOPBACK_FETCHER):
        refused_document(signed_in, client_id)
    assert "/smuggled.json" in documents.requests


def test_the_stored_list_is_compared_with_the_checked_one(db: Any) -> None:
    application = Application.objects.create(
        name="Stored",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=f"http://127.0.0.1/cb {EVIL}",
    )
    assert not stored_as_checked(application.client_id, {"redirect_uris": [SMUGGLED["space"]]})
    assert stored_as_checked(
        application.client_id, {"redirect_uris": ["http://127.0.0.1/cb", EVIL]}
    )
    assert not stored_as_checked("no-such-client", {"redirect_uris": []})


# -- tokens bound to no resource, or asked for another server --------------------------------


def unbound_token(client: Client, app: Application, scope: str = "read write") -> str:
    """A token through the real code flow, asked for without any ``resource``."""
    verifier, challenge = pkce()
    url = authorize_query(app.client_id, challenge, scope=scope, resource=None)  # type: ignore[arg-type]
    code = query_of(approve(client, url)["Location"])["code"]
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": app.client_id,
        "code_verifier": verifier,
    }
    response = client.post("/o/token", data)
    assert response.status_code == 200, response.content
    assert AccessToken.objects.get(token_checksum=checksum(response.json()["access_token"]))
    token: str = response.json()["access_token"]
    return token


def checksum(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_a_token_bound_to_no_resource_is_refused_at_mcp(
    signed_in: Client, app: Application, project: Any
) -> None:
    token = unbound_token(signed_in, app)
    assert AccessToken.objects.get(token_checksum=checksum(token)).resource == []
    before = project.tasks.count()
    arguments = {"project": project.pk, "title": "Unbound"}
    response = mcp(signed_in, token, "tools/call", {"name": "create_task", "arguments": arguments})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == -32001
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert project.tasks.count() == before
    assert mcp(signed_in, token, "tools/list").status_code == 401


def test_a_host_may_accept_tokens_bound_to_no_resource(
    signed_in: Client, app: Application, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_ACCEPT_UNBOUND_TOKENS": True}
    token = unbound_token(signed_in, app)
    response = mcp(signed_in, token, "tools/list")
    assert response.status_code == 200
    assert "tools" in response.json()["result"]


def test_the_registration_access_token_does_not_open_mcp(client: Client, db: Any) -> None:
    # RFC 7591's registration token is an access token of the toolkit, bound to no resource.
    data = register(client).json()
    response = mcp(client, data["registration_access_token"], "tools/list")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == -32001


FOREIGN = "http://evil.example/mcp"


def test_a_resource_on_another_server_gets_invalid_target(
    signed_in: Client, app: Application
) -> None:
    _, challenge = pkce()
    response = signed_in.get(authorize_query(app.client_id, challenge, resource=FOREIGN))
    assert response.status_code == 302, "refused before any consent page"
    assert response["Location"].startswith(REDIRECT + "?")
    query = query_of(response["Location"])
    assert query["error"] == "invalid_target"
    assert query["state"] == "st-123"
    assert query["iss"] == f"{BASE}/o"
    assert Grant.objects.count() == 0


def test_a_foreign_resource_with_an_unknown_redirect_gets_an_error_page(
    signed_in: Client, app: Application
) -> None:
    _, challenge = pkce()
    url = authorize_query(app.client_id, challenge, resource=FOREIGN, redirect_uri=EVIL)
    response = signed_in.get(url)
    assert response.status_code == 400
    assert not response.has_header("Location")
    assert b"For:" not in response.content
    assert Grant.objects.count() == 0


def test_one_foreign_resource_among_several_is_refused(signed_in: Client, app: Application) -> None:
    _, challenge = pkce()
    url = authorize_query(app.client_id, challenge) + "&" + urlencode({"resource": FOREIGN})
    response = signed_in.get(url)
    assert query_of(response["Location"])["error"] == "invalid_target"
    assert Grant.objects.count() == 0


def test_a_foreign_resource_slipped_into_the_consent_form_is_refused(
    signed_in: Client, app: Application
) -> None:
    _, challenge = pkce()
    url = authorize_query(app.client_id, challenge)
    page = signed_in.get(url)
    fields = form_fields(page.content.decode(), "authorizationForm")
    fields.update(resource=FOREIGN, allow="Allow")
    response = signed_in.post(url, fields)
    assert response.status_code == 302
    assert query_of(response["Location"])["error"] == "invalid_target"
    assert Grant.objects.count() == 0


def test_the_configured_resource_url_is_this_sites(
    signed_in: Client, app: Application, settings: Any
) -> None:
    # Behind a proxy the endpoint's public URL differs from the one requests arrive at.
    public = "https://tasks.example/mcp"
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "RESOURCE_URL": public}
    _, challenge = pkce()
    page = signed_in.get(authorize_query(app.client_id, challenge, resource=public))
    assert page.status_code == 200
    assert f"<code>{public}</code>" in page.content.decode()


# -- a replayed authorisation code ------------------------------------------------------------


def code_and_verifier(client: Client, app: Application) -> tuple[str, str]:
    verifier, challenge = pkce()
    answer = approve(client, authorize_query(app.client_id, challenge))
    return query_of(answer["Location"])["code"], verifier


def refresh(client: Client, app: Application, refresh_token: str) -> Any:
    data = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": app.client_id,
    }
    return client.post(
        "/o/token", urlencode(data), content_type="application/x-www-form-urlencoded"
    )


def test_a_replayed_code_revokes_the_tokens_of_its_first_use(
    signed_in: Client, app: Application
) -> None:
    code, verifier = code_and_verifier(signed_in, app)
    first = exchange(signed_in, app.client_id, code, verifier).json()
    assert mcp(signed_in, first["access_token"], "tools/list").status_code == 200

    replay = exchange(signed_in, app.client_id, code, verifier)
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert "access_token" not in replay.json()

    after = mcp(signed_in, first["access_token"], "tools/list")
    assert after.status_code == 401
    assert after.json()["error"]["code"] == -32001
    assert after["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    renewed = refresh(signed_in, app, first["refresh_token"])
    assert renewed.status_code == 400
    assert renewed.json()["error"] == "invalid_grant"
    assert not AccessToken.objects.filter(user__isnull=False).exists()


def test_a_replay_reaches_the_tokens_refreshed_since(signed_in: Client, app: Application) -> None:
    code, verifier = code_and_verifier(signed_in, app)
    first = exchange(signed_in, app.client_id, code, verifier).json()
    second = refresh(signed_in, app, first["refresh_token"]).json()
    assert mcp(signed_in, second["access_token"], "tools/list").status_code == 200

    assert exchange(signed_in, app.client_id, code, verifier).status_code == 400
    assert mcp(signed_in, second["access_token"], "tools/list").status_code == 401
    assert refresh(signed_in, app, second["refresh_token"]).status_code == 400


def test_a_replay_revokes_nothing_else(signed_in: Client, app: Application) -> None:
    code, verifier = code_and_verifier(signed_in, app)
    other_code, other_verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, code, verifier)
    other = exchange(signed_in, app.client_id, other_code, other_verifier).json()
    assert exchange(signed_in, app.client_id, code, verifier).status_code == 400
    assert mcp(signed_in, other["access_token"], "tools/list").status_code == 200
    # A code that was never issued revokes nothing either.
    assert exchange(signed_in, app.client_id, "never-issued", verifier).status_code == 400
    assert mcp(signed_in, other["access_token"], "tools/list").status_code == 200


def test_the_redeemed_code_is_kept_as_a_digest(signed_in: Client, app: Application) -> None:
    code, verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, code, verifier)
    row = RedeemedAuthorizationCode.objects.get()
    assert row.code_digest == hashlib.sha256(code.encode()).hexdigest()
    assert code not in row.code_digest and row.client_id == app.client_id


# -- pages another site may not frame ----------------------------------------------------------


def assert_not_frameable(response: Any) -> None:
    assert response["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_the_consent_page_may_not_be_framed(signed_in: Client, app: Application) -> None:
    _, challenge = pkce()
    page = signed_in.get(authorize_query(app.client_id, challenge))
    assert page.status_code == 200 and b"authorizationForm" in page.content
    assert_not_frameable(page)
    error_page = signed_in.get(authorize_query(app.client_id, challenge, redirect_uri=EVIL))
    assert error_page.status_code == 400
    assert_not_frameable(error_page)


def test_the_login_page_may_not_be_framed(client: Client, app: Application) -> None:
    _, challenge = pkce()
    to_login = client.get(authorize_query(app.client_id, challenge))
    page = client.get(to_login["Location"])
    assert page.status_code == 200
    assert b"An application asks to use your account" in page.content
    assert_not_frameable(page)
    failed = client.post(to_login["Location"], {"username": "alice", "password": "wrong"})
    assert failed.status_code == 200
    assert_not_frameable(failed)


def test_the_connected_clients_pages_may_not_be_framed(signed_in: Client, app: Application) -> None:
    code, verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, code, verifier)
    listing = signed_in.get("/o/authorized_tokens/")
    assert listing.status_code == 200 and b"Inspector" in listing.content
    assert_not_frameable(listing)
    row = AccessToken.objects.get()
    confirm = signed_in.get(f"/o/authorized_tokens/{row.pk}/delete/")
    assert confirm.status_code == 200 and b"Revoke the access of Inspector" in confirm.content
    assert_not_frameable(confirm)


def test_a_host_policy_keeps_its_directives() -> None:
    from django.http import HttpResponse

    from mcp_endpoint.oauth.views import deny_framing

    response = HttpResponse()
    response["Content-Security-Policy"] = "default-src 'self';"
    assert deny_framing(response)["Content-Security-Policy"] == (
        "default-src 'self'; frame-ancestors 'none'"
    )
    response["Content-Security-Policy"] = "frame-ancestors https://intranet.example"
    assert deny_framing(response)["Content-Security-Policy"] == (
        "frame-ancestors https://intranet.example"
    )


# -- the anonymous registration limit, and clients that never came back -----------------------


def register_from(client: Client, forwarded_for: str, remote_addr: str = "203.0.113.9") -> Any:
    body = {
        "client_name": "Flood",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    }
    return client.post(
        "/o/register",
        json.dumps(body),
        content_type="application/json",
        REMOTE_ADDR=remote_addr,
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )


def test_forged_forwarded_for_headers_do_not_escape_the_limit(client: Client, db: Any) -> None:
    # The default rate is 20 an hour per address; each request claims another address.
    statuses = [register_from(client, f"198.51.100.{i}").status_code for i in range(30)]
    assert statuses[:20] == [201] * 20
    assert statuses[20:] == [429] * 10
    assert Application.objects.count() == 20


def test_declared_proxies_find_the_client_address(client: Client, db: Any, settings: Any) -> None:
    # One proxy appends the address it saw; what the client put before it is not trusted.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_REGISTRATION_RATE": "2/hour"}
    forged = [register_from(client, f"198.51.100.{i}, 192.0.2.1").status_code for i in range(4)]
    assert forged == [201, 201, 429, 429]
    assert register_from(client, "198.51.100.1, 192.0.2.2").status_code == 201
    assert Application.objects.count() == 3


def run_cleanup(*args: str) -> str:
    out = io.StringIO()
    call_command("mcp_oauth_cleanup", *args, stdout=out)
    return out.getvalue()


def age(client_id: str, seconds: int) -> None:
    Application.objects.filter(client_id=client_id).update(
        created=timezone.now() - timedelta(seconds=seconds)
    )


def test_cleanup_removes_old_clients_that_never_obtained_a_token(
    signed_in: Client, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_UNUSED_CLIENT_SECONDS": 3600}
    abandoned = register(signed_in, client_name="Abandoned").json()["client_id"]
    recent = register(signed_in, client_name="Recent").json()["client_id"]
    used = register(signed_in, client_name="Used").json()["client_id"]
    manual = Application.objects.create(
        name="Manual",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
    ).client_id
    code, verifier = code_and_verifier(signed_in, Application.objects.get(client_id=used))
    token = exchange(signed_in, used, code, verifier).json()["access_token"]
    for client_id in (abandoned, used, manual):
        age(client_id, 7200)
    age(recent, 600)

    assert "Deleted 1 unused self-registered client(s)" in run_cleanup()
    remaining = set(Application.objects.values_list("client_id", flat=True))
    assert remaining == {recent, used, manual}
    # Its registration access token went with it; the used client's token still works.
    assert not AccessToken.objects.filter(application__client_id=abandoned).exists()
    assert mcp(signed_in, token, "tools/list").status_code == 200


def test_cleanup_keeps_a_client_whose_tokens_have_expired_and_gone(
    signed_in: Client, app: Application
) -> None:
    code, verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, code, verifier)
    AccessToken.objects.all().delete()
    RefreshToken.objects.all().delete()
    age(app.client_id, 10 * 24 * 3600)
    run_cleanup()
    assert Application.objects.filter(pk=app.pk).exists()


def test_cleanup_forgets_redeemed_codes_with_nothing_left_to_revoke(
    signed_in: Client, app: Application
) -> None:
    first_code, first_verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, first_code, first_verifier)
    AccessToken.objects.all().delete()
    RefreshToken.objects.update(revoked=timezone.now())
    live_code, live_verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, live_code, live_verifier)
    newest_code, newest_verifier = code_and_verifier(signed_in, app)
    exchange(signed_in, app.client_id, newest_code, newest_verifier)
    assert RedeemedAuthorizationCode.objects.count() == 3

    assert "and 1 record(s) of redeemed codes" in run_cleanup()
    kept = set(RedeemedAuthorizationCode.objects.values_list("code_digest", flat=True))
    digests = {hashlib.sha256(c.encode()).hexdigest() for c in (live_code, newest_code)}
    assert kept == digests


@pytest.mark.parametrize("args", [["--older-than", "-1"], ["--batch-size", "0"]])
def test_cleanup_refuses_a_bad_argument(signed_in: Client, args: list[str]) -> None:
    client_id = register(signed_in).json()["client_id"]
    age(client_id, 10 * 24 * 3600)
    with pytest.raises(CommandError):
        run_cleanup(*args)
    assert Application.objects.filter(client_id=client_id).exists()


def test_a_smuggled_uri_stored_before_the_rule_receives_no_code(signed_in: Client) -> None:
    # A row written by an earlier version: one checked entry, stored space-joined as two.
    application = Application.objects.create(
        name="Totally Claude",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=SMUGGLED["space"],
        registration_source=Application.RegistrationSource.DCR,
    )
    _, challenge = pkce()
    url = authorize_query(application.client_id, challenge, redirect_uri=EVIL)
    page = signed_in.get(url)
    assert page.status_code == 400 and not page.has_header("Location")
    fields = {
        "client_id": application.client_id,
        "redirect_uri": EVIL,
        "response_type": "code",
        "scope": "read write",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "resource": f"{BASE}/mcp",
        "allow": "Allow",
    }
    posted = signed_in.post(url, fields)
    assert not posted.get("Location", "").startswith(EVIL)
    assert Grant.objects.count() == 0
    # The loopback half still works, as it was meant to.
    answer = approve(
        signed_in,
        authorize_query(application.client_id, challenge, redirect_uri="http://127.0.0.1/cb"),
    )
    assert answer["Location"].startswith("http://127.0.0.1/cb?")
    assert list(Grant.objects.values_list("redirect_uri", flat=True)) == ["http://127.0.0.1/cb"]


def test_an_administrators_client_keeps_its_redirect_uris(signed_in: Client) -> None:
    application = Application.objects.create(
        name="Intranet",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="https://intranet.example/cb",
        registration_source=Application.RegistrationSource.MANUAL,
    )
    _, challenge = pkce()
    url = authorize_query(
        application.client_id, challenge, redirect_uri="https://intranet.example/cb"
    )
    assert approve(signed_in, url)["Location"].startswith("https://intranet.example/cb?")


@pytest.mark.parametrize(
    ("resource", "own"),
    [
        ("http://testserver/mcp", True),
        ("http://TESTSERVER:80/mcp", True),
        ("http://testserver/api/", True),
        ("https://testserver/mcp", False),
        ("http://testserver:8080/mcp", False),
        ("http://testserver@evil.example/mcp", False),
        ("http://evil.example/mcp", False),
        ("http://testserver.evil.example/mcp", False),
    ],
)
def test_which_resources_are_this_sites(rf: Any, resource: str, own: bool) -> None:
    from mcp_endpoint.oauth.metadata import is_own_resource

    assert is_own_resource(resource, rf.get("/o/authorize/")) is own


# -- no 500, and only the grants the server advertises ---------------------------------------


def test_a_device_code_grant_is_unsupported_not_a_500(db: Any) -> None:
    client = Client(raise_request_exception=False)
    grant = "urn:ietf:params:oauth:grant-type:device_code"
    for form in ({"grant_type": grant}, {"grant_type": grant, "device_code": "x"}):
        response = client.post("/o/token/", form)
        assert response.status_code == 400, response.content
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"] == "unsupported_grant_type"


@pytest.mark.parametrize(
    "grant",
    [
        "password",
        "implicit",
        "urn:ietf:params:oauth:grant-type:device_code",
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
    ],
)
def test_registration_refuses_grants_not_advertised(client: Client, db: Any, grant: str) -> None:
    advertised = client.get("/.well-known/oauth-authorization-server").json()
    assert grant not in advertised["grant_types_supported"]
    response = register(
        client, grant_types=[grant], token_endpoint_auth_method="client_secret_basic"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_client_metadata"
    assert grant in response.json()["error_description"]
    assert not Application.objects.exists()


def test_registration_refuses_response_types_not_advertised(client: Client, db: Any) -> None:
    for response_types in (["token"], ["code id_token"], "code", [7]):
        response = register(client, response_types=response_types)
        assert response.status_code == 400, (response_types, response.content)
        assert response.json()["error"] == "invalid_client_metadata"
    assert not Application.objects.exists()
    assert (
        register(client, response_types=["code"], grant_types=["authorization_code"]).status_code
        == 201
    )


def test_an_anonymous_registrant_gets_no_token_without_a_user(client: Client, db: Any) -> None:
    # Before, a client_credentials client registered anonymously got a token with no user,
    # which introspection called active.
    registered = register(
        client, grant_types=["client_credentials"], token_endpoint_auth_method="client_secret_basic"
    )
    assert registered.status_code == 400
    app = Application.objects.create(
        name="made by an administrator",
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret="s3cret-s3cret",
        hash_client_secret=False,
    )
    token = client.post(
        "/o/token/",
        {"grant_type": "client_credentials", "scope": "read"},
        headers={"Authorization": basic_auth(app.client_id, "s3cret-s3cret")},
    )
    # The grant is advertised now, for machine clients; an application that has none (no
    # user an administrator named for it) still gets no token (tests/test_machine_clients.py).
    assert token.status_code == 400
    assert token.json()["error"] == "unauthorized_client"
    assert not AccessToken.objects.filter(user=None, application=app).exists()


def basic_auth(client_id: str, secret: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


@pytest.mark.parametrize("field", ["client_name", "software_id", "client_uri", "redirect_uris"])
@pytest.mark.parametrize("text", ["\u0000", "a\u0000b", "\ud800", "x\udfff"])
def test_registration_refuses_text_no_database_stores(
    client: Client, db: Any, field: str, text: str
) -> None:
    value: Any = [text] if field == "redirect_uris" else text
    client = Client(raise_request_exception=False)
    response = register(client, **{field: value})
    assert response.status_code == 400, response.content
    assert response.json()["error"] in ("invalid_client_metadata", "invalid_redirect_uri")
    assert not Application.objects.exists()


def test_a_registration_nested_past_the_recursion_limit(db: Any) -> None:
    client = Client(raise_request_exception=False)
    body = "[" * 100_000 + "]" * 100_000
    response = client.post("/o/register/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("/o/token/", {"grant_type": "authorization_code", "code": "a\x00", "client_id": "c"}),
        ("/o/token/", {"grant_type": "refresh_token", "refresh_token": "\x00"}),
        ("/o/token/", {"grant_type": "authorization_code", "client_id": "\x00"}),
        ("/o/revoke_token/", {"token": "\x00", "client_id": "c"}),
    ],
)
def test_a_nul_in_a_form_is_invalid_request(db: Any, path: str, form: dict[str, str]) -> None:
    response = Client(raise_request_exception=False).post(path, form)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_request"


def test_a_nul_in_basic_credentials_or_a_query_is_invalid_request(alice: Any) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(alice)  # the authorisation endpoint reads its query once signed in
    response = client.post(
        "/o/token/",
        {"grant_type": "authorization_code", "code": "x"},
        headers={"Authorization": basic_auth("a%00b", "secret")},
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"
    response = client.get("/o/authorize/", {"client_id": "\x00", "response_type": "code"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


@pytest.mark.parametrize("path", ["/o/token/", "/o/revoke_token/", "/o/introspect/"])
def test_the_client_endpoints_take_posts_without_a_csrf_token(
    db: Any, path: str, settings: Any
) -> None:
    # A client has no CSRF cookie; the views that check their input first must stay
    # CSRF-exempt and open to anonymous callers (LoginRequiredMiddleware), as the toolkit's.
    if django.VERSION >= (5, 1):
        login_required = "django.contrib.auth.middleware.LoginRequiredMiddleware"
        settings.MIDDLEWARE = [*settings.MIDDLEWARE, login_required]
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    response = client.post(path, {"token": "x", "grant_type": "authorization_code"})
    assert response.status_code != 302, response["Location"]
    assert b"CSRF" not in response.content, response.content[:300]


@pytest.mark.parametrize("path", ["/o/device-authorization/", "/o/device-authorization"])
def test_a_nul_at_the_device_authorisation_endpoint_is_invalid_request(db: Any, path: str) -> None:
    # The toolkit mounts it whether or not the device grant is advertised; PostgreSQL refused
    # the NUL in its client lookup with a DataError.
    response = Client(raise_request_exception=False).post(
        path, "client_id=%00", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 400, response.content
    assert response.json()["error"] == "invalid_request"
