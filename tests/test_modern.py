"""The 2026-07-28 revision beside the legacy one, through the real URL (PROTOCOL.md §1, §7).

Every modern error row is checked for its HTTP status, its JSON-RPC code and its
``error.data``; every method is walked in both eras to show that a legacy answer never
carries a modern field and a modern one always carries ``resultType``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from mcp_endpoint.protocol.versions import ALL_VERSIONS, LEGACY_VERSIONS
from project.tracker.models import Project
from tests.conftest import MCPClient

pytestmark = pytest.mark.django_db

MODERN = "2026-07-28"
FIXTURE = "/conformance/mcp"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
MODERN_FIELDS = {"resultType", "ttlMs", "cacheScope"}
CACHEABLE = {
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
}
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        PV: MODERN,
        CAPS: capabilities if capabilities is not None else {},
        INFO: {"name": "tests", "version": "1.0.0"},
        **extra,
    }


class Modern:
    """Posts 2026-07-28 requests, with the body's _meta mirrored in the headers."""

    def __init__(self, rpc: MCPClient) -> None:
        self.rpc = rpc
        self.next_id = 100

    def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
        capabilities: dict[str, Any] | None = None,
        drop: tuple[str, ...] = (),
    ) -> Any:
        self.next_id += 1
        body_params = {"_meta": meta(capabilities), **(params or {})}
        sent = {
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": method,
        }
        if method in NAMED:
            sent["Mcp-Name"] = str(body_params.get(NAMED[method], ""))
        sent.update(headers or {})
        for name in drop:
            sent.pop(name, None)
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": body_params}
        return self.rpc.post(message, headers=sent)

    def raw(self, message: dict[str, Any], headers: dict[str, str]) -> Any:
        return self.rpc.post(message, headers=headers)


def error_of(response: Any, status: int, code: int, request_id: Any) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["id"] == request_id, body
    assert "result" not in body
    assert body["error"]["code"] == code, body
    error: dict[str, Any] = body["error"]
    return error


def result_of(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    body = response.json()
    assert "error" not in body, body
    result: dict[str, Any] = body["result"]
    return result


@pytest.fixture
def modern(mcp_client: Callable[..., MCPClient], alice_key: str, project: Project) -> Modern:
    return Modern(mcp_client(alice_key))


@pytest.fixture
def fixture_modern(mcp_client: Callable[..., MCPClient]) -> Modern:
    return Modern(mcp_client(None, FIXTURE))


# -- era detection --------------------------------------------------------------------------


def test_meta_alone_makes_a_request_modern(rpc_alice: MCPClient) -> None:
    # No header at all: the body's _meta names the version, so the modern checks apply.
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}}
    error = error_of(rpc_alice.post(message), 400, -32020, 1)
    assert error["data"] == {"header": "MCP-Protocol-Version"}


def test_a_header_that_is_not_legacy_makes_a_request_modern(rpc_alice: MCPClient) -> None:
    message = {"jsonrpc": "2.0", "id": 7, "method": "ping"}
    error = error_of(rpc_alice.post(message, headers={"MCP-Protocol-Version": "2031-01-01"}), 400,
                     -32022, 7)  # fmt: skip
    assert error["data"] == {"supported": list(ALL_VERSIONS), "requested": "2031-01-01"}


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_a_legacy_header_keeps_a_request_legacy(rpc_alice: MCPClient, version: str) -> None:
    response = rpc_alice.post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={"MCP-Protocol-Version": version}
    )
    assert result_of(response) == {}


def test_initialize_is_always_legacy(rpc_alice: MCPClient) -> None:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    result = rpc_alice.result("initialize", params)
    assert result["protocolVersion"] == "2025-11-25"
    assert not MODERN_FIELDS & set(result)
    assert "_meta" not in result


@pytest.fixture
def rpc_alice(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


# -- server/discover --------------------------------------------------------------------------


def test_discover(modern: Modern) -> None:
    result = result_of(modern.post("server/discover"))
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == list(ALL_VERSIONS)
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "completions"}
    assert result["_meta"][SERVER_INFO] == {
        "name": "task-tracker",
        "title": "Task tracker",
        "version": "1.0.0",
    }
    assert "serverInfo" not in result  # the modern answer names the server in _meta only
    assert "task tracker" in result["instructions"]
    assert result["ttlMs"] == 60_000
    assert result["cacheScope"] == "private"  # it depends on the credential


def test_discover_without_client_info_is_served(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "server/discover",
        "params": {"_meta": {PV: MODERN, CAPS: {}}},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}
    assert result_of(modern.raw(message, headers))["resultType"] == "complete"


def test_discover_in_the_legacy_era(rpc_alice: MCPClient) -> None:
    result = rpc_alice.result("server/discover", {})
    assert result["supportedVersions"] == list(ALL_VERSIONS)
    assert result["serverInfo"]["name"] == "task-tracker"
    assert not MODERN_FIELDS & set(result)
    assert "_meta" not in result


def test_fixture_answers_are_public(fixture_modern: Modern) -> None:
    # No credential, no per-user data: a shared cache may keep the answer.
    result = result_of(fixture_modern.post("tools/list"))
    assert result["cacheScope"] == "public"
    assert result["_meta"][SERVER_INFO]["name"] == "mcp-endpoint-conformance-fixture"


def test_ttl_is_a_setting(modern: Modern, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TTL_MS": 5000}
    assert result_of(modern.post("tools/list"))["ttlMs"] == 5000


# -- the error rows ---------------------------------------------------------------------------


def test_missing_meta(modern: Modern) -> None:
    message = {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    error = error_of(modern.raw(message, headers), 400, -32602, 11)
    assert "_meta" in error["message"]
    assert "data" not in error


def test_missing_protocol_version_in_meta(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 12,
        "method": "tools/list",
        "params": {"_meta": {CAPS: {}, INFO: {"name": "t", "version": "1"}}},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    error = error_of(modern.raw(message, headers), 400, -32602, 12)
    assert PV in error["message"]


def test_missing_client_capabilities(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 13,
        "method": "tools/list",
        "params": {"_meta": {PV: MODERN}},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    error = error_of(modern.raw(message, headers), 400, -32602, 13)
    assert CAPS in error["message"]


def test_client_capabilities_must_be_an_object(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 14,
        "method": "tools/list",
        "params": {"_meta": {PV: MODERN, CAPS: ["elicitation"]}},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    error_of(modern.raw(message, headers), 400, -32602, 14)


def test_invalid_log_level(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 15,
        "method": "tools/list",
        "params": {"_meta": meta(**{"io.modelcontextprotocol/logLevel": "loud"})},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    error_of(modern.raw(message, headers), 400, -32602, 15)


def test_unsupported_version(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 21,
        "method": "server/discover",
        "params": {"_meta": {**meta(), PV: "2031-01-01"}},
    }
    headers = {"MCP-Protocol-Version": "2031-01-01", "Mcp-Method": "server/discover"}
    error = error_of(modern.raw(message, headers), 400, -32022, 21)
    assert error["data"] == {"supported": list(ALL_VERSIONS), "requested": "2031-01-01"}


def test_unsupported_version_when_the_setting_narrows_them(modern: Modern, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "PROTOCOL_VERSIONS": ["2025-11-25"]}
    error = error_of(modern.post("tools/list"), 400, -32022, modern.next_id)
    assert error["data"] == {"supported": ["2025-11-25"], "requested": MODERN}


def test_version_header_contradicting_the_body(modern: Modern) -> None:
    error = error_of(
        modern.post("tools/list", headers={"MCP-Protocol-Version": "2025-11-25"}),
        400, -32020, modern.next_id,
    )  # fmt: skip
    assert error["data"] == {"header": "MCP-Protocol-Version"}


def test_missing_version_header(modern: Modern) -> None:
    error = error_of(
        modern.post("tools/list", drop=("MCP-Protocol-Version",)), 400, -32020, modern.next_id
    )
    assert error["data"] == {"header": "MCP-Protocol-Version"}


def test_missing_method_header(modern: Modern) -> None:
    error = error_of(modern.post("tools/list", drop=("Mcp-Method",)), 400, -32020, modern.next_id)
    assert error["data"] == {"header": "Mcp-Method"}


def test_mismatched_method_header(modern: Modern) -> None:
    error = error_of(
        modern.post("tools/list", headers={"Mcp-Method": "prompts/list"}),
        400, -32020, modern.next_id,
    )  # fmt: skip
    assert error["data"] == {"header": "Mcp-Method"}
    assert "prompts/list" in error["message"] and "tools/list" in error["message"]


@pytest.mark.parametrize("method", sorted(NAMED))
def test_missing_name_header(modern: Modern, method: str) -> None:
    params = {"uri": "tracker://guide"} if method == "resources/read" else {"name": "x"}
    error = error_of(modern.post(method, params, drop=("Mcp-Name",)), 400, -32020, modern.next_id)
    assert error["data"] == {"header": "Mcp-Name"}


def test_mismatched_name_header(modern: Modern) -> None:
    params = {"name": "summarize_project", "arguments": {"project_id": 1}}
    error = error_of(
        modern.post("tools/call", params, headers={"Mcp-Name": "list_tasks"}),
        400, -32020, modern.next_id,
    )  # fmt: skip
    assert error["data"] == {"header": "Mcp-Name"}


def test_base64_name_header_that_matches(modern: Modern) -> None:
    params = {"uri": "tracker://guide"}
    response = modern.post("resources/read", params, headers={"Mcp-Name": b64("tracker://guide")})
    result = result_of(response)
    assert result["contents"][0]["uri"] == "tracker://guide"
    assert result["resultType"] == "complete"


def test_base64_name_header_that_does_not_match(modern: Modern) -> None:
    params = {"uri": "tracker://guide"}
    response = modern.post("resources/read", params, headers={"Mcp-Name": b64("tracker://other")})
    error = error_of(response, 400, -32020, modern.next_id)
    assert error["data"] == {"header": "Mcp-Name"}


def test_base64_name_header_with_non_ascii_text(fixture_modern: Modern) -> None:
    uri = "test://template/größe/data"
    result = result_of(fixture_modern.post("resources/read", {"uri": uri}, headers={
        "Mcp-Name": b64(uri)}))  # fmt: skip
    assert result["contents"][0]["uri"] == uri
    # The same bytes, compared after decoding: one changed letter is a mismatch.
    response = fixture_modern.post(
        "resources/read", {"uri": uri}, headers={"Mcp-Name": b64("test://template/grösse/data")}
    )
    assert error_of(response, 400, -32020, fixture_modern.next_id)["data"] == {"header": "Mcp-Name"}


def test_broken_base64_name_header(modern: Modern) -> None:
    response = modern.post(
        "resources/read", {"uri": "tracker://guide"}, headers={"Mcp-Name": "=?base64?%%%?="}
    )
    assert error_of(response, 400, -32020, modern.next_id)["data"] == {"header": "Mcp-Name"}


def test_base64_method_header(modern: Modern) -> None:
    response = modern.post("tools/list", headers={"Mcp-Method": b64("tools/list")})
    assert result_of(response)["resultType"] == "complete"


def test_missing_client_capability(fixture_modern: Modern) -> None:
    response = fixture_modern.post("tools/call", {"name": "test_missing_capability"})
    error = error_of(response, 400, -32021, fixture_modern.next_id)
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_declared_capability_is_used(fixture_modern: Modern) -> None:
    response = fixture_modern.post(
        "tools/call", {"name": "test_missing_capability"}, capabilities={"sampling": {}}
    )
    result = result_of(response)
    assert result["resultType"] == "input_required"
    [request] = result["inputRequests"].values()
    assert request["method"] == "sampling/createMessage"


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
     "notifications/unknown/x", "tasks/list", "tasks/result", "no/such/method"],
)  # fmt: skip
def test_removed_and_unknown_methods_are_404(modern: Modern, method: str) -> None:
    # A request (it has an id) named like a notification is still an unknown method.
    error = error_of(modern.post(method), 404, -32601, modern.next_id)
    assert method in error["message"]


def test_modern_initialize_with_a_legacy_body(modern: Modern) -> None:
    params = {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "t"}}
    error_of(modern.post("initialize", params), 404, -32601, modern.next_id)


def test_unknown_tool(modern: Modern) -> None:
    error = error_of(modern.post("tools/call", {"name": "no_such_tool"}), 400, -32602,
                     modern.next_id)  # fmt: skip
    assert "no_such_tool" in error["message"]


def test_unknown_prompt(modern: Modern) -> None:
    error_of(modern.post("prompts/get", {"name": "no_such_prompt"}), 400, -32602, modern.next_id)


def test_bad_cursor(modern: Modern) -> None:
    error_of(modern.post("tools/list", {"cursor": "not-a-cursor"}), 400, -32602, modern.next_id)


def test_resource_not_found_modern(modern: Modern) -> None:
    uri = "tracker://projects/999999"
    error = error_of(modern.post("resources/read", {"uri": uri}), 400, -32602, modern.next_id)
    assert error["message"] == "Resource not found"
    assert error["data"] == {"uri": uri}


def test_resource_not_found_legacy(rpc_alice: MCPClient) -> None:
    response = rpc_alice.request("resources/read", {"uri": "tracker://projects/999999"})
    assert response.status_code == 200
    error = response.json()["error"]
    assert error["code"] == -32002
    assert error["data"] == {"uri": "tracker://projects/999999"}


def test_tool_failure_is_a_result_not_an_error(modern: Modern) -> None:
    params = {"name": "summarize_project", "arguments": {"project_id": 999_999}}
    result = result_of(modern.post("tools/call", params))
    assert result["resultType"] == "complete"
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "not_found"


def test_notification_is_accepted(modern: Modern) -> None:
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"_meta": meta(), "requestId": 1},
    }
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "notifications/cancelled"}
    response = modern.raw(message, headers)
    assert response.status_code == 202
    assert response.content == b""


def test_no_session_id_on_modern_answers(modern: Modern, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}
    response = modern.post("tools/list", headers={"Mcp-Session-Id": "whatever"})
    assert result_of(response)["resultType"] == "complete"
    assert "Mcp-Session-Id" not in response


# -- every method, both eras ------------------------------------------------------------------


def legacy_params(project: Project) -> dict[str, dict[str, Any]]:
    return {
        "initialize": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
        "ping": {},
        "server/discover": {},
        "tools/list": {},
        "tools/call": {"name": "summarize_project", "arguments": {"project_id": project.pk}},
        "resources/list": {},
        "resources/templates/list": {},
        "resources/read": {"uri": f"tracker://projects/{project.pk}"},
        "prompts/list": {},
        "prompts/get": {"name": "plan_week", "arguments": {"project": project.name}},
        "completion/complete": {
            "ref": {"type": "ref/prompt", "name": "plan_week"},
            "argument": {"name": "project", "value": "La"},
        },
    }


def test_every_legacy_answer_is_free_of_modern_fields(
    rpc_alice: MCPClient, project: Project
) -> None:
    for method, params in legacy_params(project).items():
        result = rpc_alice.result(method, params)
        assert not MODERN_FIELDS & set(result), (method, result)
        assert SERVER_INFO not in (result.get("_meta") or {}), (method, result)


def test_every_modern_answer_carries_result_type(modern: Modern, project: Project) -> None:
    for method, params in legacy_params(project).items():
        if method in {"initialize", "ping"}:
            continue
        result = result_of(modern.post(method, params))
        assert result["resultType"] == "complete", (method, result)
        assert result["_meta"][SERVER_INFO]["name"] == "task-tracker", method
        if method in CACHEABLE:
            assert result["cacheScope"] == "private", method
            assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0, method
        else:
            assert not {"ttlMs", "cacheScope"} & set(result), (method, result)


def test_every_modern_error_echoes_the_id(modern: Modern, client: Client, alice_key: str) -> None:
    # A string id this time, for every kind of refusal above.
    for method in ("ping", "tools/call"):
        message = {
            "jsonrpc": "2.0",
            "id": "req-alpha",
            "method": method,
            "params": {"_meta": meta()},
        }
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        response = modern.raw(message, headers)
        assert response.json()["id"] == "req-alpha"
        assert response.status_code in {400, 404}


# -- completion ---------------------------------------------------------------------------------


def test_completion_of_a_prompt_argument(modern: Modern, project: Project) -> None:
    params = {
        "ref": {"type": "ref/prompt", "name": "plan_week"},
        "argument": {"name": "project", "value": "lau"},
    }
    result = result_of(modern.post("completion/complete", params))
    assert result["completion"]["values"] == ["Launch"]


def test_completion_of_a_resource_template_variable(
    modern: Modern, project: Project, bob: Any
) -> None:
    Project.objects.create(name="Hidden", owner=bob)  # not visible to alice
    params = {
        "ref": {"type": "ref/resource", "uri": "tracker://projects/{project_id}"},
        "argument": {"name": "project_id", "value": ""},
    }
    result = result_of(modern.post("completion/complete", params))
    assert result["completion"]["values"] == [str(project.pk)]
    assert result["completion"]["total"] == 1
