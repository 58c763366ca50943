"""The tools a kind of caller is served, worked out once (``mcp_endpoint.served``): the same
list for every caller of one kind until the registry, the settings or the caller's kind
changes, and worked out for each request where a tool's own code decides who may call it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mcp_endpoint.authentication import APIKeyAuthentication, Credential
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.served import is_steady
from mcp_endpoint.tools import FunctionTool, Tool
from mcp_endpoint.toolsets import Selection
from tests.hosts import host_endpoint


def caller(scopes: str | None, user: str = "alice", authenticator: Any = None) -> Credential:
    held = frozenset(scopes.split()) if scopes is not None else None
    return Credential(SimpleNamespace(username=user), object(), held, authenticator)


def names(endpoint: Any, credential: Credential | None, **context: Any) -> list[str]:
    served = endpoint.features.served_tools(RequestContext(credential=credential, **context))
    return [tool.name for tool in served]


class OnlyFor(Tool):
    """A tool whose own code decides who may call it, by the user."""

    def __init__(self, name: str, user: str) -> None:
        self.name = name
        self.user = user

    def accepts(self, credential: Any) -> bool:
        return credential is not None and credential.user.username == self.user

    def run(self, arguments: dict[str, Any], call: Any) -> Any:
        return "yes"


@pytest.fixture
def endpoint() -> Any:
    site = host_endpoint("served-test")

    @site.tool()
    def look() -> str:
        return "looked"

    @site.tool(scopes=["write"], toolset="changes")
    def change() -> str:
        return "changed"

    return site


def test_one_kind_of_caller_gets_one_list_worked_out_once(endpoint: Any) -> None:
    first = endpoint.features.served_list(RequestContext(credential=caller("read")))
    again = endpoint.features.served_list(RequestContext(credential=caller("read", user="bob")))
    assert again is first  # same scopes, same authenticator: the same list
    assert [t.name for t in first.tools] == ["look"]
    writer = endpoint.features.served_list(RequestContext(credential=caller("read write")))
    assert writer is not first and [t.name for t in writer.tools] == ["look", "change"]
    # The whole list is made once per kind of caller too.
    made: list[int] = []
    first.full(lambda tools: made.append(1) or [])
    first.full(lambda tools: made.append(1) or [])
    assert made == [1]


def test_the_caller_s_kind_is_its_scopes_its_selection_and_its_authenticator(
    endpoint: Any,
) -> None:
    assert names(endpoint, None) == ["look", "change"]  # no credential: nothing hidden
    assert names(endpoint, caller(None)) == ["look", "change"]
    assert names(endpoint, caller("read")) == ["look"]
    assert names(endpoint, caller("read write"), selection=Selection(frozenset({"changes"}))) == [
        "change"
    ]
    assert names(endpoint, caller("read write"), selection=Selection(read_only=True)) == []
    keyed = caller("read write", authenticator=APIKeyAuthentication())
    assert names(endpoint, keyed) == ["look", "change"]


def test_a_new_tool_or_a_settings_change_is_served_at_once(endpoint: Any, settings: Any) -> None:
    reader = caller("read")
    assert names(endpoint, reader) == ["look"]

    @endpoint.tool()
    def added() -> str:
        return "added"

    assert names(endpoint, reader) == ["look", "added"]
    endpoint.tools.unregister("added")
    assert names(endpoint, reader) == ["look"]
    # SHOW_ALL_TOOLS lists what a credential's scopes hide.
    endpoint.settings.overrides["SHOW_ALL_TOOLS"] = True
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT}  # a settings change reloads them
    assert names(endpoint, reader) == ["look", "change"]


def test_a_tool_that_decides_who_calls_it_is_asked_on_every_request(endpoint: Any) -> None:
    endpoint.add_tool(OnlyFor("alices_own", "alice"))
    assert not is_steady(OnlyFor)
    assert names(endpoint, caller("read")) == ["look", "alices_own"]
    assert names(endpoint, caller("read", user="bob")) == ["look"]
    assert names(endpoint, caller("read")) == ["look", "alices_own"]


def test_which_tools_are_steady() -> None:
    from mcp_endpoint.rest_framework.tool import ViewSetTool

    assert is_steady(FunctionTool) and is_steady(ViewSetTool)

    class SaysSo(OnlyFor):
        steady = True

    class NotSteady(Tool):
        steady = False

    assert is_steady(SaysSo) and not is_steady(NotSteady)


@pytest.mark.django_db
@pytest.mark.urls("tests.hosts.tutorial.urls")
def test_a_registration_not_built_yet_is_walked_until_it_is() -> None:
    from tests.hosts.tutorial.urls import endpoint as tutorial

    fresh = host_endpoint("served-unbuilt")
    for registration in tutorial.registrations:  # the host's viewsets, on an endpoint of its own
        fresh.register_viewset(registration.viewset, basename=f"served-{registration.basename}")
    assert not fresh.features._served.steady(fresh.tools)
    assert names(fresh, caller("read write"))  # builds the specs
    assert fresh.features._served.steady(fresh.tools)
