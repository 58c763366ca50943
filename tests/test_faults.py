"""``benchmarks/faults.py`` at a tiny size, so that the fault-injection load run cannot rot.

The full run (5,000 requests per run, five runs) is a benchmark; here its proxy is checked
against a loopback echo server, and one run of 60 requests with a one-second cut of
PostgreSQL under gunicorn goes through the whole machinery: the proxies, the demo on a
database of its own, the load, the cut, the count against the database.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from benchmarks.faults import DEFAULT_DATABASE_URL, Options, run
from tests.live_server import HOST, TcpProxy, missing, require_redis

pytestmark = pytest.mark.e2e


def require_postgres() -> str:
    """The PostgreSQL the run creates its database beside: ``DATABASE_URL`` in the
    PostgreSQL run, the local default in the SQLite run; a skip (a failure under CI) when
    it does not answer."""
    import psycopg

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        url = DEFAULT_DATABASE_URL
    try:
        psycopg.connect(url, connect_timeout=2).close()
    except psycopg.Error as exc:
        missing(f"no PostgreSQL at {url} ({exc})")
    return url


def echo_server() -> tuple[socket.socket, threading.Thread]:
    """A loopback server that sends back what it reads, one thread per connection."""
    listener = socket.create_server((HOST, 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return  # the test closed the listener
            threading.Thread(target=echo, args=(connection,), daemon=True).start()

    def echo(connection: socket.socket) -> None:
        with connection:
            try:
                while data := connection.recv(1024):
                    connection.sendall(data)
            except OSError:
                return  # the proxy cut the connection

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return listener, thread


def test_a_cut_closes_connections_and_refuses_new_ones_until_restored() -> None:
    listener, _ = echo_server()
    try:
        with TcpProxy(listener.getsockname()[:2]) as proxy:
            before = socket.create_connection((HOST, proxy.port), timeout=5)
            before.sendall(b"ping")
            assert before.recv(4) == b"ping"

            assert proxy.cut() == 1
            assert before.recv(4) == b""  # closed, not left hanging
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((HOST, proxy.port), timeout=5)

            proxy.restore()
            with socket.create_connection((HOST, proxy.port), timeout=5) as after:
                after.sendall(b"back")
                assert after.recv(4) == b"back"
            before.close()
    finally:
        listener.close()


def test_a_short_database_cut_under_load_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    options = Options(
        requests=60,
        clients=4,
        cut_seconds=1,
        cut_at=0.3,
        hang_after=20,
        max_seconds=40,
        task_seconds=2,
        database_url=require_postgres(),
        redis_url=require_redis(),
    )
    report = run("gunicorn", "postgres", options, tmp_path)

    assert report.requests == 60, report
    assert report.cut, report  # the cut happened, and ended
    assert report.cut_connections > 0, report
    assert report.correct_503 > 0, report.statuses
    assert report.writes_succeeded > 0, report
    assert report.tasks_accepted > 0, report
    assert (report.lost, report.duplicated, report.hung) == (0, 0, 0), report.samples
    # /mcp answers an outage with a correct 503; the demo's REST views are the host's.
    assert report.wrong_5xx_mcp == 0, report.samples
    assert report.recovered_after is not None, report
