"""A browser session through ``/mcp`` (:mod:`tests.hosts.sessionauth`): a page on the
product's own site, signed in, posting to an endpoint whose ``AUTHENTICATION_CLASSES``
list ``SessionAuthentication``.

The session is a credential there exactly as on REST: DRF's class checks the CSRF token of
every unsafe request, and every MCP message is a POST, so the page sends ``X-CSRFToken``;
without it, or with a wrong one, the endpoint answers 403 with CSRF's own reason, as REST
does, before any method runs. A cross-site page is refused on both sides too (at ``/mcp``
by the Origin check, PROTOCOL.md §3). With the token, every tool the session's views take
answers as REST does, the session-only users view included.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from tests.hosts.parity import Credential, CredentialClient, api_key, call_rest, check_each
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.parity import (
    check_operation,
    each_operation,
    owner_with_snippets,
    snapshot,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.sessionauth.urls")]

User = get_user_model()
# The CSRF secret the page holds (cookie) and sends back (header); Django takes the secret
# itself in the header as well as a masked token.
CSRF = "0123456789abcdefghijklmnopqrstuv"
SESSION = Credential(CSRF, frozenset(), header="X-CSRFToken", scheme=None)
NO_TOKEN = Credential("", frozenset(), header="X-Requested-With", scheme=None)
WRONG_TOKEN = Credential("z" * 32, frozenset(), header="X-CSRFToken", scheme=None)
CREATE = ("create_snippet", "POST", "/snippets/", {"title": "new", "code": "x = 1"})


@pytest.fixture
def people() -> tuple[Any, dict[str, int]]:
    """The owner, and the ids of their snippet and of another owner's."""
    return owner_with_snippets()


@pytest.fixture
def browser(people: tuple[Any, dict[str, int]]) -> Client:
    """The owner's browser: signed in, holding the CSRF cookie, checked for CSRF."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(people[0])
    browser.cookies[settings.CSRF_COOKIE_NAME] = CSRF
    return browser


def rpc(browser: Client, message: dict[str, Any], headers: dict[str, str]) -> Any:
    return browser.post(
        "/mcp", data=json.dumps(message), content_type="application/json", headers=headers
    )


@each_operation
def test_a_session_with_its_token_gets_what_rest_gives(
    operation: tuple[str, str, str, dict[str, Any]],
    browser: Client,
    people: tuple[Any, dict[str, int]],
) -> None:
    check_operation(browser, SESSION, operation, people[1], "/mcp")


def test_the_session_only_view_answers_a_session(
    browser: Client, people: tuple[Any, dict[str, int]]
) -> None:
    owner, _ = people
    listed = CredentialClient(browser, "/mcp", SESSION).result("tools/list")["tools"]
    assert {"list_users", "get_user"} <= {t["name"] for t in listed}
    users = [
        ("list_users", "GET", "/users/", {}),
        ("get_user", "GET", f"/users/{owner.pk}/", {"id": owner.pk}),
        ("get_user", "GET", "/users/999999/", {"id": 999999}),
    ]
    outcomes = check_each(browser, SESSION, users, snapshot=snapshot)
    assert [rest.status_code for rest, _ in outcomes] == [200, 200, 404]
    assert outcomes[1][1]["structuredContent"]["username"] == "olive"


@pytest.mark.parametrize(
    ("credential", "reason"),
    [(NO_TOKEN, "CSRF Failed: CSRF token missing."), (WRONG_TOKEN, "CSRF Failed: CSRF token")],
    ids=["missing", "wrong"],
)
def test_a_session_without_its_csrf_token_is_refused_as_rest_refuses_it(
    credential: Credential, reason: str, browser: Client
) -> None:
    before = snapshot()
    headers = credential.headers()
    rest = call_rest(browser, credential, *CREATE[1:3], CREATE[3])
    assert rest.status_code == 403
    assert rest.json()["detail"].startswith(reason)
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": CREATE[0], "arguments": CREATE[3]},
        },
    ):
        response = rpc(browser, message, headers)
        assert response.status_code == 403
        body = response.json()
        assert body["id"] == message["id"]
        assert body["error"]["message"] == f"Forbidden: {rest.json()['detail']}"
        assert "WWW-Authenticate" not in response
    assert snapshot() == before


def test_a_cross_site_page_is_refused_on_both_sides(browser: Client) -> None:
    before = snapshot()
    headers = {**SESSION.headers(), "Origin": "https://elsewhere.example"}
    rest = browser.post(
        "/snippets/", data=json.dumps(CREATE[3]), content_type="application/json", headers=headers
    )
    assert rest.status_code == 403
    assert "Origin checking failed" in rest.json()["detail"]
    call = {"name": CREATE[0], "arguments": CREATE[3]}
    response = rpc(
        browser, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, headers
    )
    assert response.status_code == 403
    assert response.json()["error"]["message"] == "Forbidden: Origin not allowed"
    assert snapshot() == before


def test_a_same_origin_page_is_answered(browser: Client) -> None:
    headers = {**SESSION.headers(), "Origin": "http://testserver"}
    rest = browser.post(
        "/snippets/", data=json.dumps(CREATE[3]), content_type="application/json", headers=headers
    )
    assert rest.status_code == 201
    call = {"name": CREATE[0], "arguments": CREATE[3]}
    response = rpc(
        browser, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, headers
    )
    assert response.status_code == 200
    assert response.json()["result"]["structuredContent"]["owner"] == "olive"
    assert Snippet.objects.filter(title="new").count() == 2


def test_a_key_beside_a_session_needs_no_csrf_token(
    browser: Client, people: tuple[Any, dict[str, int]]
) -> None:
    # The app's classes come first: a bearer key is the credential, and a key is no
    # cookie a cross-site page could borrow, so CSRF does not apply (as on REST).
    key = api_key(people[0], "read write")
    rest = call_rest(browser, key, *CREATE[1:3], CREATE[3])
    assert rest.status_code == 201
    result = CredentialClient(browser, "/mcp", key).call(CREATE[0], CREATE[3])
    assert result["isError"] is False


def test_no_session_is_no_credential() -> None:
    response = rpc(
        Client(enforce_csrf_checks=True), {"jsonrpc": "2.0", "id": 1, "method": "ping"}, {}
    )
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith('Bearer resource_metadata="')


def test_no_view_is_out_of_reach() -> None:
    from tests.hosts.sessionauth.urls import endpoint

    assert [m for m in endpoint.check() if m.id == "mcp_endpoint.W030"] == []


# -- a real page in a real browser -------------------------------------------------------------

PAGE_CALLS = """async ({url, token}) => {
    const post = async (message, withToken) => {
        const headers = {"Content-Type": "application/json"};
        if (withToken) headers["X-CSRFToken"] = token;
        const response = await fetch(url, {
            method: "POST", headers, body: JSON.stringify(message), credentials: "same-origin",
        });
        return {status: response.status, body: await response.json()};
    };
    const list = {jsonrpc: "2.0", id: 1, method: "tools/list"};
    const call = {
        jsonrpc: "2.0", id: 2, method: "tools/call",
        params: {name: "list_users", arguments: {}},
    };
    const rest = await (await fetch(url.replace(/mcp$/, "users/"))).json();
    return {
        withToken: await post(list, true),
        call: await post(call, true),
        withoutToken: await post(list, false),
        rest,
    };
}"""


@pytest.mark.e2e
def test_a_page_of_the_site_calls_the_endpoint_with_its_session(tmp_path: Any) -> None:
    from tests.browser import chromium
    from tests.live_server import LiveServer, manage

    live = LiveServer(tmp_path, env={"DJANGO_SETTINGS_MODULE": "tests.hosts.settings"})
    try:
        live.start()
        manage(
            live.env,
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model; "
            "get_user_model().objects.create_user('olive', 'o@example.com', 'pw-olive-123')",
        )
        with chromium() as browser:
            page = browser.new_page()
            page.goto(live.url("/accounts/login/?next=/hosts/sessionauth/users/"))
            page.get_by_label("Username").fill("olive")
            page.get_by_label("Password").fill("pw-olive-123")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(live.url("/hosts/sessionauth/users/"))
            token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
            seen = page.evaluate(
                PAGE_CALLS, {"url": live.url("/hosts/sessionauth/mcp"), "token": token}
            )
    finally:
        live.stop()
    assert seen["withToken"]["status"] == 200
    names = {t["name"] for t in seen["withToken"]["body"]["result"]["tools"]}
    assert {"list_users", "get_user", "create_snippet"} <= names
    assert seen["call"]["status"] == 200
    assert seen["call"]["body"]["result"]["structuredContent"]["results"] == seen["rest"]
    assert seen["withoutToken"]["status"] == 403
    assert seen["withoutToken"]["body"]["error"]["message"] == (
        "Forbidden: CSRF Failed: CSRF token missing."
    )
