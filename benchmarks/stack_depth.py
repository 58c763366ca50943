"""CPU time of one request sent from several depths of the Python stack, in one process.

    .venv/bin/python benchmarks/stack_depth.py [--target rest] [--calls 300] [--depths 0:121:6]

The interpreter keeps its frames in chunks of memory and, before CPython's fix for
gh-142183 (one spare chunk per thread, merged in March 2026 and backported to 3.13's
later patch releases), gives a chunk back to the system as soon as the frame that opened
it returns. A loop that calls across a chunk's end then maps and unmaps memory on every
call: the same request costs more, by up to the whole of it, at some depths than at
others. A tool call runs its view deeper
than the REST request runs it, at another depth; this measures how much a request's cost
depends on that depth alone, on the interpreter that runs it.

Each depth sends the ``--target`` probe of ``benchmarks/cpu.py`` (in a process of that
probe's settings, on a fresh SQLite database and file cache) ``--calls`` times from a
function that first calls itself that many times, and prints the CPU milliseconds per
request (``time.thread_time``, with the cyclic garbage collector paused).
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def at_depth(depth: int, send: Callable[[], int], *padding: int) -> int:
    """``send()`` called ``depth`` Python frames deeper than this call, each frame the size
    of a small function's with a few arguments (``padding``)."""
    if depth == 0:
        return send()
    return at_depth(depth - 1, send, *(padding or PADDING))


PADDING = (0,) * 8


def child(name: str, key: str, calls: int, depths: list[int]) -> int:
    import django

    django.setup()
    from benchmarks.cpu import probes, sender

    probe = next(p for p in probes() if p.name == name)
    send = sender(probe, key)
    for _ in range(100):
        send()
    gc.collect()
    gc.freeze()
    gc.disable()
    print(f"{sys.version.split()[0]}; {probe.label}; CPU ms per request by stack depth")
    for depth in depths:
        for _ in range(20):
            at_depth(depth, send)
        started = time.thread_time()
        for _ in range(calls):
            at_depth(depth, send)
        print(f"{depth:4d} {(time.thread_time() - started) * 1000 / calls:7.3f}", flush=True)
    return 0


def parse_depths(text: str) -> list[int]:
    start, stop, step = (int(part) for part in text.split(":"))
    return list(range(start, stop, step))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", default="rest", help="a target of benchmarks/cpu.py")
    parser.add_argument("--calls", type=int, default=300, help="requests per depth")
    parser.add_argument("--depths", default="0:121:6", help="start:stop:step")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--key", default="", help=argparse.SUPPRESS)
    parsed = parser.parse_args(argv)
    depths = parse_depths(parsed.depths)
    if parsed.child:
        return child(parsed.target, parsed.key, parsed.calls, depths)
    from benchmarks.cpu import probes, seeded_database

    every = {p.name: p for p in probes()}
    if parsed.target not in every:
        parser.error(f"unknown target {parsed.target}; of: {', '.join(every)}")
    probe = every[parsed.target]
    with seeded_database("mcp-depth-", "stack depth benchmark") as (env, key, _):
        command = [sys.executable, __file__, "--child", "--key", key, "--target", probe.name]
        command += ["--calls", str(parsed.calls), "--depths", parsed.depths]
        child_env = {**env, **dict(probe.env), "DJANGO_SETTINGS_MODULE": probe.settings}
        return subprocess.run(command, env=child_env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
