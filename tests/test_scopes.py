"""The default scope policy (:mod:`mcp_endpoint.scopes`): ``read`` for safe methods, ``write``
for the rest, on REST and at /mcp; a view's own policy wins; turning it off is explicit and
``check --deploy`` warns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.checks import Tags, run_checks
from django.test import Client, modify_settings
from oauth2_provider.contrib.rest_framework import TokenHasScope
from rest_framework import permissions

from mcp_endpoint.checks import check_default_scopes, check_settings
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.scopes import DEFAULT_DESCRIPTIONS, declares_scopes, default_scopes, known_scopes
from tests.hosts.parity import api_key, call_rest
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import SnippetViewSet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.tutorial.urls")]

DEFAULT = {"GET": ["read"], "HEAD": ["read"], "OPTIONS": ["read"], "*": ["write"]}


@pytest.fixture
def owner() -> Any:
    return get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")


@pytest.fixture
def scratch() -> Iterator[list[Endpoint]]:
    made: list[Endpoint] = []
    yield made
    for endpoint in made:
        endpoints.discard(endpoint)
    made.clear()


class ScopedSnippetViewSet(SnippetViewSet):
    """The snippets, with a scope policy of its own."""

    permission_classes = [permissions.IsAuthenticated, TokenHasScope]
    required_scopes = ["snippets"]


class PerActionSnippetViewSet(SnippetViewSet):
    """The snippets, with scopes named for one action."""

    required_scopes_by_action = {"create": ["snippets:create"]}


def test_the_default_mapping() -> None:
    view = SnippetViewSet(action="list")
    assert not declares_scopes(view)
    assert default_scopes(view, "GET", DEFAULT) == {"read"}
    assert default_scopes(view, "options", DEFAULT) == {"read"}
    assert default_scopes(view, "POST", DEFAULT) == {"write"}
    assert default_scopes(view, "DELETE", DEFAULT) == {"write"}
    assert default_scopes(view, "POST", None) == frozenset()


def test_a_views_own_policy_wins() -> None:
    assert declares_scopes(ScopedSnippetViewSet(action="list"))
    composed = type(
        "Composed",
        (SnippetViewSet,),
        {"permission_classes": [permissions.IsAuthenticated & TokenHasScope]},
    )
    assert declares_scopes(composed(action="list"))
    view = PerActionSnippetViewSet(action="create")
    assert not declares_scopes(view)
    assert default_scopes(view, "POST", DEFAULT) == {"snippets:create"}
    assert default_scopes(PerActionSnippetViewSet(action="list"), "GET", DEFAULT) == {"read"}


def test_tools_carry_the_policy(scratch: list[Endpoint]) -> None:
    endpoint = Endpoint("scopes-scratch")
    scratch.append(endpoint)
    endpoint.register_viewset(SnippetViewSet, basename="snippet", prefix="snippets")
    endpoint.register_viewset(ScopedSnippetViewSet, singular="scoped", plural="scopeds")
    endpoint.register_viewset(PerActionSnippetViewSet, singular="per", plural="pers")
    scopes = {t.name: t.required_scopes for t in endpoint.tools}
    assert scopes["list_snippets"] == {"read"}
    assert scopes["create_snippet"] == {"write"}
    assert scopes["delete_snippet"] == {"write"}
    assert scopes["create_scoped"] == {"snippets"}
    assert scopes["create_per"] == {"snippets:create"}
    assert scopes["update_per"] == {"write"}


def test_turned_off_for_one_endpoint(scratch: list[Endpoint]) -> None:
    endpoint = Endpoint("scopes-off", scopes_by_method=None)
    scratch.append(endpoint)
    endpoint.register_viewset(SnippetViewSet, basename="snippet", prefix="snippets")
    assert {t.name: t.required_scopes for t in endpoint.tools}["create_snippet"] == frozenset()
    warnings = [m for m in check_default_scopes() if "'scopes-off'" in m.msg]
    assert [m.id for m in warnings] == ["mcp_endpoint.W031"]


def test_a_read_key_cannot_write_through_rest(client: Client, owner: Any) -> None:
    key = api_key(owner, "read").bearer
    before = Snippet.objects.count()
    rest = call_rest(client, key, "POST", "/snippets/", {"code": "x"})
    assert rest.status_code == 403
    assert rest.json() == {
        "detail": "This action needs the scope(s) write; the credential holds read."
    }
    assert Snippet.objects.count() == before
    assert call_rest(client, key, "GET", "/snippets/", {}).status_code == 200


def test_a_write_only_key_cannot_read_through_rest(client: Client, owner: Any) -> None:
    rest = call_rest(client, api_key(owner, "write").bearer, "GET", "/snippets/", {})
    assert rest.status_code == 403
    assert "read" in rest.json()["detail"]


def test_turning_it_off_lets_a_read_key_write(client: Client, owner: Any, settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SCOPES_BY_METHOD": None}
    rest = call_rest(client, api_key(owner, "read").bearer, "POST", "/snippets/", {"code": "x"})
    assert rest.status_code == 201
    # Security checks only: the registries' checks would build every endpoint's tools
    # against this test's URL conf.
    deploy = [m.id for m in run_checks(tags=[Tags.security], include_deployment_checks=True)]
    assert "mcp_endpoint.W031" in deploy
    assert "mcp_endpoint.W031" not in [m.id for m in run_checks(tags=[Tags.security])]


def test_the_default_has_no_deploy_warning() -> None:
    assert check_default_scopes() == []


@pytest.mark.parametrize("value", ["read", {"GET": "read"}, {"GET": [1]}, ["GET"], {1: ["read"]}])
def test_e030_a_mapping_that_is_not_one(settings: Any, value: Any) -> None:
    settings.MCP_ENDPOINT = {"SCOPES_BY_METHOD": value}
    found = [m for m in check_settings() if m.id == "mcp_endpoint.E030"]
    assert len(found) == 1 and found[0].hint


@pytest.mark.parametrize("value", [None, DEFAULT, {"*": []}])
def test_e030_good_mappings(settings: Any, value: Any) -> None:
    settings.MCP_ENDPOINT = {"SCOPES_BY_METHOD": value}
    assert [m for m in check_settings() if m.id == "mcp_endpoint.E030"] == []


def test_without_the_toolkit_or_a_default_policy_a_key_has_no_scopes_to_hold(
    settings: Any,
) -> None:
    with modify_settings(INSTALLED_APPS={"remove": ["oauth2_provider"]}):
        assert known_scopes() == {name: DEFAULT_DESCRIPTIONS[name] for name in ("read", "write")}
        settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SCOPES_BY_METHOD": None}
        assert known_scopes() == {}
