"""``./dev test`` and ``./dev matrix`` with pytest arguments that select few tests or none.

The script runs in a folder of its own, beside a small suite of its own: test modules with
the names of the extra combinations' modules (``matrix_tests`` in ``dev``) and one more,
``test_views.py``, that only the main runs take. Its virtualenvs (``.venv``,
``.venv-oldest``, ``.venv-newest``) run this interpreter, and what installs or lints (pip,
uv, ruff, mypy, ``manage.py``, apt) does nothing: what is under test is which runs pass.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live_server import ROOT

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = pytest.mark.once

MATRIX_MODULES = [
    "test_host_shape.py",
    "test_rest_framework.py",
    "test_parity.py",
    "test_e2e_drf.py",
    "test_tasks.py",
    "test_e2e_sdk.py",
    "test_e2e_modern.py",
]

A_TEST = "def test_it():\n    pass\n"


def executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def checkout(tmp_path: Path, *, matrix_tests: str = A_TEST) -> Path:
    """A folder with ``dev``, the small suite, and virtualenvs that run this interpreter."""
    where = tmp_path / "checkout"
    (where / "tests").mkdir(parents=True)
    shutil.copy2(ROOT / "dev", where / "dev")
    (where / "pytest.ini").write_text("[pytest]\n")
    (where / "manage.py").write_text("")
    for module in MATRIX_MODULES:
        (where / "tests" / module).write_text(matrix_tests)
    (where / "tests" / "test_views.py").write_text("def test_views():\n    pass\n")
    for venv in (".venv", ".venv-oldest", ".venv-newest"):
        bin_dir = where / venv / "bin"
        executable(
            bin_dir / "python",
            '#!/bin/sh\nif [ "$1" = -m ] && [ "$2" = pip ]; then exit 0; fi\n'
            f'exec "{sys.executable}" "$@"\n',
        )
        executable(bin_dir / "pytest", f'#!/bin/sh\nexec "{sys.executable}" -m pytest "$@"\n')
        for lint in ("ruff", "mypy", "coverage", "uv"):
            executable(bin_dir / lint, "#!/bin/sh\nexit 0\n")
    # Present, so that nothing is installed with apt.
    for command in ("chromium", "redis-server"):
        executable(tmp_path / "path" / command, "#!/bin/sh\nexit 0\n")
    return where


def dev(
    where: Path, *args: str, extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {
            "CI",
            "DJANGO_SETTINGS_MODULE",
            "PYTHONPATH",
            "DATABASE_URL",
            "REDIS_URL",
            # The run's own (./dev test sets it for each database run).
            "COVERAGE_FILE",
        }
    }
    env["PATH"] = f"{where.parent / 'path'}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHON_OLDEST"] = env["PYTHON_NEWEST"] = sys.executable
    # One test process per run is enough for a suite of eight empty tests.
    env["TEST_PROCESSES"] = "1"
    # Nothing listens on port 9: the PostgreSQL run is skipped, as on a laptop without it.
    env["PG_URL"] = "postgres://postgres@127.0.0.1:9/postgres"
    env.update(extra or {})
    return subprocess.run(
        [str(where / "dev"), *args],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def said_no_test_ran(output: str, combination: str) -> bool:
    return f"The {combination} combination ran no test: none of its tests match" in output


def test_a_filter_that_selects_no_extra_test_passes_and_says_so(tmp_path: Path) -> None:
    done = dev(checkout(tmp_path), "test", "-k", "views")
    assert done.returncode == 0, done.stdout + done.stderr
    # One of the eight tests ran (xdist's summary leaves the deselected ones out).
    assert "[1 item]" in done.stdout and "1 passed" in done.stdout
    assert said_no_test_ran(done.stdout, "oldest")
    assert said_no_test_ran(done.stdout, "newest")


def test_matrix_with_a_filter_that_selects_nothing_passes_and_says_so(tmp_path: Path) -> None:
    done = dev(checkout(tmp_path), "matrix", "-k", "views")
    assert done.returncode == 0, done.stdout + done.stderr
    assert said_no_test_ran(done.stdout, "oldest")
    assert said_no_test_ran(done.stdout, "newest")


def test_a_filter_that_selects_extra_tests_runs_them(tmp_path: Path) -> None:
    done = dev(checkout(tmp_path), "matrix", "-k", "test_it")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("7 passed") == 2
    assert not said_no_test_ran(done.stdout, "oldest")


@pytest.mark.parametrize("command", ["test", "matrix"])
def test_a_combination_that_collects_no_test_fails(tmp_path: Path, command: str) -> None:
    done = dev(checkout(tmp_path, matrix_tests=""), command)
    assert done.returncode == 5, done.stdout + done.stderr
    # The two run side by side: both are reported, each having run nothing.
    assert "The oldest combination" in done.stdout
    assert "The newest combination" in done.stdout
    assert not said_no_test_ran(done.stdout, "oldest")


def test_a_main_run_that_runs_no_test_fails_whatever_selected_nothing(tmp_path: Path) -> None:
    done = dev(checkout(tmp_path), "test", "-k", "no_such_test")
    assert done.returncode == 5, done.stdout + done.stderr
    assert "The oldest combination" not in done.stdout


def test_every_module_with_module_wide_fixtures_runs_whole_in_one_process() -> None:
    # A module-scoped fixture (a live server, most often) set up in every test process
    # that runs one of the module's tests costs its start-up that many times over.
    from tests.conftest import WHOLE_MODULES

    fixture = re.compile(r'^@pytest\.fixture\([^)]*scope="module"', re.MULTILINE)
    modules = sorted((ROOT / "tests").glob("test_*.py"))
    with_module_fixtures = {
        f"tests/{path.name}" for path in modules if fixture.search(path.read_text())
    }
    assert with_module_fixtures <= WHOLE_MODULES
    assert all((ROOT / module).exists() for module in WHOLE_MODULES)


def engine_modules() -> list[str]:
    done = subprocess.run(
        ["bash", "-c", 'source <(sed -n "/^engine_tests()/,/^}/p" dev); engine_tests'],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout.split()


def test_every_engine_test_module_exists() -> None:
    modules = engine_modules()
    assert len(modules) > 5
    assert all((ROOT / module).exists() for module in modules)


def test_the_engine_tests_run_measured_beside_the_postgresql_run(tmp_path: Path) -> None:
    from tests.live_server import require_redis
    from tests.test_hosts import postgres_url

    origin = postgres_url()
    if origin is None:
        pytest.skip("no PostgreSQL server answers (CI requires one)")
    redis = require_redis()
    where = checkout(tmp_path)
    # The engine modules record the run they are in; every other module too.
    record = (
        "import os\n\n\ndef test_it():\n"
        "    with open(os.environ['RECORD'], 'a') as runs:\n"
        "        runs.write(f\"{__name__} {os.environ.get('COVERAGE_FILE', '-')}\\n\")\n"
    )
    for module in (*engine_modules(), *(f"tests/{m}" for m in MATRIX_MODULES)):
        (where / module).write_text(record)
    runs = tmp_path / "runs"
    done = dev(
        where, "test", extra={"PG_URL": origin, "REDIS_URL_FOR_TESTS": redis, "RECORD": str(runs)}
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen = runs.read_text().splitlines()
    engine = {f"{Path(m).stem} .coverage.postgresql" for m in engine_modules()}
    # Each engine module once in the SQLite run and once, measured, on PostgreSQL; the
    # PostgreSQL run's main pytest measures nothing and leaves them out.
    assert engine <= set(seen)
    assert not {f"{Path(m).stem} -" for m in engine_modules()} & set(seen)
    assert sum(line.endswith(".coverage.postgresql") for line in seen) == len(engine)
    assert sum(line.endswith(".coverage.sqlite") for line in seen) == len(engine) + len(
        MATRIX_MODULES
    )
    assert "The PostgreSQL run's engine tests" not in done.stdout  # it ran tests
    assert (where / ".coverage.postgresql").exists()
