"""The versioned host (:mod:`tests.hosts.versioned`): URLPathVersioning under a ``path()``
converter, and NamespaceVersioning; REST and MCP agree for every tool and credential."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.hosts.parity import CREDENTIAL_KINDS, check_parity
from tests.hosts.tutorial.models import Snippet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.versioned.urls")]


@pytest.fixture
def owner() -> Any:
    user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
    Snippet.objects.create(title="hello", code="print(1)", owner=user)
    return user


def snapshot() -> list[Any]:
    return list(Snippet.objects.order_by("pk").values_list("pk", "title"))


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
def test_rest_and_mcp_agree(kind: str, client: Client, owner: Any) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    pk = Snippet.objects.get().pk
    for tool, url, arguments in [
        ("list_snippets", "/api/v1/snippets/", {"version": "v1"}),
        ("get_snippet", f"/api/v1/snippets/{pk}/", {"version": "v1", "id": pk}),
        ("get_snippet", "/api/v1/snippets/999999/", {"version": "v1", "id": 999999}),
        ("list_ns_snippets", "/ns/v1/nsnippets/", {}),
        ("get_ns_snippet", f"/ns/v1/nsnippets/{pk}/", {"id": pk}),
    ]:
        rest_arguments = {k: v for k, v in arguments.items() if k not in ("id", "version")}
        check_parity(
            client,
            credential,
            tool=tool,
            method="GET",
            url=url,
            arguments=arguments,
            rest_arguments=rest_arguments,
            snapshot=snapshot,
        )


def test_the_version_argument_names_the_allowed_versions() -> None:
    from tests.hosts.versioned.urls import endpoint

    tool = endpoint.tools.get("get_snippet")
    assert tool is not None
    assert tool.input_schema["properties"]["version"] == {"type": "string", "enum": ["v1"]}
    assert sorted(tool.input_schema["required"]) == ["id", "version"]
