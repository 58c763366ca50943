"""Throughput of the MCP endpoint against the host's own views, measured in one run.

    .venv/bin/python benchmarks/run.py [--duration 2] [--rounds 4] [--connections 8]

Starts the demo host under gunicorn (2 sync workers, 127.0.0.1, a free port) with the
benchmark settings (``benchmarks.settings``: the host's URLs plus bench-only endpoints, no
throttles), on a fresh SQLite database in a temporary folder, migrated, seeded and given an
API key for alice. ``DATABASE_URL`` and ``REDIS_URL``, when set, are used instead (the
database is migrated and seeded, which is idempotent, and the key is revoked at the end).

Each answer is checked once before it is timed. Each comparison is a group of targets driven
by ``wrk`` with fixed threads and connections; the targets of a group run one after the
other, the order flipping every round (A B, then B A), and each round gives one ratio. The
table shows the median rates and the median of the per-round ratios, which is what the
targets are judged on, and beside it the same ratio computed from the CPU time the gunicorn
processes spent per request, which a busy machine disturbs much less (it leaves out time
spent waiting, on fsync for instance, and the database server's own CPU). Every wrk run is
bounded by ``--duration``; the whole run takes about a minute and a half; the server is
stopped by its PID. The exit status is 0 when every target is met, 1 when one is missed.

Needs ``wrk`` (Debian: ``apt-get install -y wrk``); without it the script says so and exits 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
HOST = "127.0.0.1"
SETTINGS = "benchmarks.settings"
WRK_HINT = "wrk is not installed: apt-get update && apt-get install -y wrk"


def rpc(method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":"))


def call(name: str, arguments: dict[str, Any]) -> str:
    return rpc("tools/call", {"name": name, "arguments": arguments})


@dataclass
class Target:
    """One request that wrk repeats: a GET, or a POST of a JSON-RPC body."""

    label: str
    path: str
    body: str | None = None
    authenticated: bool = True
    rates: list[float] = field(default_factory=list)
    # Server CPU time per request (ms), from the gunicorn processes' own accounting.
    cpu: list[float] = field(default_factory=list)


@dataclass
class Comparison:
    """A against B. ``kind`` "rate": A's rate / B's, at least ``target``; "time": A's time
    per request / B's (B's rate / A's), at most ``target``."""

    name: str
    a: Target
    b: Target
    target: float
    kind: str = "rate"

    def ratio(self, round_index: int) -> float:
        a, b = self.a.rates[round_index], self.b.rates[round_index]
        return a / b if self.kind == "rate" else b / a

    def ratios(self) -> list[float]:
        return [self.ratio(i) for i in range(min(len(self.a.rates), len(self.b.rates)))]

    def cpu_ratio(self) -> float:
        """The same ratio from server CPU time per request: steadier on a busy machine."""
        a, b = statistics.median(self.a.cpu), statistics.median(self.b.cpu)
        return b / a if self.kind == "rate" else a / b

    def met(self, value: float) -> bool:
        return value >= self.target if self.kind == "rate" else value <= self.target


# -- the targets and what they are compared with -------------------------------------------

REST_TASKS = Target("GET /api/tasks/?page=1", "/api/tasks/?page=1")
MCP_LIST_TASKS = Target("MCP tools/call list_tasks", "/mcp", call("list_tasks", {"page": 1}))
HEALTH = Target("GET /health (plain Django JSON view)", "/health", authenticated=False)
MCP_ADD = Target("MCP tools/call add, with key", "/bench/mcp", call("add", {"a": 2, "b": 3}))
MCP_ADD_OPEN = Target(
    "MCP tools/call add, no credential",
    "/bench/open-mcp",
    call("add", {"a": 2, "b": 3}),
    authenticated=False,
)
PING = Target("MCP ping (same endpoint)", "/bench/mcp", rpc("ping"))
TOOLS_LIST = Target("MCP tools/list (first page)", "/bench/mcp", rpc("tools/list"))
TOOLS_LIST_ALL = Target("MCP tools/list (all 501 in one page)", "/bench/mcp-all", rpc("tools/list"))

GROUPS: list[list[Target]] = [
    [MCP_LIST_TASKS, REST_TASKS],
    [MCP_ADD, MCP_ADD_OPEN, HEALTH],
    [TOOLS_LIST, TOOLS_LIST_ALL, PING],
]
COMPARISONS = [
    Comparison("1. MCP list_tasks / GET /api/tasks/", MCP_LIST_TASKS, REST_TASKS, 0.9),
    Comparison("2. MCP add, API key / GET /health", MCP_ADD, HEALTH, 0.7),
    Comparison("2b. MCP add, no credential / GET /health", MCP_ADD_OPEN, HEALTH, 0.7),
    Comparison("3. MCP tools/list, first page / ping", TOOLS_LIST, PING, 2.0, kind="time"),
    Comparison(
        "3b. MCP tools/list, all in one page / ping", TOOLS_LIST_ALL, PING, 2.0, kind="time"
    ),
]


# -- the server --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def venv_command(name: str) -> str:
    beside = Path(sys.executable).parent / name
    return str(beside if beside.exists() else ROOT / ".venv" / "bin" / name)


def environment(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = SETTINGS
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    if not env.get("DATABASE_URL"):
        env["SQLITE_PATH"] = str(workdir / "db.sqlite3")
    if not env.get("REDIS_URL"):
        env["CACHE_DIR"] = str(workdir / "cache")
    # The benchmarks post stateless requests, with no session id.
    env.setdefault("DEMO_MCP_SESSIONS", "0")
    return env


def manage(env: dict[str, str], *args: str) -> str:
    # The host's settings: the same database, without building the bench endpoints' tools
    # (seconds per process) for each command.
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "project.settings"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class Server:
    """gunicorn serving the host with the benchmark settings; stopped by its own PID."""

    def __init__(self, env: dict[str, str], workdir: Path, workers: int) -> None:
        self.port = free_port()
        self.base = f"http://{HOST}:{self.port}"
        self.log_path = workdir / "gunicorn.log"
        self.log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                venv_command("gunicorn"),
                "project.wsgi:application",
                "--workers",
                str(workers),
                "--bind",
                f"{HOST}:{self.port}",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"gunicorn exited:\n{self.log_path.read_text()}")
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise SystemExit(f"gunicorn did not answer in {timeout} s:\n{self.log_path.read_text()}")

    def cpu_seconds(self) -> float:
        """User and system CPU time of the gunicorn master and its workers so far."""
        ticks = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2 :].split()
            pid = int(stat.parent.name)
            if pid == self.process.pid or int(fields[1]) == self.process.pid:
                ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self.log.close()


# -- checking the answers before timing them ----------------------------------------------


def fetch(base: str, target: Target, key: str) -> tuple[int, Any]:
    headers = {"Accept": "application/json, text/event-stream"}
    if target.authenticated:
        headers["Authorization"] = f"Bearer {key}"
    data = None
    if target.body is not None:
        data = target.body.encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(base + target.path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def result_of(answer: Any) -> Any:
    if not isinstance(answer, dict) or "result" not in answer:
        raise AssertionError(f"not a JSON-RPC result: {str(answer)[:300]}")
    return answer["result"]


def check_answers(base: str, key: str) -> None:
    """Each target once: a wrong answer would make its rate meaningless."""
    answers = {}
    for group in GROUPS:
        for target in group:
            status, answer = fetch(base, target, key)
            if status != 200:
                raise SystemExit(f"{target.label}: HTTP {status}: {str(answer)[:500]}")
            answers[target.label] = answer
    checks: list[tuple[Target, Callable[[Any], bool]]] = [
        (MCP_LIST_TASKS, lambda r: not r.get("isError") and r.get("structuredContent")),
        (MCP_ADD, lambda r: r.get("structuredContent") == {"result": 5}),
        (MCP_ADD_OPEN, lambda r: r.get("structuredContent") == {"result": 5}),
        (PING, lambda r: r == {}),
        (TOOLS_LIST, lambda r: 0 < len(r["tools"]) < 501 and "nextCursor" in r),
        (TOOLS_LIST_ALL, lambda r: len(r["tools"]) == 501),
    ]
    for target, good in checks:
        result = result_of(answers[target.label])
        if not good(result):
            raise SystemExit(f"{target.label}: unexpected answer: {json.dumps(result)[:500]}")
    page = len(result_of(answers[TOOLS_LIST.label])["tools"])
    TOOLS_LIST.label = f"MCP tools/list (first page: {page} of 501)"
    rest = answers[REST_TASKS.label]
    mcp = result_of(answers[MCP_LIST_TASKS.label])["structuredContent"]
    if [t["id"] for t in rest["results"]] != [t["id"] for t in mcp["results"]]:
        raise SystemExit("list_tasks and GET /api/tasks/ answered different tasks")


# -- wrk ---------------------------------------------------------------------------------


@dataclass
class WrkRun:
    rate: float
    requests: int
    bad: int
    errors: int
    cpu_ms: float = 0.0


def run_wrk(
    base: str, target: Target, key: str, seconds: int, threads: int, connections: int
) -> WrkRun:
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        "10s",
        "-H",
        "Accept: application/json",
    ]
    env = dict(os.environ)
    if target.authenticated:
        command += ["-H", f"Authorization: Bearer {key}"]
    if target.body is not None:
        command += ["-s", str(HERE / "post.lua")]
        env["WRK_BODY"] = target.body
    command.append(base + target.path)
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=seconds + 30, check=False
    )
    out = done.stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    if done.returncode != 0 or rate is None or total is None:
        raise SystemExit(f"wrk failed for {target.label}:\n{out}\n{done.stderr}")
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    errors = sum(int(n) for n in socket_errors.groups()) if socket_errors else 0
    return WrkRun(
        float(rate.group(1)), int(total.group(1)), int(bad.group(1)) if bad else 0, errors
    )


# -- the table ---------------------------------------------------------------------------


def print_rows(rows: list[list[str]], numeric: set[int]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for index, row in enumerate(rows):
        cells = [
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        print("  ".join(cells).rstrip())
        if index == 0:
            print("  ".join("-" * w for w in widths))


def print_tables(comparisons: Sequence[Comparison]) -> bool:
    """The comparisons, judged on the median of the per-round rate ratios; then each target."""
    rows = [["comparison (A / B)", "A req/s", "B req/s", "ratio", "per round", "cpu", "target", ""]]
    all_met = True
    for c in comparisons:
        ratios = c.ratios()
        ratio = statistics.median(ratios)
        met = c.met(ratio)
        all_met &= met
        rows.append(
            [
                c.name,
                f"{statistics.median(c.a.rates):,.0f}",
                f"{statistics.median(c.b.rates):,.0f}",
                f"{ratio:.2f}",
                " ".join(f"{r:.2f}" for r in ratios),
                f"{c.cpu_ratio():.2f}",
                f">= {c.target}" if c.kind == "rate" else f"<= {c.target}",
                "met" if met else "MISSED",
            ]
        )
    print_rows(rows, {1, 2, 3, 5})
    print(
        "\nratio: A's rate / B's (for tools/list: B's / A's, i.e. time per request), the median "
        "of the rounds;\ncpu: the same ratio from the server's CPU time per request."
    )
    targets = {id(t): t for c in comparisons for t in (c.a, c.b)}.values()
    rows = [["target", "path", "req/s", "server CPU ms/request"]]
    for t in targets:
        rows.append(
            [
                t.label,
                t.path,
                f"{statistics.median(t.rates):,.0f}",
                f"{statistics.median(t.cpu):.2f}",
            ]
        )
    print()
    print_rows(rows, {2, 3})
    return all_met


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=2, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=4, help="A/B rounds per comparison")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--connections", type=int, default=8, help="wrk connections")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of warm-up per target")
    options = parser.parse_args(argv)
    if shutil.which("wrk") is None:
        print(WRK_HINT, file=sys.stderr)
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        workdir = Path(tmp)
        env = environment(workdir)
        external = bool(env.get("DATABASE_URL"))
        manage(env, "migrate", "--noinput")
        manage(env, "seed_demo")
        key = (
            manage(
                env,
                "mcp_key",
                "create",
                "--user",
                "alice",
                "--scopes",
                "read write",
                "--name",
                "benchmarks",
            )
            .strip()
            .splitlines()[-1]
        )
        server = Server(env, workdir, options.workers)
        try:
            server.wait_ready()
            check_answers(server.base, key)
            print(
                f"gunicorn -w {options.workers} on {server.base}; "
                f"wrk -t{options.threads} -c{options.connections} -d{options.duration}s, "
                f"{options.rounds} rounds; database: "
                f"{'DATABASE_URL' if external else 'SQLite'}, cache: "
                f"{'REDIS_URL' if env.get('REDIS_URL') else 'files'}",
                flush=True,
            )
            problems: list[str] = []

            def measure(target: Target, seconds: int) -> WrkRun:
                cpu = server.cpu_seconds()
                run = run_wrk(
                    server.base, target, key, seconds, options.threads, options.connections
                )
                run.cpu_ms = (server.cpu_seconds() - cpu) * 1000 / max(run.requests, 1)
                if run.bad or run.errors:
                    problems.append(
                        f"{target.label}: {run.bad} non-2xx answers, {run.errors} socket errors "
                        f"of {run.requests}"
                    )
                return run

            for group in GROUPS:
                for target in group:
                    measure(target, options.warmup)
            problems.clear()
            for round_index in range(options.rounds):
                for group in GROUPS:
                    order = group if round_index % 2 == 0 else list(reversed(group))
                    for target in order:
                        run = measure(target, options.duration)
                        target.rates.append(run.rate)
                        target.cpu.append(run.cpu_ms)
                print(f"round {round_index + 1} of {options.rounds} done", flush=True)
        finally:
            server.stop()
            if external:
                prefix = key.rsplit("_", 1)[0]
                manage(env, "mcp_key", "revoke", prefix)
    print()
    all_met = print_tables(COMPARISONS)
    for problem in problems:
        print(f"warning: {problem}")
    print(f"\n{time.monotonic() - started:.0f} s in all")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
