"""OpenTelemetry: a span per message and per tool run, parents from the client, a histogram.

Through the real URL, with the SDK's in-memory exporter and metric reader set as the
process's providers, and with opentelemetry-instrumentation-django where a host uses it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from opentelemetry import trace
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from mcp_endpoint import site
from tests.live_server import ROOT
from tests.mcp_client import MCPClient
from tests.otel import providers

pytestmark = pytest.mark.django_db

CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"
HEADER_TRACE = "0af7651916cd43dd8448eb211c80319c"
HEADER_SPAN = "b7ad6b7169203331"


@pytest.fixture
def spans() -> Iterator[Callable[[], list[ReadableSpan]]]:
    _, exporter, _ = providers()
    exporter.clear()
    yield lambda: list(exporter.get_finished_spans())
    exporter.clear()


@pytest.fixture
def reader() -> InMemoryMetricReader:
    return providers()[2]


def message(method: str, params: dict[str, Any], request_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def named(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [span for span in spans if span.name == name]
    assert len(found) == 1, [span.name for span in spans]
    return found[0]


def hex_trace(span: ReadableSpan) -> str:
    assert span.context is not None
    return format(span.context.trace_id, "032x")


def parent_hex(span: ReadableSpan) -> str | None:
    return format(span.parent.span_id, "016x") if span.parent is not None else None


def test_a_tool_call_is_a_server_span_under_the_clients_span_from_meta(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Any, spans: Any
) -> None:
    rpc = mcp_client(alice_key)
    params = {
        "name": "summarize_project",
        "arguments": {"project_id": project.pk},
        "_meta": {"traceparent": TRACEPARENT, "tracestate": "rojo=00f067aa0ba902b7"},
    }
    response = rpc.post(message("tools/call", params, request_id=7))
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is False

    server = named(spans(), "tools/call summarize_project")
    assert server.kind == SpanKind.SERVER
    assert hex_trace(server) == CLIENT_TRACE
    assert parent_hex(server) == CLIENT_SPAN
    assert server.parent is not None and server.parent.is_remote
    assert server.context is not None
    assert server.context.trace_state.to_header() == "rojo=00f067aa0ba902b7"
    attributes = dict(server.attributes or {})
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "summarize_project"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["jsonrpc.request.id"] == "7"
    assert attributes["mcp.protocol.version"]
    assert attributes["network.transport"] == "tcp"
    assert attributes["client.address"] == "127.0.0.1"
    assert "error.type" not in attributes
    assert server.status.status_code == StatusCode.UNSET

    run = named(spans(), "execute_tool summarize_project")
    registered = site.tools.get("summarize_project")
    described = registered.description if registered is not None else ""
    assert described
    assert run.kind == SpanKind.INTERNAL
    assert run.parent is not None and server.context is not None
    assert run.parent.span_id == server.context.span_id
    assert dict(run.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "summarize_project",
        "gen_ai.tool.description": described,
    }


def test_the_viewsets_sql_runs_under_the_tool_span(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Any, spans: Any
) -> None:
    """What a database instrumentation records nests under ``execute_tool``: its queries run
    while the tool's span is the current one (here each query opens a span through Django's
    own hook for wrapping queries, as SQL instrumentations do)."""
    tracer = trace.get_tracer("tests.sql")

    def traced_query(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        with tracer.start_as_current_span("SELECT" if sql.startswith("SELECT") else "SQL"):
            return execute(sql, params, many, context)

    with connection.execute_wrapper(traced_query):
        rpc = mcp_client(alice_key)
        result = rpc.call("list_tasks", {"project": project.pk})
    assert result["isError"] is False
    finished = spans()
    run = named(finished, "execute_tool list_tasks")
    assert run.context is not None
    queries = [span for span in finished if span.name == "SELECT"]
    under_tool = [q for q in queries if q.parent and q.parent.span_id == run.context.span_id]
    assert under_tool, [(q.name, parent_hex(q)) for q in queries]
    assert all(hex_trace(q) == hex_trace(run) for q in under_tool)


def test_the_client_port_is_the_peers_and_a_declared_proxy_gives_the_address(
    client: Client, alice_key: str, settings: Any, spans: Any
) -> None:
    def ping(**extra: str) -> dict[str, Any]:
        spans_before = len(spans())
        response = client.post(
            "/mcp",
            json.dumps(message("ping", {})),
            content_type="application/json",
            headers={"Authorization": f"Bearer {alice_key}"},
            **extra,
        )
        assert response.status_code == 200
        [server] = [s for s in spans()[spans_before:] if s.name == "ping"]
        return dict(server.attributes or {})

    direct = ping(REMOTE_PORT="54321", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert direct["client.address"] == "127.0.0.1"  # a header nobody vouches for: ignored
    assert direct["client.port"] == 54321
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    proxied = ping(REMOTE_PORT="54321", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert proxied["client.address"] == "203.0.113.9"
    assert "client.port" not in proxied  # the proxy's port, not the client's


def test_without_meta_the_traceparent_header_is_the_parent(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    rpc = mcp_client(alice_key)
    response = rpc.request(
        "tools/list", {}, headers={"traceparent": f"00-{HEADER_TRACE}-{HEADER_SPAN}-01"}
    )
    assert response.status_code == 200
    server = named(spans(), "tools/list")
    assert hex_trace(server) == HEADER_TRACE
    assert parent_hex(server) == HEADER_SPAN
    assert "gen_ai.operation.name" not in (server.attributes or {})
    assert server.links == ()


def test_meta_wins_over_the_header_which_is_linked(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    rpc = mcp_client(alice_key)
    rpc.post(
        message("ping", {"_meta": {"traceparent": TRACEPARENT}}),
        headers={"traceparent": f"00-{HEADER_TRACE}-{HEADER_SPAN}-01"},
    )
    server = named(spans(), "ping")
    assert parent_hex(server) == CLIENT_SPAN
    assert [format(link.context.span_id, "016x") for link in server.links] == [HEADER_SPAN]


def test_a_message_without_trace_context_starts_a_trace(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    mcp_client(alice_key).result("ping")
    server = named(spans(), "ping")
    assert server.parent is None
    assert hex_trace(server) not in (CLIENT_TRACE, HEADER_TRACE)


def test_malformed_trace_context_is_ignored(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    rpc = mcp_client(alice_key)
    response = rpc.post(
        message("ping", {"_meta": {"traceparent": "00-nonsense-01", "tracestate": 5}}),
        headers={"traceparent": "garbage"},
    )
    assert response.status_code == 200
    assert named(spans(), "ping").parent is None


@pytest.fixture
def django_instrumented() -> Iterator[None]:
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    provider, _, _ = providers()
    instrumentor = DjangoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


def test_with_the_django_instrumentation_the_http_span_is_parent_without_meta(
    django_instrumented: None, alice_key: str, project: Any, spans: Any
) -> None:
    rpc = MCPClient(Client(), "/mcp", alice_key)  # a new client loads the new middleware
    result = rpc.call("summarize_project", {"project_id": project.pk})
    assert result["isError"] is False
    finished = spans()
    http = [span for span in finished if span.attributes and "http.route" in span.attributes]
    assert len(http) == 1, [span.name for span in finished]
    server = named(finished, "tools/call summarize_project")
    assert http[0].context is not None
    assert server.parent is not None and server.parent.span_id == http[0].context.span_id
    run = named(finished, "execute_tool summarize_project")
    assert hex_trace(run) == hex_trace(http[0])


def test_with_the_django_instrumentation_meta_is_parent_and_the_http_span_a_link(
    django_instrumented: None, alice_key: str, project: Any, spans: Any
) -> None:
    rpc = MCPClient(Client(), "/mcp", alice_key)
    params = {
        "name": "summarize_project",
        "arguments": {"project_id": project.pk},
        "_meta": {"traceparent": TRACEPARENT},
    }
    assert rpc.post(message("tools/call", params)).status_code == 200
    finished = spans()
    http = [span for span in finished if span.attributes and "http.route" in span.attributes]
    server = named(finished, "tools/call summarize_project")
    assert parent_hex(server) == CLIENT_SPAN
    assert http[0].context is not None
    assert [link.context.span_id for link in server.links] == [http[0].context.span_id]


def test_a_json_rpc_error_sets_error_type_and_status(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    rpc = mcp_client(alice_key)
    body = rpc.post(message("tools/call", {"name": "no_such_tool", "arguments": {}})).json()
    assert body["error"]["code"] == -32602
    server = named(spans(), "tools/call")  # an unknown name stays out of the span's name
    attributes = dict(server.attributes or {})
    assert attributes["gen_ai.tool.name"] == "_OTHER"
    assert attributes["error.type"] == "-32602"
    assert attributes["rpc.response.status_code"] == "-32602"
    assert server.status.status_code == StatusCode.ERROR
    assert server.status.description == body["error"]["message"]


def test_an_unknown_method_is_named_other(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    mcp_client(alice_key).post(message("made/up", {}))
    server = named(spans(), "_OTHER")
    assert dict(server.attributes or {})["error.type"] == "-32601"


def test_a_tool_error_is_tool_error_on_the_message_and_its_code_on_the_run(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    result = mcp_client(alice_key).call("get_task", {"id": 999_999})
    assert result["isError"] is True
    finished = spans()
    server = named(finished, "tools/call get_task")
    assert dict(server.attributes or {})["error.type"] == "tool_error"
    assert server.status.status_code == StatusCode.ERROR
    run = named(finished, "execute_tool get_task")
    assert dict(run.attributes or {})["error.type"] == "not_found"
    assert run.status.status_code == StatusCode.ERROR


def test_a_tool_that_asks_for_input_is_no_error_and_a_protocol_error_is_one(
    mcp_client: Callable[..., MCPClient], spans: Any
) -> None:
    from tests.test_modern import FIXTURE
    from tests.test_tasks import ELICIT, TASKS, TaskClient

    client = TaskClient(mcp_client(None, FIXTURE))
    assert (
        client.get(client.call("multi_input", {}, caps=ELICIT)["taskId"], caps=ELICIT)["status"]
        == "input_required"
    )
    asking = named(spans(), "execute_tool multi_input")
    assert "error.type" not in (asking.attributes or {})
    assert asking.status.status_code == StatusCode.UNSET
    task = client.get(client.call("protocol_error_job", {}, caps=TASKS)["taskId"])
    assert task["status"] == "failed"
    broken = named(spans(), "execute_tool protocol_error_job")
    assert dict(broken.attributes or {})["error.type"] == "ProtocolError"
    assert broken.status.status_code == StatusCode.ERROR
    assert broken.status.description == "The job broke down"


def test_a_notification_has_its_span(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    response = mcp_client(alice_key).post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status_code == 202
    server = named(spans(), "notifications/initialized")
    assert "jsonrpc.request.id" not in (server.attributes or {})


def test_initialize_reports_the_negotiated_version(
    mcp_client: Callable[..., MCPClient], alice_key: str, spans: Any
) -> None:
    mcp_client(alice_key).result(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    server = named(spans(), "initialize")
    assert dict(server.attributes or {})["mcp.protocol.version"] == "2025-06-18"


def test_the_duration_histogram(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    project: Any,
    spans: Any,
    reader: InMemoryMetricReader,
) -> None:
    rpc = mcp_client(alice_key)
    rpc.call("summarize_project", {"project_id": project.pk})
    rpc.call("get_task", {"id": 999_999})
    data = reader.get_metrics_data()
    assert data is not None
    points = [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        if scope.scope.name == "mcp_endpoint"
        for metric in scope.metrics
        if metric.name == "mcp.server.operation.duration"
        for point in metric.data.data_points  # type: ignore[union-attr]
    ]
    # The reader holds every point of this test process since its providers were set:
    # other tests' calls are among them, failed ones of this very tool too (a point per
    # set of attributes, such as each protocol version). The call that succeeded here has a
    # point without ``error.type``.
    succeeded = [
        p
        for p in points
        if (p.attributes or {}).get("gen_ai.tool.name") == "summarize_project"
        and "error.type" not in (p.attributes or {})
    ]
    assert succeeded, [p.attributes for p in points]
    for ok in succeeded:
        assert ok.count >= 1 and ok.sum > 0
        assert ok.explicit_bounds[:3] == (0.01, 0.02, 0.05)
        assert ok.attributes is not None
        assert ok.attributes["mcp.method.name"] == "tools/call"
        assert "jsonrpc.request.id" not in ok.attributes
    failed = {
        (p.attributes or {}).get("gen_ai.tool.name"): p
        for p in points
        if (p.attributes or {}).get("error.type") == "tool_error"
    }
    assert "get_task" in failed, sorted(map(str, failed))
    assert failed["get_task"].attributes["mcp.method.name"] == "tools/call"  # type: ignore[index]


def test_without_opentelemetry_nothing_imports_it(tmp_path: Any) -> None:
    """A host without opentelemetry-api: a tool call through the real URL is answered, and
    nothing imported OpenTelemetry (the benchmark's open endpoint: no database needed)."""
    script = """
import importlib.abc, json, os, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(name)
sys.meta_path.insert(0, Absent())
os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
import django
django.setup()
from django.test import Client
from mcp_endpoint import tracing
call = {"name": "add", "arguments": {"a": 2, "b": 3}}
body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
response = Client().post("/bench/open-mcp", body, content_type="application/json")
print(json.dumps({"answer": response.json()["result"]["structuredContent"],
                  "enabled": tracing.enabled(),
                  "task_context": tracing.task_context(),
                  "task_tool": tracing.task_tool(lambda tool, x: x * 2, None, {"x": 1}, 21),
                  "loaded": sorted(m for m in sys.modules if m.startswith("opentelemetry"))}))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        PYTHONPATH=str(ROOT),
        DEMO_MCP_SESSIONS="0",
        SQLITE_PATH=str(tmp_path / "db.sqlite3"),
        CACHE_DIR=str(tmp_path / "cache"),
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "answer": {"result": 5},
        "enabled": False,
        "task_context": {},
        "task_tool": 42,
        "loaded": [],
    }


# -- no SDK, no spans -----------------------------------------------------------------------

RECORDING = """
from opentelemetry import metrics, trace
from mcp_endpoint import tracing
print(tracing.recording())
if {meters}:
    from opentelemetry.sdk.metrics import MeterProvider
    metrics.set_meter_provider(MeterProvider())
else:
    from opentelemetry.sdk.trace import TracerProvider
    trace.set_tracer_provider(TracerProvider())
print(tracing.recording())
"""


@pytest.mark.parametrize("meters", [True, False], ids=["meter provider", "tracer provider"])
def test_spans_are_made_only_once_a_provider_is_set(meters: bool) -> None:
    # A fresh interpreter, with the API's stand-in providers in place: nothing records, so
    # no span is made; the first provider the host sets (either kind) turns them on. This
    # also fails the day the API's private stand-in meter provider moves.
    done = subprocess.run(
        [sys.executable, "-c", RECORDING.format(meters=meters)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=ROOT,
    )
    assert done.stdout.split() == ["False", "True"], done.stderr
