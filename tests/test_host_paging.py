"""The paging host (:mod:`tests.hosts.paging`): limit/offset, cursor, a page-number subclass
and no pagination; REST and MCP agree page by page, and the text names the exact argument
and value that gets the next page."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from rest_framework.routers import SimpleRouter

from mcp_endpoint.endpoint import Endpoint, endpoints
from tests.conftest import MCPClient
from tests.hosts.parity import CREDENTIAL_KINDS, check_parity
from tests.hosts.tutorial.models import Snippet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.paging.urls")]


@pytest.fixture
def owner() -> Any:
    user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
    for n in range(5):
        Snippet.objects.create(title=f"s{n}", code=f"x = {n}", owner=user)
    return user


def snapshot() -> list[Any]:
    return list(Snippet.objects.order_by("pk").values_list("pk", "title"))


LISTS = [
    ("list_offset_snippets", "/offset/", {}),
    ("list_offset_snippets", "/offset/", {"offset": 2, "limit": 2}),
    ("list_cursor_snippets", "/cursor/", {}),
    ("list_numbered_snippets", "/numbered/", {"p": 2}),
    ("list_unpaged_snippets", "/unpaged/", {}),
    ("get_offset_snippet", "/offset/{id}/", {"id": "first"}),
    ("get_cursor_snippet", "/cursor/{id}/", {"id": "first"}),
    ("get_numbered_snippet", "/numbered/{id}/", {"id": "first"}),
    ("get_unpaged_snippet", "/unpaged/{id}/", {"id": "first"}),
    ("get_unpaged_snippet", "/unpaged/{id}/", {"id": 999999}),
]


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
@pytest.mark.parametrize(("tool", "url", "arguments"), LISTS)
def test_rest_and_mcp_agree(
    kind: str, tool: str, url: str, arguments: dict[str, Any], client: Client, owner: Any
) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    first = Snippet.objects.order_by("id").first()
    assert first is not None
    filled = {k: first.pk if v == "first" else v for k, v in arguments.items()}
    check_parity(
        client,
        credential,
        tool=tool,
        method="GET",
        url=url.format(**filled),
        arguments=filled,
        rest_arguments={k: v for k, v in filled.items() if k != "id"},
        snapshot=snapshot,
    )


def next_hint(text: str) -> tuple[str, Any]:
    match = re.search(r"call again with (\w+)=(\S+)\.$", text.splitlines()[0])
    assert match, text
    value = match.group(2)
    return match.group(1), json.loads(value)


@pytest.mark.parametrize(
    ("tool", "url", "argument"),
    [
        ("list_offset_snippets", "/offset/", "offset"),
        ("list_cursor_snippets", "/cursor/", "cursor"),
        ("list_numbered_snippets", "/numbered/", "p"),
    ],
)
def test_the_text_names_the_next_page(
    tool: str, url: str, argument: str, client: Client, owner: Any
) -> None:
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    first = rpc.call(tool)
    name, value = next_hint(first["content"][0]["text"])
    assert name == argument
    rest_next = first["structuredContent"]["next"]
    assert str(value) == parse_qs(urlsplit(rest_next).query)[argument][0]
    second = rpc.call(tool, {name: value})
    rest = client.get(rest_next, headers={"Authorization": f"Bearer {rpc.key}"}).json()
    assert second["structuredContent"] == rest
    assert [r["title"] for r in second["structuredContent"]["results"]] == ["s2", "s3"]


def test_an_unpaged_list_has_no_hint(client: Client, owner: Any) -> None:
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    text = rpc.call("list_unpaged_snippets")["content"][0]["text"]
    assert text.splitlines()[0] == "5 unpaged snippets."


def test_per_basename_options_must_name_a_basename() -> None:
    from tests.hosts.paging.urls import OffsetSnippets

    router = SimpleRouter()
    router.register("offset", OffsetSnippets, basename="offset")
    endpoint = Endpoint("per-basename")
    try:
        with pytest.raises(ImproperlyConfigured, match=r"'ofset'.*'offset'"):
            endpoint.register_router(router, per_basename={"ofset": {"exclude": ["list"]}})
        assert len(endpoint.tools) == 0
        endpoint.register_router(router, per_basename={"offset": {"exclude": ["list"]}})
        assert [t.name for t in endpoint.tools] == ["get_snippet"]
    finally:
        endpoints.discard(endpoint)
