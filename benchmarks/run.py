"""Throughput of the MCP endpoint against the host's own views, measured side by side.

    .venv/bin/python benchmarks/run.py [--duration 2] [--rounds 4] [--connections 8]
                                       [--only wsgi,demo,...] [--memory-requests 100000]

Each *setup* starts its own servers on 127.0.0.1 (free ports) and runs its comparisons:

- ``wsgi``: gunicorn, 2 sync workers, ``benchmarks.settings`` (the host's URLs plus
  bench-only endpoints, no throttles, no call log, no key cache);
- ``keycache``: the same with the opt-in cache of validated API keys on;
- ``demo``: gunicorn, 2 workers, the demo host as configured (``project.settings``: the
  atomic REST throttle, the protocol limit and the call log on; the rates raised so a load
  generator is counted but not refused);
- ``asgi``: uvicorn, 2 workers, ``benchmarks.settings``;
- ``sdk``: ours under gunicorn with 1 worker, with an API key, against the official Python
  SDK's stateless JSON server (``benchmarks/sdk_server.py``) under uvicorn with 1 worker;
- ``cpu``: no server: ``benchmarks/cpu.py``, the CPU time per request in one process;
- ``handoffs``: no server: ``benchmarks/asgi_handoffs.py``, the thread hand-offs and CPU
  time per request under Django's ASGI handler and under ``mcp_endpoint.asgi``'s;
- ``toolslist``: no server: ``benchmarks/tools_list.py``, the bytes a client loads of
  ``tools/list`` by default (every page) on the demo and on the generated 200-viewset
  product, and the time of that fetch;
- ``memory``: gunicorn, 2 workers: each worker's RSS after a warm-up, and after
  ``--memory-requests`` mixed requests (MCP and REST);
- ``scaling``: uvicorn with 1, 2 and 4 workers on PostgreSQL and Redis (``DATABASE_URL``,
  ``REDIS_URL``; skipped without them): MCP ``list_tasks`` throughput per worker count.

The database is a fresh SQLite file in a temporary folder and the cache a file cache, or
``DATABASE_URL`` / ``REDIS_URL`` when set (migrated and seeded, which is idempotent; the
bench's key is revoked at the end).

Each answer is checked once before it is timed. The targets of a group run one after the
other, the order flipping every round (A B, then B A), and each round gives one ratio. The
table shows the median rates, every per-round ratio and their median, which is what the
targets are judged on, and beside it the same ratio from the CPU time the server processes
spent per request, which a busy machine disturbs much less. Every wrk run is bounded by
``--duration``; servers are stopped by their PIDs. The exit status is 0 when every target is
met, 1 when one is missed.

Needs ``wrk`` (Debian: ``apt-get install -y wrk``); without it the script says so and exits 2.
"""

from __future__ import annotations

import argparse
import json
import math
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
    """One request that wrk repeats: a GET, or a POST of a JSON-RPC body, on one server."""

    label: str
    path: str
    body: str | None = None
    authenticated: bool = True
    server: str = "main"
    rates: list[float] = field(default_factory=list)
    # Server CPU time per request (ms), from the server processes' own accounting.
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


@dataclass
class ServerSpec:
    """How to start one server of a setup: gunicorn or uvicorn, workers, settings, app."""

    kind: str = "gunicorn"
    workers: int = 2
    settings: str = "benchmarks.settings"
    app: str = ""
    env: dict[str, str] = field(default_factory=dict)
    health: str = "/health"


@dataclass
class Setup:
    """Servers started together, and the comparisons measured against them."""

    name: str
    title: str
    servers: dict[str, ServerSpec]
    groups: list[list[Target]]
    comparisons: list[Comparison]
    checks: list[tuple[Target, Callable[[Any], bool]]] = field(default_factory=list)


# -- the targets and what they are compared with -------------------------------------------

ADD = call("add", {"a": 2, "b": 3})
ADD_IS_FIVE: Callable[[Any], bool] = lambda r: r.get("structuredContent") == {"result": 5}  # noqa: E731
PING_BODY = rpc("ping")
LIST_TASKS = call("list_tasks", {"page": 1})


def rest_tasks(suffix: str = "") -> Target:
    return Target(f"GET /api/tasks/?page=1{suffix}", "/api/tasks/?page=1")


def mcp_list_tasks(suffix: str = "") -> Target:
    return Target(f"MCP tools/call list_tasks{suffix}", "/mcp", LIST_TASKS)


def health(suffix: str = "", server: str = "main") -> Target:
    return Target(
        f"GET /health (plain Django JSON view){suffix}",
        "/health",
        authenticated=False,
        server=server,
    )


def list_tasks_checked(target: Target) -> tuple[Target, Callable[[Any], bool]]:
    return (target, lambda r: not r.get("isError") and bool(r.get("structuredContent")))


def wsgi_setup() -> Setup:
    rest, mcp = rest_tasks(), mcp_list_tasks()
    plain = health()
    add = Target("MCP tools/call add, with key", "/bench/mcp", ADD)
    add_open = Target(
        "MCP tools/call add, no credential", "/bench/open-mcp", ADD, authenticated=False
    )
    ping = Target("MCP ping (same endpoint)", "/bench/mcp", PING_BODY)
    tools_list = Target("MCP tools/list (first page)", "/bench/mcp", rpc("tools/list"))
    tools_list_all = Target(
        "MCP tools/list (all 501 in one page)", "/bench/mcp-all", rpc("tools/list")
    )
    return Setup(
        "wsgi",
        "gunicorn -w 2, benchmarks.settings (no throttles, no call log, no key cache)",
        {"main": ServerSpec()},
        [[mcp, rest], [add, add_open, plain], [tools_list, tools_list_all, ping]],
        [
            Comparison("1. MCP list_tasks / GET /api/tasks/", mcp, rest, 0.9),
            Comparison("2. MCP add, API key / GET /health", add, plain, 0.75),
            Comparison("2b. MCP add, no credential / GET /health", add_open, plain, 0.75),
            Comparison("3. MCP tools/list, first page / ping", tools_list, ping, 2.0, "time"),
            Comparison(
                "3b. MCP tools/list, all in one page / ping", tools_list_all, ping, 2.0, "time"
            ),
        ],
        [
            list_tasks_checked(mcp),
            (add, ADD_IS_FIVE),
            (add_open, ADD_IS_FIVE),
            (ping, lambda r: r == {}),
            (tools_list, lambda r: 0 < len(r["tools"]) < 501 and "nextCursor" in r),
            (tools_list_all, lambda r: len(r["tools"]) == 501),
        ],
    )


def keycache_setup() -> Setup:
    plain = health()
    add = Target("MCP tools/call add, with key, key cache on", "/bench/mcp", ADD)
    local = Target(
        "MCP tools/call add, with key, key cache in local memory",
        "/bench/mcp",
        ADD,
        server="local",
    )
    plain_local = health(" (local-memory key cache)", server="local")
    cached = {"BENCH_API_KEY_CACHE_SECONDS": "300"}
    return Setup(
        "keycache",
        "gunicorn -w 2, benchmarks.settings with API_KEY_CACHE_SECONDS=300, in the shared "
        "cache and in each worker's memory",
        {
            "main": ServerSpec(env=cached),
            "local": ServerSpec(env={**cached, "BENCH_KEY_CACHE_LOCAL": "1"}),
        },
        [[add, plain], [local, plain_local]],
        [
            Comparison("2c. MCP add, API key, key cache on / GET /health", add, plain, 0.75),
            Comparison(
                "2d. MCP add, API key, key cache in local memory / GET /health",
                local,
                plain_local,
                0.75,
            ),
        ],
        [(add, ADD_IS_FIVE), (local, ADD_IS_FIVE)],
    )


# Rates a load generator cannot reach in a run: every request is counted, none refused.
UNREACHABLE_RATES = {
    "DEMO_USER_THROTTLE": "1000000000/day",
    "DEMO_PROTOCOL_RATE": "1000000000/day",
}


def demo_setup() -> Setup:
    rest, mcp = rest_tasks(" (demo)"), mcp_list_tasks(" (demo, call log on)")
    plain = health(" (demo)")
    ping = Target("MCP ping, with key (demo /mcp)", "/mcp", PING_BODY)
    return Setup(
        "demo",
        "gunicorn -w 2, the demo as configured (project.settings: atomic user throttle, "
        "protocol limit, call log on)",
        {"main": ServerSpec(settings="project.settings", env=UNREACHABLE_RATES)},
        [[ping, plain], [mcp, rest]],
        [
            Comparison("4. demo: MCP ping, API key / GET /health", ping, plain, 0.5),
            Comparison("5. demo: MCP list_tasks / GET /api/tasks/", mcp, rest, 0.9),
        ],
        [(ping, lambda r: r == {}), list_tasks_checked(mcp)],
    )


def asgi_setup() -> Setup:
    rest, mcp = rest_tasks(" (ASGI)"), mcp_list_tasks(" (ASGI)")
    plain = health(" (ASGI)")
    add = Target("MCP tools/call add, with key (ASGI)", "/bench/mcp", ADD)
    ping = Target("MCP ping (ASGI)", "/bench/mcp", PING_BODY)
    return Setup(
        "asgi",
        "uvicorn --workers 2, benchmarks.settings",
        {"main": ServerSpec(kind="uvicorn")},
        [[mcp, rest], [add, ping, plain]],
        [
            Comparison("6. ASGI: MCP list_tasks / GET /api/tasks/", mcp, rest, 0.9),
            Comparison("6b. ASGI: MCP add, API key / GET /health", add, plain, 0.75),
            Comparison("6c. ASGI: MCP ping, API key / GET /health", ping, plain, 0.75),
        ],
        [list_tasks_checked(mcp), (add, ADD_IS_FIVE), (ping, lambda r: r == {})],
    )


def sdk_setup() -> Setup:
    ours = Target("ours: MCP tools/call add, with key (gunicorn -w 1)", "/bench/mcp", ADD)
    sdk = Target(
        "SDK: tools/call add (uvicorn -w 1, stateless JSON)",
        "/mcp",
        ADD,
        authenticated=False,
        server="sdk",
    )
    return Setup(
        "sdk",
        "ours under gunicorn -w 1 against the official Python SDK under uvicorn -w 1",
        {
            "main": ServerSpec(workers=1),
            "sdk": ServerSpec(
                kind="uvicorn", workers=1, app="benchmarks.sdk_server:app", health=""
            ),
        },
        [[ours, sdk]],
        [Comparison("7. ours add, API key / SDK server add", ours, sdk, 1.5)],
        [(ours, ADD_IS_FIVE), (sdk, ADD_IS_FIVE)],
    )


# Run by themselves, after the setups: the in-process CPU table, what a client loads of
# tools/list, the memory row and the scaling row.
EXTRAS = ("cpu", "handoffs", "toolslist", "memory", "scaling")
SCALING_WORKERS = (1, 2, 4)

SETUPS: dict[str, Callable[[], Setup]] = {
    "wsgi": wsgi_setup,
    "keycache": keycache_setup,
    "demo": demo_setup,
    "asgi": asgi_setup,
    "sdk": sdk_setup,
}


# -- the servers -------------------------------------------------------------------------


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
    # The demo's call-log spool in the run's folder, not the checkout's.
    env.setdefault("DEMO_LOG_SPOOL_DIR", str(workdir / "call-spool"))
    return env


def manage(env: dict[str, str], *args: str) -> str:
    # The host's settings: the same database, without building the bench endpoints' tools
    # (seconds per process) for each command.
    command = [sys.executable, str(ROOT / "manage.py"), *args]
    return run_script(command, {**env, "DJANGO_SETTINGS_MODULE": "project.settings"}, 300)


def run_script(command: list[str], env: dict[str, str], timeout: int) -> str:
    """Its output; or exit, with its output, when it fails."""
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        name = " ".join(Path(part).name for part in command[1:3])
        raise SystemExit(f"{name} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class Server:
    """gunicorn or uvicorn serving one app; stopped by its own PID."""

    def __init__(self, spec: ServerSpec, env: dict[str, str], workdir: Path, name: str) -> None:
        self.spec = spec
        self.port = free_port()
        self.base = f"http://{HOST}:{self.port}"
        self.log_path = workdir / f"{name}-{spec.kind}.log"
        self.log = self.log_path.open("wb")
        env = {**env, **spec.env, "DJANGO_SETTINGS_MODULE": spec.settings}
        bind = ["--bind", f"{HOST}:{self.port}"]
        if spec.kind == "gunicorn":
            app = spec.app or "project.wsgi:application"
            command = [venv_command("gunicorn"), app, "--workers", str(spec.workers), *bind]
            # A loaded machine can stall a sync worker past gunicorn's 30 s default; a
            # replaced worker would end the memory row's comparison.
            command += ["--log-level", "warning", "--timeout", "300"]
        else:
            app = spec.app or "project.asgi:application"
            # uvicorn's command line; with several workers its own would delay every answer
            # on a kept-alive connection by the client's delayed ACK (mcp_endpoint.uvicorn).
            command = [venv_command("python"), "-m", "mcp_endpoint.uvicorn", app]
            command += ["--host", HOST, "--port", str(self.port)]
            command += ["--workers", str(spec.workers), "--log-level", "warning"]
            command += ["--no-access-log"]
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT
        )

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited:\n{self.log_path.read_text()}")
            try:
                with urllib.request.urlopen(self.base + self.spec.health, timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # any HTTP answer: a worker is serving
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.2)
        raise SystemExit(f"no answer in {timeout} s:\n{self.log_path.read_text()}")

    def pids(self) -> list[int]:
        """The server's process and its workers (children of it)."""
        found = [self.process.pid]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2 :].split()
            if int(fields[1]) == self.process.pid:
                found.append(int(stat.parent.name))
        return found

    def worker_pids(self) -> list[int]:
        return [p for p in self.pids() if p != self.process.pid]

    def cpu_seconds(self) -> float:
        """User and system CPU time of the server process and its workers so far."""
        ticks = 0
        for pid in self.pids():
            try:
                text = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rfind(")") + 2 :].split()
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


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (``VmRSS``), or one part of it (``RssAnon``: the heap)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


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


def check_answers(setup: Setup, servers: dict[str, Server], key: str) -> None:
    """Each target once: a wrong answer would make its rate meaningless."""
    answers = {}
    for group in setup.groups:
        for target in group:
            status, answer = fetch(servers[target.server].base, target, key)
            if status != 200:
                raise SystemExit(f"{target.label}: HTTP {status}: {str(answer)[:500]}")
            answers[target.label] = answer
    for target, good in setup.checks:
        result = result_of(answers[target.label])
        if not good(result):
            raise SystemExit(f"{target.label}: unexpected answer: {json.dumps(result)[:500]}")
    rest = next((t for g in setup.groups for t in g if t.path.startswith("/api/tasks/")), None)
    mcp = next((t for g in setup.groups for t in g if t.body == LIST_TASKS), None)
    if rest is not None and mcp is not None:
        ids = [t["id"] for t in answers[rest.label]["results"]]
        structured = result_of(answers[mcp.label])["structuredContent"]
        if ids != [t["id"] for t in structured["results"]]:
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
    base: str,
    target: Target | None,
    key: str,
    seconds: int,
    threads: int,
    connections: int,
    script_env: dict[str, str] | None = None,
) -> WrkRun:
    """``target`` repeated for ``seconds``; or, with ``target`` None, the mixed script."""
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
    env = {**os.environ, **(script_env or {})}
    if target is None or target.authenticated:
        command += ["-H", f"Authorization: Bearer {key}"]
    if target is None:
        command += ["-s", str(HERE / "mixed.lua")]
    elif target.body is not None:
        command += ["-s", str(HERE / "post.lua")]
        env["WRK_BODY"] = target.body
    command.append(base + (target.path if target is not None else "/"))
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=seconds + 30, check=False
    )
    out = done.stdout
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    total = re.search(r"(\d+) requests in", out)
    if done.returncode != 0 or rate is None or total is None:
        label = target.label if target is not None else "mixed"
        raise SystemExit(f"wrk failed for {label}:\n{out}\n{done.stderr}")
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


def print_tables(comparisons: Sequence[Comparison], *, targets: bool = True) -> bool:
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
    if not targets:
        return all_met
    print(
        "\nratio: A's rate / B's (for tools/list: B's / A's, i.e. time per request), the median "
        "of the rounds;\ncpu: the same ratio from the server's CPU time per request."
    )
    measured = {id(t): t for c in comparisons for t in (c.a, c.b)}.values()
    rows = [["target", "path", "req/s", "server CPU ms/request"]]
    for t in measured:
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


# -- running -----------------------------------------------------------------------------


@dataclass
class Options:
    duration: int
    rounds: int
    threads: int
    connections: int
    warmup: int
    memory_requests: int
    cpu_calls: int


def run_setup(
    setup: Setup, env: dict[str, str], workdir: Path, key: str, options: Options
) -> list[str]:
    """Start the setup's servers, measure its groups in rounds; the problems seen."""
    servers: dict[str, Server] = {}
    problems: list[str] = []
    try:
        for name, spec in setup.servers.items():
            servers[name] = Server(spec, env, workdir, f"{setup.name}-{name}")
        for server in servers.values():
            server.wait_ready()
        check_answers(setup, servers, key)
        print(f"\n== {setup.name}: {setup.title}", flush=True)

        def measure(target: Target, seconds: int) -> WrkRun:
            server = servers[target.server]
            cpu = server.cpu_seconds()
            run = run_wrk(server.base, target, key, seconds, options.threads, options.connections)
            run.cpu_ms = (server.cpu_seconds() - cpu) * 1000 / max(run.requests, 1)
            if run.bad or run.errors:
                problems.append(
                    f"{target.label}: {run.bad} non-2xx answers, {run.errors} socket errors "
                    f"of {run.requests}"
                )
            return run

        for group in setup.groups:
            for target in group:
                measure(target, options.warmup)
        problems.clear()
        for round_index in range(options.rounds):
            for group in setup.groups:
                order = group if round_index % 2 == 0 else list(reversed(group))
                for target in order:
                    run = measure(target, options.duration)
                    target.rates.append(run.rate)
                    target.cpu.append(run.cpu_ms)
            print(f"round {round_index + 1} of {options.rounds} done", flush=True)
    finally:
        for server in servers.values():
            server.stop()
    return problems


MIX = [
    ("/bench/mcp", call("add", {"a": 2, "b": 3})),
    ("/bench/mcp", rpc("ping")),
    ("/bench/mcp", rpc("tools/list")),
    ("/mcp", call("list_tasks", {"page": 1})),
    ("/api/tasks/?page=1", ""),
    ("/bench/mcp", call("tool_007", {"record_id": 3, "query": "x"})),
    ("/bench/mcp", call("add", {"a": "not a number", "b": 3})),
    ("/health", ""),
]
MEMORY_TARGET_MIB = 5.0
WARM_UP_SECONDS = 10
MEMORY_SECONDS_LIMIT = 3000


def run_memory(env: dict[str, str], workdir: Path, key: str, options: Options) -> tuple[bool, str]:
    """RSS per worker after a warm-up, and its growth over ``memory_requests`` mixed requests."""
    server = Server(ServerSpec(), env, workdir, "memory")
    threads = options.threads
    mix = "\n".join(f"{path}\t{body}" for path, body in MIX)
    try:
        server.wait_ready()
        print(f"\n== memory: gunicorn -w 2, {options.memory_requests:,} mixed requests", flush=True)

        def drive(seconds: int) -> WrkRun:
            # Bounded by time only: a wrk thread stopped after a count of answers keeps its
            # connections open, and a sync worker that accepted one waits on it until
            # gunicorn's timeout kills it.
            script_env = {"WRK_MIX": mix}
            return run_wrk(
                server.base, None, key, seconds, threads, options.connections, script_env
            )

        warm_up = drive(WARM_UP_SECONDS)
        # Long enough for the requests asked, at the warm-up's rate and a margin.
        seconds = max(10, math.ceil(options.memory_requests / max(warm_up.rate, 1.0) * 1.1))
        seconds = min(seconds, MEMORY_SECONDS_LIMIT)
        print(f"warm-up: {warm_up.requests:,} requests; now {seconds} s", flush=True)
        before = {pid: rss_kib(pid) for pid in server.worker_pids()}
        anon_before = {pid: rss_kib(pid, "RssAnon") for pid in before}
        run = drive(seconds)
        after = {pid: rss_kib(pid) for pid in server.worker_pids() if pid in before}
        anon_after = {pid: rss_kib(pid, "RssAnon") for pid in after}
    finally:
        server.stop()
    if len(after) < len(before):
        log = "\n".join(server.log_path.read_text(errors="replace").splitlines()[-15:])
        return False, (
            f"memory: {len(before) - len(after)} of {len(before)} worker(s) replaced during the "
            f"run; the server's log ends:\n{log}"
        )
    growth = {pid: (after[pid] - before[pid]) / 1024 for pid in after}
    worst = max(growth.values())
    met = worst <= MEMORY_TARGET_MIB
    lines = [
        f"8. RSS growth per worker over {run.requests:,} mixed requests "
        f"({run.bad} non-2xx, {run.errors} socket errors): "
        + ", ".join(
            f"pid {pid}: {before[pid] / 1024:.1f} -> {after[pid] / 1024:.1f} MiB "
            f"({growth[pid]:+.2f})"
            for pid in after
        ),
        f"   worst {worst:+.2f} MiB, target <= {MEMORY_TARGET_MIB} MiB: "
        + ("met" if met else "MISSED"),
        # The rest of RSS is mapped files (SQLite's shared-memory index, libraries).
        "   of which anonymous memory (the heap): "
        + ", ".join(
            f"pid {pid}: {(anon_after[pid] - anon_before[pid]) / 1024:+.2f} MiB" for pid in after
        ),
    ]
    return met, "\n".join(lines)


def run_scaling(env: dict[str, str], workdir: Path, key: str, options: Options) -> str:
    """Throughput of MCP list_tasks under uvicorn with 1, 2 and 4 web workers on PostgreSQL
    and Redis (``DATABASE_URL``, ``REDIS_URL``): every worker shares the database, the
    cache, the throttles and the caps, as the processes of several machines do. Each count
    gets a warm-up and ``--rounds`` runs of ``--duration`` seconds; the median is shown."""
    if not env.get("DATABASE_URL") or not env.get("REDIS_URL"):
        return "scaling: skipped (it runs on PostgreSQL and Redis: set DATABASE_URL and REDIS_URL)"
    rows = [["web workers", "list_tasks req/s", "per worker", "vs 1 worker", "non-2xx/errors"]]
    first = 0.0
    for workers in SCALING_WORKERS:
        target = mcp_list_tasks(f" (uvicorn -w {workers})")
        server = Server(
            ServerSpec(kind="uvicorn", workers=workers), env, workdir, f"scaling-{workers}"
        )
        try:
            server.wait_ready()
            run_wrk(server.base, target, key, options.warmup, options.threads, options.connections)
            runs = [
                run_wrk(
                    server.base, target, key, options.duration, options.threads,
                    options.connections,
                )
                for _ in range(options.rounds)
            ]  # fmt: skip
        finally:
            server.stop()
        rate = statistics.median(run.rate for run in runs)
        first = first or rate
        failed = sum(run.bad + run.errors for run in runs)
        shares = f"{rate / workers:.0f}", f"{rate / first:.2f}"
        rows.append([str(workers), f"{rate:.0f}", *shares, str(failed)])
        print(f"scaling: {workers} worker(s) done", flush=True)
    print("\n== scaling: uvicorn, 1, 2 and 4 web workers, PostgreSQL + Redis", flush=True)
    print_rows(rows, {0, 1, 2, 3, 4})
    return ""


def run_cpu(options: Options) -> str:
    """CPU time per request in one process (``benchmarks/cpu.py``): steady on a busy machine."""
    print("\n== cpu: CPU time per request in process (benchmarks/cpu.py)", flush=True)
    command = [sys.executable, str(HERE / "cpu.py"), "--calls", str(options.cpu_calls)]
    return run_script(command, dict(os.environ), 3600).rstrip()


def run_handoffs(options: Options) -> str:
    """Hand-offs and CPU per request under ASGI handlers (``benchmarks/asgi_handoffs.py``)."""
    print("\n== handoffs: thread hand-offs per ASGI request (benchmarks/asgi_handoffs.py)")
    calls = str(max(options.cpu_calls // 2, 100))
    command = [sys.executable, str(HERE / "asgi_handoffs.py"), "--calls", calls]
    return run_script(command, dict(os.environ), 3600).rstrip()


def run_tools_list() -> tuple[bool, str]:
    """What a client loads of tools/list by default (``benchmarks/tools_list.py``)."""
    print("\n== toolslist: bytes of tools/list a client loads (benchmarks/tools_list.py)")
    command = [sys.executable, str(HERE / "tools_list.py")]
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    completed = subprocess.run(
        command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False
    )
    if completed.returncode not in (0, 1):
        raise RuntimeError(f"tools_list.py failed:\n{completed.stderr[-2000:]}")
    return completed.returncode == 0, completed.stdout.rstrip()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=2, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=4, help="A/B rounds per comparison")
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--connections", type=int, default=8, help="wrk connections")
    parser.add_argument("--warmup", type=int, default=1, help="seconds of warm-up per target")
    parser.add_argument(
        "--only",
        default=",".join([*SETUPS, *EXTRAS]),
        help=f"comma-separated setups, of: {', '.join([*SETUPS, *EXTRAS])}",
    )
    parser.add_argument(
        "--memory-requests", type=int, default=100_000, help="requests of the memory row"
    )
    parser.add_argument(
        "--cpu-calls", type=int, default=2000, help="calls per target of the cpu table"
    )
    parsed = parser.parse_args(argv)
    options = Options(
        parsed.duration,
        parsed.rounds,
        parsed.threads,
        parsed.connections,
        parsed.warmup,
        parsed.memory_requests,
        parsed.cpu_calls,
    )
    chosen = [name.strip() for name in parsed.only.split(",") if name.strip()]
    unknown = set(chosen) - {*SETUPS, *EXTRAS}
    if unknown:
        parser.error(f"unknown setups: {', '.join(sorted(unknown))}")
    if shutil.which("wrk") is None:
        print(WRK_HINT, file=sys.stderr)
        return 2
    started = time.monotonic()
    comparisons: list[Comparison] = []
    problems: list[str] = []
    memory: tuple[bool, str] | None = None
    cpu = handoffs = ""
    listing: tuple[bool, str] | None = None
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
        print(
            f"wrk -t{options.threads} -c{options.connections} -d{options.duration}s, "
            f"{options.rounds} rounds; database: "
            f"{'DATABASE_URL' if external else 'SQLite'}, cache: "
            f"{'REDIS_URL' if env.get('REDIS_URL') else 'files'}",
            flush=True,
        )
        try:
            for name in chosen:
                if name == "memory":
                    memory = run_memory(env, workdir, key, options)
                    continue
                if name == "cpu":
                    cpu = run_cpu(options)
                    continue
                if name == "handoffs":
                    handoffs = run_handoffs(options)
                    continue
                if name == "scaling":
                    skipped = run_scaling(env, workdir, key, options)
                    if skipped:
                        problems.append(skipped)
                    continue
                if name == "toolslist":
                    listing = run_tools_list()
                    continue
                setup = SETUPS[name]()
                problems += run_setup(setup, env, workdir, key, options)
                comparisons += setup.comparisons
                # Each setup's table as soon as it is measured; all of them again at the end.
                print()
                print_tables(setup.comparisons, targets=False)
        finally:
            if external:
                prefix = key.rsplit("_", 1)[0]
                manage(env, "mcp_key", "revoke", prefix)
    print()
    all_met = print_tables(comparisons) if comparisons else True
    if cpu:
        print()
        print(cpu)
    if handoffs:
        print()
        print(handoffs)
    if listing is not None:
        print()
        print(listing[1])
        all_met = all_met and listing[0]
    if memory is not None:
        print()
        print(memory[1])
        all_met &= memory[0]
    for problem in problems:
        print(f"warning: {problem}")
    print(f"\n{time.monotonic() - started:.0f} s in all")
    return 0 if all_met else 1


if __name__ == "__main__":
    sys.exit(main())
