"""CPU time per request in process: the load-independent figure of the benchmarks.

    .venv/bin/python benchmarks/cpu.py [--calls 2000] [--profile NAME] [--only NAME,...]
    .venv/bin/python benchmarks/cpu.py --heap [--calls 6000]

Each target is sent ``--calls`` times straight to Django's WSGI handler, in this one
process and thread, with no server and no sockets, and the CPU time this process spent
(``time.process_time``) is divided by the calls. Other programs on the machine slow the
wall clock, not this process's CPU time, so the figures hold on a shared machine where
``run.py``'s rates scatter. ``--profile NAME`` runs that target under cProfile instead and
prints the functions that cost the most. ``--heap`` sends a mix of the targets of
``benchmarks.settings`` (as the memory row's wrk script does) and prints how much Python's
own allocations grew over ``--calls`` requests after a warm-up, and where (tracemalloc).

Each target runs in a process of its own with the settings of ``run.py``'s setup that
measures it: ``benchmarks.settings`` (no throttles, no call log), the same with the key
cache on, or the demo host as configured (its throttle, protocol limit and call log, the
rates out of reach). The database is a fresh SQLite file and the cache a file cache, or
``DATABASE_URL`` / ``REDIS_URL`` when set (migrated and seeded, which is idempotent; the
key made here is revoked at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Probe:
    """One request sent to the WSGI handler: a GET, or a POST of a JSON-RPC body."""

    name: str
    label: str
    path: str
    body: str | None = None
    authenticated: bool = True
    # The settings module, and environment variables the host's settings read.
    settings: str = "benchmarks.settings"
    env: tuple[tuple[str, str], ...] = ()


def probes() -> list[Probe]:
    from benchmarks.run import ADD, LIST_TASKS, PING_BODY, UNREACHABLE_RATES, call, rpc

    demo = tuple(UNREACHABLE_RATES.items())
    # A write tool's call: a task in the first project of the key's user, which the child
    # finds once its database is set up (the seeded projects' ids differ by database).
    create_task = call("create_task", {"project": "{project}", "title": "a benchmark task"})
    cache = (("BENCH_API_KEY_CACHE_SECONDS", "300"),)
    # Each worker's memory of keys is on by default where the cache is Redis: the rows
    # other than add-memory measure without it, so that they mean the same on either cache.
    no_memory = (("BENCH_KEY_MEMORY_SECONDS", "0"),)
    return [
        Probe("health", "GET /health (plain Django JSON view)", "/health", authenticated=False),
        Probe("add-open", "tools/call add, no credential", "/bench/open-mcp", ADD, False),
        Probe("add", "tools/call add, API key", "/bench/mcp", ADD, env=no_memory),
        Probe("add-cache", "tools/call add, API key, key cache on", "/bench/mcp", ADD,
              env=(*cache, *no_memory)),
        Probe("add-local", "tools/call add, API key, key cache in local memory", "/bench/mcp",
              ADD, env=(*cache, *no_memory, ("BENCH_KEY_CACHE_LOCAL", "1"))),
        Probe("add-memory", "tools/call add, API key, each worker's memory of keys (Redis only)",
              "/bench/mcp", ADD),
        Probe("ping", "ping, API key", "/bench/mcp", PING_BODY),
        Probe("tools-list", "tools/list, first page, API key", "/bench/mcp", rpc("tools/list")),
        Probe("tools-list-all", "tools/list, all 501 in one page, API key", "/bench/mcp-all",
              rpc("tools/list")),
        Probe("rest", "GET /api/tasks/?page=1, API key", "/api/tasks/?page=1"),
        Probe("list_tasks", "tools/call list_tasks, API key", "/mcp", LIST_TASKS),
        Probe("health-demo", "GET /health, demo as configured", "/health", authenticated=False,
              settings="project.settings", env=demo),
        Probe("ping-demo", "ping, API key, demo as configured", "/mcp", PING_BODY,
              settings="project.settings", env=demo),
        Probe("rest-demo", "GET /api/tasks/?page=1, demo as configured", "/api/tasks/?page=1",
              settings="project.settings", env=demo),
        Probe("list_tasks-demo", "tools/call list_tasks, demo as configured (call log on)",
              "/mcp", LIST_TASKS, settings="project.settings", env=demo),
        Probe("create_task-demo", "tools/call create_task, demo as configured (call log on)",
              "/mcp", create_task, settings="project.settings", env=demo),
    ]  # fmt: skip


def body_of(probe: Probe) -> str | None:
    """The probe's body, with the id of the key's user's first project filled in."""
    if probe.body is None or '"{project}"' not in probe.body:
        return probe.body
    from django.contrib.auth import get_user_model

    from project.tracker.models import Project

    user = get_user_model().objects.get(username="alice")
    project = Project.objects.filter(owner=user).order_by("pk").values_list("pk", flat=True)[0]
    return probe.body.replace('"{project}"', str(project))


def sender(probe: Probe, key: str) -> Callable[[], int]:
    """A function that sends ``probe`` once through the WSGI handler and returns the status."""
    from django.core.handlers.wsgi import WSGIHandler

    handler = WSGIHandler()
    body = (body_of(probe) or "").encode()
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "POST" if probe.body is not None else "GET",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": "127.0.0.1:8000",
        # What run.py's wrk sends: no event stream, so no tool call streams.
        "HTTP_ACCEPT": "application/json",
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    path, _, query = probe.path.partition("?")
    environ["PATH_INFO"] = path
    environ["QUERY_STRING"] = query
    if probe.body is not None:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
    if probe.authenticated:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    status: list[str] = []

    def start_response(line: str, headers: Any, exc_info: Any = None) -> None:
        status.append(line)

    def send() -> int:
        status.clear()
        response = handler({**environ, "wsgi.input": io.BytesIO(body)}, start_response)
        for _chunk in response:
            pass
        response.close()  # type: ignore[attr-defined]  # request_finished, as a server does
        return int(status[0].split()[0])

    return send


def measure(send: Callable[[], int], calls: int) -> float:
    """CPU milliseconds per call, over ``calls`` calls after a warm-up."""
    for _ in range(max(20, calls // 10)):
        send()
    started = time.process_time()
    for _ in range(calls):
        send()
    return (time.process_time() - started) * 1000 / calls


def instrument(state: str) -> None:
    """Turn callgrind's counting on or off for this process (it runs under valgrind)."""
    control = ["callgrind_control", "--instr", state, str(os.getpid())]
    subprocess.run(control, capture_output=True, check=True, timeout=600)


def instructions(out: Path) -> int:
    """The instructions callgrind counted, from its output file."""
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")) and int(line.split()[1]):
            return int(line.split()[1])
    raise SystemExit(f"no instruction count in {out}")


@contextlib.contextmanager
def seeded_database(prefix: str, key_name: str) -> Iterator[tuple[dict[str, Any], str, str]]:
    """A migrated and seeded database (a fresh SQLite file and file cache in a temporary
    folder, or ``DATABASE_URL`` / ``REDIS_URL``), the environment to reach it, an API key
    of alice's named ``key_name`` on it, and the folder; the key is revoked at the end on a
    database that outlives the run."""
    from benchmarks.run import environment, manage

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        env = environment(Path(tmp))
        manage(env, "migrate", "--noinput")
        manage(env, "seed_demo")
        made = manage(env, "mcp_key", "create", "--user", "alice", "--scopes", "read write",
                      "--name", key_name)  # fmt: skip
        key = made.strip().splitlines()[-1]
        try:
            yield env, key, tmp
        finally:
            if env.get("DATABASE_URL"):
                manage(env, "mcp_key", "revoke", key.rsplit("_", 1)[0])


def child(name: str, key: str, calls: int, profile: bool, top: int, callers: str) -> int:
    """In a process of the probe's own settings: measure or profile one probe."""
    import django

    django.setup()
    probe = next(p for p in probes() if p.name == name)
    send = sender(probe, key)
    status = send()
    if status != 200:
        print(f"{probe.label}: HTTP {status}", file=sys.stderr)
        return 1
    if os.environ.get("CPU_BENCH_CALLGRIND"):
        measure(send, 20)
        instrument("on")
        for _ in range(calls):
            send()
        instrument("off")
        return 0
    if not profile:
        print(f"{measure(send, calls):.3f}")
        return 0
    measure(send, 50)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(calls):
        send()
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    for pattern in filter(None, callers.split(",")):
        stats.print_callers(pattern)
    return 0


HEAP_MIX = ("add", "ping", "rest", "list_tasks", "health")


def heap_child(key: str, calls: int, top: int) -> int:
    """The growth of Python's allocations over ``calls`` mixed requests, and where."""
    import gc
    import tracemalloc

    import django

    django.setup()
    every = {p.name: p for p in probes()}
    senders = [sender(every[name], key) for name in HEAP_MIX]

    def drive(count: int) -> None:
        for index in range(count):
            status = senders[index % len(senders)]()
            if status != 200:
                raise SystemExit(f"{HEAP_MIX[index % len(senders)]}: HTTP {status}")

    drive(2000)
    gc.collect()
    tracemalloc.start(8)
    drive(500)
    gc.collect()
    before = tracemalloc.take_snapshot()
    drive(calls)
    gc.collect()
    grown = tracemalloc.take_snapshot().compare_to(before, "traceback")
    total = sum(stat.size_diff for stat in grown)
    print(f"Python allocations grew by {total / 1024:+.1f} KiB over {calls} mixed requests")
    for stat in grown[:top]:
        print(f"  {stat.size_diff / 1024:+.1f} KiB in {stat.count_diff:+d} blocks at")
        print("    " + "\n    ".join(stat.traceback.format()[-4:]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="calls per target")
    parser.add_argument("--only", default="", help="comma-separated targets (default: all)")
    parser.add_argument("--profile", default="", help="profile this target with cProfile")
    parser.add_argument("--top", type=int, default=40, help="functions the profile prints")
    parser.add_argument("--callers", default="", help="with --profile: callers of these functions")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per call with valgrind's callgrind instead (slow: use "
        "--calls 100 or so)",
    )
    parser.add_argument(
        "--heap",
        action="store_true",
        help="the growth of Python's allocations over --calls mixed requests (tracemalloc)",
    )
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--key", default="", help=argparse.SUPPRESS)
    parsed = parser.parse_args(argv)
    if parsed.child == "heap":
        return heap_child(parsed.key, parsed.calls, min(parsed.top, 10))
    if parsed.child:
        return child(
            parsed.child, parsed.key, parsed.calls, bool(parsed.profile), parsed.top, parsed.callers
        )
    every = {p.name: p for p in probes()}
    chosen = [n for n in parsed.only.split(",") if n] or list(every)
    if parsed.profile:
        chosen = [parsed.profile]
    if parsed.heap:
        chosen = ["heap"]
        every["heap"] = Probe("heap", "a mix of " + ", ".join(HEAP_MIX), "")
    unknown = set(chosen) - set(every)
    if unknown:
        parser.error(f"unknown targets: {', '.join(sorted(unknown))}; of: {', '.join(every)}")
    with seeded_database("mcp-cpu-", "cpu benchmark") as (env, key, tmp):
        unit = "instructions (millions)" if parsed.instructions else "CPU ms"
        if not (parsed.profile or parsed.heap):
            print(f"{parsed.calls} calls each; {unit} per call, in one process", flush=True)
        for name in chosen:
            probe = every[name]
            command = [sys.executable, __file__, "--child", name, "--key", key]
            command += ["--calls", str(parsed.calls), "--top", str(parsed.top)]
            child_env = {**env, **dict(probe.env), "DJANGO_SETTINGS_MODULE": probe.settings}
            out = Path(tmp) / f"callgrind.{name}"
            if parsed.profile or parsed.heap:
                if parsed.profile:
                    command += ["--profile", name, "--callers", parsed.callers]
            elif parsed.instructions:
                # Counting starts after the warm-up, when the child turns it on.
                command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                           f"--callgrind-out-file={out}", *command]  # fmt: skip
                child_env["CPU_BENCH_CALLGRIND"] = "1"
            done = subprocess.run(
                command,
                env=child_env,
                capture_output=not (parsed.profile or parsed.heap),
                text=True,
                check=False,
            )
            if done.returncode != 0:
                print(f"{name} failed:\n{done.stdout}\n{done.stderr}", file=sys.stderr)
                return 1
            if parsed.instructions:
                count = instructions(out) / parsed.calls / 1e6
                print(f"{name:16} {count:6.3f}  {probe.label}", flush=True)
            elif not (parsed.profile or parsed.heap):
                cpu = float(done.stdout.strip().splitlines()[-1])
                print(f"{name:16} {cpu:6.3f}  {probe.label}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
