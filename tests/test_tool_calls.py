"""The call log: one row per call whatever the arguments, read-only in the admin, pruned."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models.signals import post_save
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from oauth2_provider.models import get_access_token_model, get_application_model

from mcp_endpoint import signals
from mcp_endpoint.calllog import MAX_DEPTH, TRUNCATED, UNLOGGABLE, redact, within_row_budget
from mcp_endpoint.models import APIKey, ToolCall
from project.tracker.models import Project, Task

pytestmark = pytest.mark.django_db


def call_raw(client: Client, key: str, body: str, url: str = "/mcp", **headers: str) -> Any:
    """POST a JSON-RPC body exactly as written (NaN, lone surrogates and all)."""
    return client.post(
        url,
        data=body.encode("utf-8", "surrogatepass"),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}", **headers},
    )


def deep(depth: int) -> Any:
    value: Any = "bottom"
    for _ in range(depth):
        value = {"d": value}
    return value


# -- what a row says ------------------------------------------------------------------------


def test_a_call_leaves_a_row(mcp_client: Any, alice: Any, alice_key: str, project: Any) -> None:
    result = mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    assert result["isError"] is False
    row = ToolCall.objects.get()
    key = APIKey.objects.get(name="alice rw")
    assert row.tool == "summarize_project"
    assert row.user == alice
    assert row.endpoint == "mcp"
    assert row.outcome == "ok"
    assert row.error == ""
    assert row.credential == f"API key “alice rw” ({key.prefix})"
    assert alice_key.rsplit("_", 1)[1] not in row.credential
    assert row.arguments == {"project_id": project.pk}
    assert row.ip == "127.0.0.1"
    assert row.duration_ms >= 0


def test_a_failed_call_records_its_error_code_and_message(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    mcp_client(alice_key).call("get_task", {"id": 999_999})
    row = ToolCall.objects.get()
    assert row.outcome == "not_found"
    assert row.error


def test_the_failed_write_is_rolled_back_but_its_log_row_stays(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    task = project.tasks.get(title="Ship it")
    result = mcp_client(alice_key).call("complete_task", {"id": task.pk})
    assert result["structuredContent"]["error"]["code"] == "conflict"
    assert ToolCall.objects.filter(tool="complete_task", outcome="conflict").exists()


def test_logging_can_be_turned_off(
    settings: Any, mcp_client: Any, alice_key: str, project: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": False}
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    assert not ToolCall.objects.exists()


def test_the_client_name_and_version_come_from_client_info(
    client: Client, alice_key: str, project: Any
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "summarize_project",
            "arguments": {"project_id": project.pk},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "probe\x00", "version": "2.1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    response = call_raw(
        client,
        alice_key,
        json.dumps(body),
        **{
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "summarize_project",
            "User-Agent": "probe-agent/2",
        },
    )
    assert response.status_code == 200, response.content
    row = ToolCall.objects.get()
    assert (row.client_name, row.client_version) == ("probe\\u0000", "2.1")
    assert row.user_agent == "probe-agent/2"


def test_an_oauth_call_names_the_application_and_client_id(
    mcp_client: Any, alice: Any, project: Any
) -> None:
    application = get_application_model().objects.create(
        name="Claude",
        client_type="public",
        authorization_grant_type="authorization-code",
        redirect_uris="http://127.0.0.1/cb",
        user=alice,
    )
    token = get_access_token_model().objects.create(
        user=alice,
        application=application,
        token="tok-" + "a" * 40,
        scope="read write",
        expires=timezone.now() + timedelta(hours=1),
        resource=["http://testserver/mcp"],
    )
    result = mcp_client(token.token).call("summarize_project", {"project_id": project.pk})
    assert result["isError"] is False, result
    row = ToolCall.objects.get()
    assert row.credential == f"OAuth “Claude” (client {application.client_id})"
    assert token.token not in row.credential


@pytest.mark.parametrize(
    ("num_proxies", "expected"), [(None, "127.0.0.1"), (0, "127.0.0.1"), (1, "203.0.113.9")]
)
def test_the_address_honours_the_declared_proxies_only(
    settings: Any,
    client: Client,
    alice_key: str,
    project: Any,
    num_proxies: int | None,
    expected: str,
) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": num_proxies}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "summarize_project", "arguments": {"project_id": project.pk}},
        }
    )
    response = call_raw(client, alice_key, body, **{"X-Forwarded-For": "198.51.100.1, 203.0.113.9"})
    assert response.status_code == 200
    assert ToolCall.objects.get().ip == expected


# -- every call leaves a row ----------------------------------------------------------------


CALL = (
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_tasks","arguments":%s}}'
)


@pytest.mark.parametrize(
    ("arguments", "stored"),
    [
        ('{"ordering":"title\\u0000","page_size":1}', {"ordering": "title\\u0000", "page_size": 1}),
        ('{"search":"\\ud800x","page_size":1}', {"search": "?x", "page_size": 1}),
        ('{"page_size":1,"t\\u0000oken":"x"}', {"page_size": 1, "t\\u0000oken": "x"}),
    ],
    ids=["nul", "lone-surrogate", "nul-in-key"],
)
def test_hostile_arguments_still_leave_a_row(
    client: Client, alice_key: str, project: Any, arguments: str, stored: dict[str, Any]
) -> None:
    response = call_raw(client, alice_key, CALL % arguments)
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["id"] == 7
    assert "result" in body, body
    row = ToolCall.objects.get()
    assert row.tool == "list_tasks"
    assert row.arguments == stored
    # Read back from the database, not the instance: what the column really holds.
    assert ToolCall.objects.values_list("arguments", flat=True).get() == stored
    assert Task.objects.count() == 3  # a list call writes nothing


@pytest.mark.parametrize("arguments", ['{"note":NaN}', '{"note":[Infinity,-Infinity]}'])
def test_numbers_json_does_not_have_are_refused_before_any_call(
    client: Client, alice_key: str, project: Any, arguments: str
) -> None:
    # NaN and Infinity are not JSON: the body is refused as it is parsed, so there is no
    # call to log, and nothing runs.
    response = call_raw(client, alice_key, CALL % arguments)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == -32700
    assert ToolCall.objects.count() == 0
    assert Task.objects.count() == 3


def create_refusing_trigger(argument: str = "search") -> None:
    """A database trigger that refuses log rows whose ``argument`` is "refuse-me": a real
    refusal by the database, on either backend."""
    table = ToolCall._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "CREATE FUNCTION refuse_log_row() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.arguments->>'{argument}' = 'refuse-me' THEN "
                "RAISE EXCEPTION 'refused by test'; END IF; "
                "RETURN NEW; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                f"CREATE TRIGGER refuse_log_row BEFORE INSERT ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION refuse_log_row()"
            )
        else:
            cursor.execute(
                f"CREATE TRIGGER refuse_log_row BEFORE INSERT ON {table} "
                f"WHEN json_extract(NEW.arguments, '$.{argument}') = 'refuse-me' "
                "BEGIN SELECT RAISE(ABORT, 'refused by test'); END"
            )


def test_a_refused_row_is_recorded_with_a_marker_instead(
    mcp_client: Any, alice_key: str, project: Any, caplog: Any
) -> None:
    create_refusing_trigger()
    with caplog.at_level(logging.WARNING, logger="mcp_endpoint.calllog"):
        result = mcp_client(alice_key).call("list_tasks", {"page_size": 1, "search": "refuse-me"})
    assert result["isError"] is False
    row = ToolCall.objects.get()
    assert row.arguments == UNLOGGABLE
    assert row.outcome == "ok"
    assert "refused the arguments of list_tasks" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_refused_row_of_a_write_keeps_the_write_and_its_marker_row(
    mcp_client: Any, alice_key: str, project: Any, caplog: Any
) -> None:
    # Refused inside the tool's own transaction: the savepoint takes the row alone back,
    # and the marker row commits with the task.
    create_refusing_trigger("title")
    with caplog.at_level(logging.WARNING, logger="mcp_endpoint.calllog"):
        result = mcp_client(alice_key).call(
            "create_task", {"project": project.pk, "title": "refuse-me"}
        )
    assert result["isError"] is False, result
    assert Task.objects.filter(title="refuse-me").count() == 1
    row = ToolCall.objects.get()
    assert (row.tool, row.outcome, row.arguments) == ("create_task", "ok", UNLOGGABLE)
    assert "refused the arguments of create_task" in caplog.text


# -- one commit for a write and its row -----------------------------------------------------


def seen_at_commits(
    model: type[Any], look: Callable[[], Any], call: Callable[[], Any]
) -> list[Any]:
    """What ``look()`` found at each commit of a new ``model`` row that ``call()`` made,
    seen from ``transaction.on_commit`` of that row's own transaction."""
    seen: list[Any] = []

    def created(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
        if created:
            transaction.on_commit(lambda: seen.append(look()))

    post_save.connect(created, sender=model)
    try:
        call()
    finally:
        post_save.disconnect(created, sender=model)
    return seen


def rows_seen_at_commits(call: Callable[[], Any]) -> list[int]:
    """How many call-log rows each commit of a new task found committed with it."""
    return seen_at_commits(Task, ToolCall.objects.count, call)


@pytest.mark.django_db(transaction=True)
def test_a_write_and_its_log_row_are_one_commit(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    client = mcp_client(alice_key)
    results: list[Any] = []
    arguments = {"project": project.pk, "title": "One commit"}
    seen = rows_seen_at_commits(lambda: results.append(client.call("create_task", arguments)))
    assert results[0]["isError"] is False, results
    # The row was there when the task committed: the same transaction.
    assert seen == [1]
    row = ToolCall.objects.get()
    assert (row.tool, row.outcome, row.arguments) == ("create_task", "ok", arguments)
    assert row.duration_ms > 0


# -- nothing after the commit changes the answer --------------------------------------------


def test_redaction_reaches_nested_values() -> None:
    arguments = {"title": "x", "api_token": "t0k", "nested": [{"Password": "pw", "ok": 1}]}
    assert redact(arguments, ["password", "secret", "token"]) == {
        "title": "x",
        "api_token": "[redacted]",
        "nested": [{"Password": "[redacted]", "ok": 1}],
    }


def test_redaction_of_any_depth_is_bounded() -> None:
    stored = redact(deep(100_000), ["token"])
    depth = 0
    while isinstance(stored, dict):
        stored = stored["d"]
        depth += 1
    assert depth == MAX_DEPTH
    assert stored == "[nested too deep]"


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.urls_testing")
def test_deep_arguments_answer_the_committed_write_once(
    client: Client, alice: Any, alice_key: str, settings: Any
) -> None:
    # By default such arguments are refused before the tool runs; a host that allows them
    # (up to the parser's ceiling) must still get each committed write answered once.
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "MAX_JSON_DEPTH": 500,
        "MAX_ARGUMENT_DEPTH": 500,
    }
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "create_project_noted",
                "arguments": {"name": "Deep", "notes": deep(490)},
            },
        }
    )
    response = call_raw(client, alice_key, body, url="/test-mcp")
    assert response.status_code == 200, response.content
    result = response.json()["result"]
    assert result["isError"] is False, result
    assert Project.objects.filter(name="Deep").count() == 1
    row = ToolCall.objects.get(tool="create_project_noted")
    assert row.outcome == "ok"
    assert row.arguments["name"] == "Deep"


@pytest.mark.django_db(transaction=True)
def test_the_log_row_is_one_insert(mcp_client: Any, alice_key: str, project: Any) -> None:
    # Outside a transaction (as a request runs by default) the row costs one statement:
    # no savepoint, no read-back.
    table = ToolCall._meta.db_table
    with CaptureQueriesContext(connection) as queries:
        result = mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    assert result["isError"] is False
    touching = [q["sql"] for q in queries.captured_queries if table in q["sql"]]
    assert len(touching) == 1 and touching[0].startswith("INSERT"), touching
    assert not [q for q in queries.captured_queries if "SAVEPOINT" in q["sql"]]
    assert ToolCall.objects.count() == 1


# -- signals --------------------------------------------------------------------------------


def test_key_signals_fire_on_create_and_revoke(alice: Any) -> None:
    seen: list[tuple[str, Any]] = []

    def created(sender: Any, key: Any, user: Any, **kwargs: Any) -> None:
        seen.append(("created", key.pk))

    def revoked(sender: Any, key: Any, user: Any, **kwargs: Any) -> None:
        seen.append(("revoked", key.pk))

    signals.api_key_created.connect(created)
    signals.api_key_revoked.connect(revoked)
    try:
        key, _ = APIKey.objects.create_key(user=alice, scopes="read")
        key.revoke()
        key.revoke()  # already revoked: no second signal
    finally:
        signals.api_key_created.disconnect(created)
        signals.api_key_revoked.disconnect(revoked)
    assert seen == [("created", key.pk), ("revoked", key.pk)]


def test_tool_called_reaches_receivers_and_a_failing_one_changes_nothing(
    mcp_client: Any, alice: Any, alice_key: str, project: Any, caplog: Any
) -> None:
    seen: list[dict[str, Any]] = []

    def record(sender: Any, **kwargs: Any) -> None:
        seen.append(kwargs)

    def broken(sender: Any, **kwargs: Any) -> None:
        raise RuntimeError("metrics backend down")

    signals.tool_called.connect(record)
    signals.tool_called.connect(broken)
    try:
        with caplog.at_level(logging.ERROR, logger="mcp_endpoint.calllog"):
            result = mcp_client(alice_key).call("get_task", {"id": 999_999})
    finally:
        signals.tool_called.disconnect(record)
        signals.tool_called.disconnect(broken)
    assert result["structuredContent"]["error"]["code"] == "not_found"
    assert len(seen) == 1
    assert seen[0]["tool"] == "get_task"
    assert seen[0]["user"] == alice
    assert seen[0]["outcome"] == "not_found"
    assert seen[0]["log_row"] == ToolCall.objects.get()
    assert "metrics backend down" in caplog.text


# -- pruning --------------------------------------------------------------------------------


def test_prune_removes_rows_older_than_the_retention(
    settings: Any, mcp_client: Any, alice_key: str, project: Any
) -> None:
    for _ in range(3):
        mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    old = ToolCall.objects.order_by("pk")[:2]
    ToolCall.objects.filter(pk__in=[r.pk for r in old]).update(
        created=timezone.now() - timedelta(days=31)
    )
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_RETENTION_DAYS": 30}
    call_command("mcp_prune_calls", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert ToolCall.objects.count() == 1
    call_command("mcp_prune_calls", "--days", "0", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert ToolCall.objects.count() == 0


def test_prune_keeps_everything_without_a_retention(
    settings: Any, mcp_client: Any, alice_key: str, project: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    ToolCall.objects.update(created=timezone.now() - timedelta(days=3650))
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_RETENTION_DAYS": None}
    call_command("mcp_prune_calls", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert ToolCall.objects.count() == 1


# -- the admin ------------------------------------------------------------------------------


@pytest.fixture
def root(db: Any) -> Any:
    return get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")


def test_the_admin_lists_calls_read_only(
    client: Client, mcp_client: Any, alice_key: str, project: Any, root: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    client.force_login(root)
    listing = client.get("/admin/mcp_endpoint/toolcall/")
    assert listing.status_code == 200
    assert b"summarize_project" in listing.content
    assert client.get("/admin/mcp_endpoint/toolcall/add/").status_code == 403
    row = ToolCall.objects.get()
    page = client.get(f"/admin/mcp_endpoint/toolcall/{row.pk}/change/")
    assert page.status_code == 200
    assert b'name="tool"' not in page.content  # shown, not editable
    refused = client.post(f"/admin/mcp_endpoint/toolcall/{row.pk}/change/", {"tool": "x"})
    assert refused.status_code == 403
    assert ToolCall.objects.get().tool == "summarize_project"


def test_the_admin_search_uses_the_user_models_username_field(
    client: Client, mcp_client: Any, alice_key: str, project: Any, root: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    client.force_login(root)
    found = client.get("/admin/mcp_endpoint/toolcall/", {"q": "alice"})
    assert found.status_code == 200
    assert b"summarize_project" in found.content
    assert found.context["cl"].result_count == 1
    missed = client.get("/admin/mcp_endpoint/toolcall/", {"q": "nobody-here"})
    assert missed.status_code == 200
    assert missed.context["cl"].result_count == 0


def test_only_superusers_delete_rows(
    client: Client, mcp_client: Any, alice: Any, alice_key: str, project: Any, root: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    row = ToolCall.objects.get()
    from django.contrib.auth.models import Permission

    alice.is_staff = True
    alice.save()
    alice.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_toolcall", "delete_toolcall"])
    )
    client.force_login(alice)
    assert client.get(f"/admin/mcp_endpoint/toolcall/{row.pk}/change/").status_code == 200
    assert (
        client.post(f"/admin/mcp_endpoint/toolcall/{row.pk}/delete/", {"post": "yes"}).status_code
        == 403
    )
    assert ToolCall.objects.filter(pk=row.pk).exists()
    client.force_login(root)
    deleted = client.post(f"/admin/mcp_endpoint/toolcall/{row.pk}/delete/", {"post": "yes"})
    assert deleted.status_code == 302
    assert not ToolCall.objects.exists()


def test_an_empty_log_says_how_to_turn_it_on(settings: Any, client: Client, root: Any) -> None:
    client.force_login(root)
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": False}
    off = client.get("/admin/mcp_endpoint/toolcall/")
    assert b'id="call-log-off"' in off.content
    assert b"LOG_TOOL_CALLS" in off.content
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": True}
    on = client.get("/admin/mcp_endpoint/toolcall/")
    assert b'id="call-log-off"' not in on.content
    assert b'id="call-log-empty"' in on.content


def test_instructions_follow_the_settings(settings: Any, mcp_client: Any, alice_key: str) -> None:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    first = mcp_client(alice_key).result("initialize", params)
    assert "task tracker" in first["instructions"]
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "INSTRUCTIONS": "Be brief."}
    assert mcp_client(alice_key).result("initialize", params)["instructions"] == "Be brief."


def test_the_log_pages_speak_french(
    settings: Any, client: Client, root: Any, french: dict[str, str]
) -> None:
    # The app ships a compiled French catalogue; the admin's own French comes with Django.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": True}
    client.force_login(root)
    page = client.get("/admin/mcp_endpoint/toolcall/", headers=french)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Aucun appel d\u2019outil n\u2019a encore été enregistré." in text
    assert "Les appels sont conservés 90 jours" in text
    with translation.override("fr"):
        assert str(ToolCall._meta.verbose_name_plural) == "appels d\u2019outils"


# -- a row has a size ---------------------------------------------------------------------------


def row_bytes(row: ToolCall) -> int:
    return len(json.dumps(row.arguments)) + len(row.error.encode("utf-8"))


def test_a_refused_call_with_huge_arguments_writes_a_bounded_row(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    # 95 strings of 10,000 characters in an argument list_tasks does not take: each string is
    # under the per-string cut, and the row was 950,405 bytes.
    arguments = {"nonsense": ["x" * 10_000] * 95}
    result = mcp_client(alice_key).call("list_tasks", arguments)
    assert result["isError"] is True
    row = ToolCall.objects.get()
    assert row.outcome == "invalid_arguments"
    assert row_bytes(row) <= 64 * 1024
    assert set(row.arguments) == {TRUNCATED, "start"}
    assert row.arguments[TRUNCATED].endswith("bytes of arguments, over LOG_ROW_MAX_BYTES")
    assert row.arguments["start"].startswith('{"nonsense": ["xxx')


@pytest.mark.parametrize("budget", [1024, 5000])
def test_the_row_budget_is_a_setting_and_holds_for_any_text(
    mcp_client: Any, alice_key: str, project: Any, settings: Any, budget: int
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_ROW_MAX_BYTES": budget}
    # Quotes, backslashes and non-ASCII text grow when written as JSON.
    arguments = {'"\\é🎉': ['"\\' * 3000, "é" * 3000, "🎉" * 3000]}
    mcp_client(alice_key).call("list_tasks", arguments)
    row = ToolCall.objects.get()
    assert row_bytes(row) <= budget
    assert TRUNCATED in row.arguments


def test_a_row_within_the_budget_is_kept_whole(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    arguments = {"nonsense": ["x" * 10_000] * 3}
    mcp_client(alice_key).call("list_tasks", arguments)
    assert ToolCall.objects.get().arguments == arguments


def test_a_long_error_text_is_cut_and_marked() -> None:
    arguments, error = within_row_budget({"a": 1}, "é" * 2000, 1024)
    assert arguments == {"a": 1}
    assert len(error.encode("utf-8")) <= 256
    assert error.endswith("[truncated from 4000 bytes]")
