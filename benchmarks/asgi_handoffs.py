"""Thread hand-offs and CPU time per request under an ASGI handler, in process.

    .venv/bin/python benchmarks/asgi_handoffs.py [--calls 1000] [--only NAME,...]
        [--handlers django,...] [--callers]

Each target is sent ``--calls`` times to an ASGI application in this one process, with a
hand-made scope, ``receive`` and ``send`` and no server or sockets, on one event loop. It
counts the calls of asgiref's ``SyncToAsync`` and ``AsyncToSync`` per request (each one a
hand-off between the event loop and a thread) and the CPU time this process spent per
request (``time.process_time``: every thread of the process, the event loop's and the
request's). ``--callers`` prints, for one request of each target, what each hand-off ran and
where it was called from.

The handlers: ``django`` is Django's own ``ASGIHandler`` (what ``get_asgi_application()``
returns), ``endpoint`` this project's ``EndpointASGIHandler`` (what
``mcp_endpoint.asgi.get_asgi_application()`` returns), ``wsgi`` the same target through
Django's ``WSGIHandler`` for reference (no hand-off at all). The database and cache are set
up as ``benchmarks/cpu.py`` sets them up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# What each name builds, imported in the child process once Django is set up.
HANDLERS = {
    "wsgi": "django.core.handlers.wsgi.WSGIHandler",
    "django": "django.core.handlers.asgi.ASGIHandler",
    "endpoint": "mcp_endpoint.asgi.EndpointASGIHandler",
}


@dataclass(frozen=True)
class Probe:
    """One request: a GET, or a POST of a JSON-RPC body, with the API key or without."""

    name: str
    label: str
    path: str
    body: str | None = None
    authenticated: bool = True


def probes() -> list[Probe]:
    from benchmarks.run import ADD, LIST_TASKS, PING_BODY

    return [
        Probe("list_tasks", "tools/call list_tasks, API key (ORM)", "/mcp", LIST_TASKS),
        Probe("add", "tools/call add, API key", "/bench/mcp", ADD),
        Probe("ping", "ping, API key", "/mcp", PING_BODY),
        Probe("health", "GET /health (plain Django JSON view)", "/health", authenticated=False),
    ]


class HandOffs:
    """Counts asgiref's hand-offs, and with ``callers`` notes what each ran and from where.

    The two ``__call__`` methods are wrapped on the classes, for this process only.
    """

    def __init__(self) -> None:
        from asgiref.sync import AsyncToSync, SyncToAsync

        self.sync_to_async = 0
        self.async_to_sync = 0
        self.callers: list[str] | None = None
        counter = self
        original_s2a, original_a2s = SyncToAsync.__call__, AsyncToSync.__call__

        async def counted_s2a(self: Any, *args: Any, **kwargs: Any) -> Any:
            counter.sync_to_async += 1
            counter.note("SyncToAsync", self.func)
            return await original_s2a(self, *args, **kwargs)

        def counted_a2s(self: Any, *args: Any, **kwargs: Any) -> Any:
            counter.async_to_sync += 1
            counter.note("AsyncToSync", self.awaitable)
            return original_a2s(self, *args, **kwargs)

        SyncToAsync.__call__ = counted_s2a  # type: ignore[method-assign]
        AsyncToSync.__call__ = counted_a2s  # type: ignore[method-assign]

    def note(self, kind: str, func: Any) -> None:
        if self.callers is None:
            return
        target = getattr(func, "__qualname__", None) or repr(func)
        # The nearest frame outside asgiref and this module: the code that asked for it.
        frames = [
            frame
            for frame in traceback.extract_stack()[:-2]
            if "asgiref" not in frame.filename and not frame.filename.endswith(__file__)
        ]
        site = frames[-1] if frames else None
        where = f"{Path(site.filename).name}:{site.lineno} in {site.name}" if site else "?"
        self.callers.append(f"{kind}({target}) from {where}")

    def total(self) -> tuple[int, int]:
        return self.sync_to_async, self.async_to_sync


def asgi_sender(app: Any, probe: Probe, key: str) -> Callable[[], Awaitable[int]]:
    """A coroutine function that sends ``probe`` once through ``app`` and returns the status."""
    body = (probe.body or "").encode()
    path, _, query = probe.path.partition("?")
    headers = [(b"host", b"127.0.0.1:8000"), (b"accept", b"application/json")]
    if probe.body is not None:
        headers += [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]  # fmt: skip
    if probe.authenticated:
        headers.append((b"authorization", f"Bearer {key}".encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST" if probe.body is not None else "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }

    async def send_once() -> int:
        done = asyncio.Event()
        received: list[bool] = []
        status: list[int] = []

        async def receive() -> dict[str, Any]:
            if not received:
                received.append(True)
                return {"type": "http.request", "body": body, "more_body": False}
            # As a server does: the client leaves only once the answer is complete.
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            elif not message.get("more_body", False):
                done.set()

        await app(dict(scope), receive, send)
        done.set()
        return status[0]

    return send_once


def wsgi_sender(probe: Probe, key: str) -> Callable[[], int]:
    """The same request through Django's WSGI handler, as ``benchmarks/cpu.py`` sends it."""
    from benchmarks.cpu import Probe as WSGIProbe
    from benchmarks.cpu import sender

    return sender(
        WSGIProbe(probe.name, probe.label, probe.path, probe.body, probe.authenticated), key
    )


def child(handler: str, names: list[str], key: str, calls: int, callers: bool) -> int:
    """In a process of its own: each probe through one handler; one line of figures each."""
    import django
    from django.utils.module_loading import import_string

    django.setup()
    counter = HandOffs()
    every = {p.name: p for p in probes()}
    loop = asyncio.new_event_loop()
    if handler != "wsgi":
        app = import_string(HANDLERS[handler])()

    def sender(probe: Probe) -> Callable[[], int]:
        if handler == "wsgi":
            return wsgi_sender(probe, key)
        send_once = asgi_sender(app, probe, key)
        # One loop for every request, as a server keeps one; each request is a task on it.
        return lambda: loop.run_until_complete(send_once())

    for name in names:
        send = sender(every[name])
        status = send()
        if status != 200:
            print(f"{name}: HTTP {status}", file=sys.stderr)
            return 1
        for _ in range(max(20, calls // 10)):
            send()
        before = counter.total()
        started = time.process_time()
        for _ in range(calls):
            send()
        cpu = (time.process_time() - started) * 1000 / calls
        after = counter.total()
        s2a, a2s = ((a - b) / calls for a, b in zip(after, before, strict=True))
        print(f"{name} {s2a:.2f} {a2s:.2f} {cpu:.3f}", flush=True)
        if callers:
            counter.callers = []
            send()
            for line, count in Counter(counter.callers).items():
                print(f"  {count} x {line}", flush=True)
            counter.callers = None
    loop.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per target")
    parser.add_argument("--only", default="", help="comma-separated targets (default: all)")
    parser.add_argument(
        "--handlers", default=",".join(HANDLERS), help="comma-separated handlers (default: all)"
    )
    parser.add_argument(
        "--callers", action="store_true", help="what each hand-off ran, and where from"
    )
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    parser.add_argument("--key", default="", help=argparse.SUPPRESS)
    parsed = parser.parse_args(argv)
    every = [p.name for p in probes()]
    chosen = [n for n in parsed.only.split(",") if n] or every
    if parsed.child:
        return child(parsed.child, chosen, parsed.key, parsed.calls, parsed.callers)
    handlers = [n for n in parsed.handlers.split(",") if n]
    unknown = (set(chosen) - set(every)) | (set(handlers) - set(HANDLERS))
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    from benchmarks.run import environment, manage

    with tempfile.TemporaryDirectory(prefix="mcp-asgi-") as tmp:
        env = environment(Path(tmp))
        manage(env, "migrate", "--noinput")
        manage(env, "seed_demo")
        made = manage(env, "mcp_key", "create", "--user", "alice", "--scopes", "read write",
                      "--name", "asgi benchmark")  # fmt: skip
        key = made.strip().splitlines()[-1]
        # The key in each worker's memory would hide the lookup, which REST pays too
        # (BENCH_KEY_MEMORY_SECONDS=60 in the environment measures with it, on Redis).
        env = {"BENCH_KEY_MEMORY_SECONDS": "0", **env}
        try:
            print(f"{parsed.calls} calls each, in one process; per request:", flush=True)
            print(f"{'handler':8} {'target':12} {'SyncToAsync':>11} {'AsyncToSync':>11} "
                  f"{'CPU ms':>7}", flush=True)  # fmt: skip
            for handler in handlers:
                command = [sys.executable, __file__, "--child", handler, "--key", key,
                           "--calls", str(parsed.calls), "--only", ",".join(chosen)]  # fmt: skip
                if parsed.callers:
                    command.append("--callers")
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    print(f"{handler} failed:\n{done.stdout}\n{done.stderr}", file=sys.stderr)
                    return 1
                labels = {p.name: p.label for p in probes()}
                for line in done.stdout.splitlines():
                    if line.startswith(" "):
                        print(f"{'':22}{line.strip()}")
                        continue
                    name, s2a, a2s, cpu = line.split()
                    print(f"{handler:8} {name:12} {s2a:>11} {a2s:>11} {cpu:>7}  {labels[name]}",
                          flush=True)  # fmt: skip
        finally:
            if env.get("DATABASE_URL"):
                manage(env, "mcp_key", "revoke", key.rsplit("_", 1)[0])
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    sys.exit(main())
