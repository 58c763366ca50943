"""End to end: the official Python SDK creates a task and finds it again, over a real server.

The host runs under gunicorn and under uvicorn on loopback, each with a fresh SQLite
database of its own, seeded with ``manage.py seed_demo``; the key comes from
``manage.py mcp_key create``. The SDK's client calls the tools the adapter made of the task
viewset, and the REST API is asked the same question over the same server.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import SERVERS, LiveServer, manage

pytestmark = pytest.mark.e2e

DEMO_PROJECT = "Website relaunch"


@dataclass
class Host:
    server: LiveServer
    key: str


@pytest.fixture(scope="module", params=sorted(SERVERS))
def host(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Host]:
    """The host under gunicorn (WSGI) and under uvicorn (ASGI): the adapter builds its inner
    request from either kind of incoming request."""
    workdir: Path = tmp_path_factory.mktemp(f"e2e-drf-{request.param}")
    # Always a private SQLite file and file cache: this test is about the adapter, and must
    # not touch a database or cache that DATABASE_URL or REDIS_URL may name.
    env = {
        "DATABASE_URL": "",
        "REDIS_URL": "",
        "SQLITE_PATH": str(workdir / "db.sqlite3"),
        "CACHE_DIR": str(workdir / "cache"),
    }
    with SERVERS[request.param](workdir, workers=2, env=env) as server:
        manage(server.env, "seed_demo")
        output = manage(
            server.env, "mcp_key", "create", "--user", "alice", "--scopes", "read write"
        )
        yield Host(server, output.strip().splitlines()[-1])


def test_create_a_task_then_find_it_with_a_filter(host: Host) -> None:
    title = f"Order the banner {secrets.token_hex(4)}"
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {host.key}"}, timeout=30
        ) as http:
            transport = streamable_http_client(host.server.url("/mcp"), http_client=http)
            async with Client(transport, mode="legacy") as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert {"create_task", "list_tasks", "list_projects"} <= set(tools)
                assert sorted(tools["create_task"].input_schema["required"]) == [
                    "project",
                    "title",
                ]
                annotations = tools["create_task"].annotations
                assert annotations is not None and annotations.read_only_hint is False

                projects = await client.call_tool("list_projects", {"search": DEMO_PROJECT})
                assert projects.is_error is False, projects
                assert projects.structured_content is not None
                [project] = projects.structured_content["results"]
                assert project["name"] == DEMO_PROJECT

                created = await client.call_tool(
                    "create_task",
                    {
                        "project": project["id"],
                        "title": title,
                        "priority": 1,
                        "due": "2031-01-02",
                        "assignee": "bob",
                    },
                )
                assert created.is_error is False, created
                assert created.structured_content is not None
                task = created.structured_content
                assert task["title"] == title and task["status"] == "open"
                assert created.content[0].type == "text"
                assert f"Task {task['id']}" in created.content[0].text

                found = await client.call_tool(
                    "list_tasks",
                    {"project": project["id"], "search": title, "priority": 1, "status": "open"},
                )
                assert found.is_error is False, found
                assert found.structured_content is not None
                assert found.structured_content["count"] == 1
                assert found.structured_content["results"] == [task]

                elsewhere = await client.call_tool(
                    "list_tasks", {"search": title, "status": "done"}
                )
                assert elsewhere.structured_content is not None
                assert elsewhere.structured_content["count"] == 0

                seen["task"] = task
                seen["rest"] = (await http.get(host.server.url(f"/api/tasks/{task['id']}/"))).json()

    anyio.run(main)
    assert seen["rest"] == seen["task"]
