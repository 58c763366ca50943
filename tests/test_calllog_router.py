"""A host whose router sends the call log's rows to a database of their own.

No one transaction spans two aliases, so a write tool's row cannot be committed with the
tool's writes there: it is written through the log's alias once the call is done, and the
default alias writes none. Run in a process of its own, on one SQLite file reached by two
aliases, with the demo host's settings and the router (tests/settings_calllog_router.py):
the suite's own databases have one alias.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.live_server import run_script

# Its own two SQLite files whatever the run's database: the SQLite run alone runs it.
pytestmark = pytest.mark.once

ROUTED_CALLS = """
import json
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import transaction
from django.db.models.signals import post_save
from django.test import Client
from mcp_endpoint.models import APIKey, ToolCall
from project.tracker.models import Project, Task
from tests.mcp_client import MCPClient

from django.db import connections
call_command("migrate", verbosity=0)
alice = get_user_model().objects.create_user("alice", password="alice-password")
project = Project.objects.create(name="Routed", owner=alice)
_, raw = APIKey.objects.create_key(user=alice, scopes="read write")
client = MCPClient(Client(HTTP_HOST="127.0.0.1"), "/mcp", raw)

# Which alias writes the log's rows.
inserts = {"default": 0, "calllog": 0}
def counter(alias):
    def count(execute, sql, params, many, context):
        if sql.startswith('INSERT INTO "mcp_endpoint_toolcall"'):
            inserts[alias] += 1
        return execute(sql, params, many, context)
    return count
for alias in inserts:
    connections[alias].execute_wrappers.append(counter(alias))

# The log's rows at the moment the new task commits.
seen = []
def created(sender, instance, created, **kwargs):
    if created:
        transaction.on_commit(lambda: seen.append(ToolCall.objects.using("calllog").count()))
post_save.connect(created, sender=Task)

written = client.call("create_task", {"project": project.pk, "title": "Routed write"})
listed = client.call("list_tasks", {})
refused = client.call("create_task", {"project": project.pk, "title": ""})
# With the spool on (LOG_SPOOL_DIR), the rows wait in this process's file until the batch
# the admin's call log would ask for.
from mcp_endpoint import callspool
from mcp_endpoint.conf import mcp_settings
spooled = sum(inserts.values())
callspool.write_spooled(mcp_settings.LOG_SPOOL_DIR)

def rows(alias):
    return [
        [row.tool, row.outcome, row.arguments]
        for row in ToolCall.objects.using(alias).order_by("pk")
    ]

print(json.dumps({
    "results": [written["isError"], listed["isError"], refused["isError"]],
    "seen at commit": seen,
    "rows": rows("calllog"),
    "inserts": inserts,
    "inserts before the batch": spooled,
    "tasks": list(Task.objects.values_list("title", flat=True)),
}))
"""


@pytest.mark.parametrize("spool", [False, True], ids=["at once", "spooled"])
def test_a_routed_call_log_gets_every_row_after_the_call(tmp_path: Path, spool: bool) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CACHE_KEY_PREFIX", "PYTHONPATH"}
    }
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings_calllog_router",
        ROUTED_DB=str(tmp_path / "db.sqlite3"),
        CACHE_DIR=str(tmp_path / "cache"),
        DEMO_WARM_UP="0",
        DEMO_MCP_SESSIONS="0",
        DEMO_LOG_SPOOL_DIR=str(tmp_path / "spool") if spool else "",
    )
    output = run_script(env, ROUTED_CALLS, fresh=True)
    seen = json.loads(output.strip().splitlines()[-1])

    assert seen["results"] == [False, False, True]
    assert seen["tasks"] == ["Routed write"]
    # The write committed before its row was written, through the log's own alias.
    assert seen["seen at commit"] == [0]
    if spool:
        # Spooled, every row included (the write's too: no one transaction spans the two
        # aliases), then one batch through the log's alias.
        assert seen["inserts before the batch"] == 0
        assert seen["inserts"] == {"default": 0, "calllog": 1}
    else:
        assert seen["inserts"] == {"default": 0, "calllog": 3}
    assert [row[:2] for row in seen["rows"]] == [
        ["create_task", "ok"],
        ["list_tasks", "ok"],
        ["create_task", "invalid_arguments"],
    ]
    assert seen["rows"][0][2] == {"project": 1, "title": "Routed write"}
