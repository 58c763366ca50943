"""Every page the app ships, in Debian's Chromium, clicked through as a person would: by
visible labels and roles. Each page is measured at phone and desktop widths for readable
links and buttons and for sideways scrolling (see tests/browser.py)."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest

from tests.browser import (
    ADMIN_HEADER,
    DESKTOP,
    OVERFLOW_SCRIPT,
    PHONE,
    assert_readable,
    chromium,
    contrast_problems,
)
from tests.browser import scrolls_sideways as sideways
from tests.live_server import LiveServer, manage, run_script
from tests.oauth_helpers import callback_listener, query_of
from tests.test_oauth_live import pkce_pair, register

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = [pytest.mark.e2e, pytest.mark.once]

ALICE = ("alice", "alice-demo-password")
ADMIN = ("admin", "admin-demo-password")
RAW_KEY = re.compile(r"mcp_[0-9a-f]{8}_[0-9a-f]{64}")
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("browser")
    env = {"STATIC_ROOT": str(workdir / "static")}
    live = LiveServer(workdir, env=env)
    try:
        # Before the start: WhiteNoise lists the collected files when a worker boots.
        manage(live.env, "collectstatic", "--noinput", "-v", "0")
        live.start()
        manage(live.env, "seed_demo")
        yield live
    finally:
        live.stop()


@pytest.fixture(scope="module")
def browser(server: LiveServer) -> Iterator[Any]:
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(browser: Any, server: LiveServer) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def sign_in(page: Any, server: LiveServer, user: tuple[str, str], next_path: str) -> None:
    page.goto(server.url(f"/accounts/login/?next={next_path}"))
    page.get_by_label("Username").fill(user[0])
    page.get_by_label("Password").fill(user[1])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url(next_path))


def clipboard(page: Any) -> str:
    text: str = page.evaluate("navigator.clipboard.readText()")
    return text


def mcp_status(server: LiveServer, credential: str) -> int:
    response = httpx2.post(
        server.url("/mcp"), json=PING, headers={"Authorization": f"Bearer {credential}"}
    )
    return response.status_code


def shell(server: LiveServer, script: str) -> Any:
    output = run_script(server.env, script)
    return json.loads(output.strip().splitlines()[-1])


# -- the helper itself --------------------------------------------------------------------------


def test_the_measurements_catch_what_they_are_for(page: Any) -> None:
    page.set_content(
        "<style>input[type=submit]{background:#fff} .primary{background:#2457c5;color:#fff}"
        "</style><a href='#'>fine</a><input type=submit class=primary value=Allow>"
        "<div style='width:600px'>wide</div>"
    )
    problems = contrast_problems(page)
    assert [p["text"] for p in problems] == ["Allow"]
    assert problems[0]["ratio"] == 1
    page.set_viewport_size(PHONE)
    assert sideways(page)
    page.set_viewport_size(DESKTOP)
    assert not sideways(page)


def test_static_files_are_served_under_gunicorn(server: LiveServer) -> None:
    # DEBUG is off, as in production: WhiteNoise serves what collectstatic gathered.
    for path in ["/static/admin/css/base.css", "/static/mcp_endpoint/account.css"]:
        response = httpx2.get(server.url(path))
        assert response.status_code == 200, path
        assert response.headers["Content-Type"].startswith("text/css")
    assert httpx2.get(server.url("/static/mcp_endpoint/nothing.css")).status_code == 404


# -- sign in, connect ---------------------------------------------------------------------------


def test_login_and_connect_pages(page: Any, server: LiveServer) -> None:
    page.goto(server.url("/accounts/login/?next=/account/ai/"))
    assert_readable(page)
    page.set_viewport_size(PHONE)
    sign_in(page, server, ALICE, "/account/ai/")
    assert page.get_by_role("heading", name="Connect an AI client").is_visible()
    assert_readable(page)

    page.get_by_role("button", name="Copy MCP server URL").click()
    assert clipboard(page) == server.url("/mcp")
    assert page.get_by_role("status").filter(has_text="Copied").count() == 1
    # The keyboard reaches the copy buttons too.
    vscode = page.get_by_role("region", name="VS Code")
    vscode.get_by_role("button", name="Copy").focus()
    page.keyboard.press("Enter")
    copied = json.loads(clipboard(page))
    assert copied["servers"]["task-tracker"]["type"] == "http"
    assert copied["servers"]["task-tracker"]["url"] == server.url("/mcp")


def test_pick_toolsets_and_read_only_on_the_connect_page(page: Any, server: LiveServer) -> None:
    page.set_viewport_size(PHONE)
    sign_in(page, server, ALICE, "/account/ai/")
    page.get_by_text("Choose what the client may use").click()
    page.get_by_label("tasks", exact=True).check()
    page.get_by_label("Read only: the client may look, never change anything").check()
    assert_readable(page)
    page.get_by_role("button", name="Update the address").click()
    chosen = server.url("/mcp") + "?toolsets=tasks&read_only=1"
    page.wait_for_url(re.compile(r".*/account/ai/\?.*toolset=tasks.*"))
    assert page.get_by_label("MCP server URL").input_value() == chosen
    # The choice stays ticked, and the page stays readable with it open.
    assert page.get_by_label("tasks", exact=True).is_checked()
    assert_readable(page)
    page.get_by_role("button", name="Copy MCP server URL").click()
    assert clipboard(page) == chosen
    # The address serves what was picked: the task tools that only read.
    key = shell(
        server,
        "import json\nfrom django.contrib.auth import get_user_model\n"
        "from mcp_endpoint.models import APIKey\n"
        "user = get_user_model().objects.get(username='alice')\n"
        "print(json.dumps(APIKey.objects.create_key(user=user, scopes='read write', "
        "name='toolsets browser')[1]))",
    )
    listing = httpx2.post(
        chosen,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {key}"},
    )
    names = {t["name"] for t in listing.json()["result"]["tools"]}
    assert names == {"list_tasks", "get_task", "overdue_tasks"}


# -- personal keys: create, copy, reload, revoke --------------------------------------------------


def test_create_copy_and_revoke_a_key(page: Any, server: LiveServer) -> None:
    sign_in(page, server, ALICE, "/account/ai/keys/")
    assert_readable(page)
    page.set_viewport_size(PHONE)
    page.get_by_label("Name", exact=True).fill("phone test")
    page.get_by_label("See your projects, tasks and comments (read)").check()
    assert page.get_by_label("Expires in").input_value() == "90"
    page.get_by_label("Show the configuration for").select_option(label="Cursor")
    page.get_by_role("button", name="Create key").click()
    page.wait_for_url(re.compile(r".*/created/\?client=cursor$"))
    assert_readable(page)

    page.set_viewport_size(PHONE)
    page.get_by_role("button", name="Copy API key").click()
    raw = clipboard(page)
    assert RAW_KEY.fullmatch(raw)
    assert page.get_by_label("API key").input_value() == raw
    cursor = page.get_by_role("region", name="Cursor")
    cursor.get_by_role("button", name="Copy").click()
    config = json.loads(clipboard(page))
    assert config["mcpServers"]["task-tracker"]["headers"]["Authorization"] == f"Bearer {raw}"
    assert mcp_status(server, raw) == 200

    page.reload()
    assert page.get_by_role("heading", name="This key is not shown again").is_visible()
    assert raw not in page.content()
    names = "from mcp_endpoint.models import APIKey; import json; "
    count = names + "print(json.dumps(APIKey.objects.filter(name='phone test').count()))"
    assert shell(server, count) == 1

    page.get_by_role("link", name="Back to your keys").click()
    card = page.get_by_role("listitem").filter(has_text="phone test")
    # Revoking is a form's POST and its redirect: the page after it is waited for, as a
    # person waits for it, before it is read (is_visible does not wait).
    with page.expect_navigation():
        card.get_by_role("button", name="Revoke phone test").click()
    assert page.get_by_text("Revoked the key").is_visible()
    assert (
        page.get_by_role("listitem")
        .filter(has_text="phone test")
        .get_by_text("revoked", exact=True)
        .is_visible()
    )
    assert mcp_status(server, raw) == 401
    assert_readable(page)


# -- OAuth: consent, connected apps, revoke ------------------------------------------------------


# A user of the test's own: other tests of this module connect apps for alice, in any order.
NEW_USER = """
import json
from django.contrib.auth import get_user_model
user = get_user_model().objects.create_user("%s", password="%s")
print(json.dumps(user.pk))
"""


def test_authorise_an_app_and_revoke_it(page: Any, server: LiveServer) -> None:
    user = (f"erin{secrets.token_hex(4)}", secrets.token_urlsafe(16))
    shell(server, NEW_USER % user)
    with callback_listener() as listener:
        client_id = register(server, listener.redirect_uri, "Browser client")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(16)
        query = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": listener.redirect_uri,
            "scope": "read write",
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "resource": server.url("/mcp"),
        }
        page.goto(server.url("/o/authorize?") + urlencode(query))
        assert "/accounts/login/" in page.url
        page.get_by_label("Username").fill(user[0])
        page.get_by_label("Password").fill(user[1])
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_load_state()
        assert page.get_by_role("heading", name="Browser client wants to use your account")
        assert_readable(page)
        page.set_viewport_size(PHONE)
        with page.expect_navigation(url=f"{listener.redirect_uri}?*"):
            page.get_by_role("button", name="Allow").click()
        landed = query_of(page.url)
    assert landed["state"] == state
    token = httpx2.post(
        server.url("/o/token"),
        data={
            "grant_type": "authorization_code",
            "code": landed["code"],
            "redirect_uri": listener.redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": server.url("/mcp"),
        },
    )
    assert token.status_code == 200, token.text
    access = token.json()["access_token"]
    assert mcp_status(server, access) == 200

    page.goto(server.url("/account/ai/apps/"))
    app = page.get_by_role("listitem").filter(has_text="Browser client")
    assert app.get_by_text("Create, change and delete tasks").is_visible()
    assert_readable(page)
    page.set_viewport_size(PHONE)
    with page.expect_navigation():  # a form's POST and its redirect, as above
        app.get_by_role("button", name="Revoke Browser client").click()
    assert page.get_by_text("Browser client can no longer use your account.").is_visible()
    assert page.get_by_text("No application is connected to your account.").is_visible()
    assert page.get_by_role("button", name="Revoke Browser client").count() == 0
    assert mcp_status(server, access) == 401
    refreshed = httpx2.post(
        server.url("/o/token"),
        data={
            "grant_type": "refresh_token",
            "refresh_token": token.json()["refresh_token"],
            "client_id": client_id,
        },
    )
    assert refreshed.status_code == 400


# -- the admin: key reveal, key list, call log ----------------------------------------------------


def admin_sign_in(page: Any, server: LiveServer, next_path: str) -> None:
    page.goto(server.url(f"/admin/login/?next={next_path}"))
    page.get_by_label("Username").fill(ADMIN[0])
    page.get_by_label("Password").fill(ADMIN[1])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url(next_path))


def test_admin_key_pages(page: Any, server: LiveServer) -> None:
    page.set_viewport_size(DESKTOP)
    admin_sign_in(page, server, "/admin/mcp_endpoint/apikey/add/")
    assert_readable(page, sizes=(DESKTOP,), skip=ADMIN_HEADER)
    page.locator(".field-user .select2-selection").click()
    page.keyboard.type("alic")
    page.get_by_role("option", name="alice", exact=True).click()
    page.get_by_label("Name:", exact=True).fill("admin made")
    page.get_by_label("read: See your projects, tasks and comments").check()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r".*/created/\?next=list$"))
    assert_readable(page, skip=ADMIN_HEADER)

    page.set_viewport_size(PHONE)
    page.get_by_role("button", name="Copy API key").click()
    raw = clipboard(page)
    assert RAW_KEY.fullmatch(raw)
    assert mcp_status(server, raw) == 200
    page.reload()
    assert raw not in page.content()
    assert page.get_by_text("cannot be shown again").is_visible()
    count = (
        "from mcp_endpoint.models import APIKey; import json; "
        "print(json.dumps(APIKey.objects.filter(name='admin made').count()))"
    )
    assert shell(server, count) == 1

    page.get_by_role("link", name="Back to the API keys").click()
    page.wait_for_url(server.url("/admin/mcp_endpoint/apikey/"))
    assert page.get_by_role("link", name=re.compile("^mcp_")).first.is_visible()
    assert_readable(page, sizes=(DESKTOP,), skip=ADMIN_HEADER)


def test_admin_call_log_page(page: Any, server: LiveServer) -> None:
    raw = (
        manage(
            server.env, "mcp_key", "create", "--user", "alice", "--scopes", "read", "--name", "log"
        )
        .strip()
        .splitlines()[-1]
    )
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "list_projects", "arguments": {}},
    }
    response = httpx2.post(
        server.url("/mcp"), json=call, headers={"Authorization": f"Bearer {raw}"}
    )
    assert response.status_code == 200
    page.set_viewport_size(DESKTOP)
    admin_sign_in(page, server, "/admin/mcp_endpoint/toolcall/")
    assert page.get_by_text("list_projects").first.is_visible()
    assert_readable(page, sizes=(DESKTOP,), skip=ADMIN_HEADER)


TASK_ROW = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from mcp_endpoint.models import APIKey, ToolTask
alice = get_user_model().objects.get(username="alice")
key, _ = APIKey.objects.create_key(user=alice, scopes="read", name="export laptop")
ToolTask.objects.create(
    id="browser-task-1", endpoint="mcp", tool="export_project_tasks",
    protocol_version="2026-07-28", user=alice, credential_kind="api_key",
    credential_id=str(key.pk), arguments={"project_id": 1},
    expires=timezone.now() + timedelta(hours=1),
)
"""


def test_admin_task_list_page(page: Any, server: LiveServer) -> None:
    run_script(server.env, TASK_ROW)
    page.set_viewport_size(DESKTOP)
    admin_sign_in(page, server, "/admin/mcp_endpoint/tooltask/")
    row = page.locator("#result_list tbody tr").filter(has_text="browser-task-1")
    assert row.get_by_role("link", name="browser-task-1").is_visible()
    assert row.get_by_text("export_project_tasks").is_visible()
    assert row.get_by_text("API key “export laptop”").is_visible()
    page.get_by_role("link", name="working").first.click()  # the status filter
    page.wait_for_load_state()
    assert page.locator("#result_list").get_by_text("browser-task-1").is_visible()
    assert_readable(page, sizes=(DESKTOP,), skip=ADMIN_HEADER)


# -- the admin at phone width ---------------------------------------------------------------------

# A row of each of the app's admin pages, with the long values a real one has: a URL-sized
# client id and redirect URI, a call's arguments, a task's JSON result with a long line.
ADMIN_ROWS = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model
from mcp_endpoint.models import APIKey, ToolCall, ToolTask
alice = get_user_model().objects.get(username="alice")
key, _ = APIKey.objects.create_key(user=alice, scopes="read write", name="phone width laptop")
application = get_application_model().objects.create(
    name="Phone width client", client_type="public", user=alice,
    authorization_grant_type="authorization-code",
    redirect_uris="http://127.0.0.1:53682/oauth/callback/with/a/rather/long/path/for/a/phone",
)
token = get_access_token_model().objects.create(
    user=alice, application=application, token="phone-width-token-0123456789abcdef",
    scope="read write", expires=timezone.now() + timedelta(hours=1),
    resource=["http://127.0.0.1:8000/mcp"],
)
arguments = {"project_id": 1, "title": "A task title long enough to need wrapping on a phone"}
call = ToolCall.objects.create(
    endpoint="mcp", tool="create_task", user=alice, credential=f"API key {key.prefix}",
    client_name="Claude Code", client_version="2.1.0", user_agent="claude-code/2.1.0 (cli)",
    ip="127.0.0.1", outcome="ok", duration_ms=12.5, arguments=arguments,
)
csv = "id,title,status,priority,assignee,created,updated\\n" + "\\n".join(
    f"{n},Task number {n} with a long title,open,2,bob,2026-11-30,2026-12-01" for n in range(5)
)
task = ToolTask.objects.create(
    id="phone-width-task-0123456789abcdef", endpoint="mcp", tool="export_project_tasks",
    protocol_version="2026-07-28", user=alice, credential_kind="api_key",
    credential_id=str(key.pk), arguments=arguments, status="completed",
    result={"content": [{"type": "text", "text": csv}], "structuredContent": {"csv": csv}},
    expires=timezone.now() + timedelta(hours=1),
)
print(json.dumps({"apikey": key.pk, "application": application.pk, "accesstoken": token.pk,
    "toolcall": call.pk, "tooltask": task.pk}))
"""


def test_admin_pages_at_phone_width(page: Any, server: LiveServer) -> None:
    # The change list's table scrolls inside its own box (Django's responsive admin); the
    # page itself must not scroll sideways, and its links and buttons must stay readable.
    rows = shell(server, ADMIN_ROWS)
    admin_sign_in(page, server, "/admin/mcp_endpoint/apikey/")
    paths = [
        f"/admin/{app}/{model}/{suffix}"
        for app, model in [
            ("mcp_endpoint", "apikey"),
            ("oauth2_provider", "application"),
            ("oauth2_provider", "accesstoken"),
            ("mcp_endpoint", "toolcall"),
            ("mcp_endpoint", "tooltask"),
        ]
        for suffix in ["", f"{rows[model]}/change/"]
    ]
    paths.append("/admin/mcp_endpoint/apikey/add/")
    problems = {}
    for path in paths:
        page.goto(server.url(path))
        assert page.locator("#content h1").is_visible(), path
        widths = page.evaluate(OVERFLOW_SCRIPT)
        found = {
            "contrast": contrast_problems(page, ADMIN_HEADER),
            "overflow": widths if widths["scrollWidth"] > widths["clientWidth"] else None,
        }
        if any(found.values()):
            problems[path] = found
    assert problems == {}
