"""``manage.py mcp_doctor``: in process against the URLconf, and against live servers."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from mcp_endpoint.doctor import DjangoClientHTTP, Doctor, URLLibHTTP, example_of
from project.tracker.models import Task
from tests.live_server import (
    ROOT,
    LiveServer,
    TaskWorker,
    UvicornServer,
    manage,
    server_environment,
)
from tests.test_e2e_sdk import DEMO_PROJECT

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
def test_a_task_runs_to_its_end_when_asked(alice_key: str, project: Any) -> None:
    arguments = json.dumps({"project_id": project.pk})
    status, output = doctor(
        "--key", alice_key, "--host", "testserver",
        "--task", "export_project_tasks", "--arguments", arguments,
    )  # fmt: skip
    assert status == 0, output
    assert "task export_project_tasks: completed in " in output


@pytest.mark.django_db
def test_a_task_on_a_backend_without_workers_is_an_error(
    alice_key: str, project: Any, settings: Any
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    status, output = doctor(
        "--key", alice_key, "--host", "testserver", "--task", "export_project_tasks",
        "--arguments", json.dumps({"project_id": project.pk}),
    )  # fmt: skip
    assert status == 1
    assert "mcp_doctor.E050" in output  # the extension is not announced


@pytest.mark.django_db
def test_a_tool_that_is_not_long_running_is_a_warning(alice_key: str, project: Any) -> None:
    status, output = doctor("--key", alice_key, "--host", "testserver", "--task", "list_projects")
    assert status == 0, output  # a warning
    assert "mcp_doctor.W052" in output


@pytest.mark.django_db
def test_a_subscription_in_process_is_not_announced(alice_key: str, project: Any) -> None:
    uri = f"tracker://projects/{project.pk}/board"
    status, output = doctor("--key", alice_key, "--host", "testserver", "--subscribe", uri)
    assert status == 1
    assert "mcp_doctor.E055" in output  # the test client serves WSGI: no stream is held


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "x"], "need a credential"),
        (["--key", "k", "--task", "x", "--arguments", "{"], "--arguments is not JSON"),
        (["--key", "k", "--task", "x", "--arguments", "[1]"], "must be a JSON object"),
        (["--key", "k", "--task", "x", "--task-seconds", "0"], "positive number"),
    ],
)
def test_malformed_task_options_are_refused(args: list[str], message: str) -> None:
    status, output = doctor("--host", "testserver", *args)
    assert status == 1
    assert message in output


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


# -- against a hostile server ------------------------------------------------------------------


class HostileServer(http.server.ThreadingHTTPServer):
    """An MCP server on loopback whose documents and schemas are what a test says."""

    daemon_threads = True

    def __init__(self, registration: Any = None, tools: list[Any] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), HostileHandler)
        self.base = f"http://127.0.0.1:{self.server_address[1]}"
        self.registration = registration
        self.tools = tools or []
        # What a test may change: the answer to a POST without a credential (status, body,
        # headers; None for the 401 challenge), and the two metadata documents (None: 404).
        self.anonymous: tuple[int, Any, dict[str, str]] | None = None
        self.resource: Any = {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]}
        self.issuer = self.base

    def __enter__(self) -> HostileServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()
        self.server_close()


class HostileHandler(http.server.BaseHTTPRequestHandler):
    server: HostileServer

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self, status: int, body: Any = None, **headers: str) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/.well-known/oauth-protected-resource"):
            resource = self.server.resource
            if resource is None:
                self.answer(404, {})
            else:
                self.answer(200, resource)
        elif self.path.startswith("/.well-known/oauth-authorization-server"):
            if self.server.issuer is None:
                self.answer(404, {})
                return
            methods = getattr(self.server, "methods", ["S256"])
            document = {"issuer": self.server.issuer, "code_challenge_methods_supported": methods}
            document["registration_endpoint"] = self.server.registration
            self.answer(200, document)
        else:
            self.answer(404, {})

    def do_OPTIONS(self) -> None:
        self.answer(204)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.headers.get("Authorization") and self.server.anonymous is not None:
            status, body, headers = self.server.anonymous
            self.answer(status, body, **headers)
        elif not self.headers.get("Authorization"):
            metadata = f"{self.server.base}/.well-known/oauth-protected-resource"
            challenge = f'Bearer resource_metadata="{metadata}"'
            self.answer(401, {}, WWW_Authenticate=challenge)
        elif "id" not in message:
            self.answer(202)
        elif message["method"] == "tools/list":
            self.answer(
                200, {"jsonrpc": "2.0", "id": message["id"], "result": {"tools": self.server.tools}}
            )
        else:
            result = {"protocolVersion": "2025-11-25", "supportedVersions": [7]}
            self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


@pytest.mark.parametrize(
    "registration", ["z", "http://[::1", "http://127.0.0.1:port/", "ftp://example.com/r", 7]
)
def test_a_malformed_url_from_the_server_is_a_finding(registration: Any) -> None:
    with HostileServer(registration=registration) as server:
        findings = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp").run()
    assert [f.id for f in findings if f.level == "error"] == ["mcp_doctor.E014"]
    assert repr(registration) in findings[0].message


RPC_ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {}}
RPC_REFUSAL = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "no"}}


@pytest.mark.parametrize(
    ("anonymous", "expected"),
    [
        ((302, None, {"Location": "/mcp/"}), "mcp_doctor.E002"),
        ((200, {"detail": "a page"}, {}), "mcp_doctor.E003"),
        ((403, RPC_REFUSAL, {}), "mcp_doctor.E003"),
        ((401, {}, {"WWW_Authenticate": 'Basic realm="api"'}), "mcp_doctor.E004"),
        (
            (401, {}, {"WWW_Authenticate": 'Bearer resource_metadata="ftp://x/m"'}),
            "mcp_doctor.E014",
        ),
    ],
)
def test_a_challenge_clients_cannot_follow_is_an_error(
    anonymous: tuple[int, Any, dict[str, str]], expected: str
) -> None:
    with HostileServer() as server:
        server.anonymous = anonymous
        findings = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp").run()
    errors = [f for f in findings if f.level == "error"]
    assert [f.id for f in errors] == [expected], findings
    assert errors[0].hint


def test_an_endpoint_that_answers_without_a_credential_is_a_warning() -> None:
    with HostileServer() as server:
        server.anonymous = (200, RPC_ANSWER, {})
        findings = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp").run()
    # A warning, not an error (the server card's own warning aside).
    assert [f.id for f in findings if f.level == "error"] == [], findings
    assert "mcp_doctor.W003" in {f.id for f in findings if f.level == "warning"}


def test_a_challenge_on_another_origin_is_an_error() -> None:
    with HostileServer() as server:
        port = server.server_address[1]
        metadata = f"http://localhost:{port}/.well-known/oauth-protected-resource"
        server.anonymous = (401, {}, {"WWW_Authenticate": f'Bearer resource_metadata="{metadata}"'})
        findings = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp").run()
    errors = [f for f in findings if f.level == "error"]
    assert [f.id for f in errors] == ["mcp_doctor.E005"], findings
    assert f"http://localhost:{port}" in errors[0].message


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (None, "mcp_doctor.E006"),
        ([], "mcp_doctor.E006"),
        ({"resource": "http://elsewhere.example/mcp"}, "mcp_doctor.E007"),
        ({"authorization_servers": []}, "mcp_doctor.E008"),
        ({"authorization_servers": ["z"]}, "mcp_doctor.E014"),
    ],
)
def test_protected_resource_metadata_clients_refuse_is_an_error(
    resource: Any, expected: str
) -> None:
    with HostileServer() as server:
        if isinstance(resource, dict):
            resource = {"resource": f"{server.base}/mcp", **resource}
        server.resource = resource
        findings = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp").run()
    errors = {f.id for f in findings if f.level == "error"}
    assert expected in errors, findings
    if expected != "mcp_doctor.E007":
        # The walk stops there: the authorisation server is not asked.
        assert not any("authorization-server" in f.message for f in findings)


@pytest.mark.parametrize(
    ("issuer", "expected"), [(None, "mcp_doctor.E009"), ("http://other.example", "mcp_doctor.E010")]
)
def test_authorization_server_metadata_clients_refuse_is_an_error(
    issuer: str | None, expected: str
) -> None:
    with HostileServer(registration="http://127.0.0.1:9/r") as server:
        server.issuer = issuer
        run = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp")
        findings = run.run()
    assert expected in {f.id for f in findings if f.level == "error"}, findings
    assert ("authorization-server metadata" in " ".join(run.passed)) is (issuer is not None)


def test_no_way_for_a_client_to_register_is_a_warning() -> None:
    with HostileServer(registration=None) as server:
        findings = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp").run()
    # A warning, not an error (the server card's own warning aside).
    assert [f.id for f in findings if f.level == "error"] == [], findings
    assert "mcp_doctor.W012" in {f.id for f in findings if f.level == "warning"}


def test_a_server_that_is_not_there_is_an_error() -> None:
    with HostileServer() as server:
        url = f"{server.base}/mcp"
    findings = Doctor(URLLibHTTP(timeout=5), url).run()
    assert "mcp_doctor.E001" in {f.id for f in findings if f.level == "error"}, findings


def test_documents_that_name_the_server_not_the_public_url_are_errors() -> None:
    with HostileServer(registration=None) as server:
        public = f"http://localhost:{server.server_address[1]}/mcp"
        run = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp", public_url=public)
        findings = {f.id for f in run.run() if f.level == "error"}
    # The challenge and the metadata name 127.0.0.1, where users type localhost.
    assert {"mcp_doctor.E005", "mcp_doctor.E007"} <= findings
    assert any(p.startswith("protected-resource metadata") for p in run.passed)


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def test_hostile_documents_and_schemas_are_findings() -> None:
    tools = [{"name": "deep", "inputSchema": nested(400)}, {"name": "fine", "inputSchema": {}}]
    with HostileServer(registration="http://127.0.0.1:9/r", tools=tools) as server:
        server.methods = 7  # code_challenge_methods_supported that is not a list
        run = Doctor(URLLibHTTP(timeout=5), f"{server.base}/mcp", credential="k")
        findings = {f.id for f in run.run()}
    assert {"mcp_doctor.E011", "mcp_doctor.E031"} <= findings


@pytest.mark.once
def test_a_catastrophic_pattern_does_not_hang_the_doctor(tmp_path: Path) -> None:
    evil = {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^(a+)+$", "default": "a" * 64 + "!"}},
        "required": ["s"],
    }
    tools = [
        {"name": "evil", "inputSchema": evil},
        {"name": "fine", "inputSchema": {"type": "object"}},
    ]
    # The command in a process of its own: re's matching holds the interpreter, so only a
    # process can be stopped at a deadline if the doctor hangs again.
    with HostileServer(registration=None, tools=tools) as server:
        url = f"{server.base}/mcp"
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "mcp_doctor", url, "--key=k"],
            cwd=ROOT,
            env=server_environment(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert "mcp_doctor.W034" in done.stdout, done.stdout + done.stderr
    assert "2 tool schema(s) checked" in done.stdout


@pytest.mark.once
def test_a_pattern_that_matches_quickly_is_still_checked() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[a-z]+$", "default": "ABC"}},
        "required": ["code"],
    }
    run = Doctor(URLLibHTTP(), "http://127.0.0.1:9/mcp")
    run.check_arguments("coded", schema)
    assert [f.id for f in run.findings] == ["mcp_doctor.W033"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "minItems": 10**12},
        {"type": "string", "minLength": "many"},
        {"type": "integer", "minimum": "low"},
        {"type": "number", "exclusiveMinimum": float("inf")},
        {"type": "object", "properties": [], "required": "abc"},
        {"enum": {"a": 1}, "anyOf": {"x": 1}},
        {"type": "object", "required": [["unhashable"]]},
    ],
)
def test_examples_of_hostile_schemas_are_bounded(schema: dict[str, Any]) -> None:
    example = example_of(schema)
    assert len(json.dumps(example)) < 10_000


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


@pytest.mark.e2e
def test_a_live_task_and_subscription_under_asgi(tmp_path: Path) -> None:
    # uvicorn, one process, and the demo's database worker beside it.
    with UvicornServer(tmp_path, workers=1) as server:
        manage(server.env, "seed_demo")
        key = manage(server.env, "mcp_key", "create", "--user", "alice", "--scopes", "read write")
        key = key.strip().splitlines()[-1]
        project = manage(
            server.env, "shell", "-c",
            "from project.tracker.models import Project;"
            f"print(Project.objects.get(name={DEMO_PROJECT!r}).pk)",
        ).strip().splitlines()[-1]  # fmt: skip
        board = f"tracker://projects/{project}/board"
        task = ("--task", "export_project_tasks", "--arguments", f'{{"project_id": {project}}}')
        without = run_doctor(server, "--key", key, *task)
        assert without.returncode == 1
        assert "mcp_doctor.E050" in without.stdout  # no worker seen: no extension
        with TaskWorker(server):
            done = run_doctor(server, "--key", key, *task, "--subscribe", board)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "task export_project_tasks: completed in " in done.stdout
    assert f"subscriptions/listen {board}: held open" in done.stdout
