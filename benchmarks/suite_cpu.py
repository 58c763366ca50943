"""Where the test suite's CPU goes: each test's wall time and the CPU the whole machine
spent while it ran (the test process and every server, command, browser and database it
started), by module and by test.

``./dev test`` runs on two cores that its runs keep busy from start to end, so the suite's
wall time follows the CPU all its processes spend, not the sum of its tests' durations
(which counts the waiting of four processes at once). This runs the suite, or the tests
its arguments select, in one process, so that the machine's busy time between a test's
start and its end is that test's: run it on a quiet machine. ``--cov`` and the other
pytest options pass through (``--cov --cov-report=`` measures as the SQLite run does).

    .venv/bin/python benchmarks/suite_cpu.py [--top N] [--out FILE] [PYTEST ARGS...]

Loaded with ``-p benchmarks.suite_cpu`` it is the pytest plugin that records the figures:
one JSON line per test (``[nodeid, wall seconds, busy CPU seconds]``) appended to the file
named by ``SUITE_CPU_OUT``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
OUT_ENV = "SUITE_CPU_OUT"


def busy_seconds() -> float:
    """CPU seconds the machine has spent on anything but idling, over every core."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:9]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[Any]:
    out = os.environ.get(OUT_ENV)
    if not out:
        return (yield)
    busy, started = busy_seconds(), time.monotonic()
    result = yield
    row = [item.nodeid, time.monotonic() - started, busy_seconds() - busy]
    with open(out, "a") as file:
        file.write(json.dumps(row) + "\n")
    return result


def report(rows: list[list[Any]], top: int) -> str:
    wall = sum(row[1] for row in rows)
    cpu = sum(row[2] for row in rows)
    lines = [f"{len(rows)} tests: {wall:.0f} s of wall time, {cpu:.0f} s of busy CPU", ""]
    modules: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for nodeid, seconds, busy in rows:
        module = modules[nodeid.split("::", 1)[0]]
        module[0] += seconds
        module[1] += busy
        module[2] += 1
    lines.append("| module | tests | wall s | CPU s | share of CPU |")
    lines.append("| --- | --- | --- | --- | --- |")
    for name, (seconds, busy, count) in sorted(modules.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"| {name} | {count} | {seconds:.1f} | {busy:.1f} | {busy / cpu:.1%} |")
    lines += ["", "| test | wall s | CPU s |", "| --- | --- | --- |"]
    for nodeid, seconds, busy in sorted(rows, key=lambda row: -row[2])[:top]:
        lines.append(f"| {nodeid} | {seconds:.1f} | {busy:.1f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--top", type=int, default=30, help="rows of each table (30)")
    parser.add_argument("--out", help="keep the per-test lines in this file")
    options, pytest_args = parser.parse_known_args()
    out = options.out or tempfile.mkstemp(prefix="suite-cpu-", suffix=".jsonl")[1]
    Path(out).write_text("")
    env = {**os.environ, OUT_ENV: out, "PYTHONPATH": str(ROOT)}
    # One process, in the collection's order: a test's busy time is then its own.
    command = [sys.executable, "-m", "pytest", "-p", "benchmarks.suite_cpu"]
    command += ["-p", "no:randomly", "-q", *pytest_args]
    status = subprocess.run(command, cwd=ROOT, env=env, check=False).returncode
    rows = [json.loads(line) for line in Path(out).read_text().splitlines() if line]
    if rows:
        print(report(rows, options.top))
    if not options.out:
        os.unlink(out)
    return status


if __name__ == "__main__":
    sys.exit(main())
