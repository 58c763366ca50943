"""End to end: the official Python SDK's client spans are the parents of the server's.

The client (this process) has the OpenTelemetry SDK, so ``mcp`` opens a ``CLIENT`` span per
request and sends its ``traceparent`` in ``params._meta``; the server (a gunicorn process of
the demo host with the SDK set up) writes its finished spans to a file read back here.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from opentelemetry import trace

from tests.live_server import LiveServer, manage
from tests.otel import providers
from tests.test_e2e_sdk import DEMO_PROJECT, create_key

pytestmark = pytest.mark.e2e


@dataclass
class Host:
    server: LiveServer
    key: str
    project_id: int
    traces: Path

    def server_spans(self, count: int) -> list[dict[str, Any]]:
        """The server's finished spans, waiting (briefly) until ``count`` are written."""
        deadline = time.monotonic() + 10
        while True:
            lines = self.traces.read_text().splitlines() if self.traces.exists() else []
            if len(lines) >= count or time.monotonic() > deadline:
                return [json.loads(line) for line in lines]
            time.sleep(0.05)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp_path_factory.mktemp("e2e-tracing")
    traces = workdir / "spans.jsonl"
    env = {
        "CACHE_KEY_PREFIX": f"mcp_tracing_{secrets.token_hex(4)}",
        "DJANGO_SETTINGS_MODULE": "tests.settings_traced",
        "TRACES_FILE": str(traces),
    }
    with LiveServer(workdir, workers=1, env=env) as server:
        manage(server.env, "seed_demo")
        key = create_key(server.env, "alice", "read write")
        found = manage(
            server.env,
            "shell",
            "-c",
            "from project.tracker.models import Project\n"
            f"print(Project.objects.get(name={DEMO_PROJECT!r}).pk)\n",
        )
        yield Host(server, key, int(found.strip().splitlines()[-1]), traces)


def hex_id(value: int) -> str:
    return f"0x{value:016x}"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_clients_span_is_the_parent_of_the_tool_call(host: Host, mode: str) -> None:
    _, exporter, _ = providers()
    exporter.clear()
    before = len(host.server_spans(0))
    tracer = trace.get_tracer("tests.agent")

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {host.key}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(host.server.url("/mcp"), http_client=http)
            async with Client(transport, mode=mode) as client:
                with tracer.start_as_current_span("agent turn"):
                    return await client.call_tool(
                        "summarize_project", {"project_id": host.project_id}
                    )

    result = anyio.run(main)
    assert result.is_error is False
    sent = [s for s in exporter.get_finished_spans() if s.name.endswith("summarize_project")]
    assert len(sent) == 1, [s.name for s in exporter.get_finished_spans()]
    client_span = sent[0]
    assert client_span.kind == trace.SpanKind.CLIENT
    assert client_span.context is not None

    spans = host.server_spans(before + 2)[before:]
    server = [s for s in spans if s["name"] == "tools/call summarize_project"]
    assert len(server) == 1, [s["name"] for s in spans]
    assert server[0]["kind"] == "SpanKind.SERVER"
    assert server[0]["context"]["trace_id"] == f"0x{client_span.context.trace_id:032x}"
    assert server[0]["parent_id"] == hex_id(client_span.context.span_id)
    attributes = server[0]["attributes"]
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "summarize_project"
    assert attributes["mcp.protocol.version"] == ("2025-11-25" if mode == "legacy" else mode)
    run = [s for s in spans if s["name"] == "execute_tool summarize_project"]
    assert len(run) == 1
    assert run[0]["parent_id"] == server[0]["context"]["span_id"]
