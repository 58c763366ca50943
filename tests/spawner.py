"""Python processes for the suite's servers, workers and commands, forked from a parent that
has already imported the libraries they all load.

A live server, a task worker or a ``manage.py`` command is a new interpreter that spends
most of its start-up importing Django, DRF, drf-spectacular, psycopg, jsonschema and the
rest (about 0.7 s of CPU on these machines, out of 1.2 s before it serves), and a run of
the suite starts hundreds. :func:`popen` starts such a process as a fork of one kept per
test process (:func:`serve`, the "zygote") that imported those libraries once, without
configuring Django: the child then sets its environment, its working folder and its
standard streams, and runs the command line it was given (``python -c``, ``python -m``,
a script such as ``manage.py`` or a console script such as ``gunicorn``) as a new
interpreter would, Django's set-up and the application's own imports included. What it
does not share with a new interpreter is the parent's hash seed and the libraries'
import-time state, none of which a server or command of this suite reads.

:func:`popen` answers an object with :class:`subprocess.Popen`'s interface (``pid``,
``poll``, ``wait``, ``send_signal``, ``terminate``, ``kill``, pipes). A command line that
is not this interpreter's, or an environment whose ``PYTHON*`` variables would start an
interpreter differently, gets a plain :class:`subprocess.Popen`.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

# What the zygote imports before it forks: the modules whose import is most of a server's
# or command's start-up, none of which reads Django's settings when imported. A module
# missing from a combination, or one that needs settings after all, is left out.
PRELOAD = (
    "asgiref.sync",
    "django.core.handlers.wsgi",
    "django.core.handlers.asgi",
    "django.core.management",
    "django.core.serializers.json",
    "django.db.models",
    "django.db.backends.sqlite3.base",
    "django.db.backends.postgresql.base",
    "django.contrib.postgres.fields",
    "django.forms",
    "django.http",
    "django.template.defaulttags",
    "django.template.loader_tags",
    "django.test",
    "django.urls",
    "django.views.generic",
    "rest_framework.fields",
    "rest_framework.serializers",
    "rest_framework.renderers",
    "rest_framework.parsers",
    "rest_framework.request",
    "rest_framework.response",
    "rest_framework.exceptions",
    "drf_spectacular.plumbing",
    "oauthlib.oauth2",
    "jwt",
    "cryptography.x509",
    "jsonschema",
    "yaml",
    "psycopg",
    "redis",
    "pydantic",
    "httpx",
    "gunicorn.app.wsgiapp",
    "gunicorn.workers.sync",
    "uvicorn",
    "celery",
    "whitenoise.middleware",
    "corsheaders.middleware",
    "django_filters",
    "opentelemetry.trace",
)

# The environment variables a new interpreter reads as it starts: a child whose values
# differ from the zygote's would not start as the zygote did, and gets a process of its
# own. PYTHONUNBUFFERED is the exception: the child's streams are made as it asks.
STARTUP_ONLY = "PYTHONUNBUFFERED"


def zygote_environment() -> dict[str, str]:
    """The zygote's environment: this process's, without a Django settings module, so
    that no library it imports can configure Django for its children."""
    return {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}


def _interpreter_variables(env: dict[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in env.items()
        if name.startswith("PYTHON") and name != STARTUP_ONLY
    }


# -- the zygote ------------------------------------------------------------------------


def serve() -> None:
    """The zygote's loop: import :data:`PRELOAD`, then fork a child for each request read
    from the socket on file descriptor ``sys.argv[1]``, answering its PID, and report
    each child's exit status as it ends. Ends when the test process closes its end."""
    channel = socket.socket(fileno=int(sys.argv[1]))
    for name in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    channel.sendall(json.dumps({"ready": True}).encode())
    while True:
        readable, _, _ = select.select([channel, wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
        _report_exits(channel)
        if channel not in readable:
            continue
        message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        if not message:
            break  # the test process is gone; its children run on, as plain ones would
        request = json.loads(message)
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, fds, (channel.fileno(), wake_read, wake_write))
        for fd in fds:
            os.close(fd)
        channel.sendall(json.dumps({"pid": pid}).encode())


def _report_exits(channel: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        channel.sendall(json.dumps({"exit": pid, "returncode": code}).encode())


def _child(request: dict[str, Any], fds: list[int], zygote_fds: tuple[int, ...]) -> None:
    """The forked child: become the process the request describes, run it, exit."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in zygote_fds:
            os.close(fd)
        if request["new_session"]:
            os.setsid()
        for target, fd in zip(request["streams"], fds, strict=True):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _standard_streams(bool(request["env"].get(STARTUP_ONLY)))
        code = _run(request["argv"])
    except BaseException:  # what a new interpreter would print before exiting
        traceback.print_exc()
    _exit(code)


def _standard_streams(unbuffered: bool) -> None:
    """New stdin, stdout and stderr on file descriptors 0 to 2, buffered as a new
    interpreter's would be (``-u`` when ``unbuffered``)."""

    def writer(fd: int, errors: str, line_buffering: bool) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "w", closefd=False)
        if unbuffered:
            return io.TextIOWrapper(raw, encoding="utf-8", errors=errors, write_through=True)
        return io.TextIOWrapper(
            io.BufferedWriter(raw),
            encoding="utf-8",
            errors=errors,
            line_buffering=line_buffering or raw.isatty(),
        )

    reader = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdin = sys.__stdin__ = reader
    sys.stdout = sys.__stdout__ = writer(1, "strict", False)
    sys.stderr = sys.__stderr__ = writer(2, "backslashreplace", True)


def _run(argv: list[str]) -> int:
    """Run ``argv`` (this interpreter's arguments after its path) as a new interpreter
    would; its exit status."""
    import runpy

    try:
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            sys.path[0] = ""
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(argv[1], "<string>", "exec"), vars(main))
        elif argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(argv[0])
            sys.argv = [argv[0], *argv[1:]]
            sys.path[0] = os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        traceback.print_exc()
        return -signal.SIGINT
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


def _exit(code: int) -> None:
    """End the child as an interpreter ends: its threads joined, ``atexit`` run, its
    streams flushed."""
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


# -- the test process's side --------------------------------------------------------------


class Zygote:
    """This test process's zygote: started on first use, one per interpreter."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.channel: socket.socket | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self.exits: dict[int, int] = {}
        self.variables: dict[str, str] = {}
        self.owner = 0

    def start(self) -> socket.socket:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = zygote_environment()
        root = Path(__file__).resolve().parent.parent
        self.process = subprocess.Popen(
            [
                sys.executable, "-c", "from tests.spawner import serve; serve()",
                str(theirs.fileno()),
            ],
            cwd=root, env=env, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
        )  # fmt: skip
        theirs.close()
        ready = ours.recv(1 << 16)
        if not ready:
            raise RuntimeError("the zygote ended before it was ready")
        self.variables = _interpreter_variables(env)
        self.channel = ours
        self.owner = os.getpid()
        return ours

    def accepts(self, args: Sequence[str], env: dict[str, str]) -> bool:
        if os.environ.get("MCP_TESTS_NO_ZYGOTE"):
            return False
        if not args or not _ours(args[0]):
            return False
        started = self.channel is not None and self.owner == os.getpid()
        expected = self.variables if started else _interpreter_variables(zygote_environment())
        return _interpreter_variables(env) == expected

    def spawn(
        self, argv: list[str], cwd: str, env: dict[str, str], fds: list[int], new_session: bool
    ) -> int:
        with self.lock:
            channel = self.channel
            if channel is None or self.owner != os.getpid():
                channel = self.start()
            request = {
                "argv": argv,
                "cwd": cwd,
                "env": env,
                "streams": [0, 1, 2][: len(fds)],
                "new_session": new_session,
            }
            socket.send_fds(channel, [json.dumps(request).encode()], fds)
            while True:
                answer = self._receive(channel, None)
                if answer is not None and "pid" in answer:
                    return int(answer["pid"])

    def _receive(self, channel: socket.socket, timeout: float | None) -> dict[str, Any] | None:
        readable, _, _ = select.select([channel], [], [], timeout)
        if not readable:
            return None
        message = channel.recv(1 << 16)
        if not message:
            raise RuntimeError("the zygote ended")
        answer: dict[str, Any] = json.loads(message)
        if "exit" in answer:
            self.exits[int(answer["exit"])] = int(answer["returncode"])
        return answer

    def returncode(self, pid: int, timeout: float | None) -> int | None:
        """The exit status of child ``pid`` once it has ended, waiting up to ``timeout``
        (``None``: as long as it takes; 0: not at all)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self.lock:
                if pid in self.exits:
                    return self.exits[pid]
                assert self.channel is not None
                remaining = 0.05 if deadline is None else max(0.0, deadline - time.monotonic())
                self._receive(self.channel, min(remaining, 0.05))
                if pid in self.exits:
                    return self.exits[pid]
            if deadline is not None and time.monotonic() >= deadline:
                return None


zygote = Zygote()


def _ours(executable: str) -> bool:
    """Whether ``executable`` is this interpreter, or a script of its virtualenv that it
    runs (a console script such as gunicorn: its first line names the interpreter)."""
    if _is_interpreter(executable):
        return True
    try:
        with open(executable, "rb") as script:
            first = script.readline(512)
    except OSError:
        return False
    return first.startswith(b"#!") and _is_interpreter(first[2:].strip().decode(errors="replace"))


def _is_interpreter(executable: str) -> bool:
    """Whether ``executable`` starts this interpreter in this virtualenv (its own path, or
    another name for the interpreter in the same folder), not the one it was made from."""
    if executable == sys.executable:
        return True
    path, ours = Path(executable), Path(sys.executable)
    return (
        path.parent == ours.parent
        and path.name.startswith("python")
        and os.path.realpath(path) == os.path.realpath(ours)
    )


class Forked:
    """A child of the zygote, with the part of :class:`subprocess.Popen`'s interface the
    suite uses."""

    def __init__(
        self,
        args: list[str],
        pid: int,
        stdin: IO[Any] | None,
        stdout: IO[Any] | None,
        stderr: IO[Any] | None,
    ) -> None:
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = zygote.returncode(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = zygote.returncode(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.wait()


def _stream_fd(value: Any, name: str, mode: str, closing: list[int]) -> tuple[int, IO[Any] | None]:
    """The file descriptor the child gets for one of its streams, and the parent's end
    of a pipe asked for with ``subprocess.PIPE``."""
    if value is None:
        return {"stdin": 0, "stdout": 1, "stderr": 2}[name], None
    if value == subprocess.DEVNULL:
        fd = os.open(os.devnull, os.O_RDWR)
        closing.append(fd)
        return fd, None
    if value == subprocess.PIPE:
        read, write = os.pipe()
        if mode == "w":  # the parent writes to the child's stdin
            closing.append(read)
            return read, os.fdopen(write, "wb")
        closing.append(write)
        return write, os.fdopen(read, "rb")
    if isinstance(value, int):
        return value, None
    return value.fileno(), None


def popen(
    args: list[str],
    *,
    cwd: str | os.PathLike[str],
    env: dict[str, str],
    stdin: Any = None,
    stdout: Any = None,
    stderr: Any = None,
    text: bool = False,
    start_new_session: bool = False,
) -> Any:
    """Start ``args`` as :class:`subprocess.Popen` would, forked from the zygote when it
    is this interpreter's command line (see the module's docstring)."""
    if not zygote.accepts(args, env):
        return subprocess.Popen(
            args, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr, text=text,
            start_new_session=start_new_session,
        )  # fmt: skip
    argv = list(args[1:]) if _is_interpreter(args[0]) else list(args)
    closing: list[int] = []
    try:
        in_fd, in_pipe = _stream_fd(stdin, "stdin", "w", closing)
        out_fd, out_pipe = _stream_fd(stdout, "stdout", "r", closing)
        if stderr == subprocess.STDOUT:
            err_fd, err_pipe = out_fd, None
        else:
            err_fd, err_pipe = _stream_fd(stderr, "stderr", "r", closing)
        pid = zygote.spawn(argv, str(cwd), dict(env), [in_fd, out_fd, err_fd], start_new_session)
    finally:
        for fd in closing:
            os.close(fd)
    pipes: list[IO[Any] | None] = [in_pipe, out_pipe, err_pipe]
    if text:  # the child's stdin is written a line at a time, as Popen(text=True) does
        pipes = [
            None
            if pipe is None
            else io.TextIOWrapper(pipe, encoding="utf-8", line_buffering=i == 0)
            for i, pipe in enumerate(pipes)
        ]
    return Forked(list(args), pid, *pipes)


def run(
    args: list[str], *, cwd: str | os.PathLike[str], env: dict[str, str], timeout: float
) -> tuple[bytes, bytes, int]:
    """Run ``args`` to its end (:func:`popen`), its stdin empty; what it wrote to stdout
    and stderr, and its exit status. A run past ``timeout`` is killed and raises
    :class:`subprocess.TimeoutExpired`."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        out.seek(0)
        err.seek(0)
        return out.read(), err.read(), returncode
