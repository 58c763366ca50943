"""What holds for every host app in ``tests/hosts/`` at once, whichever hosts exist.

- ``manage.py check`` and ``migrate`` succeed on an empty database with every host app
  installed, PostgreSQL included (where a query of a missing table is an error at once):
  the system checks never read the database, though host serializers do while their
  fields are built.
- Every tool of every host has input and output schemas valid under JSON Schema 2020-12.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from tests.hosts import host_apps, host_names
from tests.live_server import create_database, drop_database, manage, server_environment

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"


def postgres_url() -> str | None:
    """A PostgreSQL server to create databases beside, or None when none answers."""
    url = os.environ.get("DATABASE_URL") or os.environ.get("PG_URL") or DEFAULT_POSTGRES
    try:
        import psycopg

        psycopg.connect(url, connect_timeout=3).close()
    except Exception:
        if os.environ.get("CI"):
            raise
        return None
    return url


def suite_environment(tmp_path: Path, database_url: str | None) -> dict[str, str]:
    env = server_environment(tmp_path, {"DJANGO_SETTINGS_MODULE": "tests.settings"})
    env.pop("DATABASE_URL", None)
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return env


def assert_check_and_migrate(env: dict[str, str]) -> None:
    checked = manage(env, "check")
    assert "System check identified no issues" in checked, checked
    migrated = manage(env, "migrate", "--no-input")
    for app in host_apps():
        assert f"Applying {app.rsplit('.', 1)[-1]}.0001_initial" in migrated, migrated
    # Now the database exists, the checks that may read it build every schema.
    deep = manage(env, "check", "--database", "default", "--fail-level", "WARNING")
    assert "System check identified no issues" in deep, deep


def test_there_are_hosts() -> None:
    assert "inventory" in host_names()


def test_check_and_migrate_on_an_empty_sqlite_database(tmp_path: Path) -> None:
    env = suite_environment(tmp_path, None)
    assert_check_and_migrate(env)
    tables = sqlite3.connect(env["SQLITE_PATH"]).execute(
        "SELECT name FROM sqlite_master WHERE name = 'inventory_site'"
    )
    assert tables.fetchall() == [("inventory_site",)]


def test_check_and_migrate_on_an_empty_postgresql_database(tmp_path: Path) -> None:
    origin = postgres_url()
    if origin is None:
        pytest.skip("no PostgreSQL server answers (CI requires one)")
    url = create_database(origin)
    try:
        assert_check_and_migrate(suite_environment(tmp_path, url))
    finally:
        drop_database(url, origin)
