"""Every read tool of every host: its ``structuredContent`` is the JSON the same REST request
returns, parsed from the same bytes, and satisfies the tool's advertised output schema.

Each host runs under its own URL conf, with rows made for its models from their fields
(:mod:`tests.hosts.seeding`). The REST request is the one the tool makes (its route's path
with the same URL kwargs, its ``Accept`` header), sent by Django's test client with the
same credential. A detail tool is called for an object its list tool answered with.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from jsonschema import Draft202012Validator

from mcp_endpoint.rest_framework.spec import JSON
from mcp_endpoint.rest_framework.tool import ViewSetTool
from tests.hosts import host_endpoints, host_names
from tests.hosts.parity import Credential, CredentialClient, api_key
from tests.hosts.seeding import seed

pytestmark = pytest.mark.django_db


def listed_tools(rpc: CredentialClient) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    params: dict[str, Any] = {}
    while True:
        result = rpc.result("tools/list", params)
        tools.update({t["name"]: t for t in result["tools"]})
        if not result.get("nextCursor"):
            return tools
        params = {"cursor": result["nextCursor"]}


def lookup_value(tool: ViewSetTool, item: dict[str, Any]) -> Any:
    field = getattr(tool.registration.viewset, "lookup_field", "pk")
    return item.get(field, item.get("id", item.get("pk")))


def arguments_for(tool: ViewSetTool, lists: dict[int, list[Any]]) -> dict[str, Any] | None:
    """Arguments that a REST client could send too: none, or the lookup of an object the
    registration's list tool answered with; None when the tool needs more (a parent)."""
    spec = tool.spec
    assert spec is not None
    required = set(spec.input_schema.get("required", []))
    if not required:
        return {}
    if len(required) != 1 or not spec.detail:
        return None
    items = lists.get(id(tool.registration)) or []
    value = lookup_value(tool, items[0]) if items and isinstance(items[0], dict) else None
    return None if value is None else {next(iter(required)): value}


def rest_answer(
    client: Client, credential: Credential, tool: ViewSetTool, arguments: dict[str, Any]
) -> Any:
    spec = tool.spec
    assert spec is not None
    kwargs = {
        **spec.fixed_kwargs,
        **{spec.path_arguments[n]: str(arguments[n]) for n in spec.path_arguments},
    }
    # What the tool asks for: JSON, or the type of an action that renders only that.
    accept = spec.accept if spec.media_type == JSON else spec.media_type
    return client.get(
        spec.route.url_path(kwargs), headers={**credential.headers(), "Accept": accept}
    )


@pytest.mark.parametrize("host", host_names())
def test_every_read_result_is_the_rest_json(host: str, client: Client, settings: Any) -> None:
    settings.ROOT_URLCONF = f"tests.hosts.{host}.urls"
    user = get_user_model().objects.create_superuser("rest-json", "rj@example.com", "pw-rj-123")
    seed(user)
    credential = api_key(user, "read write")
    compared = refused = 0
    uncalled: list[str] = []
    for endpoint in host_endpoints()[host]:
        rpc = CredentialClient(client, reverse(f"{endpoint.name}:endpoint"), credential)
        if rpc.request("tools/list").status_code == 401:
            # An endpoint that takes the product's own credentials only (its tests use
            # them); the app's keys are refused there.
            refused += 1
            continue
        listed = listed_tools(rpc)
        tools = [t for t in endpoint.tools if isinstance(t, ViewSetTool) and t.name in listed]
        lists: dict[int, list[Any]] = {}
        # List tools first: their items are the objects the detail tools are called for.
        reads = sorted(
            (t for t in tools if t.spec is not None and t.spec.method == "GET"),
            key=lambda t: t.detail,
        )
        for tool in reads:
            spec = tool.spec
            assert spec is not None
            arguments = arguments_for(tool, lists)
            if arguments is None:
                uncalled.append(tool.name)
                continue
            answer = rpc.call(tool.name, arguments)
            rest = rest_answer(client, credential, tool, arguments)
            media = rest.get("Content-Type", "")
            if rest.status_code >= 400 or media.startswith("text/event-stream"):
                # Refused on both sides; or a stream, which no tool result can carry.
                assert answer["isError"] is True, (tool.name, answer)
                continue
            assert answer["isError"] is False, (tool.name, answer, rest.status_code)
            if not media.startswith("application/json"):
                assert "structuredContent" not in answer, tool.name
                continue
            expected = rest.json()
            structured = answer["structuredContent"]
            if isinstance(expected, list):
                structured = structured["results"]
                expected = expected[: len(structured)]
            assert structured == expected, tool.name
            schema = listed[tool.name].get("outputSchema")
            if schema is not None:
                errors = list(Draft202012Validator(schema).iter_errors(answer["structuredContent"]))
                assert not errors, (tool.name, [e.message for e in errors])
            compared += 1
            results = structured if isinstance(structured, list) else structured.get("results")
            if not spec.detail and isinstance(results, list):
                lists.setdefault(id(tool.registration), results)
    if refused == len(host_endpoints()[host]):
        pytest.skip(f"every endpoint of {host} refuses the app's API keys")
    if not compared:
        # Its views take the product's own credentials (their tools are not listed for an
        # API key), or every read tool needs parents (a tenant's slug) this test cannot make.
        pytest.skip(f"no read tool of {host} can be called with an API key alone: {uncalled}")
