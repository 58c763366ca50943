"""What a read's call-log row costs, written at once or spooled, in one process.

    .venv/bin/python benchmarks/call_log_spool.py [--calls 300] [--rounds 8]

The demo's ``tools/call list_tasks`` (call log on) and REST's ``GET /api/tasks/?page=1``
are sent straight to Django's WSGI handler in one process, ``--calls`` at a time, in
rounds: each round times REST, the call with its row written at once (``LOG_SPOOL_DIR``
``None``: one INSERT, in autocommit) and the call with its row spooled (the worker's file,
written in batches by its thread), in an order that turns every round. Per call: the wall
time (the database's round trips and commits included, which the CPU time misses) and this
process's CPU time (the writer thread's batches included). The medians of the rounds, and
each call's over REST's, are printed: the same figures on a machine whose speed drifts,
since the three are measured side by side. Before each timed stretch the spool is written
out, so that no batch of one stretch is paid by the next.

The database is a fresh SQLite file and the cache a file cache, or ``DATABASE_URL`` /
``REDIS_URL`` when set (migrated and seeded; the key made here is revoked at the end), as
for ``benchmarks/cpu.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MODES = ("REST", "at once", "spooled")


def child(key: str, calls: int, rounds: int, spool: str) -> int:
    import django

    django.setup()
    from django.conf import settings
    from django.test import override_settings

    from benchmarks.cpu import probes, sender
    from mcp_endpoint import callspool

    by_name = {p.name: p for p in probes()}
    rest, call = sender(by_name["rest-demo"], key), sender(by_name["list_tasks-demo"], key)
    configured = dict(settings.MCP_ENDPOINT)
    modes = {
        "REST": (rest, configured),
        "at once": (call, {**configured, "LOG_SPOOL_DIR": None}),
        "spooled": (call, {**configured, "LOG_SPOOL_DIR": spool}),
    }
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    for number in range(rounds + 1):  # the first round warms up, and is not kept
        order = MODES if number % 2 else MODES[::-1]
        for mode in order:
            send, options = modes[mode]
            with override_settings(MCP_ENDPOINT=options):
                for _ in range(10):
                    assert send() == 200
                callspool.write_spooled(spool)
                started, used = time.perf_counter(), time.process_time()
                for _ in range(calls):
                    send()
                if number:
                    wall[mode].append((time.perf_counter() - started) * 1000 / calls)
                    cpu[mode].append((time.process_time() - used) * 1000 / calls)
    callspool.close_spools()
    rest_wall, rest_cpu = statistics.median(wall["REST"]), statistics.median(cpu["REST"])
    print(f"{rounds} rounds of {calls} calls; milliseconds per call, medians of the rounds")
    print(f"{'':28} {'wall':>7} {'CPU':>7} {'REST/it (wall)':>15} {'REST/it (CPU)':>14}")
    for mode in MODES:
        w, c = statistics.median(wall[mode]), statistics.median(cpu[mode])
        label = "GET /api/tasks/?page=1" if mode == "REST" else f"list_tasks, row {mode}"
        print(f"{label:28} {w:7.3f} {c:7.3f} {rest_wall / w:15.2f} {rest_cpu / c:14.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per timed stretch")
    parser.add_argument("--rounds", type=int, default=8, help="rounds kept")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--spool", default="", help=argparse.SUPPRESS)
    parsed = parser.parse_args(argv)
    if parsed.child:
        return child(parsed.child, parsed.calls, parsed.rounds, parsed.spool)
    from benchmarks.cpu import probes, seeded_database

    with seeded_database("mcp-spool-", "spool benchmark") as (env, key, tmp):
        command = [sys.executable, __file__, "--child", key, "--spool", f"{tmp}/spool"]
        command += ["--calls", str(parsed.calls), "--rounds", str(parsed.rounds)]
        # The demo as configured, its rates out of reach, as cpu.py's demo targets.
        demo = next(p for p in probes() if p.name == "rest-demo")
        child_env = {**env, **dict(demo.env), "DJANGO_SETTINGS_MODULE": demo.settings}
        return subprocess.run(command, env=child_env, check=False).returncode


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
