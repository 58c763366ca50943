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
import oauth2_provider
import pytest
import rest_framework

from tests.live_server import ROOT

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = [pytest.mark.packaging, pytest.mark.once]


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
    # Development tools are not a published extra: OAuth for MCP clients, the task
    # framework for long-running tools, Celery as its engine, and OpenTelemetry are the four.
    extras = [line for line in metadata.splitlines() if line.startswith("Provides-Extra:")]
    assert extras == [
        "Provides-Extra: oauth",
        "Provides-Extra: tasks",
        "Provides-Extra: celery",
        "Provides-Extra: otel",
    ]
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    toolkit = [line for line in requires if "django-oauth-toolkit" in line]
    assert toolkit == ['Requires-Dist: django-oauth-toolkit<4,>=3.4; extra == "oauth"']


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


def new_venv(dist: Path, folder: Path, *, extras: str = "", also: tuple[str, ...] = ()) -> Path:
    """A new virtualenv holding the wheel (with ``extras``), this run's Django and DRF (so
    each combination tests its own), and ``also``; its python."""
    venv = folder / "venv"
    # This run's pip installs into the new virtualenv (``--python``), which needs none of
    # its own, and compiles nothing ahead: the commands below import a small part of what
    # it installs, and Python compiles that as it imports it. Seconds of CPU saved in each.
    run(getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    run(
        sys.executable, "-m", "pip", "--python", python, "install", "-q",
        "--disable-pip-version-check", "--no-compile",
        f"{only(dist, '*.whl')}{extras}",
        f"Django=={django.__version__}",
        f"djangorestframework=={rest_framework.__version__}",
        *also,
    )  # fmt: skip
    return python


def test_a_bare_project_checks_and_migrates_with_the_wheel(dist: Path, tmp_path: Path) -> None:
    python = new_venv(
        dist,
        tmp_path,
        extras="[oauth]",
        also=(f"django-oauth-toolkit=={oauth2_provider.__version__}",),
    )
    venv = python.parent.parent
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


# A product without django-oauth-toolkit: DRF, one viewset, API keys. Appended to the
# settings and URLs of a bare ``startproject``.
PLAIN_SETTINGS = """
INSTALLED_APPS += ["rest_framework", "mcp_endpoint"]
ALLOWED_HOSTS = ["testserver"]
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
}
"""

PLAIN_URLS = """
from django.contrib.auth import get_user_model
from django.urls import include
from rest_framework import mixins, serializers, viewsets
from rest_framework.routers import DefaultRouter

from mcp_endpoint import site as mcp_site


class UserSerializer(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ["id", "username"]


class UserViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    queryset = get_user_model().objects.order_by("id")
    serializer_class = UserSerializer


router = DefaultRouter()
router.register("users", UserViewSet)
mcp_site.register_router(router)
urlpatterns += [
    path("api/", include(router.urls)),
    path("account/ai/", include("mcp_endpoint.account.urls")),
    path("mcp", mcp_site.urls),
]
"""

# Run in the project: a key made by the command, then the key end to end (REST, /mcp,
# the admin's key form, the account pages) and a bearer value that is not a key.
PLAIN_REQUESTS = """
import importlib.util, json, os, sys
import django

os.environ["DJANGO_SETTINGS_MODULE"] = "plain.settings"
django.setup()
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from io import StringIO

alice = get_user_model().objects.create_superuser("alice", "alice@example.com", "pw")
out = StringIO()
call_command("mcp_key", "create", "--user", "alice", "--scopes", "read write", stdout=out)
key = out.getvalue().strip().splitlines()[-1]
client = Client(raise_request_exception=False)
bearer = {"Authorization": "Bearer " + key}
protocol = {"MCP-Protocol-Version": "2025-11-25"}


def mcp(method, params, headers):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    answer = client.post("/mcp", body, content_type="application/json", headers=headers)
    return answer.status_code, answer.json()


listed = mcp("tools/list", {}, {**bearer, **protocol})
called = mcp("tools/call", {"name": "list_users", "arguments": {}}, {**bearer, **protocol})
stranger = mcp("ping", {}, {"Authorization": "Bearer an-oauth-token-perhaps", **protocol})
rest = client.get("/api/users/", headers=bearer)
client.force_login(alice)
pages = [
    client.get(path).status_code
    for path in ("/admin/mcp_endpoint/apikey/add/", "/account/ai/keys/", "/account/ai/apps/")
]
print(json.dumps({
    "tools": [t["name"] for t in listed[1]["result"]["tools"]],
    "called": called[1]["result"]["structuredContent"],
    "stranger": stranger[0],
    "rest": [rest.status_code, rest.json()],
    "pages": pages,
    "toolkit_importable": importlib.util.find_spec("oauth2_provider") is not None,
    "toolkit_imported": sorted(m for m in sys.modules if m.split(".")[0] == "oauth2_provider"),
}))
"""


def test_a_product_without_the_toolkit_uses_api_keys(dist: Path, tmp_path: Path) -> None:
    python = new_venv(dist, tmp_path)
    venv = python.parent.parent
    run(venv / "bin" / "django-admin", "startproject", "plain", cwd=tmp_path)
    project = tmp_path / "plain"
    for name, extra in (("settings.py", PLAIN_SETTINGS), ("urls.py", PLAIN_URLS)):
        module = project / "plain" / name
        module.write_text(module.read_text() + extra)
    run(python, project / "manage.py", "check", "--fail-level", "WARNING", cwd=project)
    run(python, project / "manage.py", "migrate", "--noinput", cwd=project)
    import json

    seen = json.loads(run(python, "-c", PLAIN_REQUESTS, cwd=project).splitlines()[-1])
    assert seen["toolkit_importable"] is False, "the venv has no django-oauth-toolkit"
    assert seen["toolkit_imported"] == []
    assert seen["tools"] == ["list_users"]
    assert seen["called"] == {"results": [{"id": 1, "username": "alice"}]}
    assert seen["stranger"] == 401
    assert seen["rest"] == [200, [{"id": 1, "username": "alice"}]]
    assert seen["pages"] == [200, 200, 200]
