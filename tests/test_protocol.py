"""The protocol layer on its own: plain dicts in, plain dicts out, no HTTP and no database."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.server import (
    CACHEABLE,
    METHODS,
    REMOVED_IN_MODERN,
    RequestContext,
    Server,
    decode_cursor,
    encode_cursor,
)
from mcp_endpoint.protocol.versions import (
    ALL_VERSIONS,
    LEGACY,
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN,
    era_of,
    negotiate_legacy,
)

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = pytest.mark.once

MODERN_FIELDS = {"resultType", "ttlMs", "cacheScope"}


class FakeCredential:
    scopes = frozenset({"read"})


class Features:
    """The host side of the protocol, as small as the :class:`Features` protocol allows."""

    def __init__(
        self,
        *,
        tools: int = 3,
        page_size: int = 100,
        versions: Sequence[str] = ALL_VERSIONS,
        instructions: str = "Be brief.",
        logging: bool = False,
    ) -> None:
        self.tools = [
            {"name": f"tool_{i:02d}", "inputSchema": {"type": "object"}} for i in range(tools)
        ]
        self._page_size = page_size
        self.versions = list(versions)
        self._instructions = instructions
        self.logging = logging
        self.calls: list[tuple[str, dict[str, Any], RequestContext]] = []

    def server_info(self) -> dict[str, Any]:
        return {"name": "fake", "version": "0.0.1"}

    def instructions(self) -> str:
        return self._instructions

    def supported_versions(self) -> Sequence[str]:
        return self.versions

    def capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {"tools": {"listChanged": False}, "completions": {}}
        if self.logging:
            capabilities["logging"] = {}
        return capabilities

    def page_size(self) -> int:
        return self._page_size

    def subscriptions_available(self) -> bool:
        return False

    def live_updates(self, context: RequestContext) -> bool:
        return True

    def tasks_runnable(self) -> bool:
        return True

    def tools_list_changes(self, context: RequestContext) -> bool:
        return False

    def subscribe(self, uri: str, context: RequestContext) -> None:
        self.calls.append(("subscribe", {"uri": uri}, context))

    def unsubscribe(self, uri: str, context: RequestContext) -> None:
        self.calls.append(("unsubscribe", {"uri": uri}, context))

    def listen_filter(
        self, notifications: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        return {}

    def ttl_ms(self) -> int:
        return 1234

    def list_tools(self, context: RequestContext) -> list[dict[str, Any]]:
        return list(self.tools)

    def task_support(self, name: str, context: RequestContext) -> str:
        return "forbidden"

    def task_engine(self) -> Any:
        return None

    def call_tool(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        if name not in {t["name"] for t in self.tools}:
            raise ProtocolError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name}")
        self.calls.append((name, arguments, context))
        return {"content": [{"type": "text", "text": "ok"}], "isError": False}

    def list_resources(self, context: RequestContext) -> list[dict[str, Any]]:
        return [{"uri": "test://a", "name": "a"}]

    def list_resource_templates(self, context: RequestContext) -> list[dict[str, Any]]:
        return [{"uriTemplate": "test://item/{id}", "name": "item"}]

    def read_resource(self, uri: str, context: RequestContext) -> dict[str, Any]:
        if uri != "test://a":
            code = jsonrpc.INVALID_PARAMS if context.modern else jsonrpc.RESOURCE_NOT_FOUND
            raise ProtocolError(code, "Resource not found", {"uri": uri})
        return {"contents": [{"uri": uri, "text": "a"}]}

    def list_prompts(self, context: RequestContext) -> list[dict[str, Any]]:
        return [{"name": "greet", "arguments": []}]

    def get_prompt(
        self, name: str, arguments: dict[str, str], context: RequestContext
    ) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}

    def complete(
        self,
        ref: dict[str, Any],
        argument: dict[str, Any],
        arguments: dict[str, str],
        context: RequestContext,
    ) -> dict[str, Any]:
        return {"completion": {"values": ["alpha"], "total": 1, "hasMore": False}}

    SKILL = {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "b"}}

    def list_skills(self, context: RequestContext) -> list[dict[str, Any]]:
        return [{**self.SKILL, "resources": "dynamic"}]

    def get_skill(self, uri: str, context: RequestContext) -> dict[str, Any]:
        if uri != self.SKILL["uri"]:
            raise ProtocolError(jsonrpc.INVALID_PARAMS, f"No skill is served at {uri}")
        return {**self.SKILL, "resources": "dynamic"}

    def read_directory(self, uri: str, context: RequestContext) -> list[dict[str, Any]]:
        return [{"uri": "skill://a/SKILL.md", "name": "SKILL.md"}]


# Valid params for every method the server knows, legacy-shaped.
VALID_PARAMS: dict[str, dict[str, Any]] = {
    "initialize": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
    "ping": {},
    "logging/setLevel": {"level": "info"},
    "server/discover": {},
    "tools/list": {},
    "tools/call": {"name": "tool_00", "arguments": {}},
    "resources/list": {},
    "resources/templates/list": {},
    "resources/read": {"uri": "test://a"},
    "prompts/list": {},
    "prompts/get": {"name": "greet"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "greet"},
        "argument": {"name": "who", "value": "a"},
    },
    "skills/list": {},
    "skills/get": {"uri": "skill://a/SKILL.md"},
    "resources/directory/read": {"uri": "skill://a"},
}


def legacy() -> RequestContext:
    return RequestContext(era=LEGACY, protocol_version="2025-03-26")


def modern(credential: Any = None) -> RequestContext:
    return RequestContext(era=MODERN, credential=credential)


def meta(version: str = "2026-07-28", **extra: Any) -> dict[str, Any]:
    return {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: {}, **extra}


def call(
    server: Server,
    method: str,
    params: dict[str, Any] | None = None,
    context: RequestContext | None = None,
    request_id: Any = 1,
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    answer = server.handle(message, context or legacy())
    assert answer is not None
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == request_id
    return answer


def result_of(answer: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in answer, answer
    value: dict[str, Any] = answer["result"]
    return value


def error_of(answer: dict[str, Any], code: int) -> dict[str, Any]:
    assert "result" not in answer, answer
    assert answer["error"]["code"] == code, answer
    value: dict[str, Any] = answer["error"]
    return value


@pytest.fixture
def server() -> Server:
    return Server(Features())


# -- JSON-RPC ------------------------------------------------------------------------------------


def test_parse_request() -> None:
    request = jsonrpc.parse({"jsonrpc": "2.0", "id": "a", "method": "m", "params": {"x": 1}})
    assert (request.method, request.params, request.id) == ("m", {"x": 1}, "a")
    assert not request.is_notification


def test_parse_notification_and_null_params() -> None:
    request = jsonrpc.parse({"jsonrpc": "2.0", "method": "notifications/x", "params": None})
    assert request.is_notification
    assert request.params == {}


@pytest.mark.parametrize(
    "message",
    [
        [],
        "x",
        {"id": 1, "method": "m"},
        {"jsonrpc": "2", "id": 1, "method": "m"},
        {"jsonrpc": "2.0", "id": 1.0, "method": "m"},
        {"jsonrpc": "2.0", "id": True, "method": "m"},
        {"jsonrpc": "2.0", "id": None, "method": "m"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "method": "m", "params": [1]},
    ],
)
def test_parse_invalid(message: Any) -> None:
    with pytest.raises(ProtocolError) as caught:
        jsonrpc.parse(message)
    assert caught.value.code == jsonrpc.INVALID_REQUEST


def test_client_responses_are_read_as_notifications(server: Server) -> None:
    for message in (
        {"jsonrpc": "2.0", "id": 4, "result": {}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "no"}},
    ):
        assert server.handle(message, legacy()) is None


def test_notification_gets_no_answer(server: Server) -> None:
    assert (
        server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, legacy()) is None
    )
    # Even a notification for an unknown method, or one that would fail, stays silent.
    assert server.handle({"jsonrpc": "2.0", "method": "tools/call"}, legacy()) is None


def test_invalid_message_echoes_a_usable_id(server: Server) -> None:
    answer = server.handle({"jsonrpc": "2.0", "id": "x", "method": 1}, legacy())
    assert answer is not None
    assert answer["id"] == "x"
    error_of(answer, jsonrpc.INVALID_REQUEST)
    answer = server.handle({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, legacy())
    assert answer is not None
    assert answer["id"] is None


def test_unknown_method(server: Server) -> None:
    error = error_of(call(server, "nope/nothing"), jsonrpc.METHOD_NOT_FOUND)
    assert "nope/nothing" in error["message"]


def test_ping(server: Server) -> None:
    assert result_of(call(server, "ping")) == {}
    assert result_of(call(server, "ping", None)) == {}


# -- versions ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_negotiate_echoes_a_supported_version(version: str) -> None:
    assert negotiate_legacy(version, ALL_VERSIONS) == version


@pytest.mark.parametrize(
    ("requested", "supported", "expected"),
    [
        # Unsupported dates: the newest supported legacy revision at or below.
        ("2025-05-01", ALL_VERSIONS, "2025-03-26"),
        ("2025-12-31", ALL_VERSIONS, "2025-11-25"),
        ("2026-07-28", ALL_VERSIONS, "2025-11-25"),
        ("2031-01-01", ALL_VERSIONS, "2025-11-25"),
        ("2025-06-18", ["2025-03-26", "2025-11-25"], "2025-03-26"),
        # Older than every supported revision: the oldest.
        ("2024-01-01", ALL_VERSIONS, "2024-11-05"),
        ("2024-11-05", ["2025-03-26", "2025-11-25"], "2025-03-26"),
        # Not a date, or missing: the newest legacy revision.
        ("latest", ALL_VERSIONS, "2025-11-25"),
        ("2025-6-18x", ALL_VERSIONS, "2025-11-25"),
        (None, ALL_VERSIONS, "2025-11-25"),
        (20251125, ALL_VERSIONS, "2025-11-25"),
        (None, ["2024-11-05", "2025-06-18", "2026-07-28"], "2025-06-18"),
    ],
)
def test_negotiate_unsupported(requested: Any, supported: Sequence[str], expected: str) -> None:
    assert negotiate_legacy(requested, supported) == expected


@pytest.mark.parametrize(
    ("requested", "expected"),
    [("2025-06-18", "2025-06-18"), ("2025-01-01", "2024-11-05"), ("draft", "2025-11-25")],
)
def test_initialize_negotiates(server: Server, requested: str, expected: str) -> None:
    context = legacy()
    result = result_of(call(server, "initialize", {"protocolVersion": requested}, context))
    assert result["protocolVersion"] == expected
    assert context.protocol_version == expected


def test_initialize_without_a_version(server: Server) -> None:
    assert result_of(call(server, "initialize", {}))["protocolVersion"] == "2025-11-25"
    assert result_of(call(server, "initialize"))["protocolVersion"] == "2025-11-25"


def test_initialize_result(server: Server) -> None:
    result = result_of(call(server, "initialize", VALID_PARAMS["initialize"]))
    assert result == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": False}, "completions": {}},
        "serverInfo": {"name": "fake", "version": "0.0.1"},
        "instructions": "Be brief.",
    }


def test_initialize_without_instructions() -> None:
    server = Server(Features(instructions=""))
    assert "instructions" not in result_of(call(server, "initialize", {}))


def test_initialize_respects_the_configured_versions() -> None:
    server = Server(Features(versions=["2025-06-18", "2026-07-28"]))
    result = result_of(call(server, "initialize", {"protocolVersion": "2025-11-25"}))
    assert result["protocolVersion"] == "2025-06-18"


@pytest.mark.parametrize(
    ("message", "header", "era"),
    [
        ({"method": "ping"}, None, LEGACY),
        ({"method": "initialize", "params": {"protocolVersion": "2026-07-28"}}, None, LEGACY),
        ({"method": "ping"}, "2025-06-18", LEGACY),
        ({"method": "ping"}, "2024-11-05", LEGACY),
        ({"method": "ping"}, "2026-07-28", MODERN),
        ({"method": "ping"}, "1999-01-01", MODERN),
        ({"method": "ping"}, "garbage", MODERN),
        ({"method": "x", "params": {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}}, None, MODERN),
        (
            {"method": "x", "params": {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}},
            "2025-11-25",
            MODERN,
        ),
        # Only the version key makes _meta modern; a legacy progress token does not.
        ({"method": "x", "params": {"_meta": {"progressToken": 1}}}, None, LEGACY),
        ({"method": "x", "params": {"_meta": "2026-07-28"}}, None, LEGACY),
        ({"method": "x", "params": []}, None, LEGACY),
        ([{"method": "x"}], None, LEGACY),
        ("junk", None, LEGACY),
    ],
)
def test_era_detection(message: Any, header: str | None, era: str) -> None:
    assert era_of(message, header) == era


# -- pagination ----------------------------------------------------------------------------------


def test_cursor_round_trip() -> None:
    assert decode_cursor(encode_cursor(7), 10) == 7
    assert decode_cursor(None, 10) == 0
    assert decode_cursor("", 10) == 0


def test_pagination() -> None:
    server = Server(Features(tools=5, page_size=2))
    names: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params = {"cursor": cursor} if cursor is not None else {}
        result = result_of(call(server, "tools/list", params))
        pages += 1
        assert len(result["tools"]) <= 2
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
        assert isinstance(cursor, str) and cursor
    assert pages == 3
    assert names == [f"tool_{i:02d}" for i in range(5)]


def test_exact_page_has_no_next_cursor() -> None:
    server = Server(Features(tools=4, page_size=2))
    first = result_of(call(server, "tools/list"))
    second = result_of(call(server, "tools/list", {"cursor": first["nextCursor"]}))
    assert len(second["tools"]) == 2
    assert "nextCursor" not in second


def test_single_page_has_no_next_cursor(server: Server) -> None:
    result = result_of(call(server, "tools/list"))
    assert len(result["tools"]) == 3
    assert "nextCursor" not in result


@pytest.mark.parametrize(
    "cursor", ["!!!", "bm90IGEgY3Vyc29y", encode_cursor(99), "eDox", 12, ["a"], {"o": 1}]
)
def test_invalid_cursor(cursor: Any) -> None:
    server = Server(Features(tools=5, page_size=2))
    error = error_of(call(server, "tools/list", {"cursor": cursor}), jsonrpc.INVALID_PARAMS)
    assert "cursor" in error["message"]


@pytest.mark.parametrize(
    ("method", "key"),
    [
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
    ],
)
def test_other_lists_paginate_too(method: str, key: str) -> None:
    server = Server(Features(page_size=1))
    result = result_of(call(server, method))
    assert len(result[key]) == 1
    assert "nextCursor" not in result
    error_of(call(server, method, {"cursor": "!!"}), jsonrpc.INVALID_PARAMS)


# -- legacy methods ----------------------------------------------------------------------------


def test_discover_legacy_shape(server: Server) -> None:
    result = result_of(call(server, "server/discover", {}))
    assert result == {
        "supportedVersions": list(ALL_VERSIONS),
        "capabilities": {"tools": {"listChanged": False}, "completions": {}},
        "serverInfo": {"name": "fake", "version": "0.0.1"},
        "instructions": "Be brief.",
    }


def test_set_log_level_needs_the_logging_capability(server: Server) -> None:
    error_of(call(server, "logging/setLevel", {"level": "info"}), jsonrpc.METHOD_NOT_FOUND)


def test_set_log_level() -> None:
    server = Server(Features(logging=True))
    context = legacy()
    assert result_of(call(server, "logging/setLevel", {"level": "warning"}, context)) == {}
    assert context.log_level == "warning"
    error_of(call(server, "logging/setLevel", {"level": "loud"}), jsonrpc.INVALID_PARAMS)
    error_of(call(server, "logging/setLevel", {}), jsonrpc.INVALID_PARAMS)


def test_tools_call_params(server: Server) -> None:
    error_of(call(server, "tools/call", {}), jsonrpc.INVALID_PARAMS)
    error_of(call(server, "tools/call", {"name": ""}), jsonrpc.INVALID_PARAMS)
    error_of(call(server, "tools/call", {"name": 3}), jsonrpc.INVALID_PARAMS)
    error_of(call(server, "tools/call", {"name": "tool_00", "arguments": []}), -32602)
    error_of(call(server, "tools/call", {"name": "missing"}), jsonrpc.INVALID_PARAMS)
    result_of(call(server, "tools/call", {"name": "tool_00"}))
    result_of(call(server, "tools/call", {"name": "tool_00", "arguments": None}))


def test_tools_call_progress_token(server: Server) -> None:
    params = {"name": "tool_00", "arguments": {"a": 1}, "_meta": {"progressToken": "p1"}}
    result_of(call(server, "tools/call", params))
    features = server.features
    assert isinstance(features, Features)
    name, arguments, context = features.calls[-1]
    assert (name, arguments, context.progress_token) == ("tool_00", {"a": 1}, "p1")


def test_resources_read_params(server: Server) -> None:
    error_of(call(server, "resources/read", {}), jsonrpc.INVALID_PARAMS)
    error = error_of(call(server, "resources/read", {"uri": "test://b"}), -32002)
    assert error["data"] == {"uri": "test://b"}


def test_prompts_get_params(server: Server) -> None:
    error_of(call(server, "prompts/get", {}), jsonrpc.INVALID_PARAMS)
    error_of(call(server, "prompts/get", {"name": "greet", "arguments": {"a": 1}}), -32602)
    error_of(call(server, "prompts/get", {"name": "greet", "arguments": ["a"]}), -32602)
    result_of(call(server, "prompts/get", {"name": "greet", "arguments": {"a": "1"}}))


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"ref": {"type": "ref/prompt", "name": "greet"}},
        {"ref": "greet", "argument": {"name": "a", "value": "b"}},
        {"ref": {"type": "ref/prompt"}, "argument": {"name": "a"}},
        {"ref": {"type": "ref/prompt"}, "argument": {"name": 1, "value": "b"}},
    ],
)
def test_complete_params(server: Server, params: dict[str, Any]) -> None:
    error_of(call(server, "completion/complete", params), jsonrpc.INVALID_PARAMS)


@pytest.mark.parametrize("method", sorted(set(METHODS) | set(VALID_PARAMS)))
def test_legacy_never_sees_a_modern_field(method: str) -> None:
    server = Server(Features(logging=True))
    for context in (legacy(), RequestContext(era=LEGACY, credential=FakeCredential())):
        answer = call(server, method, VALID_PARAMS.get(method, {}), context)
        if method in VALID_PARAMS:
            result = result_of(answer)
        else:
            # A method added since these tests were written: its error or result is checked.
            result = answer.get("result") or answer["error"]
        assert not MODERN_FIELDS & set(result), result
        assert META_SERVER_INFO not in result.get("_meta", {})


# -- the modern revision ---------------------------------------------------------------------


def modern_params(method: str, **meta_extra: Any) -> dict[str, Any]:
    params = {k: v for k, v in VALID_PARAMS[method].items()}
    params["_meta"] = meta(**meta_extra)
    return params


def test_modern_missing_meta(server: Server) -> None:
    error = error_of(call(server, "tools/list", {}, modern()), jsonrpc.INVALID_PARAMS)
    assert "_meta" in error["message"]


def test_modern_missing_version_in_meta(server: Server) -> None:
    params = {"_meta": {META_CLIENT_CAPABILITIES: {}}}
    error_of(call(server, "tools/list", params, modern()), jsonrpc.INVALID_PARAMS)


@pytest.mark.parametrize("capabilities", [None, "all", ["elicitation"]])
def test_modern_client_capabilities_must_be_an_object(server: Server, capabilities: Any) -> None:
    params: dict[str, Any] = {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}
    if capabilities is not None:
        params["_meta"][META_CLIENT_CAPABILITIES] = capabilities
    error = error_of(call(server, "tools/list", params, modern()), jsonrpc.INVALID_PARAMS)
    assert META_CLIENT_CAPABILITIES in error["message"]


@pytest.mark.parametrize("version", ["2027-01-01", "2025-11-25", "draft"])
def test_modern_unsupported_version(server: Server, version: str) -> None:
    # A legacy revision in _meta is no modern revision either.
    answer = call(server, "tools/list", {"_meta": meta(version)}, modern())
    error = error_of(answer, jsonrpc.UNSUPPORTED_VERSION)
    assert error["data"] == {"supported": list(ALL_VERSIONS), "requested": version}


def test_modern_version_not_configured() -> None:
    server = Server(Features(versions=LEGACY_VERSIONS))
    answer = call(server, "tools/list", {"_meta": meta()}, modern())
    error = error_of(answer, jsonrpc.UNSUPPORTED_VERSION)
    assert error["data"]["supported"] == list(LEGACY_VERSIONS)


@pytest.mark.parametrize(
    "method", ["initialize", "ping", "logging/setLevel", "resources/subscribe", "nope"]
)
def test_modern_removed_and_unknown_methods(server: Server, method: str) -> None:
    params = {"_meta": meta(), "protocolVersion": "2025-11-25", "level": "info", "uri": "x"}
    error_of(call(server, method, params, modern()), jsonrpc.METHOD_NOT_FOUND)


def test_modern_meta_reaches_the_context(server: Server) -> None:
    context = modern()
    params = {
        "name": "tool_00",
        "_meta": meta(
            **{
                META_CLIENT_CAPABILITIES: {"elicitation": {}},
                META_CLIENT_INFO: {"name": "c", "version": "1"},
                "progressToken": 9,
            }
        ),
    }
    result_of(call(server, "tools/call", params, context))
    assert context.protocol_version == "2026-07-28"
    assert context.client_capabilities == {"elicitation": {}}
    assert context.client_info == {"name": "c", "version": "1"}
    assert context.progress_token == 9


@pytest.mark.parametrize("method", sorted(set(VALID_PARAMS) - REMOVED_IN_MODERN))
def test_modern_result_envelope(method: str) -> None:
    server = Server(Features())
    result = result_of(call(server, method, modern_params(method), modern()))
    assert result["resultType"] == "complete"
    assert result["_meta"][META_SERVER_INFO] == {"name": "fake", "version": "0.0.1"}
    if method in CACHEABLE:
        assert result["ttlMs"] == 1234
        assert result["cacheScope"] == "public"
    else:
        assert "ttlMs" not in result
        assert "cacheScope" not in result


@pytest.mark.parametrize("method", sorted(CACHEABLE))
def test_modern_cache_scope_is_private_for_a_credential(method: str) -> None:
    server = Server(Features())
    answer = call(server, method, modern_params(method), modern(FakeCredential()))
    assert result_of(answer)["cacheScope"] == "private"


def test_modern_discover(server: Server) -> None:
    result = result_of(call(server, "server/discover", {"_meta": meta()}, modern()))
    assert result["supportedVersions"] == list(ALL_VERSIONS)
    # Resource subscriptions travel on subscriptions/listen streams in this revision.
    assert result["capabilities"] == {
        "tools": {"listChanged": False},
        "completions": {},
        "resources": {"subscribe": True},
    }
    assert result["instructions"] == "Be brief."
    # The identity travels in _meta, not inline.
    assert "serverInfo" not in result


def test_modern_resource_not_found_is_invalid_params(server: Server) -> None:
    params = {"uri": "test://nothing", "_meta": meta()}
    error = error_of(call(server, "resources/read", params, modern()), jsonrpc.INVALID_PARAMS)
    assert error["data"] == {"uri": "test://nothing"}


def test_modern_pagination_keeps_the_envelope_on_every_page() -> None:
    server = Server(Features(tools=3, page_size=2))
    first = result_of(call(server, "tools/list", {"_meta": meta()}, modern(FakeCredential())))
    second = result_of(
        call(
            server,
            "tools/list",
            {"_meta": meta(), "cursor": first["nextCursor"]},
            modern(FakeCredential()),
        )
    )
    assert [len(first["tools"]), len(second["tools"])] == [2, 1]
    assert first["cacheScope"] == second["cacheScope"] == "private"
    assert "nextCursor" not in second
