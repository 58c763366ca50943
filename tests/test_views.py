"""The HTTP transport at /mcp: every refused or malformed request, and what the client sees.

Each test checks the status, the headers that matter and the JSON-RPC error body, since a
client that reads only the body must still learn what went wrong.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from mcp_endpoint import site
from mcp_endpoint.models import APIKey
from mcp_endpoint.protocol.versions import ALL_VERSIONS
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key

pytestmark = pytest.mark.django_db

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
METADATA_URL = "http://testserver/.well-known/oauth-protected-resource/mcp"


def rpc_error(response: Any, status: int, code: int, request_id: Any = None) -> dict[str, Any]:
    """The JSON-RPC error of ``response`` after checking its status, media type, code and id."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert body["id"] == request_id
    assert "result" not in body
    assert body["error"]["code"] == code, body
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    error: dict[str, Any] = body["error"]
    return error


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


# -- bodies that are not JSON-RPC -------------------------------------------------------------


def test_body_not_json(rpc: MCPClient) -> None:
    error = rpc_error(rpc.post(None, raw=b'{"jsonrpc": "2.0", "id": 1,'), 400, -32700)
    assert "JSON" in error["message"]


def test_body_not_utf8(rpc: MCPClient) -> None:
    raw = b'{"jsonrpc": "2.0", "id": 1, "method": "p\xffing"}'
    error = rpc_error(rpc.post(None, raw=raw), 400, -32700)
    assert "UTF-8" in error["message"]


def test_missing_jsonrpc_member(rpc: MCPClient) -> None:
    error = rpc_error(rpc.post({"id": 7, "method": "ping"}), 400, -32600, 7)
    assert "jsonrpc" in error["message"]


def test_wrong_jsonrpc_version(rpc: MCPClient) -> None:
    rpc_error(rpc.post({"jsonrpc": "1.0", "id": 7, "method": "ping"}), 400, -32600, 7)


@pytest.mark.parametrize("method", [None, 42, ["ping"], {"name": "ping"}])
def test_method_not_a_string(rpc: MCPClient, method: Any) -> None:
    error = rpc_error(rpc.post({"jsonrpc": "2.0", "id": 8, "method": method}), 400, -32600, 8)
    assert "method" in error["message"]


def test_missing_method(rpc: MCPClient) -> None:
    rpc_error(rpc.post({"jsonrpc": "2.0", "id": 8}), 400, -32600, 8)


@pytest.mark.parametrize("bad_id", [1.5, True, False, {"n": 1}, [1]])
def test_bad_id_type(rpc: MCPClient, bad_id: Any) -> None:
    # An id that cannot be echoed is answered with id null.
    error = rpc_error(rpc.post({"jsonrpc": "2.0", "id": bad_id, "method": "ping"}), 400, -32600)
    assert '"id"' in error["message"]


@pytest.mark.parametrize("params", [[1, 2], "ping", 3])
def test_params_not_an_object(rpc: MCPClient, params: Any) -> None:
    body = {"jsonrpc": "2.0", "id": "abc", "method": "tools/list", "params": params}
    error = rpc_error(rpc.post(body), 400, -32600, "abc")
    assert "params" in error["message"]


@pytest.mark.parametrize("message", ["ping", 3, None])
def test_message_not_an_object(rpc: MCPClient, message: Any) -> None:
    rpc_error(rpc.post(message), 400, -32600)


def test_string_and_integer_ids_are_echoed(rpc: MCPClient) -> None:
    for request_id in ("req-1", 0, -5, 2**40):
        response = rpc.post({"jsonrpc": "2.0", "id": request_id, "method": "ping"})
        assert response.status_code == 200
        assert response.json() == {"jsonrpc": "2.0", "id": request_id, "result": {}}


# -- content type and size --------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_wrong_content_type(rpc: MCPClient, content_type: str) -> None:
    response = rpc.post(None, raw=json.dumps(PING).encode(), content_type=content_type)
    error = rpc_error(response, 415, -32600, 1)
    assert "application/json" in error["message"]
    assert content_type in error["message"]


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "application/x+json"]
)
def test_json_content_types_are_accepted(rpc: MCPClient, content_type: str) -> None:
    response = rpc.post(None, raw=json.dumps(PING).encode(), content_type=content_type)
    assert response.status_code == 200
    assert response.json()["result"] == {}


def test_wrong_content_type_refused_before_the_credential(
    mcp_client: Callable[..., MCPClient],
) -> None:
    response = mcp_client().post(None, raw=b"ping", content_type="text/plain")
    rpc_error(response, 415, -32600)


def test_body_over_the_limit(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_REQUEST_BYTES": 200}
    small = rpc.post(PING)
    assert small.status_code == 200
    big = {**PING, "params": {"padding": "x" * 300}}
    error = rpc_error(rpc.post(big), 413, -32600)
    assert error["data"] == {"limit": 200}
    assert "200" in error["message"]


def test_body_over_the_limit_is_refused_before_parsing_and_credential(
    mcp_client: Callable[..., MCPClient], settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_REQUEST_BYTES": 64}
    # Not JSON and no credential: the size is what gets answered.
    response = mcp_client().post(None, raw=b"{" * 65)
    rpc_error(response, 413, -32600)


def test_body_over_djangos_own_limit(rpc: MCPClient, settings: Any) -> None:
    # A setting above DATA_UPLOAD_MAX_MEMORY_SIZE: Django's cap answers, still as a 413.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_REQUEST_BYTES": 5000}
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    big = {**PING, "params": {"_meta": {"padding": "x" * 2000}}}
    error = rpc_error(rpc.post(big), 413, -32600)
    assert error["data"] == {"limit": 1000}


def test_limit_back_to_default_after_override(rpc: MCPClient) -> None:
    # The override of the test above does not outlive it (conf reloads on setting_changed).
    big = {**PING, "params": {"_meta": {"padding": "x" * 10_000}}}
    assert rpc.post(big).status_code == 200


# -- nesting depth ----------------------------------------------------------------------------


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [1000, 100_000])
def test_json_nested_too_deep_is_a_parse_error(rpc: MCPClient, depth: int) -> None:
    raw = b"[" * depth + b"]" * depth
    error = rpc_error(rpc.post(None, raw=raw), 400, -32700)
    assert "deeper than 200" in error["message"]
    assert error["data"] == {"max_depth": 200}


def test_json_depth_limit_is_a_setting(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_JSON_DEPTH": 10}
    # The message object and params are two levels: 8 more fit, 9 do not.
    fits = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": nested(7)}}
    assert rpc.post(fits).json()["result"] == {}
    deeper = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": nested(9)}}
    error = rpc_error(rpc.post(deeper), 400, -32700)
    assert "deeper than 10" in error["message"]


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_numbers_json_does_not_have_are_a_parse_error(rpc: MCPClient, constant: bytes) -> None:
    raw = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + constant + b"}}"
    rpc_error(rpc.post(None, raw=raw), 400, -32700)


# -- the id in every error answer ----------------------------------------------------------


def test_a_405_names_the_request_id(rpc: MCPClient) -> None:
    response = rpc.client.put(
        "/mcp",
        data=json.dumps({**PING, "id": "put-1"}),
        content_type="application/json",
        headers=rpc.headers(),
    )
    rpc_error(response, 405, -32000, "put-1")


def test_a_parse_error_after_the_credential_step(mcp_client: Callable[..., MCPClient]) -> None:
    # Without a credential a body that is not JSON is a 401 first, with no id to name.
    response = mcp_client().post(None, raw=b"{not json")
    rpc_error(response, 401, -32001)


# -- batches ----------------------------------------------------------------------------------


def test_empty_batch(rpc: MCPClient) -> None:
    error = rpc_error(rpc.post([]), 400, -32600)
    assert "batch" in error["message"]


def test_batch_of_notifications_only(rpc: MCPClient) -> None:
    response = rpc.post(
        [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        ]
    )
    assert response.status_code == 202
    assert response.content == b""


def test_batch_mixing_good_and_bad_entries(rpc: MCPClient) -> None:
    response = rpc.post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2},
            {"jsonrpc": "2.0", "id": 3, "method": "no/such/method"},
            "not an object",
            {"jsonrpc": "2.0", "id": "four", "method": "tools/list"},
        ]
    )
    assert response.status_code == 200
    answers = response.json()
    assert isinstance(answers, list)
    assert [a["id"] for a in answers] == [1, 2, 3, None, "four"]
    assert answers[0]["result"] == {}
    assert answers[1]["error"]["code"] == -32600
    assert answers[2]["error"]["code"] == -32601
    assert answers[3]["error"]["code"] == -32600
    assert "tools" in answers[4]["result"]


def test_modern_batch_is_refused(rpc: MCPClient) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    response = rpc.post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}},
        ]
    )
    error = rpc_error(response, 400, -32600)
    assert "2026-07-28" in error["message"]


def test_batch_mixing_eras_is_refused(rpc: MCPClient) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    response = rpc.post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}},
        ]
    )
    rpc_error(response, 400, -32600)


def test_batch_over_the_size_limit_says_the_limit(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_BATCH_SIZE": 3}
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(4)]
    error = rpc_error(rpc.post(pings), 400, -32600)
    assert "at most 3" in error["message"]
    assert error["data"] == {"max_batch_size": 3}
    assert len(rpc.post(pings[:3]).json()) == 3


def test_a_batch_past_its_time_budget_answers_the_rest_unrun(
    rpc: MCPClient, settings: Any, project: Project
) -> None:
    # A budget of 0 s is spent once the first message has run: every later message is
    # answered without running (the create below never happens), notifications are dropped.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "BATCH_TIME_BUDGET": 0}
    tasks = Task.objects.count()
    create = {"name": "create_task", "arguments": {"project": project.pk, "title": "Late"}}
    response = rpc.post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": create},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "three", "method": "tools/list"},
        ]
    )
    assert response.status_code == 200
    answers = response.json()
    assert [a["id"] for a in answers] == [1, 2, "three"]
    assert answers[0]["result"] == {}
    for answer in answers[1:]:
        assert answer["error"]["code"] == -32000
        assert "time budget" in answer["error"]["message"]
        assert answer["error"]["data"] == {"batch_time_budget": 0}
    assert Task.objects.count() == tasks


def test_a_batch_within_its_budget_runs_whole(rpc: MCPClient) -> None:
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(5)]
    assert [a["result"] for a in rpc.post(pings).json()] == [{}] * 5


def test_batch_under_a_modern_header_is_refused(rpc: MCPClient) -> None:
    response = rpc.post(
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        headers={"MCP-Protocol-Version": "2026-07-28"},
    )
    rpc_error(response, 400, -32600)


# -- HTTP methods and URLs ----------------------------------------------------------------------


@pytest.mark.parametrize("method", ["get", "delete", "put", "patch"])
def test_other_http_methods_are_not_allowed(client: Client, alice_key: str, method: str) -> None:
    response = getattr(client, method)("/mcp", headers={"Authorization": f"Bearer {alice_key}"})
    error = rpc_error(response, 405, -32000)
    assert response["Allow"] == "POST, OPTIONS"
    assert method.upper() in error["message"]
    assert "Mcp-Session-Id" not in response


def test_get_needs_no_credential_to_learn_it_is_not_allowed(client: Client) -> None:
    response = client.get("/mcp", headers={"Accept": "text/event-stream"})
    rpc_error(response, 405, -32000)
    assert response["Allow"] == "POST, OPTIONS"


def test_options(client: Client) -> None:
    response = client.options("/mcp")
    assert response.status_code == 204
    assert response.content == b""
    assert response["Allow"] == "POST, OPTIONS"


def test_cors_preflight_from_an_allowed_origin(client: Client, settings: Any) -> None:
    settings.CORS_ALLOWED_ORIGINS = ["https://app.example.com"]
    response = client.options(
        "/mcp",
        headers={
            "Origin": "https://app.example.com",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        },
    )
    assert response.status_code in (200, 204)
    assert response["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert "POST" in response["Access-Control-Allow-Methods"]


@pytest.mark.parametrize("url", ["/mcp", "/mcp/"])
def test_both_urls_answer_without_redirect(
    mcp_client: Callable[..., MCPClient], alice_key: str, url: str
) -> None:
    response = mcp_client(alice_key, url).post(PING)
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_no_session_id_is_handed_out(rpc: MCPClient) -> None:
    response = rpc.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert response.status_code == 200
    assert "Mcp-Session-Id" not in response


# -- credential ---------------------------------------------------------------------------------


def challenge_params(header: str) -> dict[str, str]:
    assert header.startswith("Bearer ")
    params = {}
    for part in header[len("Bearer ") :].split(", "):
        name, _, value = part.partition("=")
        assert value.startswith('"') and value.endswith('"'), header
        params[name] = value[1:-1]
    return params


def test_no_credential(mcp_client: Callable[..., MCPClient]) -> None:
    response = mcp_client().post(PING)
    error = rpc_error(response, 401, -32001, 1)
    # The message names what the endpoint's AUTHENTICATION_CLASSES take (the defaults here).
    assert error["message"] == "Unauthorized: this endpoint accepts API keys or OAuth access tokens"
    params = challenge_params(response["WWW-Authenticate"])
    assert params["resource_metadata"] == METADATA_URL
    assert params["scope"] == " ".join(site.scopes())
    assert "read" in params["scope"].split()
    assert "error" not in params


def test_no_credential_at_the_slash_url_names_the_same_metadata(
    mcp_client: Callable[..., MCPClient],
) -> None:
    response = mcp_client(url="/mcp/").post(PING)
    rpc_error(response, 401, -32001, 1)
    assert challenge_params(response["WWW-Authenticate"])["resource_metadata"] == METADATA_URL


@pytest.mark.parametrize("method", ["initialize", "ping", "server/discover"])
def test_every_method_needs_a_credential(mcp_client: Callable[..., MCPClient], method: str) -> None:
    rpc_error(mcp_client().request(method, {}), 401, -32001, 1)


def refused(mcp_client: Callable[..., MCPClient], key: str) -> tuple[bytes, str]:
    response = mcp_client(key).post(PING)
    rpc_error(response, 401, -32001, 1)
    params = challenge_params(response["WWW-Authenticate"])
    assert params["error"] == "invalid_token"
    assert params["resource_metadata"] == METADATA_URL
    return response.content, response["WWW-Authenticate"]


def test_refused_keys_are_indistinguishable(
    mcp_client: Callable[..., MCPClient], alice: Any
) -> None:
    unknown = "mcp_deadbeef_" + "0" * 64
    revoked = make_key(alice, "read")
    APIKey.objects.filter(prefix=revoked.rsplit("_", 1)[0]).get().revoke()
    expired = make_key(alice, "read", expires=timezone.now() - datetime.timedelta(minutes=1))
    # A known prefix with a wrong secret must not say more than an unknown key either.
    wrong_secret = expired.rsplit("_", 1)[0] + "_" + "f" * 64
    answers = {
        name: refused(mcp_client, key)
        for name, key in [
            ("unknown", unknown),
            ("revoked", revoked),
            ("expired", expired),
            ("wrong secret", wrong_secret),
            ("not key-shaped", "not-a-key"),
        ]
    }
    assert len(set(answers.values())) == 1, answers


def test_key_of_an_inactive_user_is_refused(
    mcp_client: Callable[..., MCPClient], alice: Any, alice_key: str
) -> None:
    alice.is_active = False
    alice.save()
    refused(mcp_client, alice_key)


def test_non_bearer_authorization_is_refused(client: Client) -> None:
    response = client.post(
        "/mcp",
        data=json.dumps(PING),
        content_type="application/json",
        headers={"Authorization": "Basic YWxpY2U6cHc="},
    )
    rpc_error(response, 401, -32001, 1)
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_valid_key_is_accepted(rpc: MCPClient) -> None:
    assert rpc.result("ping") == {}


# -- Origin -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://claude.ai",
        "https://claude.ai.evil.example",
        "null",
        "file://",
        # Host names that only look like loopback addresses (DNS rebinding).
        "http://127.0.0.1.evil.example",
        "http://127.evil.example:8000",
        "http://localhost.evil.example",
    ],
)
def test_disallowed_origin(rpc: MCPClient, origin: str) -> None:
    response = rpc.post(PING, headers={"Origin": origin})
    error = rpc_error(response, 403, -32000, 1)
    assert "Origin" in error["message"]
    assert error["data"] == {"origin": origin}


def test_disallowed_origin_is_refused_before_the_credential(
    mcp_client: Callable[..., MCPClient],
) -> None:
    response = mcp_client().post(PING, headers={"Origin": "https://evil.example"})
    rpc_error(response, 403, -32000, 1)


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost",
        "http://localhost:6274",
        "http://127.0.0.1:8000",
        "http://127.1.2.3:8000",
        "https://127.0.0.1:1",
        "http://[::1]:3000",
        "https://claude.ai",
        "https://claude.com",
        "https://chatgpt.com",
        "https://chat.openai.com",
        "https://platform.openai.com",
    ],
)
def test_allowed_origin(rpc: MCPClient, origin: str) -> None:
    response = rpc.post(PING, headers={"Origin": origin})
    assert response.status_code == 200
    assert response.json()["result"] == {}


def test_origin_allowed_by_cors_headers(rpc: MCPClient, settings: Any) -> None:
    origin = "https://tools.example.com"
    assert rpc.post(PING, headers={"Origin": origin}).status_code == 403
    settings.CORS_ALLOWED_ORIGINS = [origin]
    assert rpc.post(PING, headers={"Origin": origin}).status_code == 200


def test_origin_allowed_by_the_setting(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "ALLOWED_ORIGINS": ["https://mcp.example.org", "*.example.net"],
    }
    assert rpc.post(PING, headers={"Origin": "https://mcp.example.org"}).status_code == 200
    assert rpc.post(PING, headers={"Origin": "https://a.example.net"}).status_code == 200
    assert rpc.post(PING, headers={"Origin": "http://a.example.net"}).status_code == 403
    # The list replaces the defaults.
    assert rpc.post(PING, headers={"Origin": "https://claude.ai"}).status_code == 403


def test_loopback_only(client: Client, alice_key: str, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOOPBACK_ONLY": True}
    headers = {"Authorization": f"Bearer {alice_key}"}
    body = json.dumps(PING)
    local = client.post("/mcp", body, "application/json", headers=headers)
    assert local.status_code == 200
    for address in ("10.0.0.5", "2001:db8::1", ""):
        remote = client.post("/mcp", body, "application/json", headers=headers, REMOTE_ADDR=address)
        error = rpc_error(remote, 403, -32000, 1)
        assert "loopback" in error["message"]
    ipv6 = client.post("/mcp", body, "application/json", headers=headers, REMOTE_ADDR="::1")
    assert ipv6.status_code == 200


# -- versions and methods -----------------------------------------------------------------------


def test_unknown_protocol_version_header(rpc: MCPClient) -> None:
    response = rpc.post(PING, headers={"MCP-Protocol-Version": "2099-01-01"})
    error = rpc_error(response, 400, -32022, 1)
    assert error["data"]["requested"] == "2099-01-01"
    assert error["data"]["supported"] == list(ALL_VERSIONS)


def test_garbage_protocol_version_header(rpc: MCPClient) -> None:
    response = rpc.post(PING, headers={"MCP-Protocol-Version": "latest"})
    error = rpc_error(response, 400, -32022, 1)
    assert error["data"]["requested"] == "latest"


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_legacy_protocol_version_header_is_accepted(rpc: MCPClient, version: str) -> None:
    response = rpc.post(PING, headers={"MCP-Protocol-Version": version})
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_unknown_method(rpc: MCPClient) -> None:
    response = rpc.post({"jsonrpc": "2.0", "id": 5, "method": "tasks/explode"})
    error = rpc_error(response, 200, -32601, 5)
    assert "tasks/explode" in error["message"]


def test_unknown_tool(rpc: MCPClient) -> None:
    response = rpc.request("tools/call", {"name": "no_such_tool", "arguments": {}})
    error = rpc_error(response, 200, -32602, 1)
    assert "no_such_tool" in error["message"]


def test_tool_call_without_a_name(rpc: MCPClient) -> None:
    rpc_error(rpc.request("tools/call", {"arguments": {}}), 200, -32602, 1)


def test_notification(rpc: MCPClient) -> None:
    response = rpc.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status_code == 202
    assert response.content == b""


def test_client_response_is_acknowledged(rpc: MCPClient) -> None:
    response = rpc.post({"jsonrpc": "2.0", "id": 9, "result": {}})
    assert response.status_code == 202
    assert response.content == b""


# -- the modern revision's headers ------------------------------------------------------------


def modern_meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def test_modern_request_with_matching_headers(rpc: MCPClient) -> None:
    response = rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern_meta()}},
        headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"},
    )
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["resultType"] == "complete"
    assert result["cacheScope"] == "private"


def test_modern_request_without_mcp_method_header(rpc: MCPClient) -> None:
    response = rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": modern_meta()}},
        headers={"MCP-Protocol-Version": "2026-07-28"},
    )
    error = rpc_error(response, 400, -32020, 1)
    assert error["data"] == {"header": "Mcp-Method"}


def test_modern_request_with_mismatched_name_header(rpc: MCPClient) -> None:
    params = {"_meta": modern_meta(), "name": "summarize_project", "arguments": {}}
    response = rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
        headers={
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "other_tool",
        },
    )
    error = rpc_error(response, 400, -32020, 1)
    assert error["data"] == {"header": "Mcp-Name"}


def test_modern_name_header_in_base64(rpc: MCPClient) -> None:
    # Decoded before the comparison: "tracker://guide" in the sentinel form.
    params = {"_meta": modern_meta(), "uri": "tracker://guide"}
    response = rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": params},
        headers={
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "resources/read",
            "Mcp-Name": "=?base64?dHJhY2tlcjovL2d1aWRl?=",
        },
    )
    assert response.status_code == 200, response.content
    assert response.json()["result"]["contents"][0]["uri"] == "tracker://guide"


def test_modern_unknown_method_is_404(rpc: MCPClient) -> None:
    response = rpc.post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": modern_meta()}},
        headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"},
    )
    rpc_error(response, 404, -32601, 1)


def test_legacy_request_is_not_checked_for_modern_headers(rpc: MCPClient) -> None:
    response = rpc.post(PING, headers={"Mcp-Method": "something/else", "Mcp-Name": "x"})
    assert response.status_code == 200
    assert response.json()["result"] == {}


# -- CSRF ---------------------------------------------------------------------------------------


def test_csrf_is_not_enforced_on_the_endpoint(alice: Any, alice_key: str) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    response = browser.post(
        "/mcp",
        data=json.dumps(PING),
        content_type="application/json",
        headers={"Authorization": f"Bearer {alice_key}"},
    )
    assert response.status_code == 200
    assert response.json()["result"] == {}


def test_csrf_is_not_enforced_even_without_a_credential(alice: Any) -> None:
    # The session cookie is no MCP credential: the answer is the endpoint's 401, not CSRF's 403.
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    response = browser.post("/mcp", data=json.dumps(PING), content_type="application/json")
    rpc_error(response, 401, -32001, 1)


def test_the_rest_api_does_enforce_csrf_for_sessions(alice: Any) -> None:
    # The control: the same browser client is refused by a CSRF-protected view.
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    response = browser.post(
        "/api/projects/", data=json.dumps({"name": "X"}), content_type="application/json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_an_empty_answer_names_no_content_type(mcp_client: Any, alice_key: str) -> None:
    response = mcp_client(alice_key).post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status_code == 202
    assert response.content == b""
    assert "Content-Type" not in response


def test_a_browser_client_on_loopback_passes_the_preflight(client: Any) -> None:
    # The demo's CORS policy (shared with the REST API) lets a loopback page, such as the
    # MCP Inspector's, send the MCP headers and read the session id and the challenge.
    response = client.options(
        "/mcp",
        headers={
            "Origin": "http://localhost:6274",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        },
    )
    assert response.status_code in (200, 204)
    assert response["Access-Control-Allow-Origin"] == "http://localhost:6274"
    allowed = response["Access-Control-Allow-Headers"].lower()
    assert {"authorization", "content-type", "mcp-protocol-version", "mcp-session-id"} <= {
        h.strip() for h in allowed.split(",")
    }


# -- policy attributes ----------------------------------------------------------------------


@pytest.mark.urls("tests.urls_view_policies")
def test_a_view_subclass_sets_its_own_origins_and_credential_policy(client: Client) -> None:
    partner = MCPClient(client, "/partner-mcp")
    allowed = partner.post(PING, headers={"Origin": "https://partner.example.com"})
    assert allowed.status_code == 200, allowed.content  # and no credential was needed
    assert allowed.json()["result"] == {}
    # The view's list replaces the setting's: an origin the setting allows is refused here.
    rpc_error(partner.post(PING, headers={"Origin": "https://claude.ai"}), 403, -32000, 1)
    # The endpoint behind its own URL keeps the settings' policies.
    plain = MCPClient(client, "/test-mcp")
    assert plain.post(PING, headers={"Origin": "https://claude.ai"}).status_code == 401
    assert plain.post(PING, headers={"Origin": "https://partner.example.com"}).status_code == 403


@pytest.mark.urls("tests.urls_view_policies")
def test_as_view_takes_a_policy(client: Client, alice_key: str) -> None:
    body = json.dumps(PING)
    headers = {"Authorization": f"Bearer {alice_key}"}
    remote = {"REMOTE_ADDR": "203.0.113.7"}
    refused = client.post(
        "/local-mcp", body, content_type="application/json", headers=headers, **remote
    )
    assert refused.status_code == 403
    assert "loopback" in refused.json()["error"]["message"]
    near = client.post("/local-mcp", body, content_type="application/json", headers=headers)
    assert near.status_code == 200, near.content
    served = client.post(
        "/test-mcp", body, content_type="application/json", headers=headers, **remote
    )
    assert served.status_code == 200, served.content
