"""The suite's ``manage.py`` commands run in one warm process per server environment.

:func:`tests.live_server.manage` and :func:`~tests.live_server.run_script` hand their
command to a Django process started once for the environment, so these prove that a caller
sees what a new ``manage.py`` process would have given it: its output, its failure, no
names or output of an earlier command, the database as others committed it, and a new
process where the warm one died or its server stopped.
"""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live_server import (
    LiveServer,
    UvicornServer,
    manage,
    migrated_databases,
    run_script,
    server_environment,
    warm_commands,
)
from tests.oauth_helpers import CallbackListener

pytestmark = pytest.mark.e2e

PID = "import os; print(os.getpid())"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(Path(tmp_path_factory.mktemp("warm")), workers=1) as server:
        yield server


def pid_of(env: dict[str, str], *, fresh: bool = False) -> int:
    return int(run_script(env, PID, fresh=fresh).strip())


def warm_pid(env: dict[str, str]) -> int:
    return warm_commands.pids()[warm_commands.key(env)]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_two_commands_on_one_environment_share_one_process(server: LiveServer) -> None:
    first, second = pid_of(server.env), pid_of(server.env)
    assert first == second == warm_pid(server.env)
    assert pid_of(server.env, fresh=True) != first


def test_a_command_says_what_a_new_process_says(server: LiveServer) -> None:
    # ``check`` prints through the command's ``self.stdout``.
    assert manage(server.env, "check") == manage(server.env, "check", fresh=True)
    printed = run_script(server.env, "import sys\nprint('out')\nprint('err', file=sys.stderr)")
    assert printed == "out\n"


def test_a_failing_command_raises_with_its_output(server: LiveServer) -> None:
    with pytest.raises(RuntimeError) as failed:
        run_script(server.env, "print('got this far')\nraise ValueError('the reason')")
    assert "got this far" in str(failed.value)
    assert "ValueError: the reason" in str(failed.value)
    assert "(1)" in str(failed.value)
    with pytest.raises(RuntimeError) as refused:
        manage(server.env, "mcp_key", "create", "--user", "nobody-at-all", "--scopes", "read")
    assert "CommandError" in str(refused.value)
    # Neither failure leaves anything for the next command.
    assert run_script(server.env, "print('clean')") == "clean\n"


def test_a_script_does_not_see_an_earlier_scripts_names(server: LiveServer) -> None:
    run_script(server.env, "left_behind = 1\nimport json")
    seen = run_script(server.env, "print(sorted({'left_behind', 'json'} & set(globals())))")
    assert seen == "[]\n"


def test_a_write_is_committed_when_the_command_returns(server: LiveServer) -> None:
    run_script(
        server.env,
        "from django.contrib.auth import get_user_model\n"
        "get_user_model().objects.create_user('warm-writer', password='pw-warm-12345')",
    )
    count = (
        "from django.contrib.auth import get_user_model\n"
        "print(get_user_model().objects.filter(username='warm-writer').count())"
    )
    assert run_script(server.env, count, fresh=True) == "1\n"
    # And a write by another process is seen by the warm one.
    run_script(
        server.env,
        "from django.contrib.auth import get_user_model\n"
        "get_user_model().objects.filter(username='warm-writer').delete()",
        fresh=True,
    )
    assert run_script(server.env, count) == "0\n"


def test_a_dead_warm_process_is_replaced(server: LiveServer) -> None:
    dead = pid_of(server.env)
    os.kill(dead, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while warm_commands.processes[warm_commands.key(server.env)].alive():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    replaced = pid_of(server.env)
    assert replaced != dead
    assert pid_of(server.env) == replaced


def test_a_command_that_ends_its_process_fails_and_the_next_gets_a_new_one(
    server: LiveServer,
) -> None:
    before = pid_of(server.env)
    with pytest.raises(RuntimeError) as failed:
        run_script(server.env, "import os\nprint('last words', flush=True)\nos._exit(4)")
    assert "last words" in str(failed.value)
    assert "(4)" in str(failed.value)
    assert pid_of(server.env) != before


def test_migrate_and_template_databases_get_a_new_process(server: LiveServer) -> None:
    assert not warm_commands.accepts(server.env, ("migrate", "--noinput"))
    assert warm_commands.accepts(server.env, ("shell",))
    for template in migrated_databases.templates.values():
        on_template = {**server.env, "DATABASE_URL": template, "SQLITE_PATH": template}
        assert not warm_commands.accepts(on_template, ("shell",))


def test_the_warm_process_stops_with_its_server(tmp_path: Path) -> None:
    with LiveServer(tmp_path, workers=1) as other:
        pid = pid_of(other.env)
    assert gone(pid)
    assert warm_commands.key(other.env) not in warm_commands.pids()


@pytest.mark.parametrize("cache", ["redis", "files"])
def test_a_server_told_to_leave_the_runs_database_gets_a_file_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    # As in the PostgreSQL run, where a test that needs SQLite says "DATABASE_URL": "".
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/1")
    extra = {"DATABASE_URL": ""} if cache == "redis" else {"DATABASE_URL": "", "REDIS_URL": ""}
    server = LiveServer(tmp_path, env=extra)
    assert server.own_database is None
    # Not the settings' default, the checkout's db.sqlite3, which every such server of
    # the run would share and migrate at once.
    assert server.env["SQLITE_PATH"] == str(tmp_path / "db.sqlite3")
    if cache == "files":
        assert server.env["CACHE_DIR"] == str(tmp_path / "cache")
    else:
        assert "CACHE_DIR" not in server.env


def test_a_file_or_folder_the_caller_names_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    monkeypatch.delenv("REDIS_URL", raising=False)
    named = {"DATABASE_URL": "", "SQLITE_PATH": str(tmp_path / "shared.sqlite3")}
    env = server_environment(tmp_path / "one", {**named, "CACHE_DIR": str(tmp_path / "c")})
    assert env["SQLITE_PATH"] == str(tmp_path / "shared.sqlite3")
    assert env["CACHE_DIR"] == str(tmp_path / "c")
    monkeypatch.delenv("DATABASE_URL")
    env = server_environment(tmp_path / "two")
    assert env["SQLITE_PATH"] == str(tmp_path / "two" / "db.sqlite3")
    assert env["CACHE_DIR"] == str(tmp_path / "two" / "cache")


@pytest.mark.parametrize("kind", [LiveServer, UvicornServer])
def test_a_server_whose_port_another_took_first_moves_to_another(
    tmp_path: Path, kind: type[LiveServer]
) -> None:
    # free_port() gives a port nothing listens on when asked; a server started beside,
    # in another test process, may bind it first. Its answers are not this server's.
    other = CallbackListener()
    try:
        server = kind(tmp_path, workers=1, ready_path="/health")
        taken = server.port = other.httpd.server_address[1]
        with server:
            assert server.port != taken
            with urllib.request.urlopen(server.url("/health"), timeout=10) as answer:
                assert json.load(answer)["result"] == {"status": "ok"}
        assert other.hits == []
    finally:
        other.stop()
