"""The suite's migrated templates (tests/live_server.py): one migrate per schema in a run.

Every server a test starts gets a database of its own, copied from a template migrated
once. The test processes of a run share the run's templates; servers that differ only in
how they behave (the demo's knobs) share one; a template is published whole or not at all.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests import live_server
from tests.live_server import (
    LiveServer,
    MigratedDatabases,
    TcpProxy,
    remove_run_templates,
    run_folder,
)
from tests.test_hosts import postgres_url

# Each test picks its own databases (SQLite files, a PostgreSQL server beside the run's).
pytestmark = pytest.mark.once


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A run of its own, as a controlling process names one for its test processes."""
    name = f"t{secrets.token_hex(5)}"
    monkeypatch.setenv(live_server.RUN_ENV, name)
    yield name
    remove_run_templates(name)


# A settings module whose few apps (no django-oauth-toolkit) migrate in a second: the tests
# of how templates are shared need a schema, not the demo's.
BARE = "tests.settings_toolkit_not_installed"


def environment(workdir: Path, **extra: str) -> dict[str, str]:
    workdir.mkdir(parents=True)
    env = live_server.server_environment(workdir, extra)
    env.pop("DATABASE_URL", None)
    env["SQLITE_PATH"] = str(workdir / "db.sqlite3")
    return env


def tables(path: str | Path) -> set[str]:
    # sqlite3's own context manager commits but does not close.
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {name for (name,) in db.execute("SELECT name FROM sqlite_master")}


def test_processes_of_a_run_share_one_template_per_schema(run: str, tmp_path: Path) -> None:
    # Two test processes, each with its memory of templates; servers that differ in the
    # demo's behaviour only (sessions on or off) and in what is their own (file, cache).
    first, second = MigratedDatabases(), MigratedDatabases()
    first.sqlite(environment(tmp_path / "a", DJANGO_SETTINGS_MODULE=BARE, DEMO_MCP_SESSIONS="1"))
    second.sqlite(
        environment(
            tmp_path / "b",
            DJANGO_SETTINGS_MODULE=BARE,
            DEMO_MCP_SESSIONS="0",
            MCP_LOG_LEVEL="DEBUG",
        )
    )
    [template] = run_folder(run).glob("*.sqlite3")
    assert "mcp_endpoint_apikey" in tables(template)
    for server in ("a", "b"):
        assert tables(tmp_path / server / "db.sqlite3") == tables(template)


def test_another_settings_module_is_another_template(run: str, tmp_path: Path) -> None:
    # Whatever it installs: a settings module may choose other apps (the host apps'
    # settings do), so it is a schema of its own. This one installs fewer apps than the
    # demo (no django-oauth-toolkit), which migrate in seconds.
    databases = MigratedDatabases()
    databases.sqlite(environment(tmp_path / "demo"))
    bare = environment(tmp_path / "bare", DJANGO_SETTINGS_MODULE=BARE)
    databases.sqlite(bare)
    assert len(list(run_folder(run).glob("*.sqlite3"))) == 2
    assert "oauth2_provider_application" in tables(tmp_path / "demo" / "db.sqlite3")
    assert "oauth2_provider_application" not in tables(tmp_path / "bare" / "db.sqlite3")


def test_a_settings_module_that_installs_the_same_shares_the_template(
    run: str, tmp_path: Path
) -> None:
    # The demo behind a proxy: another settings module, the demo's apps (SAME_SCHEMA_AS).
    databases = MigratedDatabases()
    databases.sqlite(environment(tmp_path / "demo"))
    proxy = environment(tmp_path / "proxy", DJANGO_SETTINGS_MODULE="tests.settings_behind_proxy")
    databases.sqlite(proxy)
    assert len(list(run_folder(run).glob("*.sqlite3"))) == 1
    assert tables(tmp_path / "proxy" / "db.sqlite3") == tables(tmp_path / "demo" / "db.sqlite3")


# What decides the tables a migrate makes, and the rows its post-migrate handlers add.
SCHEMA_SETTINGS = """
import json, sys
from importlib import import_module

settings = import_module(sys.argv[1])
names = ["INSTALLED_APPS", "AUTH_USER_MODEL", "MIGRATION_MODULES", "DATABASE_ROUTERS",
         "DEFAULT_AUTO_FIELD"]
names += [name for name in dir(settings) if name.endswith("_MODEL")]
found = {name: getattr(settings, name, None) for name in sorted(set(names))}
found["OAUTH2_PROVIDER"] = {
    key: value for key, value in getattr(settings, "OAUTH2_PROVIDER", {}).items()
    if key.endswith("_MODEL")
}
found["DATABASES"] = {
    alias: database["ENGINE"] for alias, database in settings.DATABASES.items()
}
print(json.dumps(found, sort_keys=True))
"""


def schema_settings(module: str, tmp_path: Path) -> dict[str, object]:
    env = {
        **os.environ,
        "PYTHONPATH": str(live_server.ROOT),
        "TRACES_FILE": str(tmp_path / "traces.jsonl"),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-c", SCHEMA_SETTINGS, module],
        cwd=live_server.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize("module", sorted(live_server.SAME_SCHEMA_AS))
def test_a_module_said_to_share_a_schema_installs_what_its_base_installs(
    module: str, tmp_path: Path
) -> None:
    base = live_server.SAME_SCHEMA_AS[module]
    assert schema_settings(module, tmp_path) == schema_settings(base, tmp_path)


def schema_of(path: Path) -> dict[str, object]:
    """What a migrate leaves in a SQLite file: every table, index and trigger as SQLite
    stores its statement, the migrations recorded as applied, and the post-migrate
    handlers' rows (content types, permissions), each without the ids their order gave."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        return {
            "objects": sorted(
                db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
            ),
            "applied": sorted(db.execute("SELECT app, name FROM django_migrations").fetchall()),
            "content types": sorted(
                db.execute("SELECT app_label, model FROM django_content_type").fetchall()
            ),
            "permissions": sorted(
                db.execute(
                    "SELECT t.app_label, t.model, p.codename, p.name FROM auth_permission p"
                    " JOIN django_content_type t ON t.id = p.content_type_id"
                ).fetchall()
            ),
        }


def test_a_template_holds_what_a_plain_migrate_makes(tmp_path: Path) -> None:
    # The demo's schema, the toolkit's among its apps: the templates migrate it first
    # (live_server.MIGRATE_FIRST), a product's manage.py migrate in Django's order.
    plain, ordered = environment(tmp_path / "plain"), environment(tmp_path / "ordered")
    stdout, stderr, status = live_server.run_fresh(plain, ("migrate", "--noinput", "-v", "0"), 300)
    assert status == 0, stdout + stderr
    live_server.migrate(ordered)
    # Whole in its file, which is what a template copies: no write-ahead log left beside it.
    assert not (tmp_path / "ordered" / "db.sqlite3-wal").exists()
    plain_schema = schema_of(tmp_path / "plain" / "db.sqlite3")
    assert ("oauth2_provider", "0001_initial") in plain_schema["applied"]  # type: ignore[operator]
    assert schema_of(tmp_path / "ordered" / "db.sqlite3") == plain_schema
    # And the toolkit's migrations came first: before this app's, which Django applies first.
    with contextlib.closing(sqlite3.connect(tmp_path / "ordered" / "db.sqlite3")) as db:
        order = [app for (app,) in db.execute("SELECT app FROM django_migrations ORDER BY id")]
    assert order.index("mcp_endpoint") > max(
        i for i, app in enumerate(order) if app == "oauth2_provider"
    )


def test_a_failed_ordered_migrate_says_why(tmp_path: Path) -> None:
    env = environment(tmp_path / "broken", DJANGO_SETTINGS_MODULE="tests.no_such_settings")
    with pytest.raises(RuntimeError, match=r"migrate failed \(1\):(.|\n)*no_such_settings"):
        live_server.migrate(env)


def test_servers_starting_together_wait_for_one_migrate(run: str, tmp_path: Path) -> None:
    failures: list[BaseException] = []

    def start(name: str) -> None:
        try:
            MigratedDatabases().sqlite(environment(tmp_path / name, DJANGO_SETTINGS_MODULE=BARE))
        except BaseException as exc:  # reported by the test below
            failures.append(exc)

    starting = [threading.Thread(target=start, args=(f"s{n}",)) for n in range(3)]
    for thread in starting:
        thread.start()
    for thread in starting:
        thread.join(120)
    assert failures == []
    # One template, and no half-migrated file of another process beside it.
    assert [p.suffix for p in run_folder(run).iterdir() if p.suffix != ".lock"] == [".sqlite3"]
    for n in range(3):
        assert "mcp_endpoint_apikey" in tables(tmp_path / f"s{n}" / "db.sqlite3")


def test_a_failed_migrate_publishes_nothing(run: str, tmp_path: Path) -> None:
    env = environment(tmp_path / "broken", DJANGO_SETTINGS_MODULE="tests.no_such_settings")
    with pytest.raises(RuntimeError, match="migrate"):
        MigratedDatabases().sqlite(env)
    assert [p for p in run_folder(run).iterdir() if p.suffix != ".lock"] == []


def test_postgresql_templates_are_shared_and_removed_with_the_run(run: str, tmp_path: Path) -> None:
    origin = postgres_url()
    if origin is None:
        pytest.skip("no PostgreSQL server answers (CI requires one)")
    import psycopg

    def templates() -> list[str]:
        with psycopg.connect(origin, autocommit=True) as admin:
            rows = admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s",
                [f"{live_server.TEMPLATE_PREFIX}{run}_%"],
            )
            return [name for (name,) in rows]

    env = live_server.server_environment(
        tmp_path, {"DATABASE_URL": origin, "DJANGO_SETTINGS_MODULE": BARE}
    )
    copies = [
        MigratedDatabases().postgresql({**env, "DEMO_MCP_SESSIONS": str(n)}, origin)
        for n in range(2)
    ]
    try:
        assert len(templates()) == 1
        for copy in copies:
            with psycopg.connect(copy) as db:
                db.execute("SELECT count(*) FROM mcp_endpoint_apikey").fetchone()
    finally:
        for copy in copies:
            live_server.drop_database(copy, origin)
    remove_run_templates(run, origin)
    assert templates() == []


def test_a_postgresql_template_of_a_run_without_database_url_is_removed(
    run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite run's test that picks PostgreSQL itself makes its template under the run's
    name; the run's end finds it by the record in the run's folder, not by DATABASE_URL."""
    origin = postgres_url()
    if origin is None:
        pytest.skip("no PostgreSQL server answers (CI requires one)")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    env = live_server.server_environment(
        tmp_path, {"DATABASE_URL": origin, "DJANGO_SETTINGS_MODULE": BARE}
    )
    copy = MigratedDatabases().postgresql(env, origin)
    live_server.drop_database(copy, origin)
    assert_one_template_removed_with_the_run(run, origin)


def test_a_server_behind_a_proxy_makes_its_databases_beside_the_real_server(
    run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that reaches PostgreSQL through a TCP proxy (the fault benchmark's) has its
    database and its template made beside the server behind it: the proxy is gone by the
    time the server stops and the run ends, and what was made beside it could not be
    dropped."""
    origin = postgres_url()
    if origin is None:
        pytest.skip("no PostgreSQL server answers (CI requires one)")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    # This test's templates are its run's, not those this test process made before.
    monkeypatch.setattr(live_server, "migrated_databases", MigratedDatabases())
    target = urlsplit(origin)
    proxy = TcpProxy((target.hostname or "127.0.0.1", target.port or 5432)).start()
    server = LiveServer(
        tmp_path,
        workers=1,
        env={"DATABASE_URL": proxy.url(origin)},
        database_origin=origin,
        ready_path="/health",
    )
    try:
        server.start()
        assert urlsplit(server.env["DATABASE_URL"]).port == proxy.port
        with urllib.request.urlopen(server.url("/health"), timeout=10) as answer:
            assert answer.status == 200
        # What the server's settings reach through the proxy is its migrated copy.
        live_server.manage(server.env, "migrate", "--check")
        assert proxy.connections > 0
    finally:
        proxy.stop()
        server.stop()
    assert_one_template_removed_with_the_run(run, origin)


def assert_one_template_removed_with_the_run(run: str, origin: str) -> None:
    """The run made one PostgreSQL template beside ``origin``, and its end removes it
    without being told where (no DATABASE_URL)."""
    import psycopg

    pattern = f"{live_server.TEMPLATE_PREFIX}{run}_%"
    with psycopg.connect(origin, autocommit=True) as admin:
        query = "SELECT count(*) FROM pg_database WHERE datname LIKE %s"
        assert admin.execute(query, [pattern]).fetchone() == (1,)
        remove_run_templates(run)
        assert admin.execute(query, [pattern]).fetchone() == (0,)
