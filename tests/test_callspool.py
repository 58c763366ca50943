"""The call log's spool: a read's row costs no statement during its call, reaches the table
in a batch, and survives the worker's death (``kill -9``) exactly once."""

from __future__ import annotations

import io
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from mcp_endpoint import callspool
from mcp_endpoint.calllog import UNLOGGABLE
from mcp_endpoint.models import APIKey, CallSpoolMark, ToolCall, ToolCallRollup
from tests.live_server import LiveServer, run_script, run_to_its_death
from tests.overview_helpers import assert_same
from tests.test_e2e_sdk import create_key
from tests.test_rollup import read, seed

pytestmark = pytest.mark.django_db(transaction=True)

SPOOL_TABLES = (ToolCall._meta.db_table, CallSpoolMark._meta.db_table)


@pytest.fixture
def spool(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The call log on, spooled in a folder of the test's own; batches written only when
    a test (or a call's count) asks, not by the writer thread."""
    monkeypatch.setattr(callspool, "BACKGROUND_WRITER", False)
    directory = tmp_path / "spool"
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "LOG_TOOL_CALLS": True,
        "LOG_SPOOL_DIR": str(directory),
    }
    yield directory
    callspool.close_spools()


def spooled_lines(directory: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in directory.glob("*.calls")
        for line in path.read_bytes().splitlines()
        if line
    ]


def a_row(tool: str = "list_tasks", created: datetime | None = None, **values: Any) -> ToolCall:
    return ToolCall(
        endpoint="mcp",
        tool=tool,
        outcome="ok",
        duration_ms=1.5,
        created=created or timezone.now(),
        arguments=values.pop("arguments", {}),
        **values,
    )


def orphan_file(directory: Path, content: bytes) -> Path:
    """A spool file of a process that is gone, holding ``content``."""
    directory.mkdir(exist_ok=True)
    path = directory / f"{callspool.database_tag()}-elsewhere-1-{secrets.token_hex(3)}.calls"
    path.write_bytes(content)
    return path


def test_a_read_spools_its_row_and_sends_no_statement_for_it(
    spool: Path, mcp_client: Any, alice: Any, alice_key: str, project: Any
) -> None:
    before = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        result = mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    after = timezone.now()
    assert result["isError"] is False
    touching = [
        q["sql"] for q in queries.captured_queries if any(t in q["sql"] for t in SPOOL_TABLES)
    ]
    assert touching == []
    assert not ToolCall.objects.exists()
    [line] = spooled_lines(spool)
    assert line["tool"] == "summarize_project"

    callspool.write_spooled(spool)
    row = ToolCall.objects.get()
    key = APIKey.objects.get(name="alice rw")
    # The row an immediate INSERT would have written, at the time of the call.
    assert (row.tool, row.user, row.endpoint, row.outcome, row.error) == (
        "summarize_project",
        alice,
        "mcp",
        "ok",
        "",
    )
    assert row.credential == f"API key “alice rw” ({key.prefix})"
    assert row.arguments == {"project_id": project.pk}
    assert row.ip == "127.0.0.1"
    assert before <= row.created <= after
    assert row.duration_ms == line["duration_ms"]
    # Written to its end: the file is gone once its worker is done with it, its mark
    # finished (deleted a day later by mcp_prune_calls).
    callspool.close_spools()
    assert list(spool.glob("*.calls")) == []
    assert list(CallSpoolMark.objects.values_list("finished", flat=True)) == [True]
    assert ToolCall.objects.count() == 1


def test_rows_reach_the_table_in_one_batch_once_due(
    spool: Path,
    monkeypatch: pytest.MonkeyPatch,
    mcp_client: Any,
    alice_key: str,
    project: Any,
) -> None:
    monkeypatch.setattr(callspool, "BATCH_ROWS", 3)
    client = mcp_client(alice_key)
    for _ in range(2):
        client.call("summarize_project", {"project_id": project.pk})
    assert not ToolCall.objects.exists()
    with CaptureQueriesContext(connection) as queries:
        client.call("summarize_project", {"project_id": project.pk})
    assert ToolCall.objects.count() == 3
    inserts = [q["sql"] for q in queries.captured_queries if "INSERT INTO" in q["sql"]]
    inserts = [sql for sql in inserts if ToolCall._meta.db_table in sql]
    assert len(inserts) == 1, queries.captured_queries  # one statement for the three rows
    assert CallSpoolMark.objects.get().offset == sum(
        p.stat().st_size for p in spool.glob("*.calls")
    )


def test_the_writer_thread_writes_a_batch_once_its_oldest_row_has_waited(
    spool: Path,
    monkeypatch: pytest.MonkeyPatch,
    mcp_client: Any,
    alice_key: str,
    project: Any,
) -> None:
    monkeypatch.setattr(callspool, "BACKGROUND_WRITER", True)
    monkeypatch.setattr(callspool, "BATCH_SECONDS", 0.2)
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    # No more calls: the worker's own thread writes the row. (Watched from its spool, not
    # by queries: the tests' in-memory SQLite locks a table a thread is writing.)
    own = callspool._spools[os.getpid()]
    deadline = time.monotonic() + 30
    while (own.waiting or own.writing.locked()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ToolCall.objects.get().tool == "summarize_project"
    [writer] = [t for t in threading.enumerate() if t.name == "mcp-call-spool"]
    callspool.close_spools()
    writer.join(5)
    assert not writer.is_alive()
    assert ToolCall.objects.count() == 1


def test_a_write_is_logged_with_its_commit_not_spooled(
    spool: Path, mcp_client: Any, alice_key: str
) -> None:
    result = mcp_client(alice_key).call("create_project", {"name": "Logged with its commit"})
    assert result["isError"] is False
    assert ToolCall.objects.get().tool == "create_project"
    assert spooled_lines(spool) == []


def test_a_spool_that_cannot_be_written_logs_the_row_at_once(
    settings: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    mcp_client: Any,
    alice_key: str,
    project: Any,
) -> None:
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "LOG_TOOL_CALLS": True,
        "LOG_SPOOL_DIR": str(blocked / "spool"),
    }
    with caplog.at_level(logging.WARNING, "mcp_endpoint.calllog"):
        mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    assert ToolCall.objects.get().tool == "summarize_project"
    assert "refused a row; it is written at once" in caplog.text


def test_a_user_deleted_before_the_batch_leaves_the_row_without_one(
    spool: Path, mcp_client: Any, alice: Any, alice_key: str, project: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    alice.delete()
    callspool.write_spooled(spool)
    row = ToolCall.objects.get()
    assert row.user is None and row.tool == "summarize_project"


# -- a worker's death -------------------------------------------------------------------------


def test_a_live_workers_file_is_left_to_it(spool: Path) -> None:
    alive = callspool.Spool(spool)  # another worker's, as far as the adopter can tell
    alive.add(a_row())
    assert callspool.adopt_orphans(spool) == 0
    assert not ToolCall.objects.exists()
    assert len(list(spool.glob("*.calls"))) == 1
    alive.close()
    assert ToolCall.objects.count() == 1
    assert list(spool.glob("*.calls")) == []


def test_the_admin_writes_a_live_workers_rows_and_that_worker_writes_them_no_more(
    spool: Path, admin_client: Client
) -> None:
    alive = callspool.Spool(spool)  # another worker, alive, that has not written its batch
    alive.add(a_row(tool="seen_at_once"))
    response = admin_client.get("/admin/mcp_endpoint/toolcall/")
    assert b"seen_at_once" in response.content
    assert len(list(spool.glob("*.calls"))) == 1  # still that worker's
    alive.add(a_row(tool="after_the_look"))
    alive.write_now()
    alive.close()
    assert sorted(ToolCall.objects.values_list("tool", flat=True)) == [
        "after_the_look",
        "seen_at_once",
    ]


def test_a_dead_workers_rows_are_written_once_each(spool: Path) -> None:
    dead = callspool.Spool(spool)
    for n in range(3):
        dead.add(a_row(arguments={"n": n}))
    dead.write_own()  # a batch committed before the crash
    for n in range(3, 5):
        dead.add(a_row(arguments={"n": n}))
    assert dead.fd is not None
    os.close(dead.fd)  # dies: the kernel drops its lock, nothing else runs
    assert ToolCall.objects.count() == 3
    assert callspool.adopt_orphans(spool) == 2
    assert sorted(r.arguments["n"] for r in ToolCall.objects.all()) == [0, 1, 2, 3, 4]
    assert list(spool.glob("*.calls")) == []
    assert list(CallSpoolMark.objects.values_list("finished", flat=True)) == [True]


def test_an_orphans_unfinished_line_and_unreadable_line_are_dropped_and_logged(
    spool: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = callspool.encode(a_row(arguments={"n": 1}))
    unreadable = [
        b"{not json\n",
        b"[1]\n",
        good.replace(b'"duration_ms": 1.5', b'"duration_ms": "slow"'),
        good.replace(b'"created": "', b'"created": "yesterday'),
    ]
    assert all(line != good for line in unreadable)
    rest = good.replace(b'"n": 1', b'"n": 2') + good[:20]
    path = orphan_file(spool, good + b"".join(unreadable) + rest)
    with caplog.at_level(logging.ERROR, "mcp_endpoint.calllog"):
        assert callspool.adopt_orphans(spool) == 6
    assert sorted(r.arguments["n"] for r in ToolCall.objects.all()) == [1, 2]
    assert caplog.text.count("could not be read; it is skipped") == 4
    assert not path.exists()


def test_the_daily_prune_writes_the_files_of_dead_workers(spool: Path) -> None:
    dead = callspool.Spool(spool)
    dead.add(a_row(arguments={"n": 1}))
    assert dead.fd is not None
    os.close(dead.fd)
    out = io.StringIO()
    call_command("mcp_prune_calls", "--no-count", stdout=out)
    assert "Wrote 1 spooled tool call(s) of other workers." in out.getvalue()
    assert [r.arguments for r in ToolCall.objects.all()] == [{"n": 1}]
    # The finished file's mark stays for a day, a live one's for good.
    alive = callspool.Spool(spool)
    alive.add(a_row())
    alive.write_now()
    CallSpoolMark.objects.update(updated=timezone.now() - timedelta(days=2))
    call_command("mcp_prune_calls", "--no-count", stdout=out)
    assert list(CallSpoolMark.objects.values_list("finished", flat=True)) == [False]
    alive.close()


def test_a_row_the_database_refuses_is_written_without_its_arguments(spool: Path) -> None:
    # NUL is a JSON string's character SQLite stores and PostgreSQL's jsonb refuses: the
    # call log makes arguments storable before they are spooled, so only a file written
    # by hand (or by another version) gets here.
    dead = callspool.Spool(spool)
    dead.add(a_row(arguments={"n": 1}))
    dead.add(a_row(arguments={"nul": "\x00"}))
    assert dead.fd is not None
    os.close(dead.fd)
    assert callspool.adopt_orphans(spool) == 2
    found = sorted((r.arguments for r in ToolCall.objects.all()), key=json.dumps)
    refused = UNLOGGABLE if connection.vendor == "postgresql" else {"nul": "\x00"}
    assert found == sorted([{"n": 1}, refused], key=json.dumps)


def test_a_row_no_database_takes_is_left_out_with_an_error_and_the_rest_written(
    spool: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A row without an outcome (a file written by hand): refused with its arguments and
    # without them, by a database that answers; the rows around it are kept.
    good = callspool.encode(a_row(arguments={"n": 1}))
    refused = good.replace(b'"outcome": "ok"', b'"outcome": null')
    assert refused != good
    path = orphan_file(spool, good + refused + good.replace(b'"n": 1', b'"n": 2'))
    with caplog.at_level(logging.WARNING, "mcp_endpoint.calllog"):
        assert callspool.adopt_orphans(spool) == 3
    assert sorted(r.arguments["n"] for r in ToolCall.objects.all()) == [1, 2]
    assert "could not record a spooled call of list_tasks" in caplog.text
    assert not path.exists()


def test_a_file_too_deep_to_read_is_skipped_not_raised(
    spool: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = orphan_file(spool, b'{"a": ' * 100_000 + b"1" + b"}" * 100_000 + b"\n")
    with caplog.at_level(logging.ERROR, "mcp_endpoint.calllog"):
        assert callspool.adopt_orphans(spool) == 1
    assert not ToolCall.objects.exists() and not path.exists()
    assert "could not be read; it is skipped" in caplog.text


def test_a_full_file_is_finished_and_a_new_one_started(
    spool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(callspool, "ROTATE_BYTES", 1)
    worker = callspool.Spool(spool)
    worker.add(a_row(arguments={"n": 1}))
    first = worker.file
    worker.write_now()
    assert first is not None and not first.path.exists()
    worker.add(a_row(arguments={"n": 2}))
    assert worker.file is not None and worker.file.name != first.name
    worker.close()
    assert sorted(r.arguments["n"] for r in ToolCall.objects.all()) == [1, 2]
    assert list(CallSpoolMark.objects.values_list("finished", flat=True)) == [True, True]


def test_a_batch_that_cannot_be_written_stays_for_the_next(
    spool: Path, caplog: pytest.LogCaptureFixture
) -> None:
    worker = callspool.Spool(spool)
    worker.add(a_row())
    assert worker.file is not None
    # The file taken away under the worker (by hand): logged, nothing raised, the rows
    # counted as still waiting.
    hidden = worker.file.path.with_suffix(".hidden")
    worker.file.path.rename(hidden)
    with caplog.at_level(logging.WARNING, "mcp_endpoint.calllog"):
        assert worker.write_now() == 0
    assert "it is kept for the next batch" in caplog.text
    assert worker.waiting == 1
    hidden.rename(worker.file.path)
    worker.write_now()
    assert ToolCall.objects.count() == 1
    worker.close()


def test_a_new_folder_finishes_the_old_spool_first(settings: Any, spool: Path) -> None:
    old = callspool.process_spool(spool)
    old.add(a_row())
    elsewhere = spool.parent / "elsewhere"
    assert callspool.process_spool(elsewhere).directory == elsewhere
    assert ToolCall.objects.count() == 1
    assert list(spool.glob("*.calls")) == []


def test_the_files_of_another_database_are_not_adopted(spool: Path) -> None:
    spool.mkdir()
    other = spool / f"000000000000-elsewhere-1-abc{callspool.SUFFIX}"
    other.write_bytes(callspool.encode(a_row()))
    assert callspool.adopt_orphans(spool) == 0
    assert other.exists() and not ToolCall.objects.exists()


def test_late_rows_make_the_overview_count_their_hour_again(
    spool: Path, alice: Any, bob: Any
) -> None:
    now = timezone.now()
    seed(now, [alice, bob], rows=120)
    read("1d", None, now)
    assert ToolCallRollup.objects.filter(dimension="hour").exists()
    late = callspool.Spool(spool)
    late.add(a_row(tool="late_tool", created=now - timedelta(hours=3), user=alice))
    late.close()
    window, (figures, found) = read("1d", None, now)
    assert_same(figures, found, window)
    assert found.per_bucket and any(tool == "late_tool" for _, tool in found.per_bucket)


def test_the_admins_call_log_lists_spooled_calls(
    spool: Path, admin_client: Client, mcp_client: Any, alice_key: str, project: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    response = admin_client.get("/admin/mcp_endpoint/toolcall/")
    assert response.status_code == 200
    assert b"summarize_project" in response.content
    assert ToolCall.objects.count() == 1


# Run by a process of its own: read calls through /mcp with Django's test client, a batch
# written after the first three, and SIGKILL right after the fifth answer.
CALLS_THEN_DEATH = """
import os, signal, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
import django
django.setup()
from django.test import Client
from mcp_endpoint import callspool
from mcp_endpoint.calllog import UNLOGGABLE
from tests.mcp_client import MCPClient

key, = sys.argv[1:]
client = MCPClient(Client(HTTP_HOST="127.0.0.1"), "/mcp", key)
for n in range(5):
    result = client.call("list_tasks", {"search": f"call {n}"})
    print(result["isError"], flush=True)
    if n == 2:
        callspool._spools[os.getpid()].write_now()
os.kill(os.getpid(), signal.SIGKILL)
"""

SEED = "from django.core.management import call_command; call_command('seed_demo')"

ADOPT_AND_COUNT = """
import json
from mcp_endpoint.callspool import write_spooled
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.models import ToolCall
write_spooled(mcp_settings.LOG_SPOOL_DIR)
print(json.dumps(sorted(
    row.arguments.get("search", "") for row in ToolCall.objects.filter(tool="list_tasks")
)))
"""


@pytest.mark.e2e
def test_a_worker_killed_after_its_answers_loses_no_row_and_doubles_none(
    tmp_path: Path,
) -> None:
    with LiveServer(tmp_path, workers=1) as server:
        env = server.env
        run_script(
            env, "from django.core.management import call_command; call_command('seed_demo')"
        )
        key = create_key(env, "alice", "read")
        done = run_to_its_death(env, CALLS_THEN_DEATH, key)
        # Five answers were sent, so five rows are owed: three written in the batch, two
        # only in the dead process's file.
        assert done.stdout.split() == ["False"] * 5
        found = json.loads(run_script(env, ADOPT_AND_COUNT).splitlines()[-1])
        assert found == [f"call {n}" for n in range(5)]
        assert list(Path(env["DEMO_LOG_SPOOL_DIR"]).glob("*.calls")) == []


def test_the_spool_setting_is_checked(settings: Any) -> None:
    from mcp_endpoint.checks import check_settings

    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_SPOOL_DIR": 7}
    assert [m.id for m in check_settings() if m.id == "mcp_endpoint.E273"] == ["mcp_endpoint.E273"]


def test_a_spool_folder_that_cannot_be_written_is_w112(settings: Any, tmp_path: Path) -> None:
    from mcp_endpoint.checks import check_call_log_spool

    blocked = tmp_path / "a file"
    blocked.write_text("")
    for folder, ids in (
        (str(tmp_path / "to be made" / "spool"), []),
        (str(blocked / "spool"), ["mcp_endpoint.W112"]),
    ):
        settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_SPOOL_DIR": folder}
        assert [m.id for m in check_call_log_spool()] == ids


def test_a_spool_beside_schema_per_tenant_is_w113(tmp_path: Path) -> None:
    from mcp_endpoint.checks import call_log_spool_problems

    apps = ["django.contrib.auth", "mcp_endpoint"]
    assert call_log_spool_problems(str(tmp_path), apps) == []
    assert call_log_spool_problems(None, [*apps, "django_tenants"]) == []
    [message] = call_log_spool_problems(str(tmp_path), [*apps, "django_tenants"])
    assert message.id == "mcp_endpoint.W113" and "django_tenants" in message.msg
