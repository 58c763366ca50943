"""Outages, made real: a server whose Redis or PostgreSQL is not there.

The host runs under gunicorn with one worker, so that "one log line per outage per worker"
is one line. The cache outage is a Redis URL on a port nothing listens on, then a
``redis-server`` this test starts on that port; the database outage is the server's own
PostgreSQL database renamed under it, then renamed back. Each answer during the outage is
503 with ``Retry-After`` and a JSON-RPC error carrying the request's id; the log has one
line about it and no traceback; the first request after the service is back succeeds,
without a restart.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.live_server import HOST, LiveServer, free_port, manage

pytestmark = pytest.mark.e2e

REQUESTS = 12
# A throwaway Redis: loopback only, nothing written to disk.
REDIS_ARGS = ["--bind", HOST, "--save", "", "--appendonly", "no"]


def post(url: str, key: str, request_id: int) -> tuple[int, dict[str, str], dict[str, Any]]:
    # A tool call: it runs the host's throttles, which count in the cache on every call.
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "list_projects", "arguments": {}},
    }
    body = json.dumps(message).encode()
    request = urllib.request.Request(
        url,
        data=body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def key_for_alice(env: dict[str, str]) -> str:
    manage(env, "seed_demo")
    out = manage(env, "mcp_key", "create", "--user", "alice", "--scopes", "read write")
    return out.strip().splitlines()[-1]


def assert_outage_answers(server: LiveServer, key: str, kind: str) -> None:
    for request_id in range(1, REQUESTS + 1):
        status, headers, body = post(server.url("/mcp"), key, request_id)
        assert status == 503, body
        assert headers.get("Retry-After") == "5"
        assert body["id"] == request_id
        assert body["error"]["code"] == -32603
        assert body["error"]["data"] == {"unavailable": kind, "retry_after": 5}
        assert kind in body["error"]["message"]
    # The host's REST API, through the app's middleware, answers the outage the same way.
    request = urllib.request.Request(
        server.url("/api/projects/"), headers={"Authorization": f"Bearer {key}"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 503
    assert refused.value.headers.get("Retry-After") == "5"
    assert kind in json.loads(refused.value.read())["detail"]
    log = server.log_path.read_text(errors="replace")
    assert log.count(f"The {kind} is unreachable") == 1, log[-3000:]
    assert "Traceback" not in log, log[-3000:]


# -- the cache ---------------------------------------------------------------------------------


@pytest.fixture
def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but redis-server is not installed")
        pytest.skip("redis-server is not installed")
    return found


def test_cache_outage_is_503_and_recovers(tmp_path: Path, redis_server_binary: str) -> None:
    port = free_port()
    env = {
        "REDIS_URL": f"redis://{HOST}:{port}/0",
        "CACHE_KEY_PREFIX": f"outage_{secrets.token_hex(4)}",
        "DATABASE_URL": "",
    }
    with LiveServer(tmp_path, workers=1, env=env) as server:
        key = key_for_alice(server.env)
        assert_outage_answers(server, key, "cache")
        redis = subprocess.Popen(
            [redis_server_binary, *REDIS_ARGS, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            status, _, body = wait_for_answer(server, key)
            assert status == 200, body
            assert body["id"] == 99
            assert body["result"]["isError"] is False
        finally:
            redis.terminate()
            redis.wait(timeout=10)


@pytest.mark.backends
@pytest.mark.parametrize(
    "backend",
    [
        "django.core.cache.backends.redis.RedisCache",
        # The app's subclass and a host's subclass of it: their commands are refused in
        # Django's module, not in theirs.
        "mcp_endpoint.redis_cache.RedisCache",
        "tests.cache.OwnPrefixRedisCache",
    ],
)
def test_a_refused_cache_connection_is_an_outage_though_the_cache_is_back(
    settings: Any, redis_server_binary: str, backend: str
) -> None:
    # At the end of a cache outage, a request's command can be refused while the probe
    # that follows already succeeds (Redis binds its port as it starts): the refusal is the
    # outage's, answered 503, not a bug answered 500.
    from django.core.cache import caches

    from mcp_endpoint import outages

    port = free_port()
    settings.CACHES = {
        **settings.CACHES,
        "outage": {
            "BACKEND": backend,
            "LOCATION": f"redis://{HOST}:{port}/0",
        },
    }
    cache = caches["outage"]
    with pytest.raises(Exception) as refused:
        cache.incr("throttle-counter")
    redis = subprocess.Popen(
        [redis_server_binary, *REDIS_ARGS, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if outages.caches_reachable():
                break
            time.sleep(0.1)  # Redis is still starting; this only waits, it asserts nothing
        assert outages.caches_reachable()
        assert outages.diagnose(refused.value) == outages.CACHE
    finally:
        redis.terminate()
        redis.wait(timeout=10)


@pytest.mark.backends
def test_a_refused_connection_of_a_tools_own_is_no_cache_outage() -> None:
    # A tool that calls another service and is refused: no cache backend raised it, and
    # every cache answers, so it is the tool's error.
    import socket

    from mcp_endpoint import outages

    with pytest.raises(ConnectionRefusedError) as refused:
        socket.create_connection((HOST, free_port()), timeout=5)
    assert outages.caches_reachable()
    assert outages.diagnose(refused.value) is None


def wait_for_answer(server: LiveServer, key: str) -> tuple[int, dict[str, str], dict[str, Any]]:
    """The first answer that is not a 503, once the service has been started again."""
    for _ in range(100):
        answer = post(server.url("/mcp"), key, 99)
        if answer[0] != 503:
            return answer
        time.sleep(0.1)  # the service is still starting; this only waits, it asserts nothing
    return answer


# -- the database --------------------------------------------------------------------------------


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("the database outage needs PostgreSQL (DATABASE_URL)")
    return url


def rename_database(url: str, new_name: str) -> str:
    """Rename the database ``url`` names (ending its connections first); the new URL."""
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    old_name = parts.path.lstrip("/")
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as admin:
        for _ in range(50):
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [old_name],
            )
            try:
                admin.execute(
                    sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                        sql.Identifier(old_name), sql.Identifier(new_name)
                    )
                )
                break
            except psycopg.errors.ObjectInUse:
                continue  # a worker reconnected in between: end it again
    return urlunsplit(parts._replace(path=f"/{new_name}"))


@pytest.fixture
def database_server(tmp_path: Path, postgres_url: str) -> Iterator[LiveServer]:
    env = {"CACHE_KEY_PREFIX": f"outage_{secrets.token_hex(4)}"}
    with LiveServer(tmp_path, workers=1, env=env) as server:
        yield server


def test_database_outage_is_503_and_recovers(database_server: LiveServer) -> None:
    server = database_server
    key = key_for_alice(server.env)
    assert post(server.url("/mcp"), key, 1)[0] == 200
    url = server.env["DATABASE_URL"]
    away = rename_database(url, urlsplit(url).path.lstrip("/") + "_away")
    try:
        assert_outage_answers(server, key, "database")
    finally:
        rename_database(away, urlsplit(url).path.lstrip("/"))
    status, _, body = post(server.url("/mcp"), key, 99)
    assert status == 200, body
    assert body["result"]["isError"] is False


def end_connections(url: str) -> int:
    """End every connection to the database ``url`` names, as an outage does; how many."""
    import psycopg

    parts = urlsplit(url)
    admin_url = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [parts.path.lstrip("/")],
        ).fetchall()
    return len(rows)


def test_a_kept_connection_an_outage_cut_is_503_not_a_tool_error(
    database_server: LiveServer,
) -> None:
    # The worker keeps its connection between requests (the demo's CONN_MAX_AGE): the first
    # request after the database comes back finds it dead while a fresh one succeeds. That
    # is the outage's last answer, not a bug of the tool.
    server = database_server
    key = key_for_alice(server.env)
    status, _, body = post(server.url("/mcp"), key, 1)
    assert status == 200 and body["result"]["isError"] is False, body
    # The first request records the key's use after its answer is sent; the one worker
    # answers this second one (which records nothing: a use a minute old is recent) only
    # once that is done, so the cut below finds the worker idle, not in that write.
    assert post(server.url("/mcp"), key, 11)[0] == 200
    assert end_connections(server.env["DATABASE_URL"]) >= 1
    status, headers, body = post(server.url("/mcp"), key, 2)
    assert status == 503, body
    assert headers.get("Retry-After") == "5"
    assert body["error"]["data"] == {"unavailable": "database", "retry_after": 5}
    status, _, body = post(server.url("/mcp"), key, 3)
    assert status == 200 and body["result"]["isError"] is False, body
    assert "Traceback" not in server.log_path.read_text(errors="replace")


def refused_connection_error() -> BaseException:
    """What Django raises when the database refuses a new connection: a real one, to a
    loopback port nothing listens on."""
    from django.db import connections

    probe = connections.create_connection("default")
    probe.settings_dict = {**probe.settings_dict, "HOST": HOST, "PORT": str(free_port())}
    with pytest.raises(Exception) as refused:
        probe.ensure_connection()
    return refused.value


@pytest.mark.django_db
def test_a_refused_connection_is_an_outage_though_a_fresh_one_succeeds(postgres_url: str) -> None:
    # At the end of a cut, a request's connection can be refused while the probe that
    # follows already succeeds: the refusal is the outage's, not a bug.
    from mcp_endpoint import outages

    assert outages.databases_reachable()
    assert outages.diagnose(refused_connection_error()) == outages.DATABASE


@pytest.mark.django_db
def test_an_error_the_database_reports_on_a_live_connection_is_no_outage(
    postgres_url: str,
) -> None:
    from django.db import OperationalError, connection

    from mcp_endpoint import outages

    with pytest.raises(OperationalError) as cancelled, connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 1")
        cursor.execute("SELECT pg_sleep(1)")
    assert getattr(cancelled.value.__cause__, "sqlstate", None) == "57014"
    assert outages.diagnose(cancelled.value) is None
