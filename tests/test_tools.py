"""Function tools, resources, prompts and completion, through a real URL.

Test-only registrations live on the endpoint of ``tests/urls_testing.py`` at ``/test-mcp``;
the product's own (``project/tracker/mcp.py``) are exercised at ``/mcp``.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_endpoint.tools import FunctionTool
from project.tracker.models import Project
from tests.conftest import MCPClient, make_key
from tests.urls_testing import NAMES, PNG, WAV, test_endpoint

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.urls_testing")]

URL = "/test-mcp"
VALID_ECHO = {"count": 3, "name": "x", "due": "2030-01-31"}


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key, URL)


@pytest.fixture
def read_rpc(mcp_client: Callable[..., MCPClient], alice_read_key: str) -> MCPClient:
    return mcp_client(alice_read_key, URL)


def tools_by_name(rpc: MCPClient) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in rpc.result("tools/list")["tools"]}


def tool_error(result: dict[str, Any], code: str) -> dict[str, Any]:
    assert result["isError"] is True, result
    error: dict[str, Any] = result["structuredContent"]["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    # A readable text names the code too, for clients that ignore structuredContent.
    assert result["content"][0]["type"] == "text"
    assert code in result["content"][0]["text"]
    return error


def rpc_error(response: Any, code: int) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["error"]["code"] == code, body
    error: dict[str, Any] = body["error"]
    return error


# -- schemas from type hints ------------------------------------------------------------------


def test_input_schema_from_type_hints(rpc: MCPClient) -> None:
    schema = tools_by_name(rpc)["echo_typed"]["inputSchema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["count", "due", "name"]
    props = schema["properties"]
    assert props["count"] == {"type": "integer"}
    assert props["name"] == {"type": "string"}
    assert props["due"] == {"type": "string", "format": "date"}
    assert props["level"] == {"type": "string", "enum": ["low", "high"], "default": "low"}
    assert props["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert props["limit"] == {
        "type": "integer",
        "description": "At most this many",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    Draft202012Validator.check_schema(schema)


def test_output_schema_from_typed_dict(rpc: MCPClient) -> None:
    tool = tools_by_name(rpc)["echo_typed"]
    output = tool["outputSchema"]
    assert output["type"] == "object"
    assert set(output["required"]) == {"count", "name", "due", "level", "note", "limit"}
    assert output["properties"]["due"] == {"type": "string", "format": "date"}
    assert output["properties"]["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    Draft202012Validator.check_schema(output)


def test_descriptor(rpc: MCPClient) -> None:
    tool = tools_by_name(rpc)["echo_typed"]
    assert tool["title"] == "Echo typed arguments"
    assert tool["description"] == "Echo the arguments back, typed."


def test_tool_without_arguments(rpc: MCPClient) -> None:
    tool = tools_by_name(rpc)["no_arguments"]
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert "outputSchema" not in tool
    result = rpc.call("no_arguments")
    assert result == {"content": [{"type": "text", "text": "nothing needed"}], "isError": False}


def test_context_parameter_is_not_an_argument(rpc: MCPClient) -> None:
    assert tools_by_name(rpc)["whoami"]["inputSchema"]["properties"] == {}
    assert rpc.call("whoami")["content"] == [{"type": "text", "text": "alice"}]


def test_every_schema_is_valid_2020_12(rpc: MCPClient) -> None:
    for tool in tools_by_name(rpc).values():
        Draft202012Validator.check_schema(tool["inputSchema"])
        if "outputSchema" in tool:
            Draft202012Validator.check_schema(tool["outputSchema"])
            assert tool["outputSchema"]["type"] == "object"


def test_tools_list_order_is_stable(rpc: MCPClient) -> None:
    first = [t["name"] for t in rpc.result("tools/list")["tools"]]
    assert first == [t["name"] for t in rpc.result("tools/list")["tools"]]
    assert first == [t.name for t in test_endpoint.tools]


# -- results --------------------------------------------------------------------------------------


def test_structured_result_matches_output_schema(rpc: MCPClient) -> None:
    result = rpc.call("echo_typed", {**VALID_ECHO, "level": "high", "note": "n"})
    assert result["isError"] is False
    structured = result["structuredContent"]
    assert structured == {
        "count": 3,
        "name": "x",
        "due": "2030-01-31",
        "level": "high",
        "note": "n",
        "limit": 10,
    }
    output_schema = tools_by_name(rpc)["echo_typed"]["outputSchema"]
    Draft202012Validator(output_schema).validate(structured)
    assert json.loads(result["content"][0]["text"]) == structured


def test_non_object_result_is_wrapped(rpc: MCPClient) -> None:
    result = rpc.call("squares", {"upto": 3})
    assert result["structuredContent"] == {"result": [1, 4, 9]}
    Draft202012Validator(tools_by_name(rpc)["squares"]["outputSchema"]).validate(
        result["structuredContent"]
    )


def test_image_content(rpc: MCPClient) -> None:
    result = rpc.call("picture")
    assert result["isError"] is False
    [block] = result["content"]
    assert block["type"] == "image"
    assert block["mimeType"] == "image/png"
    assert base64.b64decode(block["data"]) == PNG


def test_audio_content(rpc: MCPClient) -> None:
    [block] = rpc.call("sound")["content"]
    assert block["type"] == "audio"
    assert block["mimeType"] == "audio/wav"
    assert base64.b64decode(block["data"]) == WAV


def test_embedded_resource_content(rpc: MCPClient) -> None:
    [block] = rpc.call("embedded")["content"]
    assert block == {
        "type": "resource",
        "resource": {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "Embedded text",
        },
    }


def test_several_content_blocks(rpc: MCPClient) -> None:
    result = rpc.call("mixed")
    assert [b["type"] for b in result["content"]] == ["text", "image", "resource_link"]
    assert result["content"][2] == {
        "type": "resource_link",
        "uri": "test://static-text",
        "name": "static-text",
        "mimeType": "text/plain",
    }
    assert "structuredContent" not in result


# -- failures -------------------------------------------------------------------------------------


def test_argument_of_the_wrong_type(rpc: MCPClient) -> None:
    result = rpc.call("echo_typed", {**VALID_ECHO, "count": "three"})
    error = tool_error(result, "invalid_arguments")
    assert list(error["fields"]) == ["count"]
    assert "integer" in error["fields"]["count"][0]
    assert "- count:" in result["content"][0]["text"]


def test_missing_required_arguments(rpc: MCPClient) -> None:
    error = tool_error(rpc.call("echo_typed", {}), "invalid_arguments")
    assert error["fields"] == {
        "count": ["This field is required."],
        "name": ["This field is required."],
        "due": ["This field is required."],
    }


def test_unknown_argument(rpc: MCPClient) -> None:
    error = tool_error(rpc.call("echo_typed", {**VALID_ECHO, "colour": "red"}), "invalid_arguments")
    assert error["fields"] == {"colour": ["Unknown argument."]}


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"due": "31/01/2030"}, "due"),
        ({"due": "2030-02-30"}, "due"),
        ({"level": "medium"}, "level"),
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"note": 5}, "note"),
        ({"name": None}, "name"),
    ],
)
def test_per_field_messages(rpc: MCPClient, arguments: dict[str, Any], field: str) -> None:
    error = tool_error(rpc.call("echo_typed", {**VALID_ECHO, **arguments}), "invalid_arguments")
    assert list(error["fields"]) == [field]
    assert all(isinstance(m, str) and m for m in error["fields"][field])


def test_several_bad_fields_at_once(rpc: MCPClient) -> None:
    arguments = {"count": "x", "name": 1, "due": "2030-01-31", "level": "?"}
    error = tool_error(rpc.call("echo_typed", arguments), "invalid_arguments")
    assert set(error["fields"]) == {"count", "name", "level"}


def test_pydantic_validation_after_the_schema(alice: Any) -> None:
    # A function tool validates with pydantic too, for callers that skip the JSON Schema.
    from mcp_endpoint.context import Context
    from mcp_endpoint.protocol.server import RequestContext
    from mcp_endpoint.tools import ToolError

    tool = test_endpoint.tools.get("echo_typed")
    assert isinstance(tool, FunctionTool)
    with pytest.raises(ToolError) as caught:
        tool.run({**VALID_ECHO, "count": "many"}, Context(test_endpoint, RequestContext()))
    assert caught.value.code == "invalid_arguments"
    assert list(caught.value.details["fields"]) == ["count"]


def test_tool_error(rpc: MCPClient) -> None:
    result = rpc.call("refuses")
    error = tool_error(result, "conflict")
    assert error == {
        "code": "conflict",
        "message": "The moon is in the wrong phase.",
        "retry_after": 30,
    }
    assert "The moon is in the wrong phase." in result["content"][0]["text"]


def test_exception_is_an_internal_error_without_a_traceback(
    rpc: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcp_endpoint"):
        response = rpc.request("tools/call", {"name": "explodes", "arguments": {}})
    assert response.status_code == 200
    result = response.json()["result"]
    error = tool_error(result, "internal_error")
    assert error == {"code": "internal_error", "message": "Internal error running tool"}
    text = response.content.decode()
    for leak in ("Traceback", "RuntimeError", "hunter2", "urls_testing", 'File "'):
        assert leak not in text
    [record] = [r for r in caplog.records if r.exc_info]
    assert "explodes" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
    assert "hunter2" in caplog.text


def test_insufficient_scope(read_rpc: MCPClient) -> None:
    result = read_rpc.call("create_project", {"name": "Nope"})
    error = tool_error(result, "insufficient_scope")
    assert error["required_scopes"] == ["write"]
    assert error["granted_scopes"] == ["read"]
    assert "write" in result["content"][0]["text"]
    assert not Project.objects.filter(name="Nope").exists()


def test_insufficient_scope_comes_before_argument_checks(read_rpc: MCPClient) -> None:
    tool_error(read_rpc.call("create_project", {"bogus": 1}), "insufficient_scope")


def test_tool_hidden_without_its_scope(rpc: MCPClient, read_rpc: MCPClient) -> None:
    writes = {"create_project", "create_then_refuse", "create_then_explode"}
    assert writes <= set(tools_by_name(rpc))
    visible = set(tools_by_name(read_rpc))
    assert not writes & visible
    assert "echo_typed" in visible


def test_key_without_any_scope_sees_no_scoped_tool(
    mcp_client: Callable[..., MCPClient], alice: Any
) -> None:
    rpc = mcp_client(make_key(alice, ""), URL)
    assert rpc.result("tools/list")["tools"] == []


def test_show_all_tools(read_rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SHOW_ALL_TOOLS": True}
    assert "create_project" in tools_by_name(read_rpc)
    # Shown is not allowed: the call still needs the scope.
    tool_error(read_rpc.call("create_project", {"name": "N"}), "insufficient_scope")


def test_a_write_that_succeeds_is_kept(rpc: MCPClient, alice: Any) -> None:
    result = rpc.call("create_project", {"name": "Kept"})
    assert result["isError"] is False
    project = Project.objects.get(name="Kept")
    assert result["structuredContent"] == {"id": project.pk, "name": "Kept"}
    assert project.owner == alice


@pytest.mark.parametrize(
    ("tool", "code"),
    [("create_then_refuse", "conflict"), ("create_then_explode", "internal_error")],
)
def test_a_tool_that_writes_then_fails_changes_nothing(
    rpc: MCPClient, tool: str, code: str
) -> None:
    before = Project.objects.count()
    tool_error(rpc.call(tool, {"name": "Rolled back"}), code)
    assert Project.objects.count() == before
    assert not Project.objects.filter(name="Rolled back").exists()


# -- text budget -----------------------------------------------------------------------------------


def test_text_over_the_budget_is_cut_with_a_note(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 100}
    text = rpc.call("long_text", {"size": 500})["content"][0]["text"]
    head, _, note = text.partition("\n")
    assert head == "x" * 100
    assert "cut at 100 of 500 bytes" in note
    for hint in ("filters", "page_size", "next page"):
        assert hint in note


def test_text_within_the_budget_is_whole(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 100}
    assert rpc.call("long_text", {"size": 100})["content"][0]["text"] == "x" * 100


def test_budget_cut_never_splits_a_character(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 101}
    text = rpc.call("long_text", {"size": 100, "char": "é"})["content"][0]["text"]
    head = text.partition("\n")[0]
    assert head == "é" * 50
    assert "cut at 101 of 200 bytes" in text


def test_budget_cuts_the_text_not_the_structured_content(rpc: MCPClient, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 50}
    result = rpc.call("long_data", {"size": 1000})
    assert result["structuredContent"] == {"data": "y" * 1000}
    assert len(result["content"][0]["text"].partition("\n")[0].encode()) <= 50


def test_default_budget(rpc: MCPClient) -> None:
    text = rpc.call("long_text", {"size": 30_000})["content"][0]["text"]
    assert "cut at 24000 of 30000 bytes" in text


# -- the product's function tool through /mcp ------------------------------------------------


@pytest.mark.urls("project.urls")
def test_product_tool(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Project
) -> None:
    rpc = mcp_client(alice_key)
    tools = tools_by_name(rpc)
    assert "echo_typed" not in tools  # the test endpoint's tools stay on it
    result = rpc.call("summarize_project", {"project_id": project.pk})
    assert result["isError"] is False
    assert result["structuredContent"] == {
        "project_id": project.pk,
        "name": "Launch",
        "open": 1,
        "in_progress": 1,
        "done": 1,
        "overdue": 0,
    }
    Draft202012Validator(tools["summarize_project"]["outputSchema"]).validate(
        result["structuredContent"]
    )


@pytest.mark.urls("project.urls")
def test_product_tool_not_found_for_an_outsider(
    mcp_client: Callable[..., MCPClient], carol: Any, project: Project
) -> None:
    rpc = mcp_client(make_key(carol))
    tool_error(rpc.call("summarize_project", {"project_id": project.pk}), "not_found")


# -- resources ------------------------------------------------------------------------------------


def test_resources_list(rpc: MCPClient) -> None:
    resources = rpc.result("resources/list")["resources"]
    by_uri = {r["uri"]: r for r in resources}
    assert set(by_uri) == {"test://static-text", "test://static-binary"}
    assert by_uri["test://static-text"] == {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "A fixed text.",
        "mimeType": "text/plain",
    }


def test_resource_templates_list(rpc: MCPClient) -> None:
    templates = rpc.result("resources/templates/list")["resourceTemplates"]
    assert templates == [
        {
            "uriTemplate": "test://items/{kind}/{item_id}",
            "name": "item",
            "description": "An item by kind and id; id 0 does not exist.",
        }
    ]


def test_read_text_resource(rpc: MCPClient) -> None:
    result = rpc.result("resources/read", {"uri": "test://static-text"})
    assert result == {
        "contents": [
            {
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "Hello from a resource.",
            }
        ]
    }


def test_read_binary_resource(rpc: MCPClient) -> None:
    [contents] = rpc.result("resources/read", {"uri": "test://static-binary"})["contents"]
    assert contents["mimeType"] == "image/png"
    assert "text" not in contents
    assert base64.b64decode(contents["blob"]) == PNG


def test_read_template_resource(rpc: MCPClient) -> None:
    uri = "test://items/book/42"
    [contents] = rpc.result("resources/read", {"uri": uri})["contents"]
    assert contents["uri"] == uri
    assert contents["mimeType"] == "application/json"
    assert json.loads(contents["text"]) == {"kind": "book", "id": "42", "reader": "alice"}


@pytest.mark.parametrize(
    "uri",
    [
        "test://nothing",
        "test://items/book",  # does not fill the template
        "test://items/book/42/extra",
        "test://items/book/0",  # the function says it does not exist
        "test://admin-only",  # exists, but this key lacks the scope: not found either
    ],
)
def test_unknown_resource(rpc: MCPClient, uri: str) -> None:
    error = rpc_error(rpc.request("resources/read", {"uri": uri}), -32002)
    assert error["message"] == "Resource not found"
    assert error["data"] == {"uri": uri}


def test_a_resource_that_raises_is_an_internal_error_not_a_500(
    rpc: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    uri = "test://items/book/bug"
    response = rpc.request("resources/read", {"uri": uri})
    assert response.status_code == 200
    error = rpc_error(response, -32603)
    assert error["message"] == "Internal error reading the resource"
    assert error["data"] == {"uri": uri}
    assert "invalid literal" not in response.content.decode()
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.getMessage() == f"resource {uri} failed"


def test_scoped_resources_are_hidden(read_rpc: MCPClient, mcp_client: Any, alice: Any) -> None:
    assert "test://admin-only" not in {
        r["uri"] for r in read_rpc.result("resources/list")["resources"]
    }
    unscoped = mcp_client(make_key(alice, ""), URL)
    assert unscoped.result("resources/templates/list")["resourceTemplates"] == []


@pytest.mark.urls("project.urls")
def test_product_resources(
    mcp_client: Callable[..., MCPClient], alice_key: str, carol: Any, project: Project
) -> None:
    rpc = mcp_client(alice_key)
    [guide] = rpc.result("resources/read", {"uri": "tracker://guide"})["contents"]
    assert guide["mimeType"] == "text/markdown"
    assert guide["text"].startswith("# Task tracker")
    uri = f"tracker://projects/{project.pk}"
    [contents] = rpc.result("resources/read", {"uri": uri})["contents"]
    assert json.loads(contents["text"]) == {
        "id": project.pk,
        "name": "Launch",
        "owner": "alice",
        "members": ["bob"],
    }
    outsider = mcp_client(make_key(carol))
    assert rpc_error(outsider.request("resources/read", {"uri": uri}), -32002)["data"] == {
        "uri": uri
    }


# -- prompts ---------------------------------------------------------------------------------------


def test_prompts_list(rpc: MCPClient) -> None:
    prompts = {p["name"]: p for p in rpc.result("prompts/list")["prompts"]}
    assert set(prompts) == {"greet", "dialogue", "plan_project"}
    assert prompts["greet"] == {
        "name": "greet",
        "description": "Greet someone.",
        "arguments": [
            {"name": "name", "required": True},
            {"name": "tone", "required": False},
        ],
    }
    assert prompts["dialogue"]["arguments"] == [
        {"name": "topic", "required": True, "description": "What to talk about"}
    ]


def test_function_prompt(rpc: MCPClient) -> None:
    result = rpc.result("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})
    assert result == {
        "description": "Greet someone.",
        "messages": [
            {
                "role": "user",
                "content": {"type": "text", "text": "Say hello to Ada in a friendly tone."},
            }
        ],
    }
    result = rpc.result(
        "prompts/get", {"name": "greet", "arguments": {"name": "Ada", "tone": "dry"}}
    )
    assert result["messages"][0]["content"]["text"] == "Say hello to Ada in a dry tone."


def test_prompt_with_several_messages(rpc: MCPClient) -> None:
    result = rpc.result("prompts/get", {"name": "dialogue", "arguments": {"topic": "tea"}})
    assert [m["role"] for m in result["messages"]] == ["user", "assistant"]
    assert result["messages"][1]["content"] == {"type": "text", "text": "Tea is a fine topic."}


def test_template_prompt(rpc: MCPClient) -> None:
    result = rpc.result("prompts/get", {"name": "plan_project", "arguments": {"project": "Launch"}})
    assert result["description"] == "Plan a week in one project."
    [message] = result["messages"]
    assert message["role"] == "user"
    text = message["content"]["text"]
    assert text.startswith("I am alice.")
    assert 'in the project "Launch"' in text


def test_template_prompt_does_not_escape_html(rpc: MCPClient) -> None:
    result = rpc.result(
        "prompts/get", {"name": "plan_project", "arguments": {"project": "R&D <1>"}}
    )
    assert 'in the project "R&D <1>"' in result["messages"][0]["content"]["text"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("no_such_prompt", {}),
        ("greet", {}),  # missing required "name"
        ("greet", {"tone": "dry"}),
        ("plan_project", {}),
        ("dialogue", {"other": "x"}),
    ],
)
def test_prompt_errors(rpc: MCPClient, name: str, arguments: dict[str, str]) -> None:
    response = rpc.request("prompts/get", {"name": name, "arguments": arguments})
    error = rpc_error(response, -32602)
    assert name in error["message"] or "argument" in error["message"]


@pytest.mark.urls("project.urls")
def test_product_template_prompt(
    mcp_client: Callable[..., MCPClient], alice_key: str, project: Project
) -> None:
    rpc = mcp_client(alice_key)
    names = {p["name"] for p in rpc.result("prompts/list")["prompts"]}
    assert "plan_week" in names
    plain = rpc.result("prompts/get", {"name": "plan_week"})
    text = plain["messages"][0]["content"]["text"]
    assert text.startswith("I am alice.")
    assert "in the project" not in text
    scoped = rpc.result("prompts/get", {"name": "plan_week", "arguments": {"project": "Launch"}})
    assert 'in the project "Launch"' in scoped["messages"][0]["content"]["text"]


# -- completion ------------------------------------------------------------------------------------


def complete(rpc: MCPClient, ref: dict[str, str], name: str, value: str) -> dict[str, Any]:
    result = rpc.result(
        "completion/complete", {"ref": ref, "argument": {"name": name, "value": value}}
    )
    completion: dict[str, Any] = result["completion"]
    return completion


def test_completions_capability(rpc: MCPClient) -> None:
    result = rpc.result("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert result["capabilities"]["completions"] == {}
    assert result["serverInfo"] == {"name": "tests", "version": "1.0.0", "title": "Test endpoint"}
    assert result["instructions"] == "Tools for the test suite."


def test_complete_prompt_argument(rpc: MCPClient) -> None:
    ref = {"type": "ref/prompt", "name": "greet"}
    assert complete(rpc, ref, "name", "alp") == {
        "values": ["alpha", "alpine"],
        "total": 2,
        "hasMore": False,
    }
    assert complete(rpc, ref, "name", "")["values"] == NAMES
    assert complete(rpc, ref, "name", "zzz")["values"] == []


def test_complete_argument_without_a_completer(rpc: MCPClient) -> None:
    ref = {"type": "ref/prompt", "name": "greet"}
    assert complete(rpc, ref, "tone", "f") == {"values": [], "total": 0, "hasMore": False}


def test_complete_resource_template_variable(rpc: MCPClient) -> None:
    ref = {"type": "ref/resource", "uri": "test://items/{kind}/{item_id}"}
    completion = complete(rpc, ref, "item_id", "7")
    assert len(completion["values"]) == 100
    assert completion["values"][:2] == ["70", "71"]
    assert completion["total"] == 150
    assert completion["hasMore"] is True


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt", "name": "no_such_prompt"},
        {"type": "ref/unknown", "name": "greet"},
        {"type": "ref/prompt"},
        {"type": "ref/resource"},
    ],
)
def test_complete_bad_ref(rpc: MCPClient, ref: dict[str, str]) -> None:
    params = {"ref": ref, "argument": {"name": "name", "value": "a"}}
    rpc_error(rpc.request("completion/complete", params), -32602)


@pytest.mark.urls("project.urls")
def test_product_completion(
    mcp_client: Callable[..., MCPClient], alice_key: str, carol: Any, project: Project
) -> None:
    ref = {"type": "ref/prompt", "name": "plan_week"}
    Project.objects.create(name="Landing page", owner=project.owner)
    assert complete(mcp_client(alice_key), ref, "project", "La")["values"] == [
        "Landing page",
        "Launch",
    ]
    assert complete(mcp_client(alice_key), ref, "project", "lau")["values"] == ["Launch"]
    # Another user's projects are never suggested.
    assert complete(mcp_client(make_key(carol)), ref, "project", "La")["values"] == []


@pytest.mark.urls("project.urls")
def test_completion_of_a_prompt_hidden_by_scope(
    mcp_client: Callable[..., MCPClient], alice: Any, project: Project
) -> None:
    # plan_week needs "read": a key without it neither sees the prompt nor completes it.
    rpc = mcp_client(make_key(alice, "write"))
    assert "plan_week" not in {p["name"] for p in rpc.result("prompts/list")["prompts"]}
    params = {
        "ref": {"type": "ref/prompt", "name": "plan_week"},
        "argument": {"name": "project", "value": "La"},
    }
    rpc_error(rpc.request("completion/complete", params), -32602)


def test_completion_of_a_template_hidden_by_scope(
    mcp_client: Callable[..., MCPClient], alice: Any
) -> None:
    rpc = mcp_client(make_key(alice, "write"), URL)
    params = {
        "ref": {"type": "ref/resource", "uri": "test://items/{kind}/{item_id}"},
        "argument": {"name": "item_id", "value": "1"},
    }
    rpc_error(rpc.request("completion/complete", params), -32602)
