"""A process killed right after a write tool commits still leaves that call's log row.

The row of a write is written inside the tool's own transaction, so the tool's writes and
their row are one commit. Proven the hard way: a real Django process of the demo host calls
``create_task`` through ``/mcp`` and is killed with SIGKILL by a hook that runs the moment
the tool's transaction has committed (``transaction.on_commit``), before the answer, before
anything the call does afterwards. The database is then read from another process.

A task's worker writes the row in the same way (with the tool's writes and the task's result);
that is proven in-process by the commit's view of the rows, below.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_endpoint.models import ToolCall, ToolTask
from project.tracker.models import Project
from tests.live_server import LiveServer, run_script, run_to_its_death
from tests.mcp_client import MCPClient
from tests.test_e2e_sdk import DEMO_PROJECT, create_key
from tests.test_tasks import TaskClient
from tests.test_tool_calls import seen_at_commits

pytestmark = pytest.mark.e2e

# Run by a process of its own: calls create_task through /mcp with Django's test client and
# dies by SIGKILL as soon as the new task's transaction commits.
CRASHING_CALL = """
import os, signal, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
import django
django.setup()
from django.db import transaction
from django.db.models.signals import post_save
from django.test import Client
from project.tracker.models import Task
from tests.mcp_client import MCPClient

def crash_after_commit(sender, instance, created, **kwargs):
    if created:
        transaction.on_commit(lambda: os.kill(os.getpid(), signal.SIGKILL))

post_save.connect(crash_after_commit, sender=Task)
key, project, title = sys.argv[1:]
client = MCPClient(Client(HTTP_HOST="127.0.0.1"), "/mcp", key)
print(client.call("create_task", {"project": int(project), "title": title}), flush=True)
"""

COUNT = """
import json
from mcp_endpoint.models import ToolCall
from project.tracker.models import Task
title = {title!r}
rows = [
    row.arguments
    for row in ToolCall.objects.filter(tool="create_task")
    if isinstance(row.arguments, dict) and row.arguments.get("title") == title
]
print(json.dumps({{"tasks": Task.objects.filter(title=title).count(), "rows": rows}}))
"""


@pytest.fixture(scope="module")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(Path(tmp_path_factory.mktemp("crash")), workers=1) as server:
        run_script(
            server.env, "from django.core.management import call_command; call_command('seed_demo')"
        )
        yield server


def test_a_write_killed_right_after_its_commit_keeps_its_log_row(demo_server: LiveServer) -> None:
    env = demo_server.env
    key = create_key(env, "alice", "read write")
    project = run_script(
        env,
        "from project.tracker.models import Project; "
        f"print(Project.objects.get(name={DEMO_PROJECT!r}).pk)",
    ).splitlines()[-1]
    title = "Written, then the process died"
    done = run_to_its_death(env, CRASHING_CALL, key, project, title)
    # Killed, not ended: no answer was sent, nothing ran after the commit.
    assert done.stdout == ""
    found = json.loads(run_script(env, COUNT.format(title=title)).splitlines()[-1])
    assert found["tasks"] == 1, found
    assert found["rows"] == [{"project": int(project), "title": title}], found


# -- a task's worker ------------------------------------------------------------------------


def commits_of_new_projects(call: Callable[[], Any]) -> list[tuple[int, list[str]]]:
    """For each new project's commit: the call-log rows and the task statuses committed with
    it."""
    return seen_at_commits(
        Project,
        lambda: (
            ToolCall.objects.filter(tool="name_project_as_task").count(),
            list(ToolTask.objects.values_list("status", flat=True)),
        ),
        call,
    )


@pytest.mark.urls("tests.urls_testing")
@pytest.mark.django_db(transaction=True)
def test_a_write_task_commits_its_writes_result_and_log_row_as_one(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    client = TaskClient(mcp_client(alice_key, "/test-mcp"))
    created: list[dict[str, Any]] = []
    seen = commits_of_new_projects(
        lambda: created.append(client.call("name_project_as_task", {"name": "One commit"}))
    )
    # When the project committed, its task's result and its row had committed with it.
    assert seen == [(1, ["completed"])], seen
    task = client.get(created[0]["taskId"])
    assert task["status"] == "completed", task
    row = ToolCall.objects.get(tool="name_project_as_task")
    assert (row.outcome, row.arguments) == ("ok", {"name": "One commit"})


@pytest.mark.urls("tests.urls_testing")
@pytest.mark.django_db(transaction=True)
def test_a_write_task_whose_key_is_revoked_keeps_neither_its_write_nor_a_row(
    mcp_client: Callable[..., MCPClient], alice_key: str
) -> None:
    client = TaskClient(mcp_client(alice_key, "/test-mcp"))
    client.call("name_project_then_revoke", {"name": "Never kept"})
    assert not Project.objects.filter(name="Never kept").exists()
    # Nothing of the tool's was kept, its row included; the task's failure is what stays.
    assert ToolTask.objects.get().status == "failed"
    assert not ToolCall.objects.filter(tool="name_project_then_revoke").exists()
