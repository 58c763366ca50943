"""REST against MCP on a user model with no username (``USERNAME_FIELD = "email"``), in the
host's own settings: run by ``tests/test_host_email_user.py`` in a process of its own
(``pytest --noconftest --ds=tests.projects.email_user.settings``), since the suite's
settings keep Django's user model.

Every notes tool answers as REST does for an API key (read, read-write), an OAuth token and
a JSON Web Token, and the view sees the email user; the commands, the call log and its admin,
and the library's sign-in page name users by their email.
"""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import timezone
from rest_framework_simplejwt.tokens import AccessToken

from mcp_endpoint.models import APIKey, ToolCall, ToolTask
from tests.hosts.parity import Credential, CredentialClient, check_each, credential_kinds
from tests.projects.email_user.models import Note

pytestmark = pytest.mark.django_db

User = get_user_model()
KINDS = credential_kinds()


def jwt(user: Any) -> Credential:
    return Credential(str(AccessToken.for_user(user)), frozenset())


def snapshot() -> list[tuple[Any, ...]]:
    return list(Note.objects.order_by("pk").values_list("pk", "title", "body", "owner_id"))


@pytest.fixture
def olive() -> Any:
    return User.objects.create_user("olive@example.com", "pw-olive-123")


@pytest.fixture
def notes(olive: Any) -> dict[str, int]:
    sam = User.objects.create_user("sam@example.com", "pw-sam-123")
    mine = Note.objects.create(owner=olive, title="groceries", body="eggs")
    Note.objects.create(owner=olive, title="todo", body="")
    theirs = Note.objects.create(owner=sam, title="secret", body="s")
    return {"mine": mine.pk, "theirs": theirs.pk}


def operations(ids: dict[str, int]) -> list[tuple[str, str, str, dict[str, Any]]]:
    mine, theirs = ids["mine"], ids["theirs"]
    return [
        ("list_notes", "GET", "/api/notes/", {}),
        ("get_note", "GET", f"/api/notes/{mine}/", {"id": mine}),
        ("get_note", "GET", f"/api/notes/{theirs}/", {"id": theirs}),
        ("create_note", "POST", "/api/notes/", {"title": "new", "body": "b"}),
        ("create_note", "POST", "/api/notes/", {"title": "x" * 101}),
        ("update_note", "PATCH", f"/api/notes/{mine}/", {"id": mine, "title": "renamed"}),
        ("replace_note", "PUT", f"/api/notes/{mine}/", {"id": mine, "title": "t", "body": "c"}),
        ("update_note", "PATCH", f"/api/notes/{theirs}/", {"id": theirs, "title": "mine"}),
        ("delete_note", "DELETE", f"/api/notes/{mine}/", {"id": mine}),
        ("delete_note", "DELETE", f"/api/notes/{theirs}/", {"id": theirs}),
    ]


READ_STATUSES = [200, 200, 404, 403, 403, 403, 403, 403, 403, 403]
WRITE_STATUSES = [200, 200, 404, 201, 400, 200, 200, 404, 204, 404]


@pytest.mark.parametrize("kind", [*sorted(KINDS), "jwt"])
def test_rest_and_mcp_agree(kind: str, client: Client, olive: Any, notes: dict[str, int]) -> None:
    credential = jwt(olive) if kind == "jwt" else KINDS[kind](olive)
    outcomes = check_each(client, credential, operations(notes), snapshot=snapshot)
    statuses = [rest.status_code for rest, _ in outcomes]
    assert statuses == (READ_STATUSES if kind.endswith("_read") else WRITE_STATUSES)
    if statuses[3] == 201:
        # The view saw the email user, on both sides.
        rest, answer = outcomes[3]
        assert rest.json()["owner"] == answer["structuredContent"]["owner"] == olive.email


def test_a_key_made_by_the_command_for_an_email(client: Client, olive: Any) -> None:
    out = StringIO()
    call_command("mcp_key", "create", "--user", "olive@example.com", "--scopes", "read", stdout=out)
    raw = re.search(r"mcp_[0-9a-f]{8}_[0-9a-f]{64}", out.getvalue())
    assert raw is not None
    assert "olive@example.com" in out.getvalue()
    rpc = CredentialClient(client, "/mcp", Credential(raw.group(0), frozenset({"read"})))
    assert {t["name"] for t in rpc.result("tools/list")["tools"]} == {"list_notes", "get_note"}
    listing = StringIO()
    call_command("mcp_key", "list", "--user", "olive@example.com", stdout=listing)
    assert "olive@example.com" in listing.getvalue()
    tools = StringIO()
    call_command("mcp_tools", "--user", "olive@example.com", stdout=tools)
    assert "olive@example.com" in tools.getvalue() and "create_note" in tools.getvalue()


def test_the_call_log_and_its_admin_name_the_email(
    client: Client, olive: Any, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": True}
    _, raw = APIKey.objects.create_key(user=olive, scopes="read write", name="laptop")
    answer = CredentialClient(client, "/mcp", Credential(raw, frozenset())).call(
        "create_note", {"title": "logged"}
    )
    assert answer["isError"] is False
    call = ToolCall.objects.get(tool="create_note")
    assert call.user == olive
    assert call.credential == "API key “laptop” (" + raw.rsplit("_", 1)[0] + ")"
    # A JSON Web Token is named by the class that took it, never by its secret.
    token = jwt(olive)
    CredentialClient(client, "/mcp", token).call("list_notes", {})
    logged = ToolCall.objects.get(tool="list_notes")
    assert logged.user == olive
    assert logged.credential == "JWTAuthentication"
    admin = Client()
    admin.force_login(User.objects.create_superuser("root@example.com", "pw-root-123"))
    for url in (
        "/admin/mcp_endpoint/toolcall/",
        f"/admin/mcp_endpoint/toolcall/{call.pk}/change/",
        "/admin/mcp_endpoint/apikey/",
        "/admin/mcp_endpoint/apikey/add/",
    ):
        page = admin.get(url)
        assert page.status_code == 200, url
    assert (
        "olive@example.com" in admin.get("/admin/mcp_endpoint/toolcall/?q=olive").content.decode()
    )
    assert "olive@example.com" in admin.get("/admin/mcp_endpoint/apikey/?q=olive").content.decode()


def test_the_task_admin_names_the_email_user(client: Client, olive: Any) -> None:
    key, _ = APIKey.objects.create_key(user=olive, scopes="read", name="laptop")
    ToolTask.objects.create(
        id="olives-task", endpoint="mcp", tool="list_notes", protocol_version="2026-07-28",
        user=olive, credential_kind="api_key", credential_id=str(key.pk),
        arguments={"secret_word": "do-not-show"}, expires=timezone.now() + timedelta(hours=1),
    )  # fmt: skip
    admin = Client()
    admin.force_login(User.objects.create_superuser("root@example.com", "pw-root-123"))
    listing = admin.get("/admin/mcp_endpoint/tooltask/", {"q": "olives-task"}).content.decode()
    assert "olive@example.com" in listing and "API key “laptop”" in listing
    page = admin.get("/admin/mcp_endpoint/tooltask/olives-task/change/")
    assert page.status_code == 200
    assert "olive@example.com" in page.content.decode()
    assert "do-not-show" not in page.content.decode()
    post = {"action": "cancel_selected", "_selected_action": ["olives-task"]}
    assert admin.post("/admin/mcp_endpoint/tooltask/", post).status_code == 302
    assert ToolTask.objects.get().status == "cancelled"


def test_the_librarys_sign_in_page_asks_for_the_email(client: Client, olive: Any) -> None:
    # Without the host's own template, the app's registration/login.html is the one found.
    templates = [{**settings.TEMPLATES[0], "DIRS": []}]
    with override_settings(TEMPLATES=templates):
        page = client.get("/accounts/login/").content.decode()
        assert '<label for="id_username">Email address</label>' in page
        signed_in = client.post(
            "/accounts/login/?next=/me/ai/keys/",
            {"username": "olive@example.com", "password": "pw-olive-123"},
        )
    assert signed_in.status_code == 302
