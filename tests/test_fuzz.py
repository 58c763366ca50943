"""Property-based tests: generated tool arguments and raw JSON-RPC messages against ``/mcp``.

Arguments come from each tool's own ``inputSchema`` (``hypothesis-jsonschema``), valid and
mutated out of it; messages of both eras and raw bodies come from ``hypothesis``
strategies. Whatever arrives: no 5xx, no ``internal_error``, no traceback in the log, and a
refused call leaves the database as it was.

In the suite the run is bounded and derandomised (``FUZZ_EXAMPLES`` examples per property,
20 by default); ``./dev fuzz`` runs many more, with fresh randomness.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from mcp_endpoint import site
from mcp_endpoint.protocol.versions import (
    ALL_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
)
from project.tracker.models import Comment, Project, Task
from tests.conftest import MCPClient

pytestmark = pytest.mark.django_db

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "20"))
RANDOM = os.environ.get("FUZZ_RANDOM") == "1"
MODERN = "2026-07-28"

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)

# Any JSON value (no NaN: the body is JSON, and json.dumps would write NaN otherwise).
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def tool_schemas() -> list[tuple[str, dict[str, Any]]]:
    return [(tool.name, tool.input_schema) for tool in site.tools]


def snapshot() -> tuple[Any, ...]:
    """The demo's data, to compare before and after a refused call."""
    return (
        sorted(Project.objects.values_list()),
        sorted(Task.objects.values_list()),
        sorted(Comment.objects.values_list()),
        sorted(Project.members.through.objects.values_list()),
    )


class LogWatch(logging.Handler):
    """Records every log record at ERROR or with a traceback, from any logger."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.bad: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR or record.exc_info:
            self.bad.append(record)


@pytest.fixture
def log_watch() -> Iterator[LogWatch]:
    watch = LogWatch()
    root = logging.getLogger()
    root.addHandler(watch)
    try:
        yield watch
    finally:
        root.removeHandler(watch)


def assert_answered(response: Any, watch: LogWatch, what: Any) -> Any:
    assert response.status_code < 500, (what, response.status_code, response.content[:500])
    assert not watch.bad, (what, [r.getMessage() for r in watch.bad])
    if response.status_code in (202, 204):
        return None
    assert response["Content-Type"].startswith("application/json"), what
    body = response.json()
    answers = body if isinstance(body, list) else [body]
    for answer in answers:
        assert answer.get("error", {}).get("code") != -32603, (what, answer)
        result = answer.get("result") or {}
        error = (result.get("structuredContent") or {}).get("error") or {}
        assert error.get("code") != "internal_error", (what, answer)
    return body


# -- tool arguments --------------------------------------------------------------------------


def mutated(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Arguments that are valid but for one change: a wrong value, an extra or a lost key."""
    names = sorted(schema.get("properties", {}))

    def change(valid: dict[str, Any], data: st.DataObject) -> Any:
        kind = data.draw(st.sampled_from(["replace", "extra", "drop", "whole"]))
        out = dict(valid)
        if kind == "replace" and names:
            out[data.draw(st.sampled_from(names))] = data.draw(JSON_VALUES)
        elif kind == "extra":
            out[data.draw(st.text(min_size=1, max_size=12))] = data.draw(JSON_VALUES)
        elif kind == "drop" and out:
            out.pop(data.draw(st.sampled_from(sorted(out))))
        else:
            return data.draw(JSON_VALUES)
        return out

    return st.builds(lambda v, d: (v, d), from_schema(schema), st.data()).map(
        lambda pair: change(pair[0], pair[1])
    )


@pytest.fixture
def alice_rpc(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Project, settings: Any
) -> MCPClient:
    # The tool-call log writes a row per call by design (its own tests cover it); off here,
    # so that "the database unchanged" means unchanged.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": False}
    Comment.objects.create(task=project.tasks.first(), author=project.owner, body="First!")
    return mcp_client(alice_key)


@pytest.mark.parametrize(("name", "schema"), tool_schemas(), ids=[n for n, _ in tool_schemas()])
def test_generated_arguments(
    alice_rpc: MCPClient, log_watch: LogWatch, name: str, schema: dict[str, Any]
) -> None:
    @FUZZ
    @given(arguments=st.one_of(from_schema(schema), mutated(schema)))
    def call(arguments: Any) -> None:
        before = snapshot()
        response = alice_rpc.request("tools/call", {"name": name, "arguments": arguments})
        body = assert_answered(response, log_watch, arguments)
        result = body.get("result") if isinstance(body, dict) else None
        if not result or result.get("isError"):
            assert snapshot() == before, (name, arguments, body)

    call()


# -- raw messages ----------------------------------------------------------------------------

METHODS = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
]
IDS = st.one_of(
    st.integers(), st.text(max_size=10), st.none(), st.booleans(), st.floats(allow_nan=False)
)


@st.composite
def messages(draw: st.DrawFn) -> tuple[Any, dict[str, str]]:
    """A JSON-RPC message of either era, often well-formed, with the headers a client sends."""
    method = draw(st.one_of(st.sampled_from(METHODS), st.text(max_size=20)))
    params = draw(
        st.one_of(
            st.dictionaries(
                st.sampled_from(["name", "arguments", "uri", "cursor", "protocolVersion", "ref"]),
                JSON_VALUES,
                max_size=3,
            ),
            JSON_VALUES,
        )
    )
    headers: dict[str, str] = {}
    modern = draw(st.booleans())
    if modern and isinstance(params, dict):
        meta = {
            META_PROTOCOL_VERSION: draw(st.sampled_from([MODERN, *ALL_VERSIONS, "1999-01-01"])),
            META_CLIENT_CAPABILITIES: draw(st.one_of(st.just({}), JSON_VALUES)),
        }
        params = {**params, "_meta": meta}
        if draw(st.booleans()):
            headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
            if isinstance(params.get("name"), str) and params["name"].isascii():
                headers["Mcp-Name"] = params["name"]
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "1.0"]))}
    message["method"] = method
    if draw(st.booleans()):
        message["params"] = params
    if draw(st.integers(0, 3)):
        message["id"] = draw(IDS)
    if draw(st.integers(0, 9)) == 0:
        return draw(st.lists(st.just(message), min_size=1, max_size=3)), headers
    return message, headers


@FUZZ
@given(case=messages())
def test_generated_messages(alice_rpc: MCPClient, log_watch: LogWatch, case: Any) -> None:
    message, headers = case
    before = snapshot()
    response = alice_rpc.post(message, headers=headers)
    body = assert_answered(response, log_watch, message)
    answers = body if isinstance(body, list) else [body] if body else []
    if all("error" in a or (a.get("result") or {}).get("isError") for a in answers):
        assert snapshot() == before, (message, body)


@FUZZ
@given(body=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_raw_bodies(
    client: Client, alice_key: str, log_watch: LogWatch, settings: Any, body: bytes
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": False}
    response = client.post(
        "/mcp",
        data=body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {alice_key}"},
    )
    answered = assert_answered(response, log_watch, body)
    if response.status_code == 400:
        assert answered["error"]["code"] in (-32700, -32600), answered


# URIs that fill the demo's templates with any text, and any text at all.
RESOURCE_URIS = st.one_of(
    st.text(max_size=40),
    st.builds("tracker://projects/{}".format, st.text(min_size=1, max_size=30)),
    st.builds("tracker://projects/{}/board".format, st.text(min_size=1, max_size=30)),
    st.builds(
        "tracker://projects/{}/board".format,
        st.one_of(st.integers(min_value=-(2**80), max_value=2**80).map(str), st.just("9" * 5000)),
    ),
)


@FUZZ
@given(
    method=st.sampled_from(["resources/read", "resources/subscribe", "resources/unsubscribe"]),
    uri=RESOURCE_URIS,
)
def test_generated_resource_uris(
    alice_rpc: MCPClient, log_watch: LogWatch, method: str, uri: str
) -> None:
    response = alice_rpc.request(method, {"uri": uri})
    assert_answered(response, log_watch, (method, uri))


def test_the_properties_run_through_the_real_url(alice_rpc: MCPClient) -> None:
    # The tools the properties cover are the endpoint's, as a client lists them.
    listed = alice_rpc.result("tools/list")["tools"]
    assert {t["name"] for t in listed} <= {name for name, _ in tool_schemas()}
    assert json.dumps(listed)  # every schema a client gets is JSON
