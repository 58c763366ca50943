"""What a client loads of ``tools/list`` by default, and how long it takes to serve.

    .venv/bin/python benchmarks/tools_list.py [--fetches 50]

In one process, on a fresh SQLite database (``SQLITE_PATH`` in a temporary folder), with
``tests.hosts.settings`` (the demo at ``/mcp``, the generated 200-viewset product at
``/hosts/generated/mcp``): for each endpoint and era, every page of ``tools/list`` is
fetched as a client does by default (following ``nextCursor``), through Django's WSGI
handler with an API key. The row gives the tools the endpoint has, the tools listed, the
bytes of all the answers together (the budget is 32 KiB), and the median wall time of one
whole fetch (all pages) over ``--fetches``, after one warm-up fetch that builds the
schemas. The exit status is 1 when a listing is over the budget.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BUDGET = 32 * 1024
ENDPOINTS = (("demo", "/mcp"), ("generated", "/hosts/generated/mcp"))
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def fetch_all(client: Any, path: str, key: str, era: str) -> tuple[int, int]:
    """Bytes of every tools/list answer together, and the tools listed."""
    size, tools, cursor = 0, 0, None
    # What the streamable HTTP transport has every client send (and what earns a legacy
    # client of a large product enable_toolset, see mcp_endpoint.dynamic_toolsets).
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    if era == "modern":
        headers |= {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    while True:
        params: dict[str, Any] = {"cursor": cursor} if cursor else {}
        if era == "modern":
            params["_meta"] = MODERN_META
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
        response = client.post(
            path, data=json.dumps(body), content_type="application/json", headers=headers
        )
        if response.status_code != 200:
            raise SystemExit(f"{path}: {response.status_code} {response.content[:200]!r}")
        size += len(response.content)
        result = response.json()["result"]
        tools += len(result["tools"])
        cursor = result.get("nextCursor")
        if not cursor:
            return size, tools


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fetches", type=int, default=50, help="timed fetches per row")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-tools-list-") as tmp:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.hosts.settings")
        os.environ["SQLITE_PATH"] = str(Path(tmp) / "db.sqlite3")
        os.environ.pop("DATABASE_URL", None)
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.test import Client

        from mcp_endpoint.endpoint import endpoints
        from mcp_endpoint.models import APIKey

        call_command("migrate", verbosity=0, interactive=False)
        user = get_user_model().objects.create_user("bench", "bench@example.com", "pw-bench")
        _, key = APIKey.objects.create_key(user=user, scopes="read write", name="tools list")
        client = Client()
        sizes = {e.name: len(e.tools) for e in endpoints}
        from tests.hosts.generated.urls import endpoint as generated

        sizes["generated"] = len(generated.tools)
        rows = [["endpoint", "era", "tools", "listed", "bytes loaded", "tools/list ms", ""]]
        over = False
        for name, path in ENDPOINTS:
            for era in ("legacy", "modern"):
                fetch_all(client, path, key, era)  # builds the schemas
                times = []
                for _ in range(options.fetches):
                    started = time.perf_counter()
                    size, listed = fetch_all(client, path, key, era)
                    times.append((time.perf_counter() - started) * 1000)
                fits = size <= BUDGET
                over = over or not fits
                rows.append(
                    [
                        name,
                        era,
                        str(sizes.get("mcp" if name == "demo" else name, "?")),
                        str(listed),
                        f"{size:,}",
                        f"{statistics.median(times):.2f}",
                        "ok" if fits else f"over {BUDGET:,}",
                    ]
                )
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        print("tools/list as a client fetches it by default (every page), budget 32 KiB")
        for row in rows:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
