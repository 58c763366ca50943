"""The API key admin, through the real admin URLs."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from django.utils.html import escape

from mcp_endpoint.models import AbstractAPIKey, APIKey, digest_of
from tests.conftest import MCPClient, make_key

RAW_KEY = re.compile(r"mcp_[0-9a-f]{8}_[0-9a-f]{64}")
CHANGELIST = "/admin/mcp_endpoint/apikey/"
ADD = "/admin/mcp_endpoint/apikey/add/"

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def change_url(key: AbstractAPIKey) -> str:
    return f"/admin/mcp_endpoint/apikey/{key.pk}/change/"


def add_key(client: Client, **data: Any) -> Any:
    post = {"name": "", "scopes": ["read"], "expires_0": "", "expires_1": ""}
    post.update(data)
    return client.post(ADD, post)


def raw_key_in(response: Any) -> str:
    found = set(RAW_KEY.findall(response.content.decode()))
    assert len(found) == 1, found
    return str(found.pop())


def revealed(client: Client, response: Any) -> Any:
    """The page an add redirects to, which shows the new key once."""
    assert response.status_code == 302, response.content.decode()[:2000]
    location = response.headers["Location"]
    assert re.fullmatch(r"/admin/mcp_endpoint/apikey/\d+/created/\?next=\w+", location)
    return client.get(location)


def database_dump() -> str:
    """Every row of every table, as text."""
    rows: list[str] = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(rows)


@pytest.fixture
def staff(db: Any) -> Any:
    """Dave: staff, not a superuser, with the API key model's permissions."""
    user = get_user_model().objects.create_user("dave", "dave@example.com", "pw-dave-123")
    user.is_staff = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="mcp_endpoint",
            codename__in=["add_apikey", "change_apikey", "view_apikey", "delete_apikey"],
        )
    )
    return user


@pytest.fixture
def staff_client(client: Client, staff: Any) -> Client:
    client.force_login(staff)
    return client


# -- adding a key ---------------------------------------------------------------------


def test_add_form_offers_the_toolkit_scopes(admin_client: Client) -> None:
    response = admin_client.get(ADD)
    assert response.status_code == 200
    body = response.content.decode()
    assert 'name="scopes" value="read"' in body
    assert 'name="scopes" value="write"' in body
    assert 'name="user"' in body
    # The secret is not a field of the form.
    assert 'name="digest"' not in body
    assert 'name="prefix"' not in body


def test_adding_a_key_shows_it_once_and_stores_only_its_digest(
    admin_client: Client, alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    response = revealed(
        admin_client, add_key(admin_client, user=alice.pk, name="laptop", scopes=["read", "write"])
    )
    assert response.status_code == 200
    assert "will not be shown again" in response.content.decode()
    assert "no-store" in response.headers["Cache-Control"]
    raw = raw_key_in(response)

    key = APIKey.objects.get()
    assert key.user == alice
    assert key.name == "laptop"
    assert key.scope == "read write"
    assert raw.startswith(key.prefix + "_")
    assert key.digest == digest_of(raw)
    assert key.expires is None

    # The raw key is in no column of the key's row, and nowhere else in the database
    # (the admin log, the session and its messages included).
    for row in APIKey.objects.values():
        assert raw not in repr(row)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {APIKey._meta.db_table}")
        assert raw not in repr(cursor.fetchall())
    assert raw not in database_dump()
    assert LogEntry.objects.filter(object_id=str(key.pk)).count() == 1

    # Shown once: no page after this one carries it.
    for url in [CHANGELIST, change_url(key), "/admin/"]:
        page = admin_client.get(url)
        assert page.status_code == 200
        assert raw not in page.content.decode()

    assert mcp_client(raw).post(PING).status_code == 200


def test_adding_a_key_with_an_expiry(admin_client: Client, alice: Any) -> None:
    response = add_key(admin_client, user=alice.pk, expires_0="2031-02-03", expires_1="04:05:06")
    raw_key_in(revealed(admin_client, response))
    key = APIKey.objects.get()
    assert key.expires is not None
    assert key.expires.isoformat() == "2031-02-03T04:05:06+00:00"


def test_adding_a_key_needs_a_known_scope(admin_client: Client, alice: Any) -> None:
    response = add_key(admin_client, user=alice.pk, scopes=["admin"])
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    response = add_key(admin_client, user=alice.pk, scopes=[])
    assert "Choose at least one scope for the key." in response.content.decode()
    response = add_key(admin_client, user=alice.pk, expires_0="2001-01-01", expires_1="00:00")
    assert "A new key cannot expire in the past." in response.content.decode()
    assert not APIKey.objects.exists()


# -- changing a key -------------------------------------------------------------------


def test_change_form_does_not_edit_the_secret(admin_client: Client, alice: Any) -> None:
    raw = make_key(alice, "read", name="old")
    key = APIKey.objects.get()
    page = admin_client.get(change_url(key))
    assert page.status_code == 200
    body = page.content.decode()
    assert key.prefix in body
    assert key.digest not in body
    for field in ["digest", "prefix", "user", "last_used", "revoked"]:
        assert f'name="{field}"' not in body
    assert raw not in body

    response = admin_client.post(
        change_url(key),
        {
            "name": "new",
            "scopes": ["read", "write"],
            "expires_0": "",
            "expires_1": "",
            "digest": "0" * 64,
            "prefix": "mcp_evil",
            "user": "999",
        },
    )
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.name == "new"
    assert key.scope == "read write"
    assert key.digest == digest_of(raw)
    assert key.prefix == raw.rsplit("_", 1)[0]
    assert key.user == alice


def test_change_form_keeps_a_scope_the_settings_no_longer_name(
    admin_client: Client, alice: Any
) -> None:
    make_key(alice, "read legacy")
    key = APIKey.objects.get()
    body = admin_client.get(change_url(key)).content.decode()
    assert 'value="legacy"' in body
    assert "legacy (not in SCOPES)" in body


# -- the change list ------------------------------------------------------------------


@pytest.fixture
def three_keys(alice: Any, bob: Any) -> dict[str, AbstractAPIKey]:
    active, _ = APIKey.objects.create_key(user=alice, scopes="read", name="active one")
    expired, _ = APIKey.objects.create_key(
        user=alice, scopes="read", name="expired one", expires=timezone.now() - timedelta(days=1)
    )
    revoked, _ = APIKey.objects.create_key(user=bob, scopes="read write", name="revoked one")
    revoked.revoke()
    return {"active": active, "expired": expired, "revoked": revoked}


def prefixes_on(response: Any, keys: dict[str, AbstractAPIKey]) -> set[str]:
    body = response.content.decode()
    return {status for status, key in keys.items() if key.prefix in body}


def test_change_list_columns(admin_client: Client, three_keys: dict[str, AbstractAPIKey]) -> None:
    response = admin_client.get(CHANGELIST)
    assert response.status_code == 200
    body = response.content.decode()
    for title in ["Prefix", "Name", "User", "Scopes", "Created", "Expires", "Last used", "Status"]:
        assert f">{title}<" in body
    assert prefixes_on(response, three_keys) == {"active", "expired", "revoked"}
    assert "read write" in body
    for key in three_keys.values():
        assert key.digest not in body


@pytest.mark.parametrize("status", ["active", "expired", "revoked"])
def test_status_filter(
    admin_client: Client, three_keys: dict[str, AbstractAPIKey], status: str
) -> None:
    response = admin_client.get(CHANGELIST, {"status": status})
    assert response.status_code == 200
    assert prefixes_on(response, three_keys) == {status}


def test_user_and_created_filters(
    admin_client: Client, three_keys: dict[str, AbstractAPIKey], bob: Any
) -> None:
    response = admin_client.get(CHANGELIST, {"user__id__exact": bob.pk})
    assert response.status_code == 200
    assert prefixes_on(response, three_keys) == {"revoked"}
    # The "Today" link of the created filter.
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    response = admin_client.get(
        CHANGELIST, {"created__gte": str(today), "created__lt": str(today + timedelta(days=1))}
    )
    assert response.status_code == 200
    assert prefixes_on(response, three_keys) == {"active", "expired", "revoked"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [("expired one", {"expired"}), ("bob", {"revoked"}), ("alice", {"active", "expired"})],
)
def test_search(
    admin_client: Client, three_keys: dict[str, AbstractAPIKey], query: str, expected: set[str]
) -> None:
    response = admin_client.get(CHANGELIST, {"q": query})
    assert response.status_code == 200
    assert prefixes_on(response, three_keys) == expected


def test_search_by_prefix(admin_client: Client, three_keys: dict[str, AbstractAPIKey]) -> None:
    response = admin_client.get(CHANGELIST, {"q": three_keys["expired"].prefix})
    assert prefixes_on(response, three_keys) == {"expired"}


# -- revoking -------------------------------------------------------------------------


def test_revoke_action(
    admin_client: Client, alice: Any, bob: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    a, raw_a = APIKey.objects.create_key(user=alice, scopes="read")
    b, raw_b = APIKey.objects.create_key(user=bob, scopes="read")
    _, raw_c = APIKey.objects.create_key(user=bob, scopes="read")
    response = admin_client.post(
        CHANGELIST,
        {"action": "revoke_selected", "_selected_action": [a.pk, b.pk]},
        follow=True,
    )
    assert response.status_code == 200
    assert "Revoked 2 keys." in response.content.decode()
    assert set(APIKey.objects.filter(revoked__isnull=False)) == {a, b}
    assert mcp_client(raw_a).post(PING).status_code == 401
    assert mcp_client(raw_b).post(PING).status_code == 401
    assert mcp_client(raw_c).post(PING).status_code == 200
    assert LogEntry.objects.filter(object_id=str(a.pk)).count() == 1

    # Revoking again changes nothing, and says so.
    when = APIKey.objects.get(pk=a.pk).revoked
    response = admin_client.post(
        CHANGELIST, {"action": "revoke_selected", "_selected_action": [a.pk]}, follow=True
    )
    assert "Revoked 0 keys." in response.content.decode()
    assert APIKey.objects.get(pk=a.pk).revoked == when
    assert LogEntry.objects.filter(object_id=str(a.pk)).count() == 1


# -- staff who are not superusers -----------------------------------------------------


def test_staff_see_only_their_own_keys(
    staff_client: Client, staff: Any, alice: Any, three_keys: dict[str, AbstractAPIKey]
) -> None:
    own, _ = APIKey.objects.create_key(user=staff, scopes="read", name="dave's")
    response = staff_client.get(CHANGELIST)
    assert response.status_code == 200
    body = response.content.decode()
    assert own.prefix in body
    assert prefixes_on(response, three_keys) == set()
    assert "alice" not in body and "bob" not in body

    assert staff_client.get(change_url(own)).status_code == 200
    other = three_keys["active"]
    response = staff_client.get(change_url(other))
    assert response.status_code == 302  # "doesn't exist", to the admin index
    assert staff_client.get(CHANGELIST, {"q": "alice"}).status_code == 200


def test_staff_revoke_only_their_own_keys(
    staff_client: Client, staff: Any, three_keys: dict[str, AbstractAPIKey]
) -> None:
    own, _ = APIKey.objects.create_key(user=staff, scopes="read")
    other = three_keys["active"]
    staff_client.post(
        CHANGELIST, {"action": "revoke_selected", "_selected_action": [own.pk, other.pk]}
    )
    own.refresh_from_db()
    other.refresh_from_db()
    assert own.is_revoked()
    assert not other.is_revoked()


def test_staff_make_keys_for_themselves(
    staff_client: Client, staff: Any, alice: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    page = staff_client.get(ADD)
    assert page.status_code == 200
    assert 'name="user"' not in page.content.decode()
    # A user in the POST is not a field of their form: it is ignored.
    response = revealed(staff_client, add_key(staff_client, user=alice.pk, scopes=["read"]))
    assert response.status_code == 200
    raw = raw_key_in(response)
    key = APIKey.objects.get()
    assert key.user == staff
    assert mcp_client(raw).post(PING).status_code == 200


def test_staff_without_the_permissions_see_nothing(client: Client, db: Any) -> None:
    user = get_user_model().objects.create_user("erin", "erin@example.com", "pw-erin-123")
    user.is_staff = True
    user.save()
    client.force_login(user)
    assert client.get(CHANGELIST).status_code == 403
    assert client.get(ADD).status_code == 403


# -- the one-time reveal, the save buttons, deletion -----------------------------------------


def test_reloading_the_reveal_creates_no_second_key(admin_client: Client, alice: Any) -> None:
    response = add_key(admin_client, user=alice.pk, name="laptop")
    location = response.headers["Location"]
    first = admin_client.get(location)
    raw = raw_key_in(first)
    assert "no-store" in first.headers["Cache-Control"]
    assert first.headers["X-Frame-Options"] == "DENY"
    body = first.content.decode()
    # The MCP URL and the client configurations, with the key in them.
    assert 'value="http://testserver/mcp"' in body
    assert f"--header &quot;Authorization: Bearer {raw}&quot;" in body
    assert "&quot;servers&quot;" in body and "&quot;mcpServers&quot;" in body
    assert 'data-copy="raw-key"' in body

    again = admin_client.get(location)
    assert again.status_code == 200
    assert raw not in again.content.decode()
    assert "cannot be shown again" in again.content.decode()
    assert APIKey.objects.count() == 1


@pytest.mark.parametrize(
    ("button", "step", "link"),
    [
        ("_save", "list", "Back to the API keys"),
        ("_addanother", "add", "Add another key"),
        ("_continue", "change", "Continue editing the key"),
    ],
)
def test_every_save_button_leads_on(
    admin_client: Client, alice: Any, button: str, step: str, link: str
) -> None:
    response = add_key(admin_client, user=alice.pk, **{button: "1"})
    assert response.headers["Location"].endswith(f"/created/?next={step}")
    page = admin_client.get(response.headers["Location"])
    assert link in page.content.decode()
    if step == "add":
        assert f'href="{ADD}"' in page.content.decode()
    if step == "change":
        assert f'href="{change_url(APIKey.objects.get())}"' in page.content.decode()


def test_the_reveal_of_another_staff_members_key_is_refused(
    staff_client: Client, alice: Any
) -> None:
    key, _ = APIKey.objects.create_key(user=alice, scopes="read")
    response = staff_client.get(f"/admin/mcp_endpoint/apikey/{key.pk}/created/")
    assert response.status_code == 302
    assert response.headers["Location"] == "/admin/"


def test_only_superusers_delete_keys(
    admin_client: Client, staff_client: Client, staff: Any
) -> None:
    key, _ = APIKey.objects.create_key(user=staff, scopes="read")
    delete = f"/admin/mcp_endpoint/apikey/{key.pk}/delete/"
    assert staff_client.get(delete).status_code == 403
    assert staff_client.post(delete, {"post": "yes"}).status_code == 403
    body = staff_client.get(change_url(key)).content.decode()
    assert "deletelink" not in body
    assert "delete_selected" not in staff_client.get(CHANGELIST).content.decode()
    assert APIKey.objects.filter(pk=key.pk).exists()

    assert "delete_selected" in admin_client.get(CHANGELIST).content.decode()
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302
    assert not APIKey.objects.filter(pk=key.pk).exists()


def test_the_user_is_picked_by_autocomplete(admin_client: Client, alice: Any, bob: Any) -> None:
    body = admin_client.get(ADD).content.decode()
    assert 'class="admin-autocomplete' in body
    response = admin_client.get(
        "/admin/autocomplete/",
        {"app_label": "mcp_endpoint", "model_name": "apikey", "field_name": "user", "term": "ali"},
    )
    assert response.status_code == 200
    assert [r["text"] for r in response.json()["results"]] == ["alice"]


def test_the_add_form_offers_the_default_expiry(admin_client: Client, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "API_KEY_DEFAULT_EXPIRY_DAYS": 30}
    page = admin_client.get(ADD)
    initial = page.context["adminform"].form.initial["expires"]
    assert timedelta(days=29) < initial - timezone.now() <= timedelta(days=30)


# -- tool tasks -------------------------------------------------------------------------------

TASKS_LIST = "/admin/mcp_endpoint/tooltask/"


@pytest.fixture
def alice_task(mcp_client: Callable[..., MCPClient], alice_key: str, project: Any) -> Any:
    """Alice's export, run as a task through the endpoint (completed at once in tests)."""
    from mcp_endpoint.models import ToolTask
    from tests.test_tasks import TaskClient

    client = TaskClient(mcp_client(alice_key))
    task_id = client.call("export_project_tasks", {"project_id": project.pk})["taskId"]
    return ToolTask.objects.get(pk=task_id)


def waiting_task(mcp_client: Callable[..., MCPClient]) -> tuple[Any, str]:
    """A task of the fixture endpoint waiting for input, and its client."""
    from tests.test_modern import FIXTURE
    from tests.test_tasks import ELICIT, TaskClient

    client = TaskClient(mcp_client(None, FIXTURE))
    task_id = client.call("confirm_delete", {"filename": "a.txt"}, caps=ELICIT)["taskId"]
    return client, task_id


def test_the_task_admin_lists_tasks_with_the_credential_by_name(
    admin_client: Client, alice_task: Any
) -> None:
    listing = admin_client.get(TASKS_LIST)
    assert listing.status_code == 200
    body = listing.content.decode()
    assert alice_task.pk in body
    assert "export_project_tasks" in body
    assert "API key “alice rw”" in body
    assert "completed" in body
    assert admin_client.get(f"{TASKS_LIST}add/").status_code == 403


def make_tasks(user: Any, count: int) -> dict[str, str]:
    """``count`` tasks of ``user``, each with a credential of its own: API keys and OAuth
    tokens in turn, the first key deleted since; the credential's name by task id."""
    from oauth2_provider.models import get_access_token_model, get_application_model

    from mcp_endpoint.models import ToolTask

    application = get_application_model().objects.create(
        name=f"Desk {count}",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/callback",
    )
    names: dict[str, str] = {}
    for n in range(count):
        if n % 2:
            token = get_access_token_model().objects.create(
                user=user,
                application=application,
                token=f"task-token-{count}-{n}-0123456789abcdef",
                scope="read",
                expires=timezone.now() + timedelta(hours=1),
            )
            kind, pk = "oauth_token", token.pk
            name = f"OAuth “Desk {count}” (client {application.client_id})"
        else:
            key, _ = APIKey.objects.create_key(user=user, scopes="read", name=f"key {count}-{n}")
            kind, pk = "api_key", key.pk
            name = f"API key “key {count}-{n}” ({key.prefix})"
        task = ToolTask.objects.create(
            id=f"task-{count}-{n}",
            endpoint="mcp",
            tool="export_project_tasks",
            protocol_version="2026-07-28",
            user=user,
            credential_kind=kind,
            credential_id=str(pk),
            expires=timezone.now() + timedelta(hours=1),
        )
        names[task.pk] = name
    APIKey.objects.filter(name=f"key {count}-0").delete()
    names[f"task-{count}-0"] = "API key (deleted)"
    return names


def test_the_task_list_costs_the_same_queries_for_any_number_of_rows(
    admin_client: Client, alice: Any
) -> None:
    from mcp_endpoint.models import ToolTask

    def queries_to_list(count: int) -> int:
        ToolTask.objects.all().delete()
        names = make_tasks(alice, count)
        with CaptureQueriesContext(connection) as queries:
            listing = admin_client.get(TASKS_LIST)
        assert listing.status_code == 200
        assert {row.pk for row in listing.context["cl"].result_list} == set(names)
        body = listing.content.decode()
        for name in names.values():
            assert escape(name) in body
        return len(queries)

    assert queries_to_list(3) == queries_to_list(30)


def test_the_task_admin_filters_and_searches(
    admin_client: Client, alice_task: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    _, waiting = waiting_task(mcp_client)

    def found(**query: str) -> set[str]:
        response = admin_client.get(TASKS_LIST, query)
        assert response.status_code == 200
        return {row.pk for row in response.context["cl"].result_list}

    assert found() == {alice_task.pk, waiting}
    assert found(status__exact="completed") == {alice_task.pk}
    assert found(status__exact="input_required") == {waiting}
    assert found(tool__exact="confirm_delete") == {waiting}
    assert found(q=alice_task.pk) == {alice_task.pk}
    assert found(q="confirm_delete") == {waiting}
    assert found(q=alice_task.pk[:10]) == set()  # an id is matched whole
    assert found(q="nothing-like-it") == set()


def test_the_task_detail_is_read_only_and_redacted(admin_client: Client, alice_task: Any) -> None:
    from mcp_endpoint.models import ToolTask

    ToolTask.objects.filter(pk=alice_task.pk).update(
        arguments={"project_id": 1, "api_token": "tok-do-not-show"},
        input_responses={"answer": {"password": "pw-do-not-show"}},
    )
    url = f"{TASKS_LIST}{quote(alice_task.pk)}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "tok-do-not-show" not in body and "pw-do-not-show" not in body
    assert "[redacted]" in body and "project_id" in body
    assert "text/csv" in body  # the result, shown
    assert alice_task.owner not in body  # the credential's digest is not shown
    assert 'name="tool"' not in body
    assert admin_client.post(url, {"tool": "x"}).status_code == 403
    assert ToolTask.objects.get(pk=alice_task.pk).tool == "export_project_tasks"


def test_the_cancel_action_is_seen_through_tasks_get(
    admin_client: Client, alice_task: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    from mcp_endpoint.models import ToolTask

    client, waiting = waiting_task(mcp_client)
    post = {"action": "cancel_selected", "_selected_action": [waiting, alice_task.pk]}
    response = admin_client.post(TASKS_LIST, post, follow=True)
    assert "Cancelled 1 task." in response.content.decode()
    assert client.get(waiting)["status"] == "cancelled"
    # A finished task stays as it is.
    assert ToolTask.objects.get(pk=alice_task.pk).status == "completed"
    entry = LogEntry.objects.get()
    assert entry.object_id == waiting
    again = admin_client.post(TASKS_LIST, post, follow=True)
    assert "Cancelled 0 tasks." in again.content.decode()


def test_staff_see_their_own_tasks_and_cancel_only_with_the_permission(
    client: Client, alice: Any, alice_task: Any, mcp_client: Callable[..., MCPClient]
) -> None:
    from mcp_endpoint.models import ToolTask

    _, waiting = waiting_task(mcp_client)
    alice.is_staff = True
    alice.save()
    alice.user_permissions.set(Permission.objects.filter(codename="view_tooltask"))
    client.force_login(alice)
    listing = client.get(TASKS_LIST)
    assert {row.pk for row in listing.context["cl"].result_list} == {alice_task.pk}
    assert "cancel_selected" not in listing.content.decode()
    post = {"action": "cancel_selected", "_selected_action": [waiting]}
    client.post(TASKS_LIST, post)
    assert ToolTask.objects.get(pk=waiting).status == "input_required"
    assert client.get(f"{TASKS_LIST}{quote(waiting)}/change/").status_code == 302  # not hers


def test_the_task_admin_speaks_french(
    admin_client: Client,
    alice_task: Any,
    mcp_client: Callable[..., MCPClient],
    french: dict[str, str],
) -> None:
    from mcp_endpoint.models import ToolTask

    _, waiting = waiting_task(mcp_client)
    listing = admin_client.get(TASKS_LIST, headers=french).content.decode()
    for text in (
        "tâches d\u2019outils",  # the title and the breadcrumbs
        "Identifiant",  # the credential's column
        "Dernière mise à jour",
        "terminée",  # a status, in a row and in the filter
        "saisie requise",
        "Annuler les tâches en cours sélectionnées",
    ):
        assert text in listing, text
    form = admin_client.get(f"{TASKS_LIST}{quote(alice_task.pk)}/change/", headers=french)
    for text in ("Appelant", "Appel", "Dates", "Version du protocole", "Demandes de saisie"):
        assert text in form.content.decode(), text
    post = {"action": "cancel_selected", "_selected_action": [waiting]}
    done = admin_client.post(TASKS_LIST, post, headers=french, follow=True)
    assert "1 tâche annulée." in done.content.decode()
    with translation.override("fr"):
        assert str(ToolTask._meta.verbose_name) == "tâche d\u2019outil"
        assert ToolTask(status="cancelled").get_status_display() == "annulée"
        # The change form's title names the status in the reader's language too.
        assert str(ToolTask(tool="export", status="completed")) == "export (terminée)"


def test_the_task_admin_refuses_non_staff(client: Client, alice: Any, alice_task: Any) -> None:
    client.force_login(alice)
    for url in (TASKS_LIST, f"{TASKS_LIST}{quote(alice_task.pk)}/change/"):
        response = client.get(url)
        assert response.status_code == 302
        assert response.headers["Location"].startswith("/admin/login/")
