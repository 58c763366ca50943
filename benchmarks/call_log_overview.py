"""How long the call log's overview takes on a large log.

    .venv/bin/python benchmarks/call_log_overview.py [--rows 1000000] [--repeat 3]

In one process: a fresh database (a SQLite file in a temporary folder, or, with
``DATABASE_URL`` set, a new PostgreSQL database beside the one it names, dropped at the
end) is migrated and filled by the database itself with ``--rows`` tool calls spread over
90 days (20 tools, 50 users, 30 API keys and 5 OAuth apps, 12 clients, about 4 % errors).
Then the overview page is fetched through Django's test client as a superuser (every row)
and as a staff member (their own rows): first once for 90 days, which counts the closed
hours (timed apart), then for each period, ``--repeat`` times; the table gives the rows in
the period and the median time of the page. The run stops by itself: the
exit status is 1 when a page's median is over ``--target`` seconds (default 5).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOOLS = 20
USERS = 50
CLIENTS = (
    "Claude Code",
    "Cursor",
    "ChatGPT",
    "claude-ai",
    "VS Code",
    "Windsurf",
    "Zed",
    "Goose",
    "Cline",
    "Continue",
    "mcp-inspector",
    "",
)
SECONDS = 90 * 86400


def fill(rows: int) -> float:
    """Insert ``rows`` calls with one INSERT ... SELECT; the seconds it took."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from mcp_endpoint.models import ToolCall

    User = get_user_model()
    User.objects.bulk_create(User(username=f"user{n}") for n in range(USERS))
    first = User.objects.order_by("pk").values_list("pk", flat=True)[0]
    table = connection.ops.quote_name(ToolCall._meta.db_table)
    clients = " ".join(f"WHEN {index} THEN '{name}'" for index, name in enumerate(CLIENTS))
    columns = (
        "created, endpoint, tool, user_id, credential, client_name, client_version, "
        "user_agent, outcome, error, duration_ms, arguments"
    )
    # Durations: mostly short, a long tail (a tenth of the calls 5 to 50 times slower).
    values = f"""
        'mcp',
        'tool_' || (i % {TOOLS}),
        {first} + (i % {USERS}),
        CASE WHEN i % 7 = 0 THEN 'OAuth “App ' || (i % 5) || '” (client c' || (i % 5) || ')'
             ELSE 'API key “key ' || (i % 30) || '” (mcp_' || (10000000 + i % 30) || ')' END,
        CASE (i % {len(CLIENTS)}) {clients} END,
        '1.0', '',
        CASE WHEN i % 37 = 0 THEN 'not_found' WHEN i % 101 = 0 THEN 'invalid_arguments'
             WHEN i % 499 = 0 THEN 'internal_error' ELSE 'ok' END,
        '',
        ((i * 7919) % 1000) / 10.0 * (CASE WHEN i % 10 = 0 THEN 20 ELSE 1 END),
        '{{}}'
    """
    started = time.perf_counter()
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT "
                f"now() - make_interval(secs => (i * 7907) % {SECONDS}), {values} "
                f"FROM generate_series(1::bigint, {rows}) AS i"
            )
            cursor.execute(f"ANALYZE {table}")
        else:
            cursor.execute(
                f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                f"WHERE i < {rows}) INSERT INTO {table} ({columns}) SELECT "
                f"strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || ((i * 7907) % {SECONDS}) "
                f"|| ' seconds'), {values} FROM n"
            )
            cursor.execute("ANALYZE")
    return time.perf_counter() - started


def measure(client: Any, period: str, repeat: int) -> tuple[int, float]:
    times = []
    calls = 0
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get("/admin/mcp_endpoint/toolcall/overview/", {"period": period})
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, response.status_code
        calls = response.context["figures"].calls
    return calls, statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=5.0)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="mcp-overview-bench-")
    own_database = None
    if os.environ.get("DATABASE_URL"):
        from tests.live_server import create_database

        origin = os.environ["DATABASE_URL"]
        os.environ["DATABASE_URL"] = own_database = create_database(origin)
    else:
        os.environ["SQLITE_PATH"] = str(Path(workdir) / "db.sqlite3")
    os.environ.setdefault("CACHE_DIR", str(Path(workdir) / "cache"))
    os.environ["DJANGO_SETTINGS_MODULE"] = "project.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    failed = False
    try:
        settings.ALLOWED_HOSTS = ["*"]
        setup_test_environment()
        call_command("migrate", verbosity=0)
        seconds = fill(args.rows)
        print(f"{connection.vendor}: {args.rows:,} rows inserted in {seconds:.1f} s")
        User = get_user_model()
        admin = User.objects.create_superuser("bench-admin", "a@example.com", "pw")
        staff = User.objects.get(username="user3")
        staff.is_staff = True
        staff.save()
        staff.user_permissions.set(Permission.objects.filter(codename="view_toolcall"))
        clients = {}
        for who, user in (("superuser", admin), ("staff", staff)):
            clients[who] = Client()
            clients[who].force_login(user)
            # The first read of 90 days counts their closed hours: once, and timed apart.
            calls, seconds = measure(clients[who], "90d", 1)
            print(f"{who}: first read of 90 days ({calls:,} rows), counting them: {seconds:.2f} s")
        print(f"{'who':<10} {'period':<6} {'rows':>10} {'median s':>9}")
        for who, client in clients.items():
            for period in ("1d", "7d", "30d", "90d"):
                calls, median = measure(client, period, args.repeat)
                over = median > args.target
                failed = failed or over
                mark = "  OVER TARGET" if over else ""
                print(f"{who:<10} {period:<6} {calls:>10,} {median:>9.2f}{mark}")
    finally:
        connection.close()
        if own_database is not None:
            from tests.live_server import drop_database

            drop_database(own_database, origin)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
