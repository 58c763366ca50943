"""The demo host under concurrent load, through real server processes on loopback.

- SQLite, gunicorn with 2 workers: concurrent writes wait for the lock instead of failing.
- PostgreSQL, uvicorn with 4 workers, a role limited to 30 connections: ASGI requests do not
  pile up persistent connections.
- PostgreSQL, uvicorn and gunicorn: no connection outlives the request (or the stream's work)
  that opened it when ``CONN_MAX_AGE`` is 0, and one per worker is kept when it is not.
- PostgreSQL and Redis, gunicorn with 4 workers: mixed MCP and REST requests with one API
  key, no errors, every successful create stored, the shared limit held.

The suite sends a few hundred requests, enough for each property; the same tests at the
size of a load test (thousands) are ``benchmarks/test_load.py`` (``./dev bench load``).
The clients are threads in the test process; every request is bounded by a timeout and
every test by its request count.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.live_server import HOST, LiveServer, UvicornServer, manage
from tests.test_subscriptions import listen_message, patch_task

pytestmark = pytest.mark.e2e

# A status the client never gets from HTTP: the request failed in transport (refused,
# reset, timed out).
TRANSPORT_ERROR = 0


def require(variable: str, reason: str) -> str:
    """The environment variable's value, or a skip: these tests belong to the PostgreSQL and
    Redis run, which ``./dev test`` refuses to leave out under CI, and the SQLite run of the
    same CI has neither."""
    value = os.environ.get(variable, "")
    if not value:
        pytest.skip(reason)
    return value


@dataclass
class Host:
    """A live server, one user with a project of their own, and that user's API key."""

    server: LiveServer
    key: str
    project: int

    @classmethod
    def on(cls, server: LiveServer) -> Host:
        name = f"load{secrets.token_hex(4)}"
        out = manage(
            server.env,
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model\n"
            "from mcp_endpoint.models import APIKey\n"
            "from project.tracker.models import Project\n"
            f"user = get_user_model().objects.create_user({name!r}, password='pw-load-12345')\n"
            f"project = Project.objects.create(name={name!r}, owner=user)\n"
            "key = APIKey.objects.create_key(user=user, scopes='read write')[1]\n"
            "print(project.pk, key)\n",
        )
        project, key = out.strip().splitlines()[-1].split()
        return cls(server, key, int(project))

    def new_keys(self, count: int) -> list[str]:
        """``count`` more keys of the user, never used yet: each one's first use records
        it (an UPDATE once the answer is sent, the work that once left a connection open)."""
        out = manage(
            self.server.env,
            "shell",
            "-c",
            "from mcp_endpoint.models import APIKey\n"
            "from project.tracker.models import Project\n"
            f"owner = Project.objects.get(pk={self.project}).owner\n"
            f"for _ in range({count}):\n"
            "    print(APIKey.objects.create_key(user=owner, scopes='read write')[1])\n",
        )
        return out.strip().splitlines()[-count:]

    def tasks(self) -> int:
        out = manage(
            self.server.env,
            "shell",
            "-c",
            "from project.tracker.models import Task\n"
            f"print(Task.objects.filter(project_id={self.project}).count())\n",
        )
        return int(out.strip().splitlines()[-1])

    def send(self, path: str, body: Any = None) -> tuple[int, Any]:
        """GET ``path``, or POST ``body`` as JSON; the status and the decoded answer."""
        headers = {"Authorization": f"Bearer {self.key}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
            if path == "/mcp":
                headers["Accept"] = "application/json, text/event-stream"
        request = urllib.request.Request(self.server.url(path), data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, decode(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, decode(exc.read())
        except OSError as exc:
            return TRANSPORT_ERROR, repr(exc)

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[int, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": secrets.token_hex(4),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        return self.send("/mcp", message)


def decode(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode(errors="replace")


def tool_succeeded(status: int, answer: Any) -> bool:
    return (
        status == 200
        and isinstance(answer, dict)
        and "result" in answer
        and not answer["result"].get("isError")
    )


def run_all(clients: int, count: int, one: Any) -> list[Any]:
    """``one(index)`` for ``range(count)`` on ``clients`` threads, started together."""
    start = threading.Barrier(clients)

    def first(index: int) -> Any:
        if index < clients:
            start.wait(timeout=60)
        return one(index)

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(first, range(count)))


# -- SQLite: concurrent writes wait for the lock -----------------------------------------------


@pytest.mark.once  # SQLite in every run: the PostgreSQL run has nothing to add
def test_concurrent_creates_on_sqlite_all_succeed(tmp_path: Path) -> None:
    # SQLite whatever the run: DATABASE_URL emptied, the server's file in tmp_path.
    env = {"DATABASE_URL": "", "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    with LiveServer(tmp_path, workers=2, env=env) as server:
        host = Host.on(server)
        answers = run_all(
            40, 40, lambda i: host.call("create_task", {"project": host.project, "title": f"T{i}"})
        )
        assert [tool_succeeded(*a) for a in answers] == [True] * 40, answers
        assert not any("locked" in json.dumps(a[1]) for a in answers)
        ids = {a[1]["result"]["structuredContent"]["id"] for a in answers}
        assert len(ids) == 40
        assert host.tasks() == 40
        assert "database is locked" not in server.log_path.read_text(errors="replace")


# -- PostgreSQL under ASGI: connections are not held per thread ----------------------------------


@pytest.fixture
def limited_database_url() -> Iterator[str]:
    """A database owned by a fresh role that may hold at most 30 connections; both dropped
    afterwards."""
    url = require("DATABASE_URL", "needs DATABASE_URL (PostgreSQL)")
    import psycopg
    from psycopg import sql

    role = f"mcp_limited_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN CREATEDB CONNECTION LIMIT 30").format(
                sql.Identifier(role)
            )
        )
        admin.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(role), sql.Identifier(role)
            )
        )
    parts = urlsplit(url)
    netloc = f"{role}@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    try:
        yield urlunsplit(parts._replace(netloc=netloc, path=f"/{role}"))
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            # The live server's own database, created by the role, is dropped at its stop;
            # anything left behind by a failed start goes with the role's other objects.
            leftovers = admin.execute(
                "SELECT datname FROM pg_database d JOIN pg_roles r ON d.datdba = r.oid"
                " WHERE r.rolname = %s",
                (role,),
            ).fetchall()
            for (name,) in leftovers:
                admin.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


def test_uvicorn_stays_within_a_30_connection_limit(
    tmp_path: Path, limited_database_url: str
) -> None:
    stays_within_a_connection_limit(tmp_path, limited_database_url, requests=160)


def stays_within_a_connection_limit(tmp_path: Path, database_url: str, requests: int) -> None:
    """``requests`` (a multiple of 4) on 16 clients to uvicorn with 4 workers, whose role may
    hold 30 connections: every one answered."""
    env = {"DATABASE_URL": database_url}
    with UvicornServer(tmp_path, workers=4, env=env) as server:
        host = Host.on(server)

        def one(index: int) -> tuple[int, Any]:
            kind = index % 4
            if kind == 0:
                return host.call("create_task", {"project": host.project, "title": f"A{index}"})
            if kind == 1:
                return host.call("list_tasks", {})
            if kind == 2:
                return host.send("/api/tasks/")
            return host.send("/api/projects/")

        answers = run_all(16, requests, one)
        assert Counter(status for status, _ in answers) == Counter({200: requests}), [
            a for a in answers if a[0] != 200
        ][:5]
        assert all(tool_succeeded(*a) for a in answers[0::4] + answers[1::4])
        assert host.tasks() == requests // 4


# -- PostgreSQL: no connection outlives its request ----------------------------------------------


def open_connections(server: LiveServer) -> int:
    """The server's connections to its database, as PostgreSQL counts them."""
    import psycopg

    origin = os.environ["DATABASE_URL"]
    name = urlsplit(server.env["DATABASE_URL"]).path.lstrip("/")
    with psycopg.connect(origin, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (name,)
        ).fetchone()
    assert row is not None
    return int(row[0])


def settled_connections(server: LiveServer, at_most: int) -> int:
    """The server's open connections once they are ``at_most`` or fewer, or after 10 s of
    more: a server closes a request's connections just after the client has its answer."""
    deadline = time.monotonic() + 10
    count = open_connections(server)
    while count > at_most and time.monotonic() < deadline:
        time.sleep(0.1)
        count = open_connections(server)
    return count


SERVER_CLASSES = {"gunicorn": LiveServer, "uvicorn": UvicornServer}


@pytest.mark.parametrize(
    ("server_kind", "max_age", "kept"),
    [("uvicorn", "0", 0), ("gunicorn", "0", 0), ("gunicorn", "60", 4)],
)
def test_no_connection_outlives_its_request(
    tmp_path: Path, server_kind: str, max_age: str, kept: int
) -> None:
    """Sequential requests, each with a key used for the first time, to ``/mcp`` (plain
    JSON answers, and a tool call, which runs in a thread of the call pool) and to the REST
    API: with ``CONN_MAX_AGE = 0`` nothing stays open afterwards; with persistent
    connections at most one per thread that served them: 2 workers, each with its request
    thread and one of the call pool."""
    require("DATABASE_URL", "needs DATABASE_URL (PostgreSQL)")
    env = {"DEMO_CONN_MAX_AGE": max_age}
    with SERVER_CLASSES[server_kind](tmp_path, workers=2, env=env) as server:
        host = Host.on(server)
        tools_list = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        # Every request is a key's first use, the last in its worker too.
        for index, key in enumerate(host.new_keys(9)):
            host.key = key
            if index % 3 == 0:
                assert host.send("/mcp", tools_list)[0] == 200
            elif index % 3 == 1:
                assert tool_succeeded(*host.call("list_tasks", {}))
            else:
                assert host.send("/api/tasks/")[0] == 200
        assert settled_connections(server, kept) <= kept, server.log_tail()


def open_session_stream(host: Host, uri: str) -> http.client.HTTPConnection:
    """A legacy session subscribed to ``uri``, and its ``GET`` stream, sent."""
    auth = {"Authorization": f"Bearer {host.key}", "Content-Type": "application/json"}
    accept = {"Accept": "application/json, text/event-stream"}
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}}
    initialize["clientInfo"] = {"name": "tests", "version": "1"}
    session: dict[str, str] = {"MCP-Protocol-Version": "2025-11-25"}
    for method, params in [
        ("initialize", initialize),
        ("notifications/initialized", None),
        ("resources/subscribe", {"uri": uri}),
    ]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message.update(id=method, params=params)
        request = urllib.request.Request(
            host.server.url("/mcp"), json.dumps(message).encode(), {**auth, **accept, **session}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status in {200, 202}, response.read()
            session.setdefault("Mcp-Session-Id", response.headers["Mcp-Session-Id"])
    stream = http.client.HTTPConnection(HOST, host.server.port, timeout=5)
    stream.request("GET", "/mcp", headers={**auth, **session, "Accept": "text/event-stream"})
    return stream


def open_listen_stream(host: Host, uri: str) -> http.client.HTTPConnection:
    """A 2026-07-28 ``subscriptions/listen`` stream for ``uri``, sent."""
    message, headers = listen_message([uri])
    stream = http.client.HTTPConnection(HOST, host.server.port, timeout=5)
    stream.request("POST", "/mcp", body=json.dumps(message), headers={
        **headers, "Content-Type": "application/json",
        "Authorization": f"Bearer {host.key}"})  # fmt: skip
    return stream


def next_update(response: http.client.HTTPResponse) -> dict[str, Any] | None:
    """The stream's next resource update, or None when none comes within its timeout."""
    try:
        while line := response.readline():
            if line.startswith(b"data:") and b"resources/updated" in line:
                message: dict[str, Any] = json.loads(line[5:])
                return message
    except TimeoutError:
        pass
    return None


@pytest.mark.parametrize("open_stream", [open_session_stream, open_listen_stream])
def test_an_open_stream_holds_no_connection_between_its_updates(
    tmp_path: Path, open_stream: Any
) -> None:
    """Under ASGI a resource stream stays open until the client leaves; with
    ``CONN_MAX_AGE = 0`` neither the request that opened it nor the read that decides
    each update keeps a connection while it waits."""
    require("DATABASE_URL", "needs DATABASE_URL (PostgreSQL)")
    require("REDIS_URL", "needs REDIS_URL: updates travel through Redis")
    env = {"CACHE_KEY_PREFIX": f"mcp_conn_{secrets.token_hex(4)}", "DEMO_MCP_SESSIONS": "1"}
    with UvicornServer(tmp_path, workers=1, env=env) as server:
        host = Host.on(server)
        status, answer = host.send("/api/tasks/", {"project": host.project, "title": "Watched"})
        assert status == 201, answer
        task = answer["id"]
        uri = f"tracker://projects/{host.project}/board"
        stream = open_stream(host, uri)
        try:
            response = stream.getresponse()
            assert response.status == 200
            heard = None
            for attempt in range(10):  # the stream may still be joining the broker
                assert patch_task(server, host.key, task, f"Renamed {attempt}") == 200
                heard = next_update(response)
                if heard is not None:
                    break
            assert heard is not None and heard["params"]["uri"] == uri, server.log_tail()
            assert settled_connections(server, 0) == 0
        finally:
            stream.close()


# -- The load test: PostgreSQL, Redis, gunicorn with 4 workers --------------------------------

WORKERS = 4
CLIENTS = 16


def test_mixed_mcp_and_rest_load(tmp_path: Path) -> None:
    # The user's budget of work (tool calls and REST requests) per day: 200 of the 250
    # requests are work, so the last 80 or so meet the limit.
    mixed_load(tmp_path, requests=250, user_rate=120)


def mixed_load(tmp_path: Path, requests: int, user_rate: int) -> None:
    """``requests`` mixed requests on :data:`CLIENTS` clients to gunicorn with
    :data:`WORKERS` workers, the user allowed ``user_rate`` a day (fewer than the four in
    five requests that are work)."""
    require("DATABASE_URL", "needs DATABASE_URL (PostgreSQL)")
    require("REDIS_URL", "needs REDIS_URL: the shared limit needs an atomic shared cache")
    env = {
        "CACHE_KEY_PREFIX": f"mcp_load_{secrets.token_hex(4)}",
        "DEMO_USER_THROTTLE": f"{user_rate}/day",
        # Only the work is limited here: tools/list goes through at any pace.
        "DEMO_PROTOCOL_RATE": "1000000/minute",
    }
    with LiveServer(tmp_path, workers=WORKERS, env=env) as server:
        host = Host.on(server)
        tools_list = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

        def one(index: int) -> tuple[str, int, Any]:
            kind = ("create", "list", "tools_list", "get", "post")[index % 5]
            if kind == "create":
                title = f"M{index}"
                status, answer = host.call("create_task", {"project": host.project, "title": title})
            elif kind == "list":
                status, answer = host.call("list_tasks", {})
            elif kind == "tools_list":
                status, answer = host.send("/mcp", tools_list)
            elif kind == "get":
                status, answer = host.send(f"/api/tasks/?project={host.project}")
            else:
                body = {"project": host.project, "title": f"R{index}"}
                status, answer = host.send("/api/tasks/", body)
            return kind, status, answer

        day = int(time.time() // 86400)
        results = run_all(CLIENTS, requests, one)
        windows = int(time.time() // 86400) - day + 1  # the count starts again at midnight UTC
        stored = host.tasks()

    errors = [r for r in results if r[1] == TRANSPORT_ERROR or r[1] >= 500]
    assert errors == [], errors[:5]
    statuses = Counter((kind, status) for kind, status, _ in results)
    expected_ok = {"create": 200, "list": 200, "tools_list": 200, "get": 200, "post": 201}
    for kind, status in statuses:
        assert status in {expected_ok[kind], 429}, (kind, status, statuses)
    # tools/list is a protocol message: it never spends the user's budget.
    assert statuses[("tools_list", 429)] == 0
    # Successful tool calls are results without isError; throttled ones are HTTP 429.
    for kind, status, answer in results:
        if kind in {"create", "list"} and status == 200:
            assert tool_succeeded(status, answer), answer
    created = statuses[("create", 200)] + statuses[("post", 201)]
    assert stored == created
    served = sum(
        n for (kind, status), n in statuses.items() if kind != "tools_list" and status != 429
    )
    assert user_rate <= served <= windows * user_rate + WORKERS, statuses
