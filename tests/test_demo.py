"""``./dev demo`` as a person runs it: the command itself, its printed key, and Ctrl-C.

The demo's files go to a temporary folder (``SQLITE_PATH``, ``CACHE_DIR``, ``STATIC_ROOT``;
with ``DATABASE_URL`` set, a fresh PostgreSQL database beside it), so a developer's
``db.sqlite3`` is left alone. ``./dev demo`` installs into the repository's ``.venv`` first:
``./dev test`` made it, and this test needs it. With a Redis it runs two uvicorn workers
that share live updates through it, without one (``REDIS_URL=``) a single worker. Either
way a long-running tool called as a task completes (the task worker runs it), a
subscription hears of a change made through REST, the README's SDK script lists the tools,
and SIGINT to the command leaves none of its processes behind.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import (
    HOST,
    PORT_ATTEMPTS,
    ROOT,
    create_database,
    drop_database,
    free_port,
    missing,
    require_redis,
    uvicorn_bound,
    wait_for_bind,
)
from tests.test_quickstart import readme_sdk_client
from tests.test_tasks_live import Tasks

pytestmark = pytest.mark.e2e

# Upper bounds on waiting, not timings under test: installing checks every package first.
STARTUP = 600.0
PATIENCE = 60.0
KEY_LINE = re.compile(r"shown once:\n\n +(?P<key>\S+)\n")


def session_processes(session: int) -> set[int]:
    """The processes of a session (all that a command started in one of its own, whatever
    their process group), from ``/proc``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # it ended while being read
        # The fields after the command's name, which is in parentheses and may hold anything.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[3]) == session:
            found.add(int(entry.name))
    return found


@dataclass
class Demo:
    process: subprocess.Popen[bytes]
    output: Path
    port: int
    key: str = ""

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def printed(self) -> str:
        return self.output.read_text(errors="replace")

    def wait_for_key(self) -> None:
        deadline = time.monotonic() + STARTUP
        while time.monotonic() < deadline:
            found = KEY_LINE.search(self.printed())
            if found:
                self.key = found["key"]
                return
            assert self.process.poll() is None, "./dev demo exited:\n" + self.printed()[-4000:]
            time.sleep(0.5)
        raise AssertionError("./dev demo printed no key:\n" + self.printed()[-4000:])

    def listens(self) -> bool:
        """Wait until the demo's uvicorn says it listens on the demo's port: True, or False
        when another process holds that port (:func:`~tests.live_server.wait_for_bind`)."""
        return wait_for_bind(
            self.output, lambda log: uvicorn_bound(log, self.port), self.process, STARTUP
        )

    def stop(self) -> None:
        """Every process of the demo's session killed, the command itself waited for."""
        for pid in session_processes(self.process.pid):
            os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def wait_until_serving(self) -> None:
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "./dev demo exited:\n" + self.printed()[-4000:]
            try:
                urllib.request.urlopen(self.base_url + "/", timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # any HTTP answer means a worker is serving
            except OSError:
                time.sleep(0.2)
        raise AssertionError("the demo did not answer:\n" + self.printed()[-4000:])

    def rest(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode() if body is not None else None,
            method=method,
            headers={"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=20) as response:
            return json.loads(response.read())


@pytest.fixture(params=["redis", "no redis"])
def demo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Demo]:
    if not (ROOT / ".venv" / "bin" / "python").exists():
        missing("no .venv in the repository: ./dev test makes the one ./dev demo uses")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH", "REDIS_URL", "CACHE_KEY_PREFIX"}
    }
    env.update(
        SQLITE_PATH=str(tmp_path / "db.sqlite3"),
        CACHE_DIR=str(tmp_path / "cache"),
        STATIC_ROOT=str(tmp_path / "static"),
        PYTHONUNBUFFERED="1",
    )
    if request.param == "redis":
        env.update(REDIS_URL=require_redis(), CACHE_KEY_PREFIX=f"demo-{secrets.token_hex(6)}")
    else:
        env["REDIS_URL"] = ""
    database = None
    if env.get("DATABASE_URL"):
        origin = env["DATABASE_URL"]
        env["DATABASE_URL"] = create_database(origin)
        database = (env["DATABASE_URL"], origin)
    demo = None
    try:
        for attempt in range(PORT_ATTEMPTS):
            if demo is not None:
                demo.stop()  # its port was taken: again, on another
            demo = start_demo({**env, "PORT": str(free_port())}, tmp_path / f"demo-{attempt}.log")
            if demo.listens():
                break
        else:
            raise AssertionError("every port the demo was given was taken")
        yield demo
    finally:
        if demo is not None:
            demo.stop()
        if database is not None:
            drop_database(*database)


def start_demo(env: dict[str, str], output: Path) -> Demo:
    with output.open("wb") as log:
        # A session of its own, as a terminal gives the command: every process it starts
        # belongs to it, which is how the test finds them all after Ctrl-C.
        process = subprocess.Popen(
            [str(ROOT / "dev"), "demo"],
            cwd=output.parent,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=sigint_as_from_a_terminal,
        )
    return Demo(process, output, int(env["PORT"]))


def sigint_as_from_a_terminal() -> None:
    """Ctrl-C reaches the demo as a terminal delivers it. A suite started in the background
    (``cmd &``, a runner without a terminal) has SIGINT ignored, and a shell that starts
    with a signal ignored can never trap it: the demo's Ctrl-C handler would not run."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(demo: Demo) -> int:
    """Ctrl-C: SIGINT to the command; its exit status once it is over."""
    demo.process.send_signal(signal.SIGINT)
    try:
        return demo.process.wait(timeout=PATIENCE)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("./dev demo outlived SIGINT:\n" + demo.printed()[-4000:]) from exc


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
def test_the_demo_runs_the_whole_system_and_ctrl_c_stops_it(demo: Demo) -> None:
    demo.wait_for_key()
    demo.wait_until_serving()
    first = demo.rest("GET", "/api/tasks/")["results"][0]
    task, project = first["id"], first["project"]
    started = session_processes(demo.process.pid)
    # The script, uvicorn's parent and workers, the task worker, the output's markers.
    assert len(started) >= 5, started

    outcome = anyio.run(use_the_demo, demo, project, task)

    export, polls = outcome["export"], outcome["polls"]
    assert not export.is_error, export
    assert polls[-1] == "completed", polls
    assert "title" in export.content[0].resource.text.splitlines()[0]
    assert outcome["heard"] == [f"tracker://projects/{project}/board"]

    client = demo.output.parent / "client.py"
    client.write_text(readme_sdk_client())
    listed = subprocess.run(
        [sys.executable, str(client), demo.base_url + "/mcp", demo.key],
        capture_output=True,
        text=True,
        timeout=PATIENCE,
        check=True,
    ).stdout
    assert "export_project_tasks" in listed.strip().split(", ")

    # The admin's and the account pages' files, collected and served by WhiteNoise.
    with urllib.request.urlopen(demo.base_url + "/static/admin/css/base.css", timeout=10) as css:
        assert css.status == 200

    printed = demo.printed()
    assert "[web] " in printed and "[tasks] " in printed
    assert interrupt(demo) == 0, demo.printed()[-4000:]
    assert session_processes(demo.process.pid) == set(), demo.printed()[-4000:]
    assert started & session_processes(demo.process.pid) == set()


async def use_the_demo(demo: Demo, project: int, task: int) -> dict[str, Any]:
    outcome: dict[str, Any] = {}
    headers = {"Authorization": f"Bearer {demo.key}"}
    url = demo.base_url + "/mcp"
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        # A long-running tool, as a task: the worker beside the server runs it.
        tasks = Tasks()
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="2026-07-28", extensions=[tasks]) as client:
            with anyio.fail_after(PATIENCE):
                outcome["export"] = await client.call_tool(
                    "export_project_tasks", {"project_id": project}
                )
        outcome["polls"] = tasks.polls[tasks.created[0]]
        outcome["heard"] = await hear_a_change(demo, http, project, task)
    return outcome


async def hear_a_change(demo: Demo, http: httpx2.AsyncClient, project: int, task: int) -> list[str]:
    uri = f"tracker://projects/{project}/board"
    heard: list[str] = []

    async def handler(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            heard.append(message.params.uri)

    transport = streamable_http_client(demo.base_url + "/mcp", http_client=http)
    async with Client(transport, mode="legacy", message_handler=handler) as client:
        await client.subscribe_resource(uri)
        # The client opens its GET stream on its own: a change made before it is open is
        # no news to it, so change until one is heard (a bounded loop).
        for attempt in range(20):
            await anyio.to_thread.run_sync(
                demo.rest, "PATCH", f"/api/tasks/{task}/", {"title": f"Renamed {attempt}"}
            )
            with anyio.move_on_after(1.5):
                while not heard:
                    await anyio.sleep(0.05)
            if heard:
                break
    return sorted(set(heard))


@pytest.mark.parametrize(
    ("printed", "listens"),
    [
        ("[web] INFO:     Uvicorn running on http://127.0.0.1:{port} (Press CTRL+C to quit)", True),
        ("[web] ERROR:    [Errno 98] Address already in use", False),
    ],
)
def test_the_demo_counts_as_listening_on_its_own_line_only(
    tmp_path: Path, printed: str, listens: bool
) -> None:
    # Another server of the run may bind the demo's port first; its answers are not the
    # demo's, so the fixture waits for the demo's own line, and moves on a taken port.
    output = tmp_path / "demo.log"
    with subprocess.Popen(["sleep", "30"]) as process:
        try:
            demo = Demo(process, output, free_port())
            output.write_text("[web] INFO:     Uvicorn running on http://127.0.0.1:1 (Press\n")
            output.write_text(output.read_text() + printed.format(port=demo.port) + "\n")
            assert demo.listens() is listens
        finally:
            process.kill()
