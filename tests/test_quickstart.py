"""The README's quickstart, applied as written to a fresh ``django-admin startproject``.

The project gets one DRF viewset of its own (``yourapp``, with ``rest_framework`` already
installed and a ``REST_FRAMEWORK`` dict of its own), then the README's snippets are pasted
where their first line says. The project must pass ``manage.py check``, migrate, make a
key with ``mcp_key``, serve under gunicorn on loopback, and answer the official SDK: the
viewset's tool and the README's function tool.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import (
    HOST,
    PORT_ATTEMPTS,
    ROOT,
    free_port,
    gunicorn_bound,
    server_environment,
    venv_command,
    wait_for_bind,
)
from tests.oauth_helpers import CallbackListener

pytestmark = pytest.mark.e2e

SNIPPET_HEAD = re.compile(r"^# (?P<path>[\w/.]+): (?P<how>append at the end|a new file)")

HOST_VIEWS = '''
from django.contrib.auth import get_user_model
from rest_framework import mixins, serializers, viewsets


class UserSerializer(serializers.ModelSerializer):
    class Meta:
        model = get_user_model()
        fields = ["id", "username"]


class UserViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """The people who use the product."""

    queryset = get_user_model().objects.order_by("id")
    serializer_class = UserSerializer
'''

HOST_URLS = """
from rest_framework.routers import DefaultRouter

from yourapp.views import UserViewSet

router = DefaultRouter()
router.register("users", UserViewSet)
urlpatterns = router.urls
"""

# What the host had before the README: DRF, its app, its own REST settings and URLs.
HOST_SETTINGS = """
INSTALLED_APPS += ["rest_framework", "yourapp"]
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
REST_FRAMEWORK = {
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
}
"""

# The product's page answers every other path, as a single-page app's catch-all does: the
# README's lines, appended after it, must still put the endpoint first.
HOST_ROOT_URLS = """
from django.http import HttpResponse
from django.urls import include, re_path

urlpatterns += [
    path("api/", include("yourapp.urls")),
    re_path(r".*", lambda request: HttpResponse("<html>the product</html>")),
]
"""


def readme_snippets() -> list[tuple[str, str, str]]:
    """(path, how, code) for each python block of the README that says where it goes."""
    text = (ROOT / "README.md").read_text()
    found = []
    for block in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        head = SNIPPET_HEAD.match(block)
        if head:
            found.append((head["path"], head["how"], block))
    return found


def readme_sdk_client() -> str:
    """The README's script that connects with the official Python SDK."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    found = [b for b in blocks if b.startswith("# client.py: the official Python SDK")]
    assert len(found) == 1, "the README shows one client.py"
    return found[0]


def run(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [*args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_readme_has_the_three_snippets() -> None:
    assert [(p, h) for p, h, _ in readme_snippets()] == [
        ("settings.py", "append at the end"),
        ("urls.py", "append at the end"),
        ("yourapp/mcp.py", "a new file"),
    ]


def test_the_quickstart_works_on_a_fresh_project(tmp_path: Path) -> None:
    project = tmp_path / "quick"
    project.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "PYTHONPATH"}
    }
    env["DJANGO_SETTINGS_MODULE"] = "quick.settings"
    python = sys.executable
    run(env, tmp_path, venv_command("django-admin"), "startproject", "quick", str(project))
    app = project / "yourapp"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "views.py").write_text(HOST_VIEWS)
    (app / "urls.py").write_text(HOST_URLS)
    with (project / "quick" / "settings.py").open("a") as f:
        f.write(HOST_SETTINGS)
    with (project / "quick" / "urls.py").open("a") as f:
        f.write(HOST_ROOT_URLS)

    for path, how, code in readme_snippets():
        target = project / ("quick/" + path if "/" not in path else path)
        if how == "a new file":
            assert not target.exists()
            target.write_text(code)
        else:
            with target.open("a") as f:
                f.write("\n" + code)

    settings = (project / "quick" / "settings.py").read_text()
    # Named twice (the host's line, and the README's, which skips installed apps); a
    # duplicate in INSTALLED_APPS would make the check below fail.
    assert settings.count('"rest_framework"') == 2
    run(env, project, python, "manage.py", "check")
    run(env, project, python, "manage.py", "migrate", "-v0")
    run(
        env,
        project,
        python,
        "manage.py",
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        "get_user_model().objects.create_user('alice', password='pw-alice-123')",
    )
    key = run(
        env, project, python, "manage.py", "mcp_key", "create", "--user", "alice",
        "--scopes", "read",
    ).strip().splitlines()[-1]  # fmt: skip

    server, port, log = start_gunicorn(env, project, tmp_path)
    try:
        wait_until_serving(f"http://{HOST}:{port}/api/", server)
        rest = urllib.request.Request(
            f"http://{HOST}:{port}/api/users/", headers={"Authorization": f"Bearer {key}"}
        )
        with urllib.request.urlopen(rest, timeout=10) as answer:
            assert b'"alice"' in answer.read()
        # The key holds "read" only: the README's permission refuses a write on REST.
        write = urllib.request.Request(
            f"http://{HOST}:{port}/api/users/",
            data=b"{}",
            method="POST",
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(write, timeout=10)
        assert refused.value.code == 403
        assert b"needs the scope(s) write" in refused.value.read()
        outcome = anyio.run(use_the_sdk, f"http://{HOST}:{port}/mcp", key)
        (tmp_path / "client.py").write_text(readme_sdk_client())
        printed = run(env, tmp_path, python, "client.py", f"http://{HOST}:{port}/mcp", key)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=15)
        log.close()
    assert {"list_users", "get_user", "whoami"} <= outcome["tools"]
    assert outcome["whoami"] == "alice"
    assert [u["username"] for u in outcome["users"]] == ["alice"]
    # The README's script, run as written with the URL and the key.
    assert {"list_users", "get_user", "whoami"} <= set(printed.strip().split(", "))


def start_gunicorn(
    env: dict[str, str], project: Path, tmp_path: Path
) -> tuple[subprocess.Popen[bytes], int, IO[bytes]]:
    """gunicorn serving the quickstart's project on a free port, once it listens there: on
    another port when a server of a test run beside bound the first one before it."""
    for attempt in range(PORT_ATTEMPTS):
        port = free_port()
        path = tmp_path / f"server-{attempt}.log"
        log = path.open("wb")
        server = subprocess.Popen(
            [venv_command("gunicorn"), "quick.wsgi", "-b", f"{HOST}:{port}", "-w", "1"],
            cwd=project,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        if listens(server, path, port):
            return server, port, log
        server.terminate()
        server.wait(timeout=15)
        log.close()
    raise AssertionError("every port the server was given was taken")


def listens(server: subprocess.Popen[bytes], log: Path, port: int) -> bool:
    """Whether gunicorn says that it listens on ``port`` (True), or that another process
    holds it (False)."""
    return wait_for_bind(log, lambda text: gunicorn_bound(text, port, server.pid), server, 60)


def wait_until_serving(url: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(150):
        assert server.poll() is None, "the server exited"
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing answered at {url}")


async def use_the_sdk(url: str, key: str) -> dict[str, Any]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"})
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        tools = await client.list_tools()
        whoami = await client.call_tool("whoami", {})
        users = await client.call_tool("list_users", {})
    assert not whoami.is_error and not users.is_error
    structured = users.structured_content or {}
    return {
        "tools": {t.name for t in tools.tools},
        "whoami": whoami.content[0].text,  # type: ignore[union-attr]
        "users": structured.get("results", structured),
    }


def test_gunicorn_on_a_port_another_server_holds_is_told_apart(tmp_path: Path) -> None:
    # A server of a test run beside may bind the port free_port() gave, and answer: the
    # quickstart's server is waited for by its own line, and moves on a refused bind.
    other = CallbackListener()
    port = other.httpd.server_address[1]
    log = tmp_path / "server.log"
    try:
        with log.open("wb") as out:
            server = subprocess.Popen(
                [venv_command("gunicorn"), "project.wsgi", "-b", f"{HOST}:{port}", "-w", "1"],
                cwd=ROOT,
                env=server_environment(tmp_path),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            assert listens(server, log, port) is False
        finally:
            server.terminate()
            server.wait(timeout=15)
        assert other.hits == []
    finally:
        other.stop()
