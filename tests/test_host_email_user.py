"""A host whose user model signs in by email (``USERNAME_FIELD = "email"``, no ``username``),
served by a real server: the key admin searches and autocompletes users by email, the call
log's admin searches by email, and the account pages, mounted at a path of the host's
choosing, work for its users."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.browser import ADMIN_HEADER, DESKTOP, PHONE, assert_readable, chromium
from tests.live_server import ROOT, LiveServer, manage, run_script

pytestmark = pytest.mark.e2e

RAW_KEY = re.compile(r"mcp_[0-9a-f]{8}_[0-9a-f]{64}")
USERS = """
import json
from django.contrib.auth import get_user_model
from mcp_endpoint.models import APIKey
User = get_user_model()
User.objects.create_superuser("root@example.com", "root-password-123")
alice = User.objects.create_user("alice@example.com", "alice-password-123")
bob = User.objects.create_user("bob@example.com", "bob-password-123")
a, _ = APIKey.objects.create_key(user=alice, scopes="read", name="alice laptop")
b, _ = APIKey.objects.create_key(user=bob, scopes="read", name="bob laptop")
from mcp_endpoint.models import ToolCall
for user, tool in ((alice, "count_alices_things"), (bob, "count_bobs_things")):
    ToolCall.objects.create(
        endpoint="mcp", tool=tool, user=user, credential="API key", outcome="ok", duration_ms=1.0
    )
print(json.dumps({"alice": a.prefix, "bob": b.prefix}))
"""


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, dict[str, str]]]:
    workdir = tmp_path_factory.mktemp("email-user-host")
    env = {
        "DJANGO_SETTINGS_MODULE": "tests.projects.email_user.settings",
        "STATIC_ROOT": str(workdir / "static"),
        "SQLITE_PATH": str(workdir / "db.sqlite3"),
    }
    live = LiveServer(workdir, env=env)
    # This host is SQLite only, whatever DATABASE_URL the suite runs with.
    live.env.pop("DATABASE_URL", None)
    try:
        manage(live.env, "collectstatic", "--noinput", "-v", "0")
        live.start()
        output = run_script(live.env, USERS)
        yield live, json.loads(output.strip().splitlines()[-1])
    finally:
        live.stop()


@pytest.fixture
def page(host: tuple[LiveServer, dict[str, str]]) -> Iterator[Any]:
    server, _ = host
    with chromium() as browser:
        context = browser.new_context(viewport=DESKTOP)
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
        yield context.new_page()
        context.close()


def admin_sign_in(page: Any, server: LiveServer, next_path: str) -> None:
    page.goto(server.url(f"/admin/login/?next={next_path}"))
    page.get_by_label("Email address").fill("root@example.com")
    page.get_by_label("Password").fill("root-password-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url(next_path))


def test_key_search_by_email(page: Any, host: tuple[LiveServer, dict[str, str]]) -> None:
    server, prefixes = host
    admin_sign_in(page, server, "/admin/mcp_endpoint/apikey/")
    page.get_by_role("textbox", name="Search").fill("alice@")
    page.get_by_role("button", name="Search").click()
    page.wait_for_load_state()
    assert page.get_by_role("link", name=prefixes["alice"]).is_visible()
    assert page.get_by_role("link", name=prefixes["bob"]).count() == 0
    assert_readable(page, sizes=(DESKTOP,), skip=ADMIN_HEADER)


def test_call_log_search_by_email(page: Any, host: tuple[LiveServer, dict[str, str]]) -> None:
    server, _ = host
    admin_sign_in(page, server, "/admin/mcp_endpoint/toolcall/")
    page.get_by_role("textbox", name="Search").fill("alice@")
    page.get_by_role("button", name="Search").click()
    page.wait_for_load_state()
    # The rows found (the tool filter beside them lists every tool, whatever the search).
    rows = page.locator("#result_list")
    assert rows.get_by_text("count_alices_things").is_visible()
    assert rows.get_by_text("count_bobs_things").count() == 0
    assert_readable(page, sizes=(DESKTOP,), skip=ADMIN_HEADER)


def test_key_user_by_autocomplete(page: Any, host: tuple[LiveServer, dict[str, str]]) -> None:
    server, _ = host
    admin_sign_in(page, server, "/admin/mcp_endpoint/apikey/add/")
    page.locator(".field-user .select2-selection").click()
    page.keyboard.type("bob@")
    page.get_by_role("option", name="bob@example.com").click()
    page.get_by_label("Name:", exact=True).fill("for bob")
    page.get_by_label("read: Read your things").check()
    page.get_by_role("button", name="Save and add another").click()
    page.wait_for_url(re.compile(r".*/created/\?next=add$"))
    assert page.get_by_text("A key for bob@example.com").is_visible()
    raw = page.get_by_label("API key").input_value()
    assert RAW_KEY.fullmatch(raw)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    bearer = {"Authorization": f"Bearer {raw}"}
    response = httpx2.post(server.url("/mcp"), json=ping, headers=bearer)
    assert response.status_code == 200
    page.get_by_role("link", name="Add another key").click()
    page.wait_for_url(server.url("/admin/mcp_endpoint/apikey/add/"))


def test_account_pages_for_an_email_user(
    page: Any, host: tuple[LiveServer, dict[str, str]]
) -> None:
    server, _ = host
    page.set_viewport_size(PHONE)
    page.goto(server.url("/me/ai/keys/"))
    page.get_by_label("Email address").fill("alice@example.com")
    page.get_by_label("Password").fill("alice-password-123")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(server.url("/me/ai/keys/"))
    assert page.get_by_text("Signed in as alice@example.com").is_visible()
    page.get_by_label("Name", exact=True).fill("from the host")
    page.get_by_label("Read your things (read)").check()
    page.get_by_role("button", name="Create key").click()
    page.wait_for_url(re.compile(r".*/me/ai/keys/\d+/created/\?client=claude-code$"))
    command = page.get_by_role("region", name="Claude Code").locator("pre").inner_text()
    assert command.startswith(f"claude mcp add --transport http email-host {server.url('/mcp')} ")
    assert_readable(page)


def test_the_adapter_on_an_email_user_model(tmp_path: Any) -> None:
    # The suite's settings keep Django's user model: the checks run under the host's, in a
    # pytest process of their own, without the suite's conftest (it needs the demo's models).
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.projects.email_user.settings",
        "STATIC_ROOT": str(tmp_path),
    }
    env.pop("DATABASE_URL", None)  # this host is SQLite only
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--noconftest",
            "-p",
            "no:cacheprovider",
            "-q",
            "tests/projects/email_user/parity_checks.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\b9 passed\b", done.stdout), done.stdout[-2000:]
