"""What holds for every host app in ``tests/hosts/`` at once, whichever hosts exist.

- ``manage.py check`` and ``migrate`` succeed on an empty database with every host app
  installed, PostgreSQL included (where a query of a missing table is an error at once):
  the system checks never read the database, though host serializers do while their
  fields are built. Each empty database is made in the run on its own engine (SQLite in
  the SQLite run, PostgreSQL in the PostgreSQL run).
- Every tool of every host has input and output schemas valid under JSON Schema 2020-12.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client, override_settings

from mcp_endpoint.models import APIKey
from mcp_endpoint.schema import has_ref_or_type_array, metaschema_errors
from tests.conftest import MCPClient
from tests.hosts import host_apps, host_endpoints, host_names
from tests.live_server import ROOT, create_database, drop_database, server_environment

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
HOSTS = Path(__file__).resolve().parent / "hosts"


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
    env = server_environment(tmp_path, {"DJANGO_SETTINGS_MODULE": "tests.hosts.settings"})
    env.pop("DATABASE_URL", None)
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    return env


def command(env: dict[str, str], *args: str) -> str:
    """``manage.py`` with ``env``: what it printed (both streams); it must succeed."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{output}"
    return output


def assert_clean(output: str) -> None:
    """Nothing read a missing table, and this suite's large-API hosts raised no warning
    (other hosts warn on purpose: a session-only view, say)."""
    for trace in ("does not exist", "no such table", "django_content_type"):
        assert trace not in output, output
    for endpoint in ("inventory", "inventory-4.1", "phrasebook"):
        assert f"<Endpoint '{endpoint}'" not in output, output


def assert_check_and_migrate(env: dict[str, str]) -> None:
    assert_clean(command(env, "check"))
    migrated = command(env, "migrate", "--no-input")
    assert_clean(migrated)
    for app in host_apps():
        if (HOSTS / app.rsplit(".", 1)[-1] / "migrations").is_dir():  # hosts with models
            assert f"Applying {app.rsplit('.', 1)[-1]}.0001_initial" in migrated, migrated
    # Now the database exists, the checks that may read it build every schema.
    assert_clean(command(env, "check", "--database", "default"))


def test_there_are_hosts() -> None:
    assert "inventory" in host_names()


def in_the_run_of(vendor: str) -> pytest.MarkDecorator:
    """Run only in the database run whose database is ``vendor``'s: a test that makes an
    empty database of its own gains nothing from the other run's database, and its
    migrate of every host app costs 20 s of CPU there."""
    from django.db import connection

    return pytest.mark.skipif(
        connection.vendor != vendor, reason=f"runs in the run on {vendor} (its own database)"
    )


@pytest.mark.backends
@in_the_run_of("sqlite")
def test_check_and_migrate_on_an_empty_sqlite_database(tmp_path: Path) -> None:
    env = suite_environment(tmp_path, None)
    assert_check_and_migrate(env)
    with contextlib.closing(sqlite3.connect(env["SQLITE_PATH"])) as database:
        tables = database.execute("SELECT name FROM sqlite_master WHERE name = 'inventory_site'")
        assert tables.fetchall() == [("inventory_site",)]


@pytest.mark.backends
@in_the_run_of("postgresql")
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
        # Built under the host's own URL conf, as its own tests and a real deployment do.
        with override_settings(ROOT_URLCONF=f"tests.hosts.{host}.urls"):
            for endpoint in endpoints:
                for tool in endpoint.tools:
                    if tool.unavailable() is not None:
                        continue  # never listed: no schema to give a client
                    entry = tool.describe()
                    for key in ("inputSchema", "outputSchema"):
                        schema = entry.get(key)
                        if schema is None:
                            continue
                        assert metaschema_errors(schema) == [], (host, tool.name, key)
                        assert not has_ref_or_type_array(schema), (host, tool.name, key)
                    tools += 1
    assert tools >= 51  # the inventory's 42 and the phrasebook's 9, at least


@pytest.mark.django_db
@pytest.mark.urls("tests.hosts.inventory.urls")
def test_the_inventory_tools_all_build() -> None:
    from tests.hosts.inventory.urls import endpoint, legacy_endpoint

    for each in (endpoint, legacy_endpoint):
        assert [t.name for t in each.tools if t.unavailable() is not None] == []


def tools_list_bytes(client: Client, url: str, header: str) -> tuple[int, list[dict[str, Any]]]:
    mcp = MCPClient(client, url)
    mcp.headers = lambda extra=None: {"Authorization": header, **(extra or {})}  # type: ignore[method-assign]
    tools = mcp.result("tools/list")["tools"]
    return len(json.dumps(tools, ensure_ascii=False, separators=(",", ":")).encode()), tools


@pytest.mark.django_db
@pytest.mark.urls("tests.hosts.phrasebook.urls")
def test_six_hundred_languages_keep_what_a_client_loads_under_32_kb(
    client: Client, alice: Any
) -> None:
    _, key = APIKey.objects.create_key(user=alice, scopes="read write", name="size")
    size, tools = tools_list_bytes(client, "/mcp", f"Bearer {key}")
    assert size <= 32 * 1024, size
    # Nine tools with 600-value choice lists do not fit: the two discovery tools stand
    # in for them, and the nine are one search away, with their input schemas.
    assert [t["name"] for t in tools] == ["search_tools", "call_tool"]
    mcp = MCPClient(client, "/mcp")
    mcp.headers = lambda extra=None: {"Authorization": f"Bearer {key}", **(extra or {})}  # type: ignore[method-assign]
    found = mcp.result("tools/call", {"name": "search_tools", "arguments": {"limit": 20}})
    by_name = {t["name"]: t for t in found["structuredContent"]["tools"]}
    assert len(by_name) == 9
    listing = json.dumps(by_name["create_phrase"]["inputSchema"])
    assert listing.count("lang599") == 1  # the enum, once; not its generated description
    assert "Language number 599" not in listing
    for tool in by_name.values():
        assert "outputSchema" not in tool  # sent only where they earn their bytes
