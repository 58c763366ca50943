"""Hostile requests against ``/mcp``, one class per row: what each gets, and that it writes nothing.

Every row is sent through the real URL with Django's test client, with the demo's data in
place, and checked for its HTTP status, its JSON-RPC error code (a number) or tool error
code (a string), the id it echoes, that no row of the product's data changed, and that no
traceback reached the log. ``docs/security.md`` lists the same rows (a test below keeps the
two in step).
"""

from __future__ import annotations

import base64
import datetime
import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from mcp_endpoint.models import APIKey
from mcp_endpoint.protocol.versions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from project.tracker.models import Comment, Project, Task
from tests.conftest import make_key

pytestmark = pytest.mark.django_db

MODERN = "2026-07-28"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "security.md"
ANY = object()  # the answer's id is not checked


@dataclass
class World:
    """What the rows refer to: the demo's objects and the keys of its users."""

    task: int
    project: int
    keys: dict[str, str]


Body = Any  # a JSON value, or a function of the World giving one


@dataclass(frozen=True)
class Hostile:
    """One class of hostile request and what it must get."""

    name: str
    what: str
    status: int
    code: int | str
    body: Body = None
    raw: bytes | None = None
    request_id: Any = 1
    method: str = "POST"
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    key: str = "alice"
    settings: dict[str, Any] = field(default_factory=dict)


def rpc(method: str, params: Any = None, request_id: Any = 1, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    message.update(extra)
    return message


def call(name: str, arguments: Any) -> Callable[[World], dict[str, Any]]:
    def build(world: World) -> dict[str, Any]:
        value = arguments(world) if callable(arguments) else arguments
        return rpc("tools/call", {"name": name, "arguments": value})

    return build


def modern(method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    body = {
        META_PROTOCOL_VERSION: MODERN,
        META_CLIENT_CAPABILITIES: {},
        **meta,
    }
    return rpc(method, {**(params or {}), "_meta": body})


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    headers.update(extra)
    return headers


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


PING = rpc("ping")

HOSTILE: list[Hostile] = [
    # -- bodies that are not JSON --------------------------------------------------------
    Hostile("not_json", "a body that is not JSON", 400, -32700, raw=b"{", request_id=None),
    Hostile(
        "truncated_json",
        "a message cut off in the middle",
        400,
        -32700,
        raw=b'{"jsonrpc": "2.0", "id": 1,',
        request_id=None,
    ),
    Hostile("empty_body", "an empty body", 400, -32700, raw=b"", request_id=None),
    Hostile(
        "not_utf8", "bytes that are not UTF-8", 400, -32700, raw=b"\xff\xfe{}", request_id=None
    ),
    Hostile(
        "utf16_body",
        "JSON encoded as UTF-16",
        400,
        -32700,
        raw=json.dumps(PING).encode("utf-16"),
        request_id=None,
    ),
    Hostile(
        "byte_order_mark",
        "JSON behind a UTF-8 byte order mark",
        400,
        -32700,
        raw=b"\xef\xbb\xbf" + json.dumps(PING).encode(),
        request_id=None,
    ),
    Hostile(
        "trailing_garbage",
        "a message followed by more text",
        400,
        -32700,
        raw=json.dumps(PING).encode() + b" x",
        request_id=None,
    ),
    Hostile(
        "nan",
        "NaN, which is not JSON",
        400,
        -32700,
        raw=b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        request_id=None,
    ),
    Hostile(
        "infinity",
        "-Infinity, which is not JSON",
        400,
        -32700,
        raw=b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
        request_id=None,
    ),
    Hostile(
        "overflowing_number",
        "1e999, a number no float holds",
        400,
        -32700,
        raw=b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1e999}}',
        request_id=None,
    ),
    Hostile(
        "huge_integer",
        "an integer of 5,000 digits",
        400,
        -32700,
        raw=b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}',
        request_id=None,
    ),
    Hostile(
        "deep_array_100000",
        "100,000 nested arrays",
        400,
        -32700,
        raw=b"[" * 100_000 + b"]" * 100_000,
        request_id=None,
    ),
    Hostile(
        "deep_object_100000",
        "100,000 nested objects, never closed",
        400,
        -32700,
        raw=b'{"a":' * 100_000,
        request_id=None,
    ),
    Hostile(
        "deep_params_over_limit",
        "params nested one level past MAX_JSON_DEPTH",
        400,
        -32700,
        body=rpc("ping", {"x": nested(199)}),
        request_id=None,
    ),
    # -- JSON that is not JSON-RPC -------------------------------------------------------
    Hostile("json_number", "a bare number", 400, -32600, raw=b"42", request_id=None),
    Hostile("json_string", "a bare string", 400, -32600, raw=b'"ping"', request_id=None),
    Hostile("json_null", "null", 400, -32600, raw=b"null", request_id=None),
    Hostile(
        "missing_jsonrpc",
        'no "jsonrpc" member',
        400,
        -32600,
        body={"id": 1, "method": "ping"},
    ),
    Hostile("jsonrpc_1_0", '"jsonrpc": "1.0"', 400, -32600, body={**PING, "jsonrpc": "1.0"}),
    Hostile("jsonrpc_number", '"jsonrpc": 2', 400, -32600, body={**PING, "jsonrpc": 2}),
    Hostile(
        "method_not_string", "a method that is a number", 400, -32600, body={**PING, "method": 42}
    ),
    Hostile(
        "method_missing",
        "no method, no result",
        400,
        -32600,
        body={"jsonrpc": "2.0", "id": 1},
    ),
    Hostile(
        "id_object",
        "an id that is an object",
        400,
        -32600,
        body={**PING, "id": {"a": 1}},
        request_id=None,
    ),
    Hostile(
        "id_boolean", "an id that is true", 400, -32600, body={**PING, "id": True}, request_id=None
    ),
    Hostile(
        "id_float", "an id that is 1.5", 400, -32600, body={**PING, "id": 1.5}, request_id=None
    ),
    Hostile("params_array", "params as an array", 400, -32600, body=rpc("ping", [1, 2])),
    Hostile("params_string", "params as a string", 400, -32600, body=rpc("ping", "x")),
    # -- methods and params --------------------------------------------------------------
    Hostile("unknown_method", "a method no one defined", 200, -32601, body=rpc("tools/destroy")),
    Hostile(
        "reserved_method",
        "a method in JSON-RPC's rpc. space",
        200,
        -32601,
        body=rpc("rpc.discover"),
    ),
    Hostile("nul_in_method", "a NUL inside the method name", 200, -32601, body=rpc("ping\x00")),
    Hostile(
        "unannounced_method",
        "logging/setLevel, not announced",
        200,
        -32601,
        body=rpc("logging/setLevel", {"level": "debug"}),
        settings={"LOGGING": False},
    ),
    Hostile(
        "call_without_name", "tools/call with no name", 200, -32602, body=rpc("tools/call", {})
    ),
    Hostile(
        "tool_name_not_string",
        "tools/call with a numeric name",
        200,
        -32602,
        body=rpc("tools/call", {"name": 123}),
    ),
    Hostile(
        "unknown_tool",
        "tools/call of a tool that does not exist",
        200,
        -32602,
        body=rpc("tools/call", {"name": "drop_database", "arguments": {}}),
    ),
    Hostile(
        "arguments_array",
        "tool arguments that are an array",
        200,
        -32602,
        body=rpc("tools/call", {"name": "list_tasks", "arguments": [1]}),
    ),
    Hostile(
        "bad_cursor",
        "a cursor that is not one",
        200,
        -32602,
        body=rpc("tools/list", {"cursor": "!!!"}),
    ),
    Hostile(
        "forged_cursor",
        "a well-formed cursor past the end",
        200,
        -32602,
        body=rpc("tools/list", {"cursor": base64.urlsafe_b64encode(b"o:99999").decode()}),
    ),
    Hostile(
        "unknown_resource",
        "resources/read of a URI no one serves",
        200,
        -32002,
        body=rpc("resources/read", {"uri": "file:///etc/passwd"}),
    ),
    Hostile(
        "resource_id_of_5000_digits",
        "resources/read of a board whose project id has 5,000 digits",
        200,
        -32002,
        body=rpc("resources/read", {"uri": f"tracker://projects/{'5' * 5000}/board"}),
    ),
    Hostile(
        "resource_id_superscript",
        "resources/read of a board whose project id is ¹ (a digit to isdigit, not to int)",
        200,
        -32002,
        body=rpc("resources/read", {"uri": "tracker://projects/\u00b9/board"}),
    ),
    Hostile(
        "prompt_arguments_not_strings",
        "prompt arguments that are not strings",
        200,
        -32602,
        body=rpc("prompts/get", {"name": "plan_week", "arguments": {"project": 1}}),
    ),
    Hostile(
        "unknown_prompt",
        "prompts/get of a prompt that does not exist",
        200,
        -32602,
        body=rpc("prompts/get", {"name": "exfiltrate"}),
    ),
    Hostile(
        "completion_ref_not_object",
        "completion/complete with a ref that is a string",
        200,
        -32602,
        body=rpc("completion/complete", {"ref": "x", "argument": {"name": "a", "value": "b"}}),
    ),
    Hostile(
        "nul_in_completion",
        "a NUL in a completion value (reaches a LIKE query)",
        200,
        -32602,
        body=rpc(
            "completion/complete",
            {
                "ref": {"type": "ref/prompt", "name": "plan_week"},
                "argument": {"name": "project", "value": "a\x00"},
            },
        ),
    ),
    # -- the 2026-07-28 revision ----------------------------------------------------------
    Hostile(
        "modern_unknown_method",
        "an unknown method, modern",
        404,
        -32601,
        body=modern("tools/destroy"),
        headers=modern_headers("tools/destroy"),
    ),
    Hostile(
        "modern_initialize",
        "initialize sent as a modern request",
        404,
        -32601,
        body=modern("initialize"),
        headers=modern_headers("initialize"),
    ),
    Hostile(
        "modern_without_capabilities",
        "a modern request without clientCapabilities",
        400,
        -32602,
        body=rpc("tools/list", {"_meta": {META_PROTOCOL_VERSION: MODERN}}),
        headers=modern_headers("tools/list"),
    ),
    Hostile(
        "unsupported_version",
        "a protocol version from the future",
        400,
        -32022,
        body=rpc(
            "tools/list",
            {"_meta": {META_PROTOCOL_VERSION: "2099-01-01", META_CLIENT_CAPABILITIES: {}}},
        ),
        headers=modern_headers("tools/list", **{"MCP-Protocol-Version": "2099-01-01"}),
    ),
    Hostile(
        "version_header_garbage",
        "MCP-Protocol-Version: banana",
        400,
        -32022,
        body=PING,
        headers={"MCP-Protocol-Version": "banana"},
    ),
    Hostile(
        "method_header_mismatch",
        "Mcp-Method naming another method than the body",
        400,
        -32020,
        body=modern("tools/list"),
        headers=modern_headers("prompts/list"),
    ),
    Hostile(
        "name_header_missing",
        "tools/call without Mcp-Name",
        400,
        -32020,
        body=modern("tools/call", {"name": "list_tasks", "arguments": {}}),
        headers=modern_headers("tools/call"),
    ),
    Hostile(
        "broken_base64_header",
        "Mcp-Name in the base64 form, broken",
        400,
        -32020,
        body=modern("tools/call", {"name": "list_tasks", "arguments": {}}),
        headers=modern_headers("tools/call", "=?base64?***?="),
    ),
    Hostile(
        "forged_request_state",
        "a requestState the server never signed",
        400,
        -32602,
        body=modern(
            "tools/call",
            {"name": "list_tasks", "arguments": {}, "requestState": "forged", "inputResponses": {}},
        ),
        headers=modern_headers("tools/call", "list_tasks"),
    ),
    Hostile(
        "listen_over_limit",
        "subscriptions/listen naming one URI 1,000 times",
        400,
        -32602,
        body=modern(
            "subscriptions/listen",
            {"notifications": {"resourceSubscriptions": ["tracker://projects/1/board"] * 1000}},
        ),
        headers=modern_headers("subscriptions/listen", Accept="text/event-stream"),
    ),
    # -- batches ------------------------------------------------------------------------------
    Hostile("empty_batch", "an empty batch", 400, -32600, body=[], request_id=None),
    Hostile(
        "batch_over_limit",
        "a batch one message over MAX_BATCH_SIZE",
        400,
        -32600,
        body=[rpc("ping", request_id=i) for i in range(51)],
        request_id=None,
    ),
    Hostile(
        "modern_batch",
        "a batch of modern messages",
        400,
        -32600,
        body=[modern("tools/list")],
        headers=modern_headers("tools/list"),
        request_id=None,
    ),
    Hostile(
        "mixed_era_batch",
        "a batch mixing the eras",
        400,
        -32600,
        body=[PING, modern("tools/list")],
        request_id=None,
    ),
    Hostile("nested_batch", "a batch inside a batch", 200, -32600, body=[[PING]], request_id=None),
    # -- HTTP: method, media type, size, Origin ------------------------------------------------
    Hostile("get", "GET", 405, -32000, method="GET", request_id=None),
    Hostile("put", "PUT with a message", 405, -32000, method="PUT", body=PING),
    Hostile(
        "delete_without_sessions",
        "DELETE with sessions off",
        405,
        -32000,
        method="DELETE",
        body=PING,
    ),
    Hostile(
        "text_plain", "Content-Type: text/plain", 415, -32600, body=PING, content_type="text/plain"
    ),
    Hostile(
        "form_encoded",
        "Content-Type: application/x-www-form-urlencoded",
        415,
        -32600,
        body=PING,
        content_type="application/x-www-form-urlencoded",
    ),
    Hostile(
        "body_over_limit",
        "a body past MAX_REQUEST_BYTES",
        413,
        -32600,
        body=rpc("ping", {"pad": "x" * 2000}),
        settings={"MAX_REQUEST_BYTES": 1000},
        request_id=None,
    ),
    Hostile(
        "foreign_origin",
        "Origin: https://evil.example",
        403,
        -32000,
        body=PING,
        headers={"Origin": "https://evil.example"},
    ),
    Hostile("null_origin", "Origin: null", 403, -32000, body=PING, headers={"Origin": "null"}),
    Hostile(
        "rebinding_origin",
        "an Origin that looks like loopback (DNS rebinding)",
        403,
        -32000,
        body=PING,
        headers={"Origin": "http://127.0.0.1.evil.example"},
    ),
    # -- credentials ----------------------------------------------------------------------------
    Hostile("no_credential", "no Authorization header", 401, -32001, body=PING, key="none"),
    Hostile("unknown_key", "a key that does not exist", 401, -32001, body=PING, key="unknown"),
    Hostile("revoked_key", "a revoked key", 401, -32001, body=PING, key="revoked"),
    Hostile("expired_key", "an expired key", 401, -32001, body=PING, key="expired"),
    Hostile("basic_auth", "Authorization: Basic", 401, -32001, body=PING, key="basic"),
    Hostile(
        "empty_bearer", "Authorization: Bearer with nothing", 401, -32001, body=PING, key="empty"
    ),
    Hostile("huge_key", "a bearer token of 8,000 characters", 401, -32001, body=PING, key="huge"),
    Hostile(
        "read_key_writes",
        "a read-only key calling create_task",
        200,
        "insufficient_scope",
        body=call("create_task", lambda w: {"project": w.project, "title": "x"}),
        key="alice_read",
    ),
    Hostile(
        "other_tenant",
        "a user outside the project reading its task",
        200,
        "not_found",
        body=call("get_task", lambda w: {"id": w.task}),
        key="carol",
    ),
    Hostile(
        "other_tenant_delete",
        "a user outside the project deleting its task",
        200,
        "not_found",
        body=call("delete_task", lambda w: {"id": w.task}),
        key="carol",
    ),
    # -- tool arguments --------------------------------------------------------------------------
    Hostile(
        "deep_arguments",
        "tool arguments nested past MAX_ARGUMENT_DEPTH",
        200,
        "invalid_arguments",
        body=call("list_tasks", {"search": nested(40, "x")}),
    ),
    Hostile(
        "nul_in_search",
        "a NUL in a search string",
        200,
        "invalid_arguments",
        body=call("list_tasks", {"search": "a\x00b"}),
    ),
    Hostile(
        "nul_in_ordering",
        "a NUL after an ordering field",
        200,
        "invalid_arguments",
        body=call("list_tasks", {"ordering": "title\x00"}),
    ),
    Hostile(
        "nul_in_title",
        "a NUL in a title to write",
        200,
        "invalid_arguments",
        body=call("create_task", lambda w: {"project": w.project, "title": "a\x00b"}),
    ),
    Hostile(
        "lone_surrogate",
        "a lone surrogate (\\ud800) in a title",
        200,
        "invalid_arguments",
        body=call("create_task", lambda w: {"project": w.project, "title": "a\ud800"}),
    ),
    Hostile(
        "nul_in_argument_name",
        "a NUL in an argument's name",
        200,
        "invalid_arguments",
        body=call("list_tasks", {"search\x00": "x"}),
    ),
    Hostile(
        "huge_search",
        "a search of 20,000 words",
        200,
        "invalid_arguments",
        body=call("list_tasks", {"search": "word " * 20_000}),
    ),
    Hostile(
        "huge_title",
        "a title of 100,000 characters",
        200,
        "invalid_arguments",
        body=call("create_task", lambda w: {"project": w.project, "title": "x" * 100_000}),
    ),
    Hostile(
        "unknown_argument",
        "an argument the tool does not take",
        200,
        "invalid_arguments",
        body=call("list_tasks", {"sql": "1; DROP TABLE tracker_task"}),
    ),
    Hostile(
        "lookup_wrong_type",
        "a task id that is a string",
        200,
        "invalid_arguments",
        body=call("get_task", {"id": "1 OR 1=1"}),
    ),
    Hostile(
        "lookup_missing",
        "get_task without its id",
        200,
        "invalid_arguments",
        body=call("get_task", {}),
    ),
    Hostile(
        "lookup_huge",
        "a task id of 2**70",
        200,
        "not_found",
        body=call("get_task", {"id": 2**70}),
    ),
    Hostile(
        "priority_out_of_range",
        "a priority outside 1 to 4",
        200,
        "invalid_arguments",
        body=call("create_task", lambda w: {"project": w.project, "title": "x", "priority": 99}),
    ),
    Hostile(
        "bad_date",
        "a due date of 2024-13-45",
        200,
        "invalid_arguments",
        body=call(
            "create_task", lambda w: {"project": w.project, "title": "x", "due": "2024-13-45"}
        ),
    ),
    Hostile(
        "status_not_a_choice",
        "a status that is not a choice",
        200,
        "invalid_arguments",
        body=call("create_task", lambda w: {"project": w.project, "title": "x", "status": "x"}),
    ),
    Hostile(
        "wrong_type_title",
        "a title that is an object",
        200,
        "invalid_arguments",
        body=call("create_task", lambda w: {"project": w.project, "title": {"$gt": ""}}),
    ),
    Hostile(
        "function_tool_wrong_type",
        "a function tool's integer given as text",
        200,
        "invalid_arguments",
        body=call("summarize_project", {"project_id": "all"}),
    ),
    Hostile(
        "unconfirmable_delete",
        "a delete by a legacy client without a session, confirmation on",
        200,
        "confirmation_unavailable",
        body=call("delete_task", lambda w: {"id": w.task}),
        settings={"CONFIRM_DESTRUCTIVE_TOOLS": True},
    ),
]


# -- running the table -----------------------------------------------------------------------


def snapshot() -> tuple[Any, ...]:
    """Every row of the product's data and of the credentials, to compare before and after."""
    return (
        sorted(Project.objects.values_list()),
        sorted(Task.objects.values_list()),
        sorted(Comment.objects.values_list()),
        sorted(Project.members.through.objects.values_list()),
        sorted(APIKey.objects.values_list("pk", "revoked", "expires")),
        get_user_model().objects.count(),
    )


class Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)


@pytest.fixture
def tracebacks() -> Iterator[Tracebacks]:
    handler = Tracebacks()
    logging.getLogger().addHandler(handler)
    try:
        yield handler
    finally:
        logging.getLogger().removeHandler(handler)


@pytest.fixture
def world(project: Project, alice: Any, carol: Any) -> World:
    task = project.tasks.get(title="Write copy")
    Comment.objects.create(task=task, author=alice, body="Before anything hostile.")
    revoked = make_key(alice, "read write", name="revoked")
    APIKey.objects.filter(prefix=revoked.rsplit("_", 1)[0]).get().revoke()
    expired = make_key(
        alice, "read write", name="expired", expires=timezone.now() - datetime.timedelta(days=1)
    )
    keys = {
        "alice": make_key(alice, "read write", name="rw"),
        "alice_read": make_key(alice, "read", name="ro"),
        "carol": make_key(carol, "read write", name="carol"),
        "unknown": "mcp_deadbeef_" + "0" * 64,
        "revoked": revoked,
        "expired": expired,
    }
    return World(task=task.pk, project=project.pk, keys=keys)


def authorization(kind: str, world: World) -> dict[str, str]:
    if kind == "none":
        return {}
    if kind == "basic":
        return {"Authorization": "Basic YWxpY2U6cHc="}
    if kind == "empty":
        return {"Authorization": "Bearer "}
    if kind == "huge":
        return {"Authorization": "Bearer mcp_" + "a" * 8000}
    return {"Authorization": f"Bearer {world.keys[kind]}"}


def send(client: Client, case: Hostile, world: World) -> Any:
    if case.raw is not None:
        data: bytes = case.raw
    elif case.body is None:
        data = b""
    else:
        body = case.body(world) if callable(case.body) else case.body
        data = json.dumps(body).encode()
    headers = {**authorization(case.key, world), **case.headers}
    return client.generic(
        case.method, "/mcp", data=data, content_type=case.content_type, headers=headers
    )


def error_code(body: Any) -> int | str | None:
    """The answer's JSON-RPC error code, or its tool error code; the first, in a batch."""
    answer = body[0] if isinstance(body, list) and body else body
    if not isinstance(answer, dict):
        return None
    if "error" in answer:
        code: int = answer["error"]["code"]
        return code
    result = answer.get("result") or {}
    if result.get("isError"):
        tool_code: str = result["structuredContent"]["error"]["code"]
        return tool_code
    return None


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_request(
    client: Client, settings: Any, world: World, tracebacks: Tracebacks, case: Hostile
) -> None:
    # The tool-call log keeps a row per call by design (its own tests say how); here
    # "nothing written" means nothing at all, so it is off.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": False, **case.settings}
    before = snapshot()
    response = send(client, case, world)
    assert response.status_code == case.status, response.content[:400]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert error_code(body) == case.code, body
    if case.request_id is not ANY and isinstance(body, dict):
        assert body["id"] == case.request_id, body
    assert snapshot() == before, "a hostile request changed data"
    assert not tracebacks.records, [r.getMessage() for r in tracebacks.records]


def test_the_table_has_at_least_sixty_classes() -> None:
    names = [c.name for c in HOSTILE]
    assert len(set(names)) == len(names)
    assert len(names) >= 60


def test_docs_list_every_class() -> None:
    # docs/security.md has one table row per class: `name` | what | status | code.
    rows = re.findall(
        r"^\| `([a-z0-9_]+)` \| (.+?) \| (\d{3}) \| `?([^`|]+?)`? \|$", DOCS.read_text(), re.M
    )
    documented = {name: (int(status), code.strip()) for name, _, status, code in rows}
    expected = {c.name: (c.status, str(c.code)) for c in HOSTILE}
    assert documented == expected
