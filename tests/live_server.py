"""Run the demo host as a real server process on loopback, for end-to-end tests.

The server is gunicorn serving ``project.wsgi``, bound to ``127.0.0.1`` on a free port.
Its database is always its own and always migrated before start: a fresh SQLite file in a
temporary folder, or, when ``DATABASE_URL`` is set (CI with PostgreSQL), a fresh database
created beside the one it names and dropped when the server stops, so no run depends on
what an earlier one left behind. Each is a copy of a database migrated once in the run for
the server's schema (:class:`MigratedDatabases`). ``REDIS_URL`` is used as it is. The
``manage.py`` commands run against a server (:func:`manage`, :func:`run_script`) share one
warm Django process per environment (:class:`WarmCommands`). Only the processes this
module started are ever stopped, by their PIDs::

    with LiveServer(tmp_path) as server:
        post(server.url("/conformance/mcp"), ...)
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import fcntl
import hashlib
import json
import locale
import os
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, NoReturn
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests import spawner

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
# The Redis that two server processes of one deployment share in the tests of legacy
# sessions, resumable streams and subscriptions; these run in the SQLite run too, where
# REDIS_URL is unset.
TEST_REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/7")


# How many ports a server tries: free_port() gives a port nothing listens on when it is
# asked, and a server of a test run beside may bind it before this one does.
PORT_ATTEMPTS = 4


class PortTaken(Exception):
    """Another process listens on the port a server was to bind."""


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def require_redis() -> str:
    """:data:`TEST_REDIS_URL` if Redis answers there; otherwise the test is skipped, saying
    why, except under CI, where that is a failure."""
    reason = None
    try:
        import redis

        redis.Redis.from_url(TEST_REDIS_URL, socket_connect_timeout=1).ping()
    except Exception as exc:  # any failure to reach it means the same: no Redis here
        reason = f"no Redis at {TEST_REDIS_URL} ({exc})"
    if reason is not None:
        missing(reason)
    return TEST_REDIS_URL


def missing(reason: str) -> NoReturn:
    """Skip the test for something this machine lacks (a service, a browser, a tool),
    saying what; under CI, where everything must be there, fail it instead."""
    if os.environ.get("CI"):
        pytest.fail(f"CI is set but {reason}")
    pytest.skip(reason)


def venv_command(name: str) -> str:
    """An executable of the environment running the tests (gunicorn, uvicorn, ...)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    return str(ROOT / ".venv" / "bin" / name)


def server_environment(workdir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for the server and for ``manage.py`` commands run against it."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "project.settings"
    env.setdefault("PYTHONUNBUFFERED", "1")
    # The suite's servers are stateless unless a test asks for the demo's sessions ("1").
    env.setdefault("DEMO_MCP_SESSIONS", "0")
    # Passwords checked in milliseconds, as in the test process (tests/conftest.py).
    env.setdefault("DEMO_FAST_PASSWORD_HASHING", "1")
    # Each worker builds the tools of the endpoints its requests reach, not of every
    # endpoint at start: most servers here serve one small one. A test of a large product,
    # whose first request would be slow, turns the warm-up back on ("1").
    env.setdefault("DEMO_WARM_UP", "0")
    # Servers started beside each other (by parallel test processes) share the Redis of
    # the run, and their databases number keys and users alike: a prefix of each server's
    # own (unless the caller names one) keeps one's throttle counters and sessions apart.
    env["CACHE_KEY_PREFIX"] = f"live-{secrets.token_hex(6)}"
    extra = extra or {}
    env.update(extra)
    # Decided after the caller's variables: a server told to leave the run's PostgreSQL or
    # Redis ("DATABASE_URL": "") gets a file and a folder in its own workdir, unless the
    # caller names them; the settings' defaults are the checkout's own db.sqlite3 and
    # cache, which every such server of a run would share, and migrate at once.
    if not env.get("DATABASE_URL") and "SQLITE_PATH" not in extra:
        env["SQLITE_PATH"] = str(workdir / "db.sqlite3")
    if not env.get("REDIS_URL") and "CACHE_DIR" not in extra:
        env["CACHE_DIR"] = str(workdir / "cache")
    # The call log's spool: the server's own, not the checkout's.
    env.setdefault("DEMO_LOG_SPOOL_DIR", str(workdir / "call-spool"))
    return env


def uses_external_database(env: dict[str, str]) -> bool:
    return bool(env.get("DATABASE_URL"))


def create_database(url: str, template: str | None = None) -> str:
    """Create a PostgreSQL database beside the one ``url`` names, empty or a copy of the
    database ``template`` (a URL); its URL."""
    import psycopg
    from psycopg import sql

    name = f"mcp_live_{os.getpid()}_{secrets.token_hex(4)}"
    statement = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template is not None:
        source = urlsplit(template).path.lstrip("/")
        statement += sql.SQL(" TEMPLATE {}").format(sql.Identifier(source))
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(statement)
    return beside(url, name)


def beside(url: str, name: str) -> str:
    """The URL of the database ``name`` on the server of ``url``."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


# What a server process is given that is its own, not its schema's: a server's database
# is a copy of the one a migrate makes for every other key of its environment.
SERVER_OWN_ENV = {"SQLITE_PATH", "CACHE_DIR", "CACHE_KEY_PREFIX", "DATABASE_URL"}
# Variables that shape how a server behaves, never which tables it has: no settings module
# of the suite reads them to choose its INSTALLED_APPS (the demo's DEMO_* knobs, the log
# level, the run's own bookkeeping). Servers that differ only in these share a template.
SCHEMA_FREE_PREFIXES = ("PYTEST_", "DEMO_", "MCP_", "COV_CORE_")
# COLUMNS and LINES: pytest-xdist's test processes have them and their controller may not.
# STATIC_ROOT, SSL_CERT_FILE and TRACES_FILE are files of a test's own folder (each test
# process has its own), PYTHONPATH this checkout, PYTHONUNBUFFERED how a process prints:
# one schema would otherwise be migrated again for every test process, and the host
# apps' takes 20 s of CPU.
SCHEMA_FREE_ENV = {
    "PYTHONUNBUFFERED",
    "CELERY_BROKER_URL",
    "REDIS_URL",
    "TEST_REDIS_URL",
    "TRACES_FILE",
    "STATIC_ROOT",
    "SSL_CERT_FILE",
    "PYTHONPATH",
    "COLUMNS",
    "LINES",
}
# Settings modules of the suite that change how a server behaves (a proxy in front, its
# OAuth URLs left out, spans written to a file, another URL conf), never what it installs:
# their servers share the template of the settings they start from, the host apps' among
# them (the test processes' own database is made from that one too). The test
# tests/test_migrated_templates.py checks that each installs what that one installs.
SAME_SCHEMA_AS = {
    "tests.settings_behind_proxy": "project.settings",
    "tests.settings_oauth_urls_unmounted": "project.settings",
    "tests.settings_traced": "project.settings",
    "tests.hosts.settings": "tests.settings",
    "tests.settings_tenants": "tests.settings",
}
# The run's name, which its test processes share (tests/conftest.py sets it in the
# controlling process before the others start): their templates are the run's.
RUN_ENV = "MCP_TESTS_RUN"
TEMPLATE_PREFIX = "mcp_tpl_"
# A file of the run's folder naming a PostgreSQL template of the run; it holds the URL of
# the database it was created beside.
POSTGRESQL_RECORD = ".postgresql"
TEMPLATES_FOLDER_PREFIX = "mcp-migrated-"


def run_name() -> str | None:
    """The name of the run this process's templates belong to, or None when the process
    keeps its own (it runs alone, outside a run of the suite's pytest)."""
    name = os.environ.get(RUN_ENV)
    return name if name and name.isalnum() else None


class MigratedDatabases:
    """Databases migrated once per run and schema, copied for each server.

    ``manage.py migrate`` costs seconds of CPU, and a run starts dozens of servers on a few
    schemas. The first server of a schema (its settings module and the variables that may
    choose its apps, see :data:`SCHEMA_FREE_ENV`) migrates a template: a SQLite file in the
    run's folder, or a PostgreSQL database. Every server after it, in any test process of
    the run, gets a copy, which is what a migrate would have made: the file copied, or
    ``CREATE DATABASE ... TEMPLATE``. One process migrates a template while the others
    wait on a lock (a file lock, a PostgreSQL advisory lock), and publishes it whole (a
    rename), so a process that dies halfway leaves nothing another would copy.

    The templates go when the run ends (:func:`remove_run_templates`, called by the
    controlling process), or when the process ends if it runs alone. A server whose SQLite
    file exists already (a restart on the same folder) migrates it in place, keeping its data.
    """

    def __init__(self) -> None:
        self.templates: dict[str, str] = {}
        self.folder: Path | None = None
        # The templates this process made for itself alone, removed when it ends.
        self.own_folder: Path | None = None
        self.databases: list[tuple[str, str]] = []
        atexit.register(self.remove)

    @property
    def run(self) -> str | None:
        # Read when a template is first needed, not at import: the controlling process
        # imports this module before it names the run.
        return run_name()

    @staticmethod
    def key(env: dict[str, str], origin: str = "") -> str:
        schema = sorted(
            (name, SAME_SCHEMA_AS.get(value, value) if name == "DJANGO_SETTINGS_MODULE" else value)
            for name, value in env.items()
            if name not in SERVER_OWN_ENV
            and name not in SCHEMA_FREE_ENV
            and not name.startswith(SCHEMA_FREE_PREFIXES)
        )
        return hashlib.sha256(json.dumps([origin, schema]).encode()).hexdigest()[:16]

    def templates_folder(self) -> Path:
        if self.folder is None:
            if self.run is None:
                own = Path(tempfile.mkdtemp(prefix=TEMPLATES_FOLDER_PREFIX))
                self.folder = self.own_folder = own
            else:
                self.folder = run_folder(self.run)
                self.folder.mkdir(exist_ok=True)
        return self.folder

    def sqlite(self, env: dict[str, str]) -> None:
        """Give the server of ``env`` its migrated SQLite file."""
        target = Path(env["SQLITE_PATH"])
        if target.exists():
            migrate(env)
            return
        shutil.copyfile(self.sqlite_template(env), target)

    def sqlite_template(self, env: dict[str, str]) -> str:
        """The run's migrated SQLite file for the schema of ``env``, migrated if need be."""
        key = self.key(env)
        template = self.templates.get(key)
        if template is None:
            template = str(self.templates_folder() / f"{key}.sqlite3")
            with open(f"{template}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not Path(template).exists():
                    partial = Path(f"{template}.{os.getpid()}")
                    try:
                        migrate({**env, "SQLITE_PATH": str(partial)})
                        os.replace(partial, template)
                    finally:
                        partial.unlink(missing_ok=True)
            self.templates[key] = template
        return template

    def postgresql(self, env: dict[str, str], origin: str) -> str:
        """A new migrated database beside ``origin`` for the server of ``env``; its URL."""
        key = self.key(env, origin)
        template = self.templates.get(key)
        if template is None:
            template = self.postgresql_template(env, origin, key)
            self.templates[key] = template
        return create_database(origin, template=template)

    def postgresql_template(self, env: dict[str, str], origin: str, key: str) -> str:
        import psycopg
        from psycopg import sql

        name = f"{TEMPLATE_PREFIX}{self.run or os.getpid()}_{key}"
        url = beside(origin, name)
        with psycopg.connect(origin, autocommit=True) as admin:
            # Held on this connection until it closes: one migrate per template in the run.
            admin.execute("SELECT pg_advisory_lock(hashtext(%s))", [name])
            found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
            if found.fetchone() is None:
                partial = create_database(origin)
                try:
                    migrate({**env, "DATABASE_URL": partial})
                    partial_name = urlsplit(partial).path.lstrip("/")
                    if self.run is not None:
                        # Where it is, for the run's end: the run's own DATABASE_URL may be
                        # unset, or another server's (a test that picks its own).
                        record = self.templates_folder() / f"{name}{POSTGRESQL_RECORD}"
                        record.write_text(origin)
                    admin.execute(
                        sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                            sql.Identifier(partial_name), sql.Identifier(name)
                        )
                    )
                except BaseException:
                    drop_database(partial, origin)
                    raise
                if self.run is None:
                    self.databases.append((url, origin))
        return url

    def remove(self) -> None:
        for url, origin in self.databases:
            with contextlib.suppress(Exception):  # the server may be gone already
                drop_database(url, origin)
        if self.own_folder is not None:
            shutil.rmtree(self.own_folder, ignore_errors=True)


def suite_environment(workdir: Path) -> dict[str, str]:
    """The environment of a ``manage.py`` command with the suite's own settings
    (``tests.settings``, every host app installed): its migrate makes the tables of the
    test processes' own database."""
    env = dict(os.environ)
    env["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    if not env.get("DATABASE_URL"):
        env["SQLITE_PATH"] = str(workdir / "db.sqlite3")
    return env


def suite_template() -> str:
    """The run's migrated template of the test processes' database, migrated if need be: a
    SQLite file's path, or a PostgreSQL database's name (:class:`MigratedDatabases`).

    A test process's database is a copy of it, not a migrate of its own
    (tests/conftest.py): Django's migrate renders the migration state of every host app's
    models again and again, about 20 s of CPU for each test process of each run.
    """
    return template_of(suite_environment)


def template_of(environment: Callable[[Path], dict[str, str]]) -> str:
    """The run's migrated template for the schema of ``environment(workdir)`` (a passing
    folder's), migrated if need be: a SQLite file's path, or a PostgreSQL database's name."""
    workdir = Path(tempfile.mkdtemp(prefix="mcp-template-"))
    try:
        env = environment(workdir)
        if uses_external_database(env):
            origin = env["DATABASE_URL"]
            key = MigratedDatabases.key(env, origin)
            url = migrated_databases.postgresql_template(env, origin, key)
            return urlsplit(url).path.lstrip("/")
        return migrated_databases.sqlite_template(env)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def prepare_templates() -> None:
    """Migrate the run's templates ahead of the test processes that copy them: the
    suite's own database's, then the demo's, which most servers share
    (:class:`MigratedDatabases`).

    The controlling process of a parallel run calls it on a thread as the run starts, so
    that the migrates overlap the test processes' start and collection, instead of every
    test process migrating its own database, or holding the others on a template's lock
    while it migrates. A failure here is left to the first process that needs the
    template: it migrates again, and reports it.
    """
    with contextlib.suppress(Exception):  # the first test process that needs it reports it
        suite_template()
    prepare_demo_template()


def prepare_demo_template() -> None:
    """Migrate the run's template of the demo's schema, ahead of the first server that
    needs it (:func:`prepare_templates`); a failure is left to that server."""
    with contextlib.suppress(Exception):  # the first server that needs it reports it
        template_of(server_environment)


def run_folder(run: str) -> Path:
    return Path(tempfile.gettempdir()) / f"{TEMPLATES_FOLDER_PREFIX}{run}"


def remove_run_templates(run: str, origin: str | None = None) -> None:
    """Remove the templates of the run ``run``: its SQLite folder, the PostgreSQL databases
    its folder records (beside whichever server they were made), and any other beside
    ``origin`` (the run's ``DATABASE_URL`` by default), if there is one."""
    folder = run_folder(run)
    if folder.is_dir():
        for record in folder.glob(f"{TEMPLATE_PREFIX}*{POSTGRESQL_RECORD}"):
            name = record.name.removesuffix(POSTGRESQL_RECORD)
            beside_origin = record.read_text()
            with contextlib.suppress(Exception):  # that server may be gone already
                drop_database(beside(beside_origin, name), beside_origin)
    shutil.rmtree(folder, ignore_errors=True)
    origin = origin or os.environ.get("DATABASE_URL")
    if not origin:
        return
    import psycopg

    with psycopg.connect(origin, autocommit=True) as admin:
        names = admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s",
            [f"{TEMPLATE_PREFIX}{run}_%"],
        ).fetchall()
    for (name,) in names:
        drop_database(beside(origin, name), origin)


migrated_databases = MigratedDatabases()


def drop_database(url: str, via: str) -> None:
    """Drop the database ``url`` names (its connections are ended first), connected to
    ``via``, the database it was created beside."""
    import psycopg
    from psycopg import sql

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(via, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


# Commands that need a new interpreter on purpose: ``migrate`` builds the schema (and the
# templates of :class:`MigratedDatabases`) that every process started after it relies on.
FRESH_COMMANDS = frozenset({"migrate"})


def manage(env: dict[str, str], *args: str, timeout: float = 300, fresh: bool = False) -> str:
    """Run ``manage.py`` with ``env``; the output, or an error carrying it.

    The command runs in the warm process of ``env`` (:data:`warm_commands`), as it would
    in a new ``manage.py`` process but without paying Django's start-up again, unless
    ``fresh`` asks for a new process, or the command is one of :data:`FRESH_COMMANDS`, or
    ``env`` names a template database (nobody may stay connected to one).
    """
    ran = None
    if not fresh and warm_commands.accepts(env, args):
        ran = warm_commands.run(env, args, timeout)
    if ran is None:
        ran = run_fresh(env, args, timeout)
    stdout, stderr, returncode = ran
    if returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed ({returncode}):\n{stdout}\n{stderr}")
    return stdout


def run_fresh(env: dict[str, str], args: tuple[str, ...], timeout: float) -> tuple[str, str, int]:
    """Run ``manage.py`` in a new process; its stdout, stderr and exit status."""
    return run_python(env, (str(ROOT / "manage.py"), *args), timeout)


def run_python(env: dict[str, str], args: tuple[str, ...], timeout: float) -> tuple[str, str, int]:
    """Run this interpreter with ``args`` in the checkout, as ``manage.py`` runs; its
    stdout, stderr and exit status."""
    command = [sys.executable, *args]
    stdout, stderr, returncode = spawner.run(command, cwd=ROOT, env=env, timeout=timeout)
    return decoded(stdout), decoded(stderr), returncode


# Apps that :func:`migrate` applies before the rest. django-oauth-toolkit's migrations alter
# fields that point at the user model, and for each such change Django's migrate renders
# again every model related to the one altered: with the host apps' hundreds of models in
# the migration state (each points at a user), the toolkit's migration that makes its
# labels translatable cost 7 s of CPU, and a migrate of the suite's schema 15 s. Applied
# first, before those models are in the state, the same migrations render a handful of
# models: the same tables (tests/test_migrated_templates.py) in about 60 % of the CPU. A
# product's own ``manage.py migrate``, and the tests of it (tests/test_hosts.py, the
# quickstart, the demo), keep Django's order.
MIGRATE_FIRST = ("oauth2_provider",)


def migrate(env: dict[str, str], timeout: float = 300) -> str:
    """Migrate the database of ``env`` in a new process, as ``manage.py migrate --noinput``
    would, :data:`MIGRATE_FIRST` first; its output, or an error carrying it. The system
    checks are left to the servers and commands that use the database: a template needs
    its tables only."""
    script = "from tests.live_server import migrate_in_order; migrate_in_order()"
    stdout, stderr, returncode = run_python(env, ("-c", script), timeout)
    if returncode != 0:
        raise RuntimeError(f"manage.py migrate failed ({returncode}):\n{stdout}\n{stderr}")
    return stdout


def migrate_in_order() -> None:
    """The process of :func:`migrate`: Django set up as ``manage.py`` sets it up."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django

    django.setup()
    from django.apps import apps
    from django.core.management import call_command
    from django.db import connections

    installed = {config.label for config in apps.get_app_configs()}
    try:
        for label in MIGRATE_FIRST:
            if label in installed:
                call_command("migrate", label, interactive=False, verbosity=0)
        call_command("migrate", interactive=False, verbosity=0)
    finally:
        # As manage.py does after a command: a SQLite database in WAL mode is whole in its
        # file only once its last connection closes, and the template is that file.
        connections.close_all()


def decoded(data: bytes) -> str:
    """``data`` as ``subprocess.run(..., text=True)`` would have read it from a pipe."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def serve_commands() -> None:
    """The loop of a warm process (:class:`WarmCommandProcess`): Django set up once, then
    one ``manage.py`` command per line read, its output written to files of the folder
    named by ``sys.argv[1]``, its exit status answered in a line.

    Each command is run as a new ``manage.py`` process would run it: what it and anything
    it calls print to the process's stdout and stderr (file descriptors 1 and 2, so
    ``print()``, ``self.stdout`` and logging alike) goes to that command's files only; a
    ``CommandError`` is reported as ``manage.py`` reports it, any other exception as a
    traceback. After it, the database connections are closed, so that the next command
    sees what others committed meanwhile and nothing holds the database between commands.
    """
    folder = Path(sys.argv[1])
    # The requests and answers keep pipes of their own: a command that reads stdin or
    # prints finds /dev/null and its own files, never the conversation with the parent.
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    idle = os.dup(2)  # the process's log: where stray output goes between commands
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(idle, 1)
    sys.path.insert(0, str(ROOT))  # what running manage.py from ROOT puts first
    sys.argv = [str(ROOT / "manage.py")]
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

    import django

    django.setup()
    from django.core.management import CommandError, call_command
    from django.core.management.commands import shell
    from django.db import connections

    stdout, stderr = sys.stdout, sys.stderr
    # Django before 5.2 runs ``shell -c`` in the globals of its own module: the names a
    # script defines would be there for the next one.
    shell_globals = dict(vars(shell))
    answers.write("ready\n")
    answers.flush()
    for line in requests:
        args = json.loads(line)
        returncode = 0
        with (folder / "stdout").open("wb") as out, (folder / "stderr").open("wb") as err:
            for stream in (stdout, stderr):
                stream.flush()  # what was printed between commands stays in the log
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            try:
                call_command(*args)
            except CommandError as exc:
                # As BaseCommand.run_from_argv reports it from the command line.
                sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
                returncode = exc.returncode
            except SystemExit as exc:
                if isinstance(exc.code, int) or exc.code is None:
                    returncode = exc.code or 0
                else:
                    sys.stderr.write(f"{exc.code}\n")
                    returncode = 1
            except Exception:  # what the interpreter of a new process would print and exit on
                traceback.print_exc()
                returncode = 1
            finally:
                for stream in (sys.stdout, sys.stderr, stdout, stderr):
                    with contextlib.suppress(Exception):  # a script may have closed it
                        stream.flush()
                sys.stdout, sys.stderr = stdout, stderr
                os.dup2(idle, 1)
                os.dup2(idle, 2)
                vars(shell).clear()
                vars(shell).update(shell_globals)
                connections.close_all()
        answers.write(json.dumps({"returncode": returncode}) + "\n")
        answers.flush()


class WarmCommandProcess:
    """A Python process that set Django up once for ``env`` and runs ``manage.py`` commands
    on request (:func:`serve_commands`), each in milliseconds instead of a new
    interpreter's second or more. Stopped by its PID (:meth:`stop`); it also ends by
    itself when the test process does, as its requests pipe closes."""

    def __init__(self, env: dict[str, str], timeout: float) -> None:
        self.env = dict(env)
        self.folder = Path(tempfile.mkdtemp(prefix="mcp-warm-"))
        self.log_path = self.folder / "log"
        self.busy = False
        self._pending = b""
        with self.log_path.open("wb") as log:
            self.process: subprocess.Popen[bytes] = spawner.popen(
                [
                    sys.executable, "-c",
                    "from tests.live_server import serve_commands; serve_commands()",
                    str(self.folder),
                ],
                cwd=ROOT, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log,
            )  # fmt: skip
        try:
            ready = self.read_line(timeout)
        except BaseException:
            self.stop()
            raise
        if ready != "ready":
            log_text = tail(self.log_path, 40, "(no log)")
            self.stop()
            raise RuntimeError(f"The warm manage.py process did not start:\n{log_text}")

    def alive(self) -> bool:
        return self.process.poll() is None

    def read_line(self, timeout: float) -> str | None:
        """The next line the process answers, ``None`` if it ended first; waits no longer
        than ``timeout`` (and no thread waits for it)."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(self.process.args, timeout)
            readable, _, _ = select.select([fd], [], [], remaining)
            if readable:
                data = os.read(fd, 65536)
                if not data:
                    return None
                self._pending += data
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode()

    def send(self, args: tuple[str, ...]) -> bool:
        """Hand the process a command; False if it is gone (the command never started)."""
        assert self.process.stdin is not None
        if not self.alive():
            return False
        try:
            self.process.stdin.write(json.dumps(list(args)).encode() + b"\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError):
            return False
        return True

    def finish(self, args: tuple[str, ...], timeout: float) -> tuple[str, str, int]:
        """Wait for the command :meth:`send` handed over; its stdout, stderr and status."""
        try:
            line = self.read_line(timeout)
        except subprocess.TimeoutExpired as exc:
            self.stop()
            raise subprocess.TimeoutExpired(
                ["manage.py", *args], timeout, output=self.output("stdout"),
                stderr=self.output("stderr"),
            ) from exc  # fmt: skip
        stdout, stderr = self.output("stdout"), self.output("stderr")
        if line is None:
            # The command ended the process (os._exit, a crash): as a new process would
            # have, it failed, and the process is replaced next time.
            returncode = self.process.wait(timeout=30)
            log_text = tail(self.log_path, 40, "")
            return stdout, stderr + log_text, returncode or 1
        answer: dict[str, int] = json.loads(line)
        return stdout, stderr, answer["returncode"]

    def output(self, name: str) -> str:
        try:
            return decoded((self.folder / name).read_bytes())
        except OSError:
            return ""

    def stop(self) -> None:
        """End the process this object started: its requests pipe closed, it leaves its
        loop; one that does not within 5 s is killed, by its PID."""
        process = self.process
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class WarmCommands:
    """The warm ``manage.py`` processes of this test process, one per environment (the
    exact ``env`` dict: a server's ``env``), started on a first command and stopped when
    the environment's server stops (:meth:`stop_for`) or this process ends.

    A test that runs several commands against one server (a seed, a key, scripts that read
    its database) pays Django's start-up once instead of once per command. At most
    :attr:`limit` are kept, the least recently used stopped first, as each holds a Django
    process's memory.
    """

    limit = 4

    def __init__(self) -> None:
        self.processes: dict[str, WarmCommandProcess] = {}
        self.lock = threading.Lock()
        atexit.register(self.stop_all)

    @staticmethod
    def key(env: dict[str, str]) -> str:
        return json.dumps(sorted(env.items()))

    def accepts(self, env: dict[str, str], args: tuple[str, ...]) -> bool:
        """Whether the command may run in a warm process: not one of
        :data:`FRESH_COMMANDS`, and not against a template database, which ``CREATE
        DATABASE ... TEMPLATE`` can copy only while nobody is connected to it."""
        if not args or args[0] in FRESH_COMMANDS:
            return False
        # Every template, this process's or another's, is known by its name.
        database = urlsplit(env.get("DATABASE_URL", "")).path.lstrip("/")
        folder = Path(env.get("SQLITE_PATH", "")).parent.name
        return not (
            database.startswith(TEMPLATE_PREFIX) or folder.startswith(TEMPLATES_FOLDER_PREFIX)
        )

    def run(
        self, env: dict[str, str], args: tuple[str, ...], timeout: float
    ) -> tuple[str, str, int] | None:
        """Run the command in the warm process of ``env`` (started, or replaced if it
        died); its stdout, stderr and status, or ``None`` if that process is busy with
        another thread's command (the caller runs it in a new process instead)."""
        key = self.key(env)
        with self.lock:
            warm = self.processes.pop(key, None)
            if warm is not None and warm.busy:
                self.processes[key] = warm
                return None
            if warm is not None:
                warm.busy = True
                self.processes[key] = warm  # the most recently used last
        try:
            if warm is None or not warm.send(args):
                if warm is not None:
                    self.discard(key, warm)
                    warm = None
                try:
                    warm = self.start(key, env, timeout)
                except (RuntimeError, subprocess.TimeoutExpired):
                    # Django does not start with this environment: a new manage.py
                    # process fails as the caller would have seen it fail before.
                    return None
                if not warm.send(args):
                    self.discard(key, warm)
                    return None
            ran = warm.finish(args, timeout)
        except BaseException:
            if warm is not None:
                self.discard(key, warm)
            raise
        with self.lock:
            warm.busy = False
        if not warm.alive():
            self.discard(key, warm)
        return ran

    def start(self, key: str, env: dict[str, str], timeout: float) -> WarmCommandProcess:
        warm = WarmCommandProcess(env, timeout)
        warm.busy = True
        with self.lock:
            self.processes[key] = warm
            idle = [k for k, other in self.processes.items() if not other.busy]
            surplus = max(0, len(self.processes) - self.limit)
            evicted = [self.processes.pop(k) for k in idle[:surplus]]
        for other in evicted:
            other.stop()
        return warm

    def discard(self, key: str, warm: WarmCommandProcess) -> None:
        with self.lock:
            if self.processes.get(key) is warm:
                del self.processes[key]
        warm.stop()

    def stop_for(self, env: dict[str, str]) -> None:
        """Stop the warm processes of ``env``, and of any environment that uses its
        database (the server of ``env`` is stopping; its database goes with it)."""
        own = {env.get("DATABASE_URL"), env.get("SQLITE_PATH")} - {None}
        with self.lock:
            stopping = [
                (key, warm)
                for key, warm in self.processes.items()
                if warm.env == env
                or own & {warm.env.get("DATABASE_URL"), warm.env.get("SQLITE_PATH")}
            ]
            for key, _ in stopping:
                del self.processes[key]
        for _, warm in stopping:
            warm.stop()

    def stop_all(self) -> None:
        with self.lock:
            stopping = list(self.processes.values())
            self.processes.clear()
        for warm in stopping:
            warm.stop()

    def pids(self) -> dict[str, int]:
        """The PID of each warm process, by environment key."""
        with self.lock:
            return {key: warm.process.pid for key, warm in self.processes.items()}


warm_commands = WarmCommands()


class ReadyCommand:
    """A ``manage.py`` command loaded ahead and run on cue, for a test that races a worker.

    Django's start-up (seconds on a loaded machine) happens in :meth:`__enter__`; :meth:`run`
    only runs the command, in milliseconds, so what it does lands inside the window the
    test is watching, not after it::

        with ReadyCommand(env, "mcp_key", "revoke", prefix) as revoke:
            ...  # wait for the moment
            revoke.run()
    """

    SCRIPT = (
        "import os, sys\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'project.settings')\n"
        "import django\n"
        "django.setup()\n"
        "from django.core.management import call_command\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
        "call_command(*sys.argv[1:])\n"
        "print('done', flush=True)\n"
    )

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.env = env
        self.args = args
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ReadyCommand:
        self.process = spawner.popen(
            [sys.executable, "-c", self.SCRIPT, *self.args],
            cwd=ROOT,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.expect("ready")
        return self

    def expect(self, line: str) -> None:
        assert self.process is not None and self.process.stdout is not None
        for said in self.process.stdout:
            if said.strip() == line:
                return
        self.process.wait(timeout=60)
        stderr = self.process.stderr.read() if self.process.stderr else ""
        raise RuntimeError(f"{' '.join(self.args)} ended before {line!r}:\n{stderr}")

    def run(self) -> None:
        """Run the command now; back once it is done (its writes committed)."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        self.expect("done")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.process.kill()
            self.process.wait(timeout=30)
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()


def run_script(env: dict[str, str], script: str, *, fresh: bool = False) -> str:
    """Run Python ``script`` in the host's ``manage.py shell``; what it printed. ``fresh``
    as for :func:`manage`.

    Django 5.2's shell imports the models first (and says so); ``--no-imports`` keeps the
    output to what the script prints. Earlier versions import nothing and lack the flag.
    """
    import django

    quiet = ["--no-imports"] if django.VERSION >= (5, 2) else []
    return manage(env, "shell", *quiet, "-c", script, fresh=fresh)


def run_to_its_death(
    env: dict[str, str], script: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """Run Python ``script`` with ``args`` in a new interpreter of ``env``, expecting it to
    kill itself (SIGKILL, as a crash would); what it printed, checked that it died so."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stdout, done.stderr)
    return done


def gunicorn_bound(log: str, port: int, pid: int) -> bool | None:
    """What gunicorn's ``log`` says of its bind to ``port``: True once its master ``pid``
    listens there, False when another process holds the port, None before either."""
    if f"Listening at: http://{HOST}:{port} ({pid})" in log:
        return True
    if f"Connection in use: ('{HOST}', {port})" in log:
        return False
    return None


def uvicorn_bound(log: str, port: int) -> bool | None:
    """What uvicorn's ``log`` (this start's alone) says of its bind to ``port``: True once
    it listens there, False when its bind was refused (the OSError it logs before it
    exits), None before either."""
    if f"Uvicorn running on http://{HOST}:{port} (" in log:
        return True
    if f"[Errno {errno.EADDRINUSE}]" in log:
        return False
    return None


def wait_for_bind(
    log: Path,
    bound: Callable[[str], bool | None],
    process: subprocess.Popen[bytes],
    timeout: float,
) -> bool:
    """Wait until ``bound`` reads in ``log`` that ``process`` listens on its port (True) or
    that another process holds that port (False); fail if it exits or time runs out.

    A port from :func:`free_port` is one nothing listened on when it was asked for, and a
    server of a test run beside may bind it first: its answers are not this process's, so
    the port is not polled until the process's own log says it is its.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        printed = read_log(log)
        said = bound(printed)
        if said is not None:
            return said
        if process.poll() is not None:
            raise RuntimeError(f"The server exited with {process.returncode}:\n{printed}")
        time.sleep(0.05)
    raise RuntimeError(f"The server did not listen within {timeout} s:\n{read_log(log)}")


def read_log(path: Path) -> str:
    """The whole of a log file, or "" when there is none yet."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def tail(path: Path, lines: int, absent: str) -> str:
    """The last ``lines`` lines of a log file, or ``absent`` when there is none."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return absent
    return "\n".join(text.splitlines()[-lines:])


def terminate(process: subprocess.Popen[bytes] | None) -> None:
    """Stop a process this module started (SIGTERM, then SIGKILL after 15 s), by its PID."""
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


# The servers (and task workers) running in this test process, and those stopped since the
# current test began, whose logs a failing test's report shows (tests/conftest.py): a live
# test's assertion sees the client's side only.
running_logs: dict[int, tuple[str, Path]] = {}
stopped_logs: dict[int, tuple[str, Path]] = {}


def stopped_log(owner: object) -> None:
    entry = running_logs.pop(id(owner), None)
    if entry is not None:
        stopped_logs[id(owner)] = entry


def forget_stopped_logs() -> None:
    """A new test begins: the servers stopped before it are not its own."""
    stopped_logs.clear()


def recent_log_tails(lines: int = 40) -> list[tuple[str, str]]:
    """The last lines of the log of each server and worker running now or stopped during
    the current test, with its name."""
    entries = [*running_logs.values(), *stopped_logs.values()]
    return [(name, tail(path, lines, "(no log)")) for name, path in entries]


class LiveServer:
    """gunicorn serving the host on ``127.0.0.1:<port>``; a context manager (see also
    :class:`UvicornServer`, the same under ASGI).

    With ``DATABASE_URL`` set, the server gets a database of its own, created empty and
    dropped at stop, unless ``share_database`` names a running server whose database it
    joins (two processes of one deployment). ``migrate`` runs the migrations before start.
    ``database_origin`` is the PostgreSQL server that ``DATABASE_URL`` reaches, when the
    server reaches it another way (through a :class:`TcpProxy`): the server's database and
    its template are made, and dropped, there, which stays up when the other way is gone.
    """

    def __init__(
        self,
        workdir: Path,
        *,
        workers: int = 2,
        migrate: bool = True,
        share_database: LiveServer | None = None,
        env: dict[str, str] | None = None,
        database_origin: str | None = None,
        ready_path: str = "/",
        startup_timeout: float = 120.0,
        worker_timeout: int = 120,
    ) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.workers = workers
        self.migrate = migrate
        self.env = server_environment(self.workdir, env)
        self.own_database: tuple[str, str] | None = None
        if share_database is not None and "CACHE_KEY_PREFIX" not in (env or {}):
            # Two processes of one deployment share its cache, as they share its database.
            self.env["CACHE_KEY_PREFIX"] = share_database.env["CACHE_KEY_PREFIX"]
        if share_database is not None and uses_external_database(share_database.env):
            self.env["DATABASE_URL"] = share_database.env["DATABASE_URL"]
        elif uses_external_database(self.env):
            reached = self.env["DATABASE_URL"]
            origin = database_origin or reached
            if migrate:
                own = migrated_databases.postgresql(self.env, origin)
            else:
                own = create_database(origin)
            self.own_database = (own, origin)
            self.env["DATABASE_URL"] = beside(reached, urlsplit(own).path.lstrip("/"))
        self.ready_path = ready_path
        self.startup_timeout = startup_timeout
        # gunicorn's own default (30 s) kills a worker whose request a loaded machine slows
        # past it, and the client sees a connection closed with no answer; a test of that
        # timeout passes gunicorn's default.
        self.worker_timeout = worker_timeout
        self.port = free_port()
        self.log_path = self.workdir / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    # -- lifecycle -----------------------------------------------------------------------

    def command(self) -> list[str]:
        """The server's command line: gunicorn with sync workers.

        Several workers are forked from a master that loaded the application
        (``--preload``, as docs/deployment.md describes it: Django's start-up and the
        tools' schemas paid once, not in each worker); a single worker loads it itself,
        so the suite serves both ways a product starts its workers.
        """
        preload = ["--preload"] if self.workers > 1 else []
        return [
            venv_command("gunicorn"),
            *preload,
            "project.wsgi",
            "-b",
            f"{HOST}:{self.port}",
            "-w",
            str(self.workers),
            "--chdir",
            str(ROOT),
            "--graceful-timeout",
            "5",
            "--timeout",
            str(self.worker_timeout),
            "--access-logfile",
            "-",
        ]

    def start(self) -> LiveServer:
        try:
            if self.migrate and self.own_database is None and "SQLITE_PATH" in self.env:
                migrated_databases.sqlite(self.env)
            elif self.migrate and self.own_database is None:
                migrate(self.env)
        except BaseException:
            self.stop()
            raise
        for attempt in range(PORT_ATTEMPTS):
            try:
                return self.run_on_port()
            except PortTaken:
                if attempt + 1 == PORT_ATTEMPTS:
                    self.stop()
                    raise
                # Another server of the run took the port between free_port() and this
                # server's bind (both asked for one at once): this one moves.
                self.end_process()
                self.port = free_port()
            except BaseException:
                self.stop()
                raise
        raise AssertionError("unreachable")

    def run_on_port(self) -> LiveServer:
        """Start the server's process on :attr:`port` and wait until it serves; raise
        :class:`PortTaken` if another process holds that port."""
        self._log = self.log_path.open("wb")
        self.process = spawner.popen(
            self.command(), cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT
        )
        running_logs[id(self)] = (f"{type(self).__name__} {self.base_url}", self.log_path)
        self.wait_ready()
        return self

    def end_process(self) -> None:
        process, self.process = self.process, None
        terminate(process)
        if self._log is not None:
            self._log.close()
            self._log = None

    def bound(self, log: str) -> bool | None:
        """What the server's log says of its bind (:func:`gunicorn_bound`)."""
        assert self.process is not None
        return gunicorn_bound(log, self.port, self.process.pid)

    def wait_ready(self) -> None:
        """Wait until a worker answers HTTP (any status), or fail with the server's log.

        An answer counts once the server's log says that it listens on its own port
        (:func:`wait_for_bind`); :class:`PortTaken` when another process holds it.
        """
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout
        if not wait_for_bind(self.log_path, self.bound, self.process, self.startup_timeout):
            raise PortTaken(f"{self.base_url} is another process's:\n{self.log_tail()}")
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"The server exited with {self.process.returncode} before it answered:\n"
                    + self.log_tail()
                )
            try:
                with urllib.request.urlopen(self.url(self.ready_path), timeout=2):
                    return
            except urllib.error.HTTPError:
                return  # any HTTP answer means a worker is serving
            except (OSError, urllib.error.URLError) as exc:
                last_error = exc
            time.sleep(0.2)
        raise RuntimeError(
            f"The server did not answer on {self.base_url} within {self.startup_timeout} s "
            f"({last_error}):\n" + self.log_tail()
        )

    def stop(self) -> None:
        """Stop the gunicorn master this object started (it stops its own workers)."""
        stopped_log(self)
        self.end_process()
        warm_commands.stop_for(self.env)
        database, self.own_database = self.own_database, None
        if database is not None:
            drop_database(*database)

    def log_tail(self, lines: int = 60) -> str:
        return tail(self.log_path, lines, "(no server log)")

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class UvicornServer(LiveServer):
    """The host under uvicorn (ASGI) instead of gunicorn, with the same lifecycle."""

    def command(self) -> list[str]:
        # uvicorn's command line, its listening socket known as TCP (mcp_endpoint.uvicorn).
        return [
            venv_command("python"), "-m", "mcp_endpoint.uvicorn",
            "project.asgi:application",
            "--host", HOST,
            "--port", str(self.port),
            "--workers", str(self.workers),
            "--app-dir", str(ROOT),
        ]  # fmt: skip

    def bound(self, log: str) -> bool | None:
        return uvicorn_bound(log, self.port)

    def stop(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGINT)
        super().stop()


class TaskWorker:
    """A ``manage.py mcp_task_worker`` process (django-tasks-db's worker, kept running
    through database outages) beside a live server: it runs the long-running tools' tasks
    from the server's database. ``env`` overrides the server's (a ``DATABASE_URL`` through
    a :class:`TcpProxy`, say). Stopped by its PID::

        with LiveServer(tmp_path) as server, TaskWorker(server):
            ...
    """

    # What the worker prints once it has said it is alive.
    ready_line = b"ready (backend"

    def __init__(
        self,
        server: LiveServer,
        *,
        interval: float = 0.1,
        env: dict[str, str] | None = None,
    ) -> None:
        self.server = server
        self.interval = interval
        self.env = {**server.env, **(env or {})}
        self.log_path = server.workdir / f"worker-{secrets.token_hex(3)}.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> TaskWorker:
        self._log = self.log_path.open("ab")
        self.process = spawner.popen(
            [
                sys.executable, str(ROOT / "manage.py"), "mcp_task_worker",
                "--interval", str(self.interval), "--no-startup-delay", "-v", "2",
            ],
            cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        running_logs[id(self)] = (f"task worker of {self.server.base_url}", self.log_path)
        self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the worker has said it is alive (the server announces tasks from
        then on), or fail with its log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ready_line in self.log_path.read_bytes():
                return
            if not self.alive():
                break
            time.sleep(0.1)
        raise RuntimeError(f"The task worker did not start:\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the worker this object started, as a crash would: no clean-up at all."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=15)

    def stop(self) -> None:
        """Stop the worker this object started; it finishes the task it is running."""
        process, self.process = self.process, None
        stopped_log(self)
        terminate(process)
        if self._log is not None:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        return tail(self.log_path, lines, "(no worker log)")

    def __enter__(self) -> TaskWorker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class CeleryWorker(TaskWorker):
    """A Celery worker process (``celery -A project.celery worker``) beside a live server
    whose ``TASKS`` name :class:`mcp_endpoint.celery.CeleryBackend` on ``queue``: one
    process, one task at a time (``--pool solo``), so that :meth:`kill` kills the very
    process running the tool. Stopped by its PID."""

    ready_line = b" ready."

    def __init__(self, server: LiveServer, queue: str) -> None:
        super().__init__(server)
        self.queue = queue
        self.name = f"mcp-{secrets.token_hex(3)}"

    def start(self) -> CeleryWorker:
        self._log = self.log_path.open("ab")
        self.process = spawner.popen(
            [
                sys.executable, "-m", "celery", "-A", "project.celery", "worker",
                "-Q", self.queue, "--pool", "solo", "-n", f"{self.name}@%h",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
                "--loglevel", "INFO",
            ],
            cwd=ROOT, env=self.env, stdout=self._log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        running_logs[id(self)] = (f"Celery worker of {self.server.base_url}", self.log_path)
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self


class TcpProxy:
    """A TCP proxy on ``127.0.0.1:<port>`` in front of ``target`` (host, port), in threads
    of the test process: an outage of the service behind it for the processes that connect
    through it only. :meth:`cut` closes every connection through it and stops listening, so
    that new connections are refused, until :meth:`restore`. Its threads are daemons;
    leaving the context (or :meth:`stop`) closes everything::

        with TcpProxy(("127.0.0.1", 5432)) as proxy:
            url = proxy.url("postgres://postgres@127.0.0.1:5432/db")
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.connections = 0
        self.cut_connections = 0

    def url(self, url: str) -> str:
        """``url`` with its host and port replaced by this proxy's."""
        parts = urlsplit(url)
        userinfo = parts.netloc.rpartition("@")[0]
        netloc = (userinfo + "@" if userinfo else "") + f"{HOST}:{self.port}"
        return urlunsplit(parts._replace(netloc=netloc))

    def start(self) -> TcpProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # The port was just listened on and has connections in TIME_WAIT: bind it again.
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((HOST, self.port))
        listener.listen(256)
        listener.settimeout(0.2)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def _accept(self, listener: socket.socket) -> None:
        while True:
            with self._lock:
                if self._listener is not listener:
                    return  # cut or stopped
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener was closed under us: a cut or the stop
            client.settimeout(None)
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                if self._listener is not listener:
                    client.close()
                    upstream.close()
                    return
                self._sockets.update((client, upstream))
                self.connections += 1
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass  # the other side went away, or the connection was cut: close both
        finally:
            self._close(source, sink)

    def _close(self, *sockets: socket.socket) -> None:
        for sock in sockets:
            with self._lock:
                self._sockets.discard(sock)
            # The pump of the other direction may have shut it down already.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def cut(self) -> int:
        """Close every proxied connection and stop listening; how many were closed."""
        with self._lock:
            listener, self._listener = self._listener, None
            sockets = list(self._sockets)
        if listener is not None:
            # shutdown() stops a listening socket at once, even while the accepting thread
            # is still polling it; close() alone leaves it open until that poll returns.
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        self._close(*sockets)
        closed = len(sockets) // 2
        self.cut_connections += closed
        return closed

    def restore(self) -> None:
        """Listen again, if a cut is under way."""
        with self._lock:
            cut = self._listener is None
        if cut:
            self.start()

    def stop(self) -> None:
        self.cut()

    def __enter__(self) -> TcpProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def address(url: str, default_port: int) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or HOST, parts.port or default_port


SERVERS: dict[str, type[LiveServer]] = {"gunicorn": LiveServer, "uvicorn": UvicornServer}


@dataclass
class DemoHost:
    """A live server of the demo host and an API key for alice, with the look-ups that
    tests of destructive tools need: a task of her own to delete, and whether it is gone."""

    server: LiveServer
    key: str

    def new_task(self) -> int:
        """A fresh task in alice's first project, so each test deletes its own."""
        out = manage(
            self.server.env,
            "shell",
            "-c",
            "from project.tracker.models import Project, Task\n"
            "p = Project.objects.filter(owner__username='alice').order_by('pk').first()\n"
            "print(Task.objects.create(project=p, title='Delete me').pk)\n",
        )
        return int(out.strip().splitlines()[-1])

    def task_exists(self, pk: int) -> bool:
        out = manage(
            self.server.env,
            "shell",
            "-c",
            "from project.tracker.models import Task\n"
            f"print(Task.objects.filter(pk={pk}).exists())\n",
        )
        return out.strip().splitlines()[-1] == "True"
