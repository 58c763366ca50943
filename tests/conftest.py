"""Shared fixtures: demo users and projects, API keys, and a JSON-RPC client for /mcp."""

from __future__ import annotations

import contextlib
import gc
import os
import secrets
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from mcp_endpoint.models import APIKey
from project.tracker.models import Project, Task
from tests.mcp_client import MCPClient

# Modules whose servers (module-scoped fixtures) start once for all their tests. Under
# pytest-xdist one test process runs each of them whole, so that they start once in the
# run, not once in every process; every other test goes to whichever process is free.
# (xdist's own xdist_group marks are lost under pytest 9: they rename a node through an
# attribute pytest no longer reads.) tests/test_dev.py checks that the list is complete.
WHOLE_MODULES = frozenset(
    f"tests/test_{name}.py"
    for name in (
        "browser",
        "calllog_crash",
        "celery_live",
        "conformance",
        "credential_live",
        "doctor",
        "dynamic_toolsets_live",
        "e2e_drf",
        "e2e_hosts_sdk",
        "e2e_modern",
        "e2e_sdk",
        "e2e_ts",
        "host_email_user",
        "host_files_live",
        "host_generated_live",
        "host_tenants_live",
        "limits_live",
        "live_server",
        "machine_clients",
        "ui_browser",
        "oauth_live",
        "overview_browser",
        "packaging",
        "resumption",
        "scale_out",
        "sessions",
        "stream_access",
        "streaming",
        "subscriptions",
        "tasks_live",
        "tracing_live",
    )
)


# The controlling process's thread that migrates the run's templates (pytest_configure).
TEMPLATE_THREAD = pytest.StashKey[threading.Thread]()


def pytest_configure(config: pytest.Config) -> None:
    # The controlling process names the run, before its test processes start: they share
    # the run's migrated templates (tests/live_server.py). Always a new name, so that a run
    # started by a test (./dev's own tests) never takes its caller's templates as its own.
    if not hasattr(config, "workerinput"):
        from tests import live_server

        os.environ[live_server.RUN_ENV] = secrets.token_hex(6)
        if config.getoption("numprocesses", None):
            # The templates migrate while the test processes start and collect.
            thread = threading.Thread(
                target=live_server.prepare_templates, name="mcp-template", daemon=True
            )
            thread.start()
            config.stash[TEMPLATE_THREAD] = thread


def pytest_unconfigure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):
        from tests import live_server

        thread = config.stash.get(TEMPLATE_THREAD, None)
        if thread is not None:
            thread.join()  # before its template is removed with the run's

        run = os.environ.get(live_server.RUN_ENV)
        if run:
            live_server.remove_run_templates(run)


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None, django_db_use_migrations: bool
) -> Iterator[None]:
    """The test database starts as a copy of the run's migrated template
    (:func:`tests.live_server.suite_template`), not as a migrate of each test process's own.

    pytest-django's setup still runs Django's migrate, which then finds every migration
    applied. On PostgreSQL the test database is created from the template (Django's
    ``TEST["TEMPLATE"]``); an in-memory SQLite database cannot be, so the template is
    copied into it (SQLite's backup) as that migrate begins on a database with no tables.
    """
    if not django_db_use_migrations:  # --no-migrations: tables from the models, no template
        yield
        return
    import sqlite3

    from django.conf import settings
    from django.core.management.commands import migrate
    from django.db import connections

    from tests import live_server

    template = live_server.suite_template()
    database = settings.DATABASES["default"]
    if database["ENGINE"] != "django.db.backends.sqlite3":
        test = database.setdefault("TEST", {})
        test["TEMPLATE"] = template
        yield
        test.pop("TEMPLATE", None)
        return

    migrate_handle = migrate.Command.handle

    def handle(self: migrate.Command, *args: Any, **options: Any) -> Any:
        connection = connections[options["database"]]
        if (
            connection.vendor == "sqlite"
            and connection.is_in_memory_db()
            and not connection.introspection.table_names()
        ):
            connection.ensure_connection()
            with contextlib.closing(sqlite3.connect(template)) as source:
                source.backup(connection.connection)
        return migrate_handle(self, *args, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(migrate.Command, "handle", handle)
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failing test's report ends with the logs of the servers and workers it ran on:
    what a live test's client saw (a 500, a dropped connection) is explained there."""
    report = yield
    live_server = sys.modules.get("tests.live_server")
    if report.failed and live_server is not None:
        for name, text in live_server.recent_log_tails():
            report.sections.append((f"log of {name}", text))
    return report


def pytest_runtest_setup(item: pytest.Item) -> None:
    live_server = sys.modules.get("tests.live_server")
    if live_server is not None:
        live_server.forget_stopped_logs()


# The fixtures through which a test reaches the database, the cache or a server process
# (which reaches both) without a marker that says so.
BACKEND_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "live_server",
        "private_cache",
    }
)
# Set on a test that :func:`pytest_collection_modifyitems` marked ``once`` because it
# reaches no backend; :func:`_no_backend` holds it to that.
BACKEND_FREE = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that reaches neither the database nor the cache runs in the SQLite run only
    (it is marked ``once`` before ``-m`` deselects): its outcome cannot depend on the
    backends. pytest-django refuses the database to a test without ``django_db``; the
    cache, Redis and child processes are refused by :func:`_no_backend`, so a test that
    needs one says so (``backends``) rather than passing here for the wrong reason."""
    for item in items:
        if any(
            item.get_closest_marker(name) is not None
            for name in ("django_db", "e2e", "backends", "once")
        ):
            continue
        if BACKEND_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            continue
        item.add_marker(pytest.mark.once)
        item.stash[BACKEND_FREE] = True


@pytest.fixture(autouse=True)
def _no_backend(request: pytest.FixtureRequest, _clear_cache: None) -> Iterator[None]:
    """For a test marked ``once`` because it reaches no backend: reaching the cache, Redis
    or a child process (a server, a command) fails it, naming the marker it needs."""
    if not request.node.stash.get(BACKEND_FREE, False):
        yield
        return
    import subprocess

    import redis.connection
    from django.core.cache import CacheHandler

    def refused(what: str) -> Callable[..., Any]:
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(
                f"{request.node.nodeid} reaches {what} though it has no database marker: "
                "mark it @pytest.mark.backends, so that every database run runs it"
            )

        return refuse

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(CacheHandler, "__getitem__", refused("the cache"))
        patch.setattr(redis.connection.AbstractConnection, "connect", refused("Redis"))
        patch.setattr(subprocess.Popen, "__init__", refused("a child process"))
        yield


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadScopeScheduling

    class WholeModules(LoadScopeScheduling):
        """xdist's scheduling by scope, whose scope is the module for the modules in
        :data:`WHOLE_MODULES` and the test itself for every other."""

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if module in WHOLE_MODULES else nodeid

    return WholeModules(config, log)


@pytest.fixture(scope="session", autouse=True)
def _release_stream_workers(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    # Streamed calls run in a pool of threads whose database connections persist (as a
    # request thread's do under CONN_MAX_AGE); end those threads, and with them their
    # connections, before the test database is dropped.
    yield
    from mcp_endpoint import streaming

    streaming.stream_pool.shutdown()
    gc.collect()
    with django_db_blocker.unblock():
        end_other_sessions()


def end_other_sessions() -> None:
    """End every other session on this process's PostgreSQL test database.

    A thread of the test process other than the main one (an in-process ASGI handler's
    pool, a test's own) keeps its connection under CONN_MAX_AGE until the thread and its
    connection are collected. One still open when pytest-django drops the database fails
    the drop ("is being accessed by other users") and leaves the database behind: seen
    at the end of several runs, an idle session whose last statement was a tool call's.
    Live servers have databases of their own, so nothing else belongs on this one.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture(scope="session", autouse=True)
def _hosts_built_under_their_own_urls() -> None:
    # A registration finds its routes in the URL conf in use when it is built, once per
    # process. A deployment has one URL conf; this suite has one per host app, and any
    # test that runs the system checks builds every endpoint there is. Build each host's
    # endpoints under the host's own URL conf first, as its tests and a deployment would.
    from django.test import override_settings

    from tests.hosts import host_endpoints

    for host, endpoints in host_endpoints().items():
        with override_settings(ROOT_URLCONF=f"tests.hosts.{host}.urls"):
            for endpoint in endpoints:
                for registration in endpoint.registrations:
                    registration.build(database=False)


def forget_dropped_endpoints(before: weakref.WeakSet[Any]) -> None:
    """Collect the endpoints made since ``before`` that nothing holds any more.

    An endpoint holds reference cycles, so one a test made and let go stays in
    ``mcp_endpoint.endpoint.endpoints``, which the system checks walk, until the collector
    runs: a deliberately broken one (an app that cannot be served, a malformed skill) then
    fails whichever test checks every endpoint next in that process. A whole collection
    costs about a tenth of a second, so it runs only after the few tests that leave a new
    endpoint behind; one that something still holds (a URL conf's) stays.
    """
    from mcp_endpoint.endpoint import endpoints

    if any(endpoint not in before for endpoint in endpoints):
        gc.collect()


@pytest.fixture(autouse=True)
def _dropped_endpoints_forgotten() -> Iterator[None]:
    from mcp_endpoint.endpoint import endpoints

    before: weakref.WeakSet[Any] = weakref.WeakSet(endpoints)
    yield
    forget_dropped_endpoints(before)


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    # Test users need passwords, not a million PBKDF2 rounds each.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def french(settings: Any) -> Iterator[dict[str, str]]:
    """Pages in the language a request asks for (LocaleMiddleware); the headers that ask
    for French."""
    from django.utils import translation

    middleware = list(settings.MIDDLEWARE)
    sessions = middleware.index("django.contrib.sessions.middleware.SessionMiddleware")
    middleware.insert(sessions + 1, "django.middleware.locale.LocaleMiddleware")
    settings.MIDDLEWARE = middleware
    try:
        yield {"Accept-Language": "fr"}
    finally:
        # LocaleMiddleware leaves the language it chose active in this thread, where the
        # tests that follow would then read French messages.
        translation.deactivate()


@pytest.fixture(autouse=True)
def _clear_cache() -> Iterator[None]:
    # Throttle counters live in the cache; every test starts with a fresh budget.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def alice(db: Any) -> Any:
    return get_user_model().objects.create_user("alice", "alice@example.com", "pw-alice-123")


@pytest.fixture
def bob(db: Any) -> Any:
    return get_user_model().objects.create_user("bob", "bob@example.com", "pw-bob-123")


@pytest.fixture
def carol(db: Any) -> Any:
    """A user who belongs to no project."""
    return get_user_model().objects.create_user("carol", "carol@example.com", "pw-carol-123")


@pytest.fixture
def project(alice: Any, bob: Any) -> Project:
    """Alice's project, with bob as a member, and three tasks."""
    p = Project.objects.create(name="Launch", owner=alice)
    p.members.add(bob)
    Task.objects.create(project=p, title="Write copy", status="open", priority=2)
    Task.objects.create(
        project=p, title="Fix login", status="in_progress", priority=1, assignee=bob
    )
    Task.objects.create(project=p, title="Ship it", status="done", priority=3)
    return p


def make_key(user: Any, scopes: str = "read write", **kwargs: Any) -> str:
    _, raw = APIKey.objects.create_key(user=user, scopes=scopes, **kwargs)
    return raw


@pytest.fixture
def alice_key(alice: Any) -> str:
    return make_key(alice, "read write", name="alice rw")


@pytest.fixture
def alice_read_key(alice: Any) -> str:
    return make_key(alice, "read", name="alice ro")


@pytest.fixture
def mcp_client(client: Client) -> Callable[..., MCPClient]:
    def make(key: str | None = None, url: str = "/mcp") -> MCPClient:
        return MCPClient(client, url, key)

    return make


@pytest.fixture
def private_cache(settings: Any, request: pytest.FixtureRequest) -> None:
    """A cache of this process only, for the test module's sessions, request states and
    event logs: a test run beside this one (clearing the shared file cache) cannot pull
    them away behind a test's back."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"mcp-endpoint-tests-{request.module.__name__}",
        }
    }
