"""The package as a host installs it: a wheel and an sdist, built from this checkout, the
wheel installed into a fresh virtualenv and used by a bare ``django-admin startproject``."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import django
import pytest
import rest_framework

from tests.live_server import ROOT

pytestmark = pytest.mark.packaging


def run(*args: str | Path, cwd: Path | None = None) -> str:
    # Nothing of this test run's Django set-up leaks into the commands.
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "PYTHONPATH"}}
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An sdist, and a wheel built from that sdist (as ``python -m build`` does)."""
    out = tmp_path_factory.mktemp("dist")
    # No isolation: the build tools are this environment's (requirements/test.txt), so the
    # test downloads nothing.
    run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT)
    yield out


def only(folder: Path, pattern: str) -> Path:
    found = list(folder.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def test_the_wheel_carries_the_app_and_its_licence(dist: Path) -> None:
    with zipfile.ZipFile(only(dist, "*.whl")) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(only_name(names, ".dist-info/METADATA")).decode()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), sorted(names)
    for expected in (
        "mcp_endpoint/py.typed",
        "mcp_endpoint/migrations/0001_initial.py",
        "mcp_endpoint/templates/mcp_endpoint/oauth/authorize.html",
        "mcp_endpoint/locale/fr/LC_MESSAGES/django.mo",
        "mcp_endpoint/management/commands/mcp_doctor.py",
    ):
        assert expected in names
    assert not any(n.startswith(("tests/", "project/")) for n in names)
    assert "License-Expression: BSD-3-Clause" in metadata
    assert "Classifier: Framework :: Django :: 4.2" in metadata
    assert "Requires-Python: >=3.10" in metadata
    # Development tools are not a published extra; the task framework for long-running
    # tools is the only one.
    extras = [line for line in metadata.splitlines() if line.startswith("Provides-Extra:")]
    assert extras == ["Provides-Extra: tasks"]


def only_name(names: set[str], suffix: str) -> str:
    found = [n for n in names if n.endswith(suffix)]
    assert len(found) == 1, found
    return found[0]


def test_the_sdist_carries_the_licence_and_docs_but_no_tests(dist: Path) -> None:
    with tarfile.open(only(dist, "*.tar.gz")) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "CHANGELOG.md", "docs/operations.md"} <= names
    assert "mcp_endpoint/locale/fr/LC_MESSAGES/django.mo" in names
    # The suite needs the demo host and services: it runs from a clone, not from here.
    assert not any(n.startswith(("tests/", "project/", "tools/")) for n in names)


BARE_SETTINGS = """
from mcp_endpoint.oauth import provider_settings

INSTALLED_APPS += ["rest_framework", "oauth2_provider", "drf_spectacular", "mcp_endpoint"]
REST_FRAMEWORK = {"DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema"}
OAUTH2_PROVIDER = provider_settings()
"""


def test_a_bare_project_checks_and_migrates_with_the_wheel(dist: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run(getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv)
    python = venv / "bin" / "python"
    # The same Django and DRF as this run, so each combination tests its own.
    run(
        python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
        only(dist, "*.whl"),
        f"Django=={django.__version__}",
        f"djangorestframework=={rest_framework.__version__}",
    )  # fmt: skip
    site = run(
        python,
        "-c",
        "import mcp_endpoint, pathlib; print(pathlib.Path(mcp_endpoint.__file__).parent.parent)",
        cwd=tmp_path,  # not this checkout, whose mcp_endpoint would be found first
    )
    licences = list(Path(site.strip()).glob("mcp_endpoint-*.dist-info/licenses/LICENSE"))
    assert licences and "BSD 3-Clause" in licences[0].read_text()
    run(venv / "bin" / "django-admin", "startproject", "bare", cwd=tmp_path)
    settings = tmp_path / "bare" / "bare" / "settings.py"
    settings.write_text(settings.read_text() + BARE_SETTINGS)
    manage = tmp_path / "bare" / "manage.py"
    run(python, manage, "check", "--fail-level", "WARNING", cwd=tmp_path / "bare")
    migrated = run(python, manage, "migrate", "--noinput", cwd=tmp_path / "bare")
    assert "mcp_endpoint.0001_initial... OK" in migrated or "Applying mcp_endpoint" in migrated
    shown = run(python, manage, "showmigrations", "mcp_endpoint", cwd=tmp_path / "bare")
    assert "[ ]" not in shown and "[X] 0001_initial" in shown
