"""Tool descriptions: the action's own words first, then the view's docstring without DRF's
stock sentences; never a filter, a search or an ordering the view does not apply; counts
that agree with their nouns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from drf_spectacular.utils import extend_schema
from rest_framework import filters, permissions, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.rest_framework.descriptions import counted, stripped
from tests.conftest import MCPClient
from tests.hosts import host_endpoints
from tests.hosts.parity import api_key
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import SnippetSerializer

pytestmark = pytest.mark.django_db

NOUNS = frozenset({"snippet", "snippets", "user", "users", "group", "groups"})


@pytest.mark.parametrize(
    "docstring",
    [
        # The DRF tutorial, part 6.
        """
        This viewset automatically provides `list`, `create`, `retrieve`,
        `update` and `destroy` actions.

        Additionally we also provide an extra `highlight` action.
        """,
        "This viewset automatically provides `list` and `retrieve` actions.",
        # The DRF quickstart.
        "API endpoint that allows users to be viewed or edited.",
        "API endpoint that allows groups to be viewed or edited.",
        # The DRF viewsets guide.
        "A simple ViewSet for listing or retrieving users.",
        "A viewset for viewing and editing user instances.",
        "A viewset that provides the standard actions",
        # DRF's own ModelViewSet docstring, copied into a host's base class.
        """
        A viewset that provides default `create()`, `retrieve()`, `update()`,
        `partial_update()`, `destroy()` and `list()` actions.
        """,
        "Retrieve, update or delete a snippet instance.",
        "Every snippet.",
    ],
)
def test_stock_sentences_are_left_out(docstring: str) -> None:
    assert stripped(docstring, NOUNS) == ""


@pytest.mark.parametrize(
    ("docstring", "kept"),
    [
        (
            """
            This viewset automatically provides `list`, `create`, `retrieve`,
            `update` and `destroy` actions.

            Additionally we also provide an extra `highlight` action.

            Code snippets, readable by everyone signed in,
            changed by their owners.
            """,
            "Code snippets, readable by everyone signed in, changed by their owners.",
        ),
        (
            "API endpoint that allows users to be viewed or edited. Staff see every user.",
            "Staff see every user.",
        ),
        ("List all code snippets, or create a new snippet.", None),
        ("The users, for browser sessions only.", None),
        ("Snippets, a few at a time.", None),
        ("Projects you own or are a member of.", None),
    ],
)
def test_sentences_that_say_something_are_kept(docstring: str, kept: str | None) -> None:
    assert stripped(docstring, NOUNS) == (kept or docstring)


def test_counts_agree_with_their_nouns() -> None:
    assert counted(0, "journal_entry", "journal_entries") == "0 journal entries"
    assert counted(1, "journal_entry", "journal_entries") == "1 journal entry"
    assert counted(2, "journal_entry", "journal_entries") == "2 journal entries"


# -- the hosts' tools, exactly -----------------------------------------------------------------

EXPECTED = {
    ("tutorial", "list_snippets"): (
        "List snippets, a page at a time. "
        "Code snippets, readable by everyone signed in, changed by their owners."
    ),
    ("tutorial", "highlight_snippet"): (
        "The snippet's code as an HTML page. "
        "Code snippets, readable by everyone signed in, changed by their owners."
    ),
    ("tutorial", "list_users"): "List users. The users, for browser sessions only.",
    ("tutorial", "get_user"): "Get one user by id. The users, for browser sessions only.",
    # The plain APIView's handler is its own; the generic views' are their mixins' actions,
    # and "Every snippet." says nothing a model would not know from the tool's name.
    ("apiview", "list_snippets"): "List snippets.",
    ("apiview", "create_snippet"): "Create a snippet.",
    ("apiview", "get_snippet_stats"): "How many snippets there are, by language.",
    # Verbose names, not the identifiers of the tool names; filters and ordering it has.
    ("inventory", "list_journal_entries"): (
        "List journal entries, a page at a time, with filters, in the order you ask. "
        "Journal entries: notes kept on sites, devices and device types."
    ),
    # A SearchFilter without search_fields searches nothing: not "searchable".
    ("phrasebook", "list_authors"): (
        "List authors, a page at a time, in the order you ask. "
        "The authors phrases are attributed to."
    ),
    ("paging", "list_unpaged_snippets"): "List unpaged snippets. Snippets, a few at a time.",
    # The lookup, not the URL path version in front of it.
    ("versioned", "get_snippet"): "Get one snippet by id. Snippets, by API version.",
}


def host_tool(host: str, name: str) -> Any:
    for endpoint in host_endpoints()[host]:
        tool = endpoint.tools.get(name)
        if tool is not None:
            return tool
    raise AssertionError(f"{host} has no tool {name}")


@pytest.mark.parametrize(("host", "name"), sorted(EXPECTED))
def test_the_hosts_descriptions(host: str, name: str) -> None:
    assert host_tool(host, name).description == EXPECTED[host, name]


@pytest.mark.urls("tests.hosts.tutorial.urls")
def test_tools_list_shows_them(client: Client) -> None:
    user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
    rpc = MCPClient(client, "/mcp", api_key(user, "read write").bearer)
    tools = {t["name"]: t for t in rpc.result("tools/list")["tools"]}
    assert tools["list_snippets"]["description"] == EXPECTED["tutorial", "list_snippets"]
    assert tools["delete_snippet"]["description"] == (
        "Delete a snippet. Code snippets, readable by everyone signed in, changed by their owners."
    )


def test_the_product_describes_what_its_lists_do() -> None:
    from mcp_endpoint.endpoint import endpoints as all_endpoints

    [product] = [e for e in all_endpoints if e.name == "mcp"]
    assert product.tools.get("list_tasks").description == (
        "List tasks, a page at a time, with filters, searchable, in the order you ask. "
        "Tasks in the projects you belong to."
    )


# -- what a list claims, against what its view does --------------------------------------------


class ClaimsViewSet(viewsets.ReadOnlyModelViewSet):  # type: ignore[type-arg]
    """
    This viewset automatically provides `list` and `retrieve` actions.
    """

    queryset = Snippet.objects.order_by("id")
    serializer_class = SnippetSerializer
    permission_classes = [permissions.AllowAny]
    pagination_class = None


class SearchableViewSet(ClaimsViewSet):
    filter_backends = [filters.SearchFilter, filters.OrderingFilter]
    search_fields = ["title"]


class NoFieldsViewSet(ClaimsViewSet):
    # Both backends offer their parameter, and neither does anything with it.
    filter_backends = [filters.SearchFilter, filters.OrderingFilter]
    ordering_fields: list[str] = []


class NoBackendsViewSet(ClaimsViewSet):
    filter_backends: list[Any] = []
    search_fields = ["title"]
    ordering_fields = ["title"]


class DescribedViewSet(ClaimsViewSet):
    """Snippets kept for the record."""

    filter_backends: list[Any] = []

    @extend_schema(summary="Snippets in a language", description="Newest first.")
    def list(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(description="The one snippet, whole.")
    def retrieve(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @action(detail=True)
    def lines(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        """How many lines the snippet has."""
        return Response({"lines": len(self.get_object().code.splitlines())})


@pytest.fixture
def registered() -> Iterator[Any]:
    """An endpoint of its own for one viewset: they all serve the same model."""
    made: list[Endpoint] = []

    def register(viewset: type[Any]) -> Endpoint:
        endpoint = Endpoint(f"claims-{len(made)}", server_name="claims")
        endpoint.register_viewset(viewset, basename="snippet")
        made.append(endpoint)
        return endpoint

    try:
        yield register
    finally:
        for endpoint in made:
            endpoints.discard(endpoint)


def description(endpoint: Endpoint, name: str) -> str:
    tool = endpoint.tools.get(name)
    assert tool is not None, name
    return str(tool.description)


@pytest.mark.parametrize(
    ("viewset", "expected"),
    [
        (SearchableViewSet, "List snippets, searchable, in the order you ask."),
        (NoFieldsViewSet, "List snippets."),
        (NoBackendsViewSet, "List snippets."),
    ],
)
def test_a_list_claims_only_what_its_view_does(
    registered: Any, viewset: type[Any], expected: str
) -> None:
    assert description(registered(viewset), "list_snippets") == expected


def test_extend_schema_and_docstrings_come_first(registered: Any) -> None:
    endpoint = registered(DescribedViewSet)
    assert description(endpoint, "list_snippets") == (
        "Snippets in a language. Newest first. Snippets kept for the record."
    )
    assert description(endpoint, "get_snippet") == (
        "The one snippet, whole. Snippets kept for the record."
    )
    assert description(endpoint, "lines_snippet") == (
        "How many lines the snippet has. Snippets kept for the record."
    )
