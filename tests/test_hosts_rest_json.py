"""Every read tool of every host: its ``structuredContent`` is the JSON the same REST request
returns, parsed from the same bytes, and satisfies the tool's advertised output schema (as
the official SDK's client validates it: JSON Schema 2020-12).

Each host runs under its own URL conf, with rows made for its models from their fields
(:mod:`tests.hosts.seeding`), and is listed in full (``TOOL_DISCOVERY = "never"``), large
hosts too. A host that takes credentials of its own (DRF tokens, team tokens, its own OAuth
scopes) or whose routes sit under a tenant's prefix is called the way its REST clients call
it (:data:`SETUPS`). The REST request is the one the tool makes (its route's path with the
same URL kwargs, its ``Accept`` header), sent by Django's test client with the same
credential. A detail tool is called for an object its list tool answered with, a nested
list for a parent a list of that kind answered with (the caller for ``user_pk``), a
versioned route with the one version its schema allows.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from jsonschema import Draft202012Validator
from rest_framework.authtoken.models import Token

from mcp_endpoint.rest_framework.spec import JSON
from mcp_endpoint.rest_framework.tool import ViewSetTool
from tests.hosts import host_endpoints, host_names
from tests.hosts.ownoauth import oauth_settings
from tests.hosts.parity import Credential, CredentialClient, api_key, oauth_token
from tests.hosts.seeding import seed
from tests.hosts.teamtokens.models import Note, TeamToken
from tests.hosts.tenants import API_MIDDLEWARE
from tests.hosts.tenants.models import Tenant
from tests.hosts.tenants.scoping import scopes_disabled

pytestmark = pytest.mark.django_db


@dataclass
class Setup:
    """How a host is called: the credentials tried on each endpoint (the first one it
    takes is used), and the arguments every tool of the host needs (a tenant's prefix)."""

    credentials: list[Credential]
    parents: dict[str, Any] = field(default_factory=dict)


def with_api_key(user: Any, settings: Any) -> Setup:
    seed(user)
    return Setup([api_key(user, "read write")])


def with_drf_tokens(user: Any, settings: Any) -> Setup:
    seed(user)
    token = Token.objects.create(user=user)
    drf = Credential(token.key, frozenset({"read", "write"}), scheme="Token")
    # The token first: where an endpoint takes both, its views take tokens only.
    return Setup([drf, api_key(user, "read write")])


def with_team_token(user: Any, settings: Any) -> Setup:
    seed(user)
    note = Note.objects.order_by("pk").first()
    assert note is not None
    TeamToken.objects.create(team=note.team, key="rest-json-team", can_write=True)
    return Setup([Credential("rest-json-team", frozenset(), scheme="Team")])


def with_own_oauth(user: Any, settings: Any) -> Setup:
    settings.OAUTH2_PROVIDER = oauth_settings.OAUTH2_PROVIDER
    return Setup([oauth_token(user, "orders:read")])


def as_tenant_member(user: Any, settings: Any) -> Setup:
    from tests.test_host_tenants import make_rows

    settings.MIDDLEWARE = [*settings.MIDDLEWARE, *API_MIDDLEWARE]
    Tenant.objects.create(slug="acme").members.add(user)
    with scopes_disabled():
        make_rows()
    return Setup([api_key(user, "read write")], {"tenant": "acme", "project": "web"})


SETUPS: dict[str, Callable[[Any, Any], Setup]] = {
    "ownoauth": with_own_oauth,
    "teamtokens": with_team_token,
    "tenants": as_tenant_member,
    "tokenauth": with_drf_tokens,
}


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


def arguments_for(
    tool: ViewSetTool,
    lists: dict[int, list[Any]],
    parents: dict[str, Any],
    kinds: dict[str, Any],
) -> dict[str, Any] | None:
    """Arguments that a REST client could send too: the host's parents, the one value an
    argument's enum allows (an API version), a nested parent's id (``project_pk``) from
    an object a list of that kind answered with, and the lookup of an object the
    registration's list tool answered with (typed as the schema says); None when the tool
    needs more."""
    spec = tool.spec
    assert spec is not None
    properties = spec.input_schema.get("properties", {})
    given = {name: value for name, value in parents.items() if name in properties}
    for name in set(spec.input_schema.get("required", [])) - set(given):
        enum = properties.get(name, {}).get("enum")
        parent = re.fullmatch(r"(?:.+_)?([a-z]+)_(?:pk|id)", name)
        if enum and len(enum) == 1:
            given[name] = enum[0]
        elif parent is not None and parent.group(1) in kinds:
            given[name] = kinds[parent.group(1)]
    required = set(spec.input_schema.get("required", [])) - set(given)
    if not required:
        return given
    if len(required) != 1 or not spec.detail:
        return None
    items = lists.get(id(tool.registration)) or []
    value = lookup_value(tool, items[0]) if items and isinstance(items[0], dict) else None
    if value is None:
        # A detail view registered apart from its list (a plain APIView): an object of
        # its kind.
        value = kinds.get(tool.name.rsplit("_", 1)[-1])
    if value is None:
        return None
    [name] = required
    if properties.get(name, {}).get("type") == "string":
        value = str(value)
    return {**given, name: value}


def kind_of(tool: ViewSetTool, tools: list[ViewSetTool]) -> str | None:
    """The kind of object a list tool answers with, as its parents' arguments name it: the
    last word of its registration's detail tool (``get_project_task`` -> ``task``)."""
    details = [t for t in tools if t.spec is not None and t.spec.detail]
    for other in details:
        if other.registration is tool.registration:
            return other.name.rsplit("_", 1)[-1]
    # A list view registered apart from its detail view: ``list_snippets``, ``get_snippet``.
    plural = tool.name.removeprefix("list_")
    for other in details:
        singular = other.name.removeprefix("get_")
        if other.name.startswith("get_") and plural.startswith(singular):
            return singular.rsplit("_", 1)[-1]
    return None


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


def compare(
    rpc: CredentialClient,
    client: Client,
    credential: Credential,
    tool: ViewSetTool,
    arguments: dict[str, Any],
    listed: dict[str, Any],
) -> tuple[int, dict[str, Any]]:
    """Call ``tool`` through MCP and REST: 1 when a JSON answer was compared, else 0 (both
    refused it, or its answer is not JSON); and the tool's answer."""
    answer = rpc.call(tool.name, arguments)
    rest = rest_answer(client, credential, tool, arguments)
    media = rest.get("Content-Type", "")
    if rest.status_code >= 400 or media.startswith("text/event-stream"):
        # Refused on both sides; or a stream, which no tool result can carry.
        assert answer["isError"] is True, (tool.name, answer)
        return 0, answer
    assert answer["isError"] is False, (tool.name, answer, rest.status_code)
    if not media.startswith("application/json"):
        assert "structuredContent" not in answer, tool.name
        return 0, answer
    expected = rest.json()
    structured = answer["structuredContent"]
    if isinstance(expected, list):
        structured = structured["results"]
        expected = expected[: len(structured)]
    assert structured == expected, tool.name
    schema = listed[tool.name].get("outputSchema")
    if schema is not None:
        check_schema(json.dumps(schema, sort_keys=True))
        errors = list(Draft202012Validator(schema).iter_errors(answer["structuredContent"]))
        assert not errors, (tool.name, [e.message for e in errors])
    return 1, answer


@functools.cache
def check_schema(schema: str) -> None:
    """Check a schema (as JSON text) against JSON Schema 2020-12's metaschema, once for each
    distinct one: a large product's tools share a few shapes (the generated host's 400 read
    tools have two output schemas), and each check costs milliseconds of CPU."""
    Draft202012Validator.check_schema(json.loads(schema))


def lists_of(answer: dict[str, Any]) -> list[Any]:
    """The items of a list tool's answer (none for an error or a single object)."""
    structured = answer.get("structuredContent")
    if answer.get("isError") or not isinstance(structured, dict):
        return []
    results = structured.get("results")
    return results if isinstance(results, list) else []


@pytest.mark.parametrize("host", host_names())
def test_every_read_result_is_the_rest_json(host: str, client: Client, settings: Any) -> None:
    settings.ROOT_URLCONF = f"tests.hosts.{host}.urls"
    # Every tool, as the full list describes it: not the compact form of a large host.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TOOL_DISCOVERY": "never"}
    user = get_user_model().objects.create_superuser("rest-json", "rj@example.com", "pw-rj-123")
    setup = SETUPS.get(host, with_api_key)(user, settings)
    compared = 0
    uncalled: list[str] = []
    for endpoint in host_endpoints()[host]:
        url = reverse(f"{endpoint.name}:endpoint")
        # The first of the host's credentials this endpoint takes (each takes one).
        taken = [
            c
            for c in setup.credentials
            if CredentialClient(client, url, c).request("tools/list").status_code != 401
        ]
        if not taken:
            # An endpoint made to refuse these credentials (its host's tests say why).
            continue
        credential = taken[0]
        rpc = CredentialClient(client, url, credential)
        listed = listed_tools(rpc)
        tools = [t for t in endpoint.tools if isinstance(t, ViewSetTool) and t.name in listed]
        lists: dict[int, list[Any]] = {}
        # The caller is a user every host has: a parent `user_pk` is theirs.
        kinds: dict[str, Any] = {"user": user.pk}
        # List tools first: their items are the objects the detail tools are called for,
        # and the parents of the nested lists; passes until no more tool can be called.
        waiting = sorted(
            (t for t in tools if t.spec is not None and t.spec.method == "GET"),
            key=lambda t: t.detail,
        )
        while waiting:
            ready = [
                (tool, arguments)
                for tool in waiting
                if (arguments := arguments_for(tool, lists, setup.parents, kinds)) is not None
            ]
            if not ready:
                break
            waiting = [t for t in waiting if all(t is not r for r, _ in ready)]
            for tool, arguments in ready:
                count, answer = compare(rpc, client, credential, tool, arguments, listed)
                compared += count
                answer_items = lists_of(answer)
                if not tool.detail and answer_items:
                    lists.setdefault(id(tool.registration), answer_items)
                    kind = kind_of(tool, tools)
                    item = answer_items[0]
                    if kind is not None and isinstance(item, dict) and "id" in item:
                        kinds.setdefault(kind, item["id"])
        uncalled += [t.name for t in waiting]
    # Tools left uncalled need what rows made from fields cannot give (a parent no list of
    # the host answers with, an object of an empty list); every host has tools compared.
    assert compared, (host, uncalled)
