"""A viewset tool's ``structuredContent`` is the REST answer's own bytes, spliced into the
JSON-RPC answer as they are, and encoded again only when they cannot be sent as they are."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework import renderers
from rest_framework.response import Response

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.rest_framework.results import rest_json
from project.tracker.models import Project
from tests.conftest import MCPClient


def rendered(data: Any, renderer: renderers.BaseRenderer) -> Response:
    """A DRF response rendered by ``renderer``, as a view's content negotiation would."""
    response = Response(data)
    response.accepted_renderer = renderer
    response.accepted_media_type = renderer.media_type
    response.renderer_context = {}
    response.render()
    return response


class IndentingRenderer(renderers.JSONRenderer):
    def get_indent(self, accepted_media_type: Any, renderer_context: Any) -> int:
        return 2


class LaxRenderer(renderers.JSONRenderer):
    strict = False  # writes NaN, which json.loads reads and no JSON parser should


@pytest.mark.django_db
def test_a_list_result_carries_the_rest_bytes_verbatim(
    client: Client, mcp_client: Callable[..., MCPClient], alice_key: str, project: Project
) -> None:
    rest = client.get("/api/tasks/?page=1", headers={"Authorization": f"Bearer {alice_key}"})
    assert rest.status_code == 200
    answer = mcp_client(alice_key).request(
        "tools/call", {"name": "list_tasks", "arguments": {"page": 1}}
    )
    assert answer.status_code == 200
    assert b'"structuredContent":' + rest.content in answer.content
    assert json.loads(answer.content)["result"]["structuredContent"] == rest.json()


def test_compact_json_is_kept_as_text() -> None:
    data, text = rest_json(rendered({"n": 2**70, "a": [1]}, renderers.JSONRenderer()), "")
    assert data == {"n": 2**70, "a": [1]}
    assert text == '{"n":1180591620717411303424,"a":[1]}'


def test_json_over_several_lines_is_parsed_and_not_kept() -> None:
    # SSE sends an answer as one data: line: an indenting renderer's answer is encoded again.
    data, text = rest_json(rendered({"a": [1, 2]}, IndentingRenderer()), "")
    assert data == {"a": [1, 2]}
    assert text is None


def test_nan_is_parsed_and_not_kept() -> None:
    data, text = rest_json(rendered({"x": float("nan")}, LaxRenderer()), "")
    assert text is None
    assert json.loads(jsonrpc.dumps(jsonrpc.result(1, data))) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"x": None},
    }


def test_an_encoded_value_of_the_result_is_spliced_as_its_text() -> None:
    structured = jsonrpc.Encoded({"n": 1}, '{"n": 1}')
    text = jsonrpc.dumps(jsonrpc.result(3, {"content": [], "structuredContent": structured}))
    assert text == '{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{"n": 1}}}'


def test_what_orjson_refuses_beside_a_splice_is_encoded_whole() -> None:
    structured = jsonrpc.Encoded({"n": 1}, '{"n":1}')
    message = jsonrpc.result(3, {"big": 2**70, "structuredContent": structured})
    assert json.loads(jsonrpc.dumps(message))["result"] == {
        "big": 2**70,
        "structuredContent": {"n": 1},
    }
