"""The demo under load while its database or its cache is cut: what was lost, duplicated, hung.

    .venv/bin/python benchmarks/faults.py [--requests 5000] [--clients 8] [--cut-seconds 5]
        [--runs none:gunicorn,postgres:gunicorn,redis:gunicorn,postgres:uvicorn,redis:uvicorn]
        [--json faults.json]

Each run starts the demo host (``project/``) under gunicorn (2 sync workers) or uvicorn (2
workers) on a free loopback port, on a fresh PostgreSQL database of its own (migrated and
seeded, dropped afterwards) and a Redis cache under a key prefix of its own. The server
reaches both through loopback TCP proxies this script owns, never directly: a *cut* closes
every proxied connection and refuses new ones (the proxy's port stops listening) for
``--cut-seconds``, then listens again. The real PostgreSQL and Redis are never touched.

The load is ``--clients`` threads sending ``--requests`` requests in all, a fixed mix of
MCP messages on ``/mcp`` (initialize, ping, tools/list, list/get/create/update tools,
resources/read) and REST calls, with the API keys of two users. Every create carries a
marker title of its own, so that afterwards the database says which writes exist: a write
answered as a success with no row is *lost*, a marker with two rows is *duplicated*, and a
write answered with an error whose row exists all the same is *ambiguous* (the client
cannot know it committed). Every 5xx must be 503 with ``Retry-After`` (and, on ``/mcp``, a
JSON-RPC error carrying the request's id); an HTML 500, a traceback in the server's log and
a request with no answer within ``--hang-after`` seconds are counted apart. Each run is
bounded by its request count and by ``--max-seconds``, and stops by itself; servers and
proxies are stopped by this script, by their PIDs and sockets.

The exit status is 0 when every run held (nothing lost, duplicated, hung, no 5xx but
correct 503s, no HTML 500, no traceback), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: benchmarks/ is sys.path[0], not the root
    sys.path.insert(0, str(ROOT))

from tests.live_server import (  # noqa: E402
    SERVERS,
    LiveServer,
    TaskWorker,
    TcpProxy,
    address,
    run_script,
)

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_RUNS = "none:gunicorn,postgres:gunicorn,redis:gunicorn,postgres:uvicorn,redis:uvicorn"
# Rates a load run cannot reach: every request is served or refused for a fault, never 429.
UNREACHABLE_RATES = {
    "DEMO_USER_THROTTLE": "1000000000/day",
    "DEMO_PROTOCOL_RATE": "1000000000/day",
}
USERS = ("alice", "bob")
# The mix, one entry per twentieth of the requests.
MIX = (
    ["initialize", "ping", "tools_list", "export_task"]
    + ["list_tasks"] * 3
    + ["get_task"] * 2
    + ["create_task"] * 3
    + ["update_task"]
    + ["read_board", "read_guide"]
    + ["rest_list"] * 2
    + ["rest_get", "rest_create", "rest_update"]
)
WRITES = {"create_task", "rest_create"}
# A long-running tool started as a task (the 2026-07-28 revision and the tasks extension),
# which the task worker runs from the database.
MODERN = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TERMINAL = {"completed", "failed", "cancelled"}
# Statuses that are not HTTP: the request failed in transport, or had no answer in time.
TRANSPORT_ERROR = 0
HUNG = -1
SAMPLES = 3  # examples kept of each kind of problem


# -- the clients ----------------------------------------------------------------------------------


@dataclass
class Answer:
    """One request and what came back."""

    kind: str
    path: str
    status: int
    started: float
    elapsed: float
    succeeded: bool = False
    marker: str | None = None
    task_id: str | None = None  # a task the server accepted to run
    fault: str | None = None  # why a 5xx is not a correct 503
    html_500: bool = False
    internal_error: bool = False  # a tool result with isError and code internal_error
    streamed: bool = False  # answered as an event stream
    excerpt: str = ""


@dataclass
class Demo:
    """The seeded demo's facts each client needs, per user: a key, a seeded project and
    one of its tasks (read, updated, exported), and a project of the run's own that the
    creates fill (so that what is read and exported keeps its size)."""

    keys: list[str]
    projects: list[int]
    tasks: list[int]
    load_projects: list[int]


def seed(server: LiveServer) -> Demo:
    """Seed the demo and make a key for each user, in one ``manage.py shell`` (each
    command's start costs seconds on a busy machine)."""
    script = (
        "import json\n"
        "from django.core.management import call_command\n"
        "from mcp_endpoint.models import APIKey\n"
        "from project.tracker.models import Project, Task\n"
        "call_command('seed_demo')\n"
        "facts = []\n"
        f"for name in {list(USERS)!r}:\n"
        "    p = Project.objects.filter(owner__username=name).order_by('pk').first()\n"
        "    t = Task.objects.filter(project=p).order_by('pk').first()\n"
        "    key = APIKey.objects.create_key(user=p.owner, scopes='read write')[1]\n"
        "    load = Project.objects.create(name='Fault load', owner=p.owner)\n"
        "    facts.append([key, p.pk, t.pk, load.pk])\n"
        "print(json.dumps(facts))\n"
    )
    facts = json.loads(run_script(server.env, script).strip().splitlines()[-1])
    keys, projects, tasks, load_projects = (list(column) for column in zip(*facts, strict=True))
    return Demo(keys, projects, tasks, load_projects)


class Load:
    """``requests`` requests on ``clients`` threads against one server, each bounded by
    ``hang_after`` seconds and all by ``deadline`` (a ``time.monotonic()`` instant)."""

    def __init__(
        self, base_url: str, demo: Demo, run_id: str, hang_after: float, deadline: float
    ) -> None:
        self.base_url = base_url
        self.demo = demo
        self.run_id = run_id
        self.hang_after = hang_after
        self.deadline = deadline
        self.answers: list[Answer] = []
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._next = 0
        self.progress: dict[float, threading.Event] = {}
        # Set when the cut is over: the last round of the mix waits for it, so that every
        # run sees each kind of request answered after the service is back.
        self.after_cut = threading.Event()
        self.after_cut.set()

    def marker(self, index: int) -> str:
        return f"fault-{self.run_id}-{index}"

    def request(self, index: int) -> tuple[str, str, str, Any, str | None, dict[str, str]]:
        """The index-th request: its kind, method, path, body, marker and extra headers;
        its JSON-RPC id is ``index``."""
        kind = MIX[index % len(MIX)]
        user = (index // len(MIX)) % len(USERS)
        project, task = self.demo.projects[user], self.demo.tasks[user]
        load_project = self.demo.load_projects[user]
        marker = self.marker(index) if kind in WRITES else None
        rpc: tuple[str, dict[str, Any] | None] | None = None
        if kind == "initialize":
            info = {"name": "faults", "version": "1"}
            init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}
            rpc = ("initialize", init)
        elif kind == "ping":
            rpc = ("ping", None)
        elif kind == "tools_list":
            rpc = ("tools/list", None)
        elif kind == "read_board":
            rpc = ("resources/read", {"uri": f"tracker://projects/{project}/board"})
        elif kind == "read_guide":
            rpc = ("resources/read", {"uri": "tracker://guide"})
        elif kind == "export_task":
            meta = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "faults", "version": "1"},
            }
            name = "export_project_tasks"
            params = {"_meta": meta, "name": name, "arguments": {"project_id": project}}
            message = {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}
            headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
            return kind, "POST", "/mcp", message, None, headers
        elif kind in {"list_tasks", "get_task", "create_task", "update_task"}:
            arguments: dict[str, Any] = {
                "list_tasks": {"project": project},
                "get_task": {"id": task},
                "create_task": {"project": load_project, "title": marker},
                "update_task": {"id": task, "description": f"touched by request {index}"},
            }[kind]
            rpc = ("tools/call", {"name": kind, "arguments": arguments})
        if rpc is not None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": index, "method": rpc[0]}
            if rpc[1] is not None:
                message["params"] = rpc[1]
            return kind, "POST", "/mcp", message, marker, {}
        if kind == "rest_list":
            return kind, "GET", f"/api/tasks/?project={project}", None, None, {}
        if kind == "rest_get":
            return kind, "GET", f"/api/tasks/{task}/", None, None, {}
        if kind == "rest_create":
            body = {"project": load_project, "title": marker}
            return kind, "POST", "/api/tasks/", body, marker, {}
        body = {"description": f"touched by request {index}"}
        return kind, "PATCH", f"/api/tasks/{task}/", body, None, {}

    def send(self, index: int) -> Answer:
        kind, method, path, body, marker, extra = self.request(index)
        rpc_id = index
        key = self.demo.keys[(index // len(MIX)) % len(USERS)]
        headers = {"Authorization": f"Bearer {key}", "Accept": "application/json", **extra}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if path == "/mcp":
            headers["Accept"] = "application/json, text/event-stream"
        request = urllib.request.Request(
            self.base_url + path, data=data, headers=headers, method=method
        )
        started = time.monotonic()
        status, answer_headers, raw = TRANSPORT_ERROR, {}, b""
        try:
            with urllib.request.urlopen(request, timeout=self.hang_after) as response:
                status, answer_headers, raw = (
                    response.status,
                    dict(response.headers),
                    response.read(),
                )
        except urllib.error.HTTPError as error:
            status, answer_headers, raw = error.code, dict(error.headers), error.read()
        except TimeoutError:
            status = HUNG
        except OSError as exc:
            # urllib wraps a timeout while connecting in URLError.
            hung = isinstance(getattr(exc, "reason", None), TimeoutError)
            status = HUNG if hung else TRANSPORT_ERROR
            raw = repr(exc).encode()
        answer = Answer(kind, path, status, started - self.started, time.monotonic() - started)
        answer.marker = marker
        answer.excerpt = raw[:600].decode(errors="replace")
        decoded = decode(raw, rpc_id)
        answer.streamed = raw.startswith((b"event:", b"data:", b"id:", b":"))
        answer.succeeded = succeeded(kind, status, decoded)
        if status == 200 and path == "/mcp" and not answer.succeeded:
            answer.internal_error = "internal_error" in json.dumps(decoded)
        if answer.succeeded and kind == "export_task":
            answer.task_id = decoded["result"].get("taskId")
        if status >= 500:
            answer.fault = wrong_5xx(path, status, answer_headers, decoded, rpc_id)
            content_type = answer_headers.get("Content-Type", "")
            answer.html_500 = status == 500 and content_type.startswith("text/html")
        return answer

    def client(self) -> None:
        while time.monotonic() < self.deadline:
            with self._lock:
                index = self._next
                if index >= self.total:
                    return
                self._next += 1
            if index >= self.total - len(MIX):
                self.after_cut.wait(timeout=max(0.0, self.deadline - time.monotonic()))
            answer = self.send(index)
            with self._lock:
                self.answers.append(answer)
                done = len(self.answers) / self.total
                for fraction, event in self.progress.items():
                    if done >= fraction:
                        event.set()

    def when_done(self, fraction: float) -> threading.Event:
        """An event set once ``fraction`` of the requests have their answers."""
        event = threading.Event()
        with self._lock:
            self.progress[fraction] = event
        return event

    def run(self, total: int, clients: int) -> None:
        self.total = total
        self.started = time.monotonic()
        threads = [threading.Thread(target=self.client, daemon=True) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            # Each client stops by the deadline, plus the bound of the request it is in.
            thread.join(timeout=max(0.0, self.deadline - time.monotonic()) + self.hang_after + 5)


def decode(raw: bytes, rpc_id: int | None = None) -> Any:
    """The JSON answer; of an event stream, the message that answers ``rpc_id`` (the
    server streams a call's answer when it has notifications to send before it)."""
    if raw.startswith((b"event:", b"data:", b"id:", b":")):
        answer = None
        for line in raw.splitlines():
            if line.startswith(b"data:"):
                message = decode(line[5:].strip())
                if isinstance(message, dict) and "id" in message and message["id"] == rpc_id:
                    answer = message
        return answer
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None


def succeeded(kind: str, status: int, answer: Any) -> bool:
    """Whether the answer tells the client its request was done."""
    if kind.startswith("rest_"):
        return status in {200, 201}
    if status != 200 or not isinstance(answer, dict) or "result" not in answer:
        return False
    result = answer["result"]
    return not (isinstance(result, dict) and result.get("isError"))


def wrong_5xx(
    path: str, status: int, headers: dict[str, str], answer: Any, rpc_id: int
) -> str | None:
    """What is wrong with a 5xx answer, or None for a correct 503."""
    if status != 503:
        return f"status {status}"
    if not headers.get("Retry-After"):
        return "503 without Retry-After"
    if path == "/mcp":
        if not isinstance(answer, dict) or answer.get("jsonrpc") != "2.0":
            return "503 without a JSON-RPC body"
        if "error" not in answer or answer.get("id") != rpc_id:
            return "503 whose JSON-RPC body is not an error for the request's id"
    return None


# -- one run ------------------------------------------------------------------------------------


@dataclass
class Options:
    requests: int = 5000
    clients: int = 8
    cut_seconds: float = 5.0
    cut_at: float = 0.3  # the fraction of the requests answered when the cut begins
    hang_after: float = 30.0
    task_seconds: float = 30.0  # how long the accepted tasks may take to finish after the load
    max_seconds: float = 300.0
    database_url: str = DEFAULT_DATABASE_URL
    redis_url: str = DEFAULT_REDIS_URL
    workers: int = 2


@dataclass
class Report:
    """One run's figures."""

    server: str
    fault: str
    requests: int = 0
    seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    correct_503: int = 0
    wrong_5xx: int = 0
    wrong_5xx_mcp: int = 0  # of wrong_5xx, those on /mcp
    html_500: int = 0
    internal_errors: int = 0  # tool results that say internal_error (a bug, not an outage)
    streamed: int = 0  # answers sent as an event stream (notifications before the answer)
    transport_errors: int = 0
    hung: int = 0
    slowest: float = 0.0  # seconds, the longest any request took to be answered
    writes_succeeded: int = 0
    lost: int = 0
    duplicated: int = 0
    ambiguous: int = 0
    tracebacks: int = 0
    outage_reports: int = 0  # the server's log lines saying a service is unreachable
    cut: list[float] = field(default_factory=list)  # seconds into the run: begin, end
    cut_connections: int = 0
    tasks_accepted: int = 0  # long-running calls answered with a task id
    tasks: dict[str, int] = field(default_factory=dict)  # their statuses at the end
    worker_exits: int = 0  # task workers that exited (each replaced at once)
    worker_tracebacks: int = 0
    recovered_after: float | None = None  # seconds from the end of the cut to a success
    failed_after_recovery: int = 0
    samples: list[dict[str, Any]] = field(default_factory=list)
    log_excerpts: list[str] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return not (
            self.wrong_5xx
            or self.html_500
            or self.internal_errors
            or self.hung
            or self.lost
            or self.duplicated
            or self.tracebacks
            or self.worker_exits
            or set(self.tasks) - {"completed"}
            or self.requests == 0
        )


def markers_in_database(database_url: str, run_id: str) -> Counter[str]:
    """How many tasks carry each of the run's marker titles."""
    import psycopg

    with psycopg.connect(database_url, connect_timeout=10) as connection:
        rows = connection.execute(
            "SELECT title, count(*) FROM tracker_task WHERE title LIKE %s GROUP BY title",
            (f"fault-{run_id}-%",),
        ).fetchall()
    return Counter({title: count for title, count in rows})


def tracebacks(log: str) -> tuple[int, list[str]]:
    """How many tracebacks the log holds, and the first lines of the first few."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback")]
    excerpts = []
    for start in starts[:3]:
        end = start + 1
        while end < len(lines) and (lines[end].startswith((" ", "\t")) or end == start + 1):
            end += 1
        excerpts.append("\n".join(lines[max(0, start - 2) : min(end + 1, start + 40)]))
    return len(starts), excerpts


class Supervisor:
    """Task workers for ``server``, one at a time: a worker that exits is counted and
    replaced, as a process manager (systemd, supervisord) would replace it."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self.workers: list[TaskWorker] = []
        self.exits = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            process = self.workers[-1].process
            if process is not None and process.poll() is not None:
                self.exits += 1
                self.workers.append(TaskWorker(self.server).start())

    def __enter__(self) -> Supervisor:
        self.workers.append(TaskWorker(self.server).start())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for worker in self.workers:
            worker.stop()

    def logs(self) -> str:
        return "\n".join(w.log_path.read_text(errors="replace") for w in self.workers)


@contextmanager
def demo_server(
    server_kind: str, workdir: Path, options: Options, database: TcpProxy, cache: TcpProxy
) -> Iterator[LiveServer]:
    """The demo under ``server_kind`` on a fresh database, reached through ``database``
    (created, migrated and, at the end, dropped on the real server, which a cut leaves
    up), and a cache prefix of its own through ``cache``."""
    env = {
        "DATABASE_URL": database.url(options.database_url),
        "REDIS_URL": cache.url(options.redis_url),
        "CACHE_KEY_PREFIX": f"faults-{secrets.token_hex(4)}",
        **UNREACHABLE_RATES,
    }
    server_class = SERVERS[server_kind]
    try:
        with server_class(
            workdir,
            workers=options.workers,
            env=env,
            database_origin=options.database_url,
            ready_path="/health",
        ) as s:
            yield s
    finally:
        forget_cache(options.redis_url, env["CACHE_KEY_PREFIX"])


def forget_cache(url: str, prefix: str) -> None:
    """Delete the run's keys (Django's cache keys begin with the prefix and a colon)."""
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=5)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        client.delete(*keys)


def run(server_kind: str, fault: str, options: Options, workdir: Path) -> Report:
    """One run: the demo under ``server_kind`` and a task worker, loaded, with ``fault``
    ("none", "postgres" or "redis") cut once for ``options.cut_seconds``."""
    report = Report(server_kind, fault)
    run_id = secrets.token_hex(4)
    database = TcpProxy(address(options.database_url, 5432)).start()
    cache = TcpProxy(address(options.redis_url, 6379)).start()
    try:
        with (
            demo_server(server_kind, workdir, options, database, cache) as server,
            Supervisor(server) as supervisor,
        ):
            demo = seed(server)
            deadline = time.monotonic() + options.max_seconds
            load = Load(server.base_url, demo, run_id, options.hang_after, deadline)
            cutter = None
            if fault != "none":
                proxy = database if fault == "postgres" else cache
                begin = load.when_done(options.cut_at)
                load.after_cut.clear()
                cutter = threading.Thread(
                    target=cut_once, args=(proxy, begin, options, load, report), daemon=True
                )
                cutter.start()
            try:
                load.run(options.requests, options.clients)
                if cutter is not None:
                    cutter.join(timeout=options.cut_seconds + 10)
            finally:
                # Whatever stopped the load, the task worker finishes through the proxies.
                database.restore()
                cache.restore()
            report.seconds = round(time.monotonic() - load.started, 1)
            # Counted on the real PostgreSQL, not through the proxy.
            assert server.own_database is not None
            direct = server.own_database[0]
            counts = markers_in_database(direct, run_id)
            accepted = [a.task_id for a in load.answers if a.task_id]
            tasks = task_statuses(direct, accepted, options.task_seconds)
            report.worker_exits = supervisor.exits
            log = server.log_path.read_text(errors="replace")
            worker_log = supervisor.logs()
        report.cut_connections = database.cut_connections + cache.cut_connections
    finally:
        database.stop()
        cache.stop()
    tally(report, load.answers, counts, log)
    report.tasks_accepted = len(accepted)
    report.tasks = dict(sorted(Counter(tasks.values()).items()))
    report.worker_tracebacks, worker_excerpts = tracebacks(worker_log)
    report.log_excerpts += worker_excerpts
    return report


def task_statuses(database_url: str, task_ids: list[str], seconds: float) -> dict[str, str]:
    """The status of each task, once every one has finished or ``seconds`` have passed."""
    import psycopg

    deadline = time.monotonic() + seconds
    statuses: dict[str, str] = {}
    with psycopg.connect(database_url, connect_timeout=10, autocommit=True) as connection:
        while True:
            rows = connection.execute(
                "SELECT id, status FROM mcp_endpoint_tooltask WHERE id = ANY(%s)", (task_ids,)
            ).fetchall()
            statuses = {task_id: "missing" for task_id in task_ids}
            statuses.update({task_id: status for task_id, status in rows})
            if set(statuses.values()) <= TERMINAL or time.monotonic() > deadline:
                return statuses
            time.sleep(0.5)  # polls the worker's progress; the deadline bounds it


def cut_once(
    proxy: TcpProxy, begin: threading.Event, options: Options, load: Load, report: Report
) -> None:
    try:
        if not begin.wait(timeout=options.max_seconds):
            return
        start = time.monotonic()
        proxy.cut()
        # A cut lasts a fixed time, as an outage does; nothing waits on it for ordering.
        time.sleep(options.cut_seconds)
        proxy.restore()
        report.cut = [round(start - load.started, 2), round(time.monotonic() - load.started, 2)]
    finally:
        load.after_cut.set()


def tally(report: Report, answers: list[Answer], counts: Counter[str], log: str) -> None:
    report.requests = len(answers)
    report.slowest = round(max((a.elapsed for a in answers), default=0.0), 2)
    report.outage_reports = log.count(" is unreachable (")
    statuses: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    for answer in answers:
        label = {TRANSPORT_ERROR: "transport", HUNG: "hung"}.get(answer.status, str(answer.status))
        statuses[label] += 1
        by_kind.setdefault(answer.kind, Counter())[label] += 1
        if answer.status == TRANSPORT_ERROR:
            report.transport_errors += 1
        if answer.status == HUNG:
            report.hung += 1
        if answer.status >= 500:
            if answer.fault is None:
                report.correct_503 += 1
            else:
                report.wrong_5xx += 1
                report.wrong_5xx_mcp += answer.path == "/mcp"
                sample(report, answer, f"5xx: {answer.fault}")
        if answer.html_500:
            report.html_500 += 1
        report.streamed += answer.streamed
        if answer.internal_error:
            report.internal_errors += 1
            sample(report, answer, "a tool's internal_error")
        if answer.marker is not None:
            stored = counts.get(answer.marker, 0)
            if answer.succeeded:
                report.writes_succeeded += 1
                if stored == 0:
                    report.lost += 1
                    sample(report, answer, "lost: a success, and no row")
            elif stored:
                report.ambiguous += 1
                sample(report, answer, "ambiguous: an error, and the row exists")
            if stored > 1:
                report.duplicated += 1
                sample(report, answer, f"duplicated: {stored} rows")
    report.statuses = dict(sorted(statuses.items()))
    report.by_kind = {kind: dict(sorted(c.items())) for kind, c in sorted(by_kind.items())}
    if report.cut:
        end = report.cut[1]
        after = sorted((a for a in answers if a.started >= end), key=lambda a: a.started)
        first = next((a for a in after if a.succeeded or a.kind == "read_guide"), None)
        if first is not None:
            report.recovered_after = round(max(0.0, first.started + first.elapsed - end), 2)
            report.failed_after_recovery = sum(
                1
                for a in after
                if a.started > first.started + first.elapsed and not 200 <= a.status < 300
            )
    report.tracebacks, report.log_excerpts = tracebacks(log)


def sample(report: Report, answer: Answer, why: str) -> None:
    """Keep the answer as an example of ``why``, a few of each kind of problem."""
    if sum(1 for kept in report.samples if kept["why"] == why) < SAMPLES:
        report.samples.append(
            {
                "why": why,
                "kind": answer.kind,
                "path": answer.path,
                "status": answer.status,
                "at": round(answer.started, 2),
                "answer": answer.excerpt,
            }
        )


# -- the command --------------------------------------------------------------------------------


def table(reports: list[Report]) -> str:
    head = (
        "| server | cut | requests | s | statuses | 5xx that were correct 503s "
        "| lost | duplicated | ambiguous | hung | HTML 500 | internal_error "
        "| tracebacks: server, worker "
        "| tasks completed | recovered after |"
    )
    rows = [head, "|" + " --- |" * 15]
    for r in reports:
        fives = r.correct_503 + r.wrong_5xx
        statuses = ", ".join(f"{k}: {v}" for k, v in r.statuses.items())
        cut = r.fault
        if r.cut:
            cut += f", {r.cut[1] - r.cut[0]:.0f} s"
        recovered = "" if r.recovered_after is None else f"{r.recovered_after} s"
        tasks = f"{r.tasks.get('completed', 0)} of {r.tasks_accepted}"
        others = {k: v for k, v in r.tasks.items() if k != "completed"}
        if others:
            tasks += " (" + ", ".join(f"{k}: {v}" for k, v in others.items()) + ")"
        if r.worker_exits:
            tasks += f", {r.worker_exits} worker exit(s)"
        rows.append(
            f"| {r.server} | {cut} | {r.requests} | {r.seconds} | {statuses} "
            f"| {r.correct_503} of {fives} | {r.lost} of {r.writes_succeeded} | {r.duplicated} "
            f"| {r.ambiguous} | {r.hung} | {r.html_500} | {r.internal_errors} "
            f"| {r.tracebacks}, {r.worker_tracebacks} "
            f"| {tasks} | {recovered} |"
        )
    return "\n".join(rows)


def parse_runs(text: str) -> list[tuple[str, str]]:
    runs = []
    for item in text.split(","):
        fault, _, server = item.strip().partition(":")
        if fault not in {"none", "postgres", "redis"} or server not in SERVERS:
            raise argparse.ArgumentTypeError(
                f"{item!r}: a run is FAULT:SERVER, FAULT none, postgres or redis, "
                f"SERVER {' or '.join(SERVERS)}"
            )
        runs.append((fault, server))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    defaults = Options()
    parser.add_argument("--requests", type=int, default=defaults.requests)
    parser.add_argument("--clients", type=int, default=defaults.clients)
    parser.add_argument("--cut-seconds", type=float, default=defaults.cut_seconds)
    parser.add_argument("--cut-at", type=float, default=defaults.cut_at)
    parser.add_argument("--hang-after", type=float, default=defaults.hang_after)
    parser.add_argument("--max-seconds", type=float, default=defaults.max_seconds)
    parser.add_argument("--runs", type=parse_runs, default=parse_runs(DEFAULT_RUNS))
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL,
        help="the PostgreSQL beside whose database each run creates its own",
    )
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL)
    parser.add_argument("--json", type=Path, help="write every run's figures here")
    parser.add_argument("--logs", type=Path, help="keep the servers' logs in this folder")
    args = parser.parse_args(argv)
    options = Options(
        requests=args.requests,
        clients=args.clients,
        cut_seconds=args.cut_seconds,
        cut_at=args.cut_at,
        hang_after=args.hang_after,
        max_seconds=args.max_seconds,
        database_url=args.database_url,
        redis_url=args.redis_url,
    )
    reports = []
    with tempfile.TemporaryDirectory(prefix="mcp-faults-") as scratch:
        for number, (fault, server) in enumerate(args.runs, start=1):
            workdir = (args.logs or Path(scratch)) / f"{number}-{server}-{fault}"
            print(f"== run {number}: {server}, cut {fault}", file=sys.stderr, flush=True)
            report = run(server, fault, options, workdir)
            reports.append(report)
            print(json.dumps(asdict(report), indent=1), file=sys.stderr, flush=True)
    print(table(reports))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in reports], indent=2) + "\n")
    return 0 if all(r.held for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
