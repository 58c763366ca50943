"""What holds for every host app in ``tests/hosts/`` at once, whichever hosts exist.

- ``manage.py check`` and ``migrate`` succeed on an empty database with every host app
  installed, PostgreSQL included (where a query of a missing table is an error at once):
  the system checks never read the database, though host serializers do while their
  fields are built.
- Every tool of every host has input and output schemas valid under JSON Schema 2020-12.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from mcp_endpoint.models import APIKey
from mcp_endpoint.schema import has_ref_or_type_array, metaschema_errors
from tests.conftest import MCPClient
from tests.hosts import host_apps, host_endpoints, host_names
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


@pytest.mark.django_db
def test_every_schema_of_every_host_is_valid_json_schema_2020_12() -> None:
    tools = 0
    for host, endpoints in host_endpoints().items():
        assert endpoints, f"the {host} host makes no endpoint"
        for endpoint in endpoints:
            for tool in endpoint.tools:
                # A host's tools all build: none is left out of tools/list.
                assert tool.unavailable() is None, (host, tool.name, tool.unavailable())
                entry = tool.describe()
                for key in ("inputSchema", "outputSchema"):
                    schema = entry.get(key)
                    if schema is None:
                        continue
                    assert metaschema_errors(schema) == [], (host, tool.name, key)
                    assert not has_ref_or_type_array(schema), (host, tool.name, key)
                tools += 1
    assert tools >= 51  # the inventory's 42 and the phrasebook's 9, at least


def tools_list_bytes(client: Client, url: str, header: str) -> tuple[int, list[dict[str, Any]]]:
    mcp = MCPClient(client, url)
    mcp.headers = lambda extra=None: {"Authorization": header, **(extra or {})}  # type: ignore[method-assign]
    tools = mcp.result("tools/list")["tools"]
    return len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")).encode()), tools


@pytest.mark.django_db
def test_six_hundred_languages_keep_nine_tools_under_64_kb(client: Client, alice: Any) -> None:
    _, key = APIKey.objects.create_key(user=alice, scopes="read write", name="size")
    size, tools = tools_list_bytes(client, "/phrasebook/mcp", f"Bearer {key}")
    assert len(tools) == 9
    assert size <= 64 * 1024, size
    by_name = {t["name"]: t for t in tools}
    listing = json.dumps(by_name["create_phrase"]["inputSchema"])
    assert listing.count("lang599") == 1  # the enum, once; not its generated description
    assert "Language number 599" not in listing
    for tool in tools:
        assert "lang599" not in json.dumps(tool.get("outputSchema"))
