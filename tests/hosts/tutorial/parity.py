"""The tutorial's snippet operations, for the hosts that serve the same snippets behind
other authentication classes (:mod:`tests.hosts.jwtauth`, :mod:`tests.hosts.headerauth`,
:mod:`tests.hosts.sessionauth`), and the credential of their own that the first two issue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.hosts.parity import Credential, Operation, ProductCredential, check_parity
from tests.hosts.tutorial.models import Snippet


def snapshot() -> list[tuple[Any, ...]]:
    return list(Snippet.objects.order_by("pk").values_list("pk", "title", "code", "language"))


# (tool, method, url, arguments) with {mine} / {theirs} filled from the fixture.
OPERATIONS: list[Operation] = [
    ("list_snippets", "GET", "/snippets/", {}),
    ("list_snippets", "GET", "/snippets/", {"page": 2}),
    ("get_snippet", "GET", "/snippets/{mine}/", {"id": "{mine}"}),
    ("get_snippet", "GET", "/snippets/999999/", {"id": 999999}),
    ("highlight_snippet", "GET", "/snippets/{mine}/highlight/", {"id": "{mine}"}),
    ("create_snippet", "POST", "/snippets/", {"title": "new", "code": "x = 1"}),
    ("create_snippet", "POST", "/snippets/", {"code": "x", "language": "cobol"}),
    ("update_snippet", "PATCH", "/snippets/{mine}/", {"id": "{mine}", "title": "renamed"}),
    ("update_snippet", "PATCH", "/snippets/{theirs}/", {"id": "{theirs}", "title": "mine now"}),
    (
        "replace_snippet",
        "PUT",
        "/snippets/{mine}/",
        {"id": "{mine}", "title": "t", "code": "c", "language": "ruby"},
    ),
    ("delete_snippet", "DELETE", "/snippets/{mine}/", {"id": "{mine}"}),
    ("delete_snippet", "DELETE", "/snippets/{theirs}/", {"id": "{theirs}"}),
]


def fill(value: Any, ids: dict[str, int]) -> Any:
    if isinstance(value, str) and value.startswith("{") and value.endswith("}"):
        return ids[value[1:-1]]
    return value


# Parametrizes a test's ``operation`` with each (tool, method, url, arguments) of the
# tutorial's snippets.
each_operation = pytest.mark.parametrize(
    "operation",
    OPERATIONS,
    ids=[f"{o[0]}-{o[1]}-{i}" for i, o in enumerate(OPERATIONS)],
)


def owner_with_snippets() -> tuple[Any, dict[str, int]]:
    """Olive, with two snippets; and Sam's, another owner's: ``{"mine": pk, "theirs": pk}``."""
    users = get_user_model()._default_manager
    owner = users.create_user("olive", "olive@example.com", "pw-olive-123")  # type: ignore[attr-defined]
    stranger = users.create_user("sam", "sam@example.com", "pw-sam-123")  # type: ignore[attr-defined]
    first = Snippet.objects.create(title="hello", code="print('hello')", owner=owner)
    Snippet.objects.create(title="loop", code="for i in x: pass", owner=owner)
    theirs = Snippet.objects.create(title="ruby", code="puts 1", language="ruby", owner=stranger)
    return owner, {"mine": first.pk, "theirs": theirs.pk}


def check_operation(
    client: Client,
    credential: Credential,
    operation: Operation,
    snippets: dict[str, int],
    mcp_url: str,
) -> tuple[Any, dict[str, Any]]:
    """:func:`~tests.hosts.parity.check_parity` for one of :data:`OPERATIONS`."""
    tool, method, url, arguments = operation
    filled = {k: fill(v, snippets) for k, v in arguments.items()}
    return check_parity(
        client,
        credential,
        tool=tool,
        method=method,
        url=url.format(**snippets),
        arguments=filled,
        rest_arguments={k: v for k, v in filled.items() if k != "id"},
        snapshot=snapshot,
        mcp_url=mcp_url,
    )


def product_credential(
    kind: str,
    mint: Callable[[Any], str],
    *,
    mcp_url: str,
    view: str,
    accepts: str,
    header: str = "Authorization",
    scheme: str | None = "Bearer",
) -> ProductCredential:
    """The product's own credential of a host that serves these snippets; its view that
    takes that credential only serves them at ``/{view}-snippets/``, as the tools
    ``*_{view}_snippet(s)``."""
    return ProductCredential(
        kind=kind,
        mint=mint,
        mcp_url=mcp_url,
        tools=product_view_tools(view),
        operations=lambda pk: product_view_operations(view, pk),
        accepts=accepts,
        snapshot=snapshot,
        header=header,
        scheme=scheme,
    )


def product_view_tools(view: str) -> list[str]:
    """The tools of the view that takes the product's credential only."""
    one, many = f"{view}_snippet", f"{view}_snippets"
    return [
        f"list_{many}",
        *(f"{verb}_{one}" for verb in ("get", "create", "replace", "update", "delete")),
    ]


def product_view_operations(view: str, pk: int) -> list[Operation]:
    """Its operations on snippet ``pk``, with a bad value, and on a snippet that does not
    exist."""
    one, many, url = f"{view}_snippet", f"{view}_snippets", f"/{view}-snippets/"
    return [
        (f"list_{many}", "GET", url, {}),
        (f"get_{one}", "GET", f"{url}{pk}/", {"id": pk}),
        (f"create_{one}", "POST", url, {"code": "y = 2"}),
        (f"create_{one}", "POST", url, {"code": "y", "language": "cobol"}),
        (f"replace_{one}", "PUT", f"{url}{pk}/", {"id": pk, "code": "z"}),
        (f"update_{one}", "PATCH", f"{url}{pk}/", {"id": pk, "title": "t"}),
        (f"update_{one}", "PATCH", f"{url}999999/", {"id": 999999, "title": "t"}),
        (f"delete_{one}", "DELETE", f"{url}{pk}/", {"id": pk}),
    ]
