"""The suite's processes forked from a warm parent (tests/spawner.py) behave as new
interpreters started with the same command line would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import spawner
from tests.live_server import ROOT

# Processes of the test process's own, and no backend: the SQLite run alone runs these.
pytestmark = pytest.mark.once


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(extra)
    return env


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def test_a_command_runs_with_its_arguments_folder_and_environment(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "print(sys.argv, os.getcwd(), os.environ['SPAWNED'], __name__)\n"
        "print('to stderr', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    stdout, stderr, returncode = spawner.run(
        [sys.executable, "-c", script, "one", "two"],
        cwd=tmp_path,
        env=environment(SPAWNED="yes"),
        timeout=60,
    )
    assert returncode == 3
    assert stdout.decode().split() == [
        "['-c',",
        "'one',",
        "'two']",
        str(tmp_path),
        "yes",
        "__main__",
    ]
    assert stderr == b"to stderr\n"
    # The folder and environment were the child's alone.
    assert os.environ.get("SPAWNED") is None and Path.cwd() != tmp_path


def test_a_command_is_a_child_of_the_zygote_and_a_module_runs_as_with_dash_m(
    tmp_path: Path,
) -> None:
    process = spawner.popen(
        [sys.executable, "-m", "json.tool"],
        cwd=ROOT,
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert isinstance(process, spawner.Forked)
    assert spawner.zygote.process is not None
    assert parent_of(process.pid) == spawner.zygote.process.pid
    process.stdin.write('{"a": [1, 2]}\n')
    process.stdin.close()
    assert process.stdout.read() == '{\n    "a": [\n        1,\n        2\n    ]\n}\n'
    assert process.wait(timeout=30) == 0
    process.stdout.close()


def test_a_script_whose_first_line_names_this_interpreter_is_forked(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text(f"#!{sys.executable}\nimport sys\nprint(sys.argv[1:])\nsys.exit(7)\n")
    script.chmod(0o755)
    out = tmp_path / "out"
    with out.open("wb") as log:
        process = spawner.popen(
            [str(script), "x"], cwd=ROOT, env=environment(), stdout=log, stderr=subprocess.STDOUT
        )
        assert isinstance(process, spawner.Forked)
        assert process.wait(timeout=30) == 7
    assert out.read_text() == "['x']\n"


def test_another_interpreter_or_interpreter_settings_get_a_process_of_their_own(
    tmp_path: Path,
) -> None:
    shell = spawner.popen(["/bin/sh", "-c", "exit 4"], cwd=ROOT, env=environment())
    assert isinstance(shell, subprocess.Popen)
    assert shell.wait(timeout=30) == 4
    other_path = environment(PYTHONPATH=str(tmp_path))
    python = spawner.popen([sys.executable, "-c", "pass"], cwd=ROOT, env=other_path)
    assert isinstance(python, subprocess.Popen)
    assert python.wait(timeout=30) == 0


def test_signals_reach_the_child_and_its_status_says_so() -> None:
    process = spawner.popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(60)"],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
    )
    assert process.stdout.readline() == b"up\n"
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.2)
    process.terminate()
    assert process.wait(timeout=30) == -signal.SIGTERM
    process.stdout.close()


def test_unbuffered_output_arrives_before_the_child_ends() -> None:
    # PYTHONUNBUFFERED, as the servers' environment sets it: each print reaches the pipe.
    process = spawner.popen(
        [sys.executable, "-c", "import time; print('early'); time.sleep(60)"],
        cwd=ROOT,
        env=environment(PYTHONUNBUFFERED="1"),
        stdout=subprocess.PIPE,
    )
    try:
        assert process.stdout.readline() == b"early\n"
    finally:
        process.kill()
        process.wait(timeout=30)
        process.stdout.close()


def test_a_failure_prints_its_traceback_and_a_new_session_is_asked_for() -> None:
    _, stderr, returncode = spawner.run(
        [sys.executable, "-c", "raise ValueError('broken')"],
        cwd=ROOT,
        env=environment(),
        timeout=60,
    )
    assert returncode == 1
    assert b"ValueError: broken" in stderr
    process = spawner.popen(
        [sys.executable, "-c", "import os; print(os.getsid(0) == os.getpid())"],
        cwd=ROOT,
        env=environment(),
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout.read() == b"True\n"
    assert process.wait(timeout=30) == 0
    process.stdout.close()


def test_each_child_sets_django_up_with_its_own_settings() -> None:
    # The zygote imported Django without configuring it: every child reads its own.
    script = (
        "import django\n"
        "from django.conf import settings\n"
        "django.setup()\n"
        "print(settings.SETTINGS_MODULE, 'rest_framework' in settings.INSTALLED_APPS)\n"
    )
    answers = []
    for module in ("project.settings", "tests.settings_toolkit_not_installed"):
        env = environment(DJANGO_SETTINGS_MODULE=module, SQLITE_PATH=os.devnull)
        stdout, stderr, returncode = spawner.run(
            [sys.executable, "-c", script], cwd=ROOT, env=env, timeout=120
        )
        assert returncode == 0, stderr.decode()
        answers.append(stdout.decode().split()[0])
    assert answers == ["project.settings", "tests.settings_toolkit_not_installed"]


def test_an_ended_child_is_reaped_and_its_status_kept() -> None:
    # A child that ends at once is reported ended, and its status is kept for poll().
    process = spawner.popen([sys.executable, "-c", "pass"], cwd=ROOT, env=environment())
    deadline = time.monotonic() + 30
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.poll() == 0
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)
