"""``manage.py mcp_doctor``: in process against the URLconf, and against live servers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from mcp_endpoint.doctor import DjangoClientHTTP, Doctor, example_of
from project.tracker.models import Task
from tests.live_server import ROOT, LiveServer, manage

PUBLIC = "https://mcp.example.com/mcp"


def doctor(*args: str) -> tuple[int, str]:
    """Run mcp_doctor through call_command; the exit status it would have, and its output."""
    out = StringIO()
    try:
        call_command("mcp_doctor", *args, stdout=out)
    except CommandError as exc:
        return 1, out.getvalue() + str(exc)
    return 0, out.getvalue()


# -- in process, through the test client ------------------------------------------------------


@pytest.mark.django_db
def test_the_local_urlconf_is_healthy(alice_key: str, project: Any) -> None:
    status, output = doctor("--key", alice_key, "--host", "testserver")
    assert status == 0, output
    for step in (
        "401 with a Bearer challenge",
        "protected-resource metadata",
        "authorization-server metadata",
        "PKCE S256 advertised",
        "registration endpoint",
        "initialize: protocol 2025-11-25",
        "server/discover: ",
        "tools/list: ",
        "tool schema(s) checked",
        "CORS preflight",
    ):
        assert step in output, output
    assert "0 error(s)" in output


@pytest.mark.django_db
def test_a_refused_key_is_an_error(alice: Any) -> None:
    status, output = doctor("--key", "mcp_00000000_" + "0" * 64, "--host", "testserver")
    assert status == 1
    assert "mcp_doctor.E020" in output


@pytest.mark.django_db
def test_every_demo_tool_gets_arguments_its_schema_accepts(alice_key: str, project: Any) -> None:
    run = Doctor(DjangoClientHTTP(), "http://testserver/mcp", credential=alice_key)
    assert run.check_legacy_handshake()
    tools = run.list_tools()
    assert tools and {"create_task", "list_tasks", "summarize_project"} <= {
        t["name"] for t in tools
    }
    count = Task.objects.count()
    run.check_tools(tools)
    assert run.findings == []
    assert Task.objects.count() == count  # nothing was called


@pytest.mark.django_db
@pytest.mark.urls("tests.urls_testing")
def test_a_schema_no_arguments_satisfy_is_a_warning(alice_key: str) -> None:
    run = Doctor(DjangoClientHTTP(), "http://testserver/test-mcp", credential=alice_key)
    impossible = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 1}},
        "required": ["n"],
    }
    run.check_arguments("impossible", impossible)
    assert [f.id for f in run.findings] == ["mcp_doctor.W033"]


@pytest.mark.django_db
@pytest.mark.urls("tests.urls_oauth_urls_unmounted")
def test_unmounted_oauth_urls_are_found_in_process() -> None:
    status, output = doctor("--host", "testserver")
    assert status == 1
    assert "mcp_doctor.E006" in output
    assert 'include("mcp_endpoint.oauth.urls")' in output
    assert "docs: docs/operations.md#mcp_doctore006" in output


def test_examples_follow_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "due": {"type": "string", "format": "date"},
            "level": {"enum": ["low", "high"]},
            "count": {"type": "integer", "minimum": 3},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["due", "level", "count"],
    }
    assert example_of(schema) == {"due": "2026-01-31", "level": "low", "count": 3}


# -- against live servers ---------------------------------------------------------------------


def run_doctor(server: LiveServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "mcp_doctor", server.url("/mcp"), *args],
        cwd=ROOT,
        env=server.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def start(workdir: Path, settings: str = "project.settings") -> LiveServer:
    return LiveServer(workdir, workers=1, env={"DJANGO_SETTINGS_MODULE": settings})


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str]]:
    with start(tmp_path_factory.mktemp("doctor-demo")) as server:
        manage(server.env, "seed_demo")
        key = manage(server.env, "mcp_key", "create", "--user", "alice", "--scopes", "read write")
        yield server, key.strip().splitlines()[-1]


@pytest.mark.e2e
def test_a_healthy_demo_passes(demo: tuple[LiveServer, str]) -> None:
    server, key = demo
    done = run_doctor(server, "--key", key)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 error(s)" in done.stdout
    assert "tools/list: " in done.stdout


@pytest.mark.e2e
def test_a_wrong_resource_behind_a_proxy_is_found(demo: tuple[LiveServer, str]) -> None:
    server, key = demo
    done = run_doctor(server, "--key", key, "--public-url", PUBLIC)
    assert done.returncode == 1, done.stdout
    assert "mcp_doctor.E005" in done.stdout  # the challenge names the inner origin
    assert "mcp_doctor.E007" in done.stdout  # the metadata names the inner URL
    assert "SECURE_PROXY_SSL_HEADER" in done.stdout
    assert "error(s)" in done.stderr


@pytest.mark.e2e
def test_a_proxy_aware_host_passes_behind_the_proxy(tmp_path: Path) -> None:
    with start(tmp_path, "tests.settings_behind_proxy") as server:
        done = run_doctor(server, "--public-url", PUBLIC)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "protected-resource metadata at https://mcp.example.com/" in done.stdout


@pytest.mark.e2e
def test_unmounted_oauth_urls_are_found_live(tmp_path: Path) -> None:
    with start(tmp_path, "tests.settings_oauth_urls_unmounted") as server:
        done = run_doctor(server)
    assert done.returncode == 1, done.stdout
    assert "mcp_doctor.E006" in done.stdout
    assert "401 with a Bearer challenge" in done.stdout
