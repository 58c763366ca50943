"""A URLconf for tests: the host's URLs plus an endpoint of the tests' own at ``/test-mcp``.

Tools, resources and prompts that only tests need are registered on ``test_endpoint``, so
the product's ``/mcp`` keeps only the product's. Use it with
``@pytest.mark.urls("tests.urls_testing")``. The endpoint lives for the whole test run, so
everything registered here must pass the system checks.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Annotated, Literal

from django.urls import path
from pydantic import Field
from typing_extensions import TypedDict

from mcp_endpoint.context import Context
from mcp_endpoint.endpoint import Endpoint
from mcp_endpoint.prompts import PromptArgument
from mcp_endpoint.protocol.content import (
    Audio,
    Content,
    EmbeddedResource,
    Image,
    Message,
    ResourceContents,
    ResourceLink,
    Text,
)
from mcp_endpoint.resources import ResourceNotFound
from mcp_endpoint.tools import ToolError
from project.tracker.models import Project
from project.urls import urlpatterns as host_urlpatterns

test_endpoint = Endpoint(
    "tests",
    server_name="tests",
    server_title="Test endpoint",
    instructions="Tools for the test suite.",
    instructions_template="",
)

# 1x1 transparent PNG and a 4-sample WAV header, small enough to compare byte for byte.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63000100000500010d0a2db40000000049454e44ae426082"
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00"
NAMES = ["alpha", "alpine", "beta", "gamma"]


class Echo(TypedDict):
    count: int
    name: str
    due: datetime.date
    level: str
    note: str | None
    limit: int


@test_endpoint.tool(title="Echo typed arguments", scopes=["read"])
def echo_typed(
    count: int,
    name: str,
    due: datetime.date,
    level: Literal["low", "high"] = "low",
    note: str | None = None,
    limit: Annotated[int, Field(description="At most this many", ge=1, le=50)] = 10,
) -> Echo:
    """Echo the arguments back, typed."""
    return Echo(count=count, name=name, due=due, level=level, note=note, limit=limit)


@test_endpoint.tool(scopes=["read"])
def route_by_header(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    shard: Annotated[int, Field(json_schema_extra={"x-mcp-header": "Shard"})] = 0,
    dry_run: Annotated[bool, Field(json_schema_extra={"x-mcp-header": "Dry-Run"})] = False,
) -> str:
    """Arguments a client repeats in Mcp-Param-* headers."""
    return f"region={region} shard={shard} dry_run={dry_run}"


@test_endpoint.tool(scopes=["read"])
def no_arguments() -> str:
    """A tool without arguments."""
    return "nothing needed"


@test_endpoint.tool(scopes=["read"])
def squares(upto: int) -> list[int]:
    """Squares of 1..upto: a non-object result, wrapped as {"result": [...]}."""
    return [n * n for n in range(1, upto + 1)]


@test_endpoint.tool(scopes=["read"])
def whoami(context: Context) -> str:
    """The caller's username."""
    return context.user.get_username()


@test_endpoint.tool(scopes=["write"], task_support="optional")
def name_project_then_revoke(name: str, context: Context) -> str:
    """A long-running tool that writes, then loses its credential before it ends."""
    Project.objects.create(name=name, owner=context.user)
    assert context.credential is not None
    context.credential.auth.revoke()
    return f"Named {name}"


@test_endpoint.tool(scopes=["write"], task_support="optional")
def name_project_as_task(name: str, context: Context) -> str:
    """A long-running tool that writes."""
    Project.objects.create(name=name, owner=context.user)
    return f"Named {name}"


@test_endpoint.tool(scopes=["read"], task_support="optional", annotations={"readOnlyHint": True})
def read_then_lose_read(context: Context) -> str:
    """A long-running read whose key loses the read scope before it ends."""
    assert context.credential is not None
    key = context.credential.auth
    key.scope = "write"
    key.save(update_fields=["scope"])
    return "The report nobody may read any more"


@test_endpoint.tool(scopes=["read"], task_support="optional", annotations={"readOnlyHint": True})
def read_then_deactivate(context: Context) -> str:
    """A long-running read whose user is made inactive before it ends."""
    context.user.is_active = False
    context.user.save(update_fields=["is_active"])
    return "The report of a user who left"


@test_endpoint.tool(scopes=["read"])
def refuses() -> str:
    """Always fails with a tool error."""
    raise ToolError("The moon is in the wrong phase.", code="conflict", retry_after=30)


@test_endpoint.tool(scopes=["read"])
def explodes() -> str:
    """Always fails with an unexpected exception."""
    raise RuntimeError("database password is hunter2")


@test_endpoint.tool(scopes=["write"])
def create_project(name: str, context: Context) -> dict[str, object]:
    """Create a project owned by the caller."""
    project = Project.objects.create(name=name, owner=context.user)
    return {"id": project.pk, "name": project.name}


@test_endpoint.tool(scopes=["write"])
def create_project_noted(name: str, notes: dict[str, object], context: Context) -> dict[str, int]:
    """Create a project owned by the caller; ``notes`` are free-form and not stored."""
    project = Project.objects.create(name=name, owner=context.user)
    return {"id": project.pk}


@test_endpoint.tool(scopes=["write"])
def create_then_refuse(name: str, context: Context) -> str:
    """Create a project, then fail with a tool error."""
    Project.objects.create(name=name, owner=context.user)
    raise ToolError("Changed my mind.", code="conflict")


@test_endpoint.tool(scopes=["write"])
def create_then_explode(name: str, context: Context) -> str:
    """Create a project, then fail with an exception."""
    Project.objects.create(name=name, owner=context.user)
    raise ValueError("unexpected")


@test_endpoint.tool(scopes=["read"])
def long_text(size: int, char: str = "x") -> str:
    """``char`` repeated ``size`` times."""
    return char * size


@test_endpoint.tool(scopes=["read"])
def long_data(size: int) -> dict[str, str]:
    """A structured result whose text rendering is long."""
    return {"data": "y" * size}


@test_endpoint.tool(scopes=["read"])
def picture() -> Image:
    """A PNG image."""
    return Image(PNG, "image/png")


@test_endpoint.tool(scopes=["read"])
def sound() -> Audio:
    """A WAV clip."""
    return Audio(WAV, "audio/wav")


@test_endpoint.tool(scopes=["read"])
def embedded() -> EmbeddedResource:
    """An embedded text resource."""
    return EmbeddedResource(
        ResourceContents(uri="test://static-text", text="Embedded text", mime_type="text/plain")
    )


@test_endpoint.tool(scopes=["read"])
def mixed() -> list[Content]:
    """Several content blocks in one result."""
    return [
        Text("Here is everything:"),
        Image(PNG, "image/png"),
        ResourceLink("test://static-text", "static-text", mime_type="text/plain"),
    ]


@test_endpoint.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text."""
    return "Hello from a resource."


@test_endpoint.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed PNG."""
    return PNG


@test_endpoint.resource("test://items/{kind}/{item_id}", name="item", scopes=["read"])
def item(kind: str, item_id: str, context: Context) -> dict[str, str]:
    """An item by kind and id; id 0 does not exist."""
    if item_id == "0":
        raise ResourceNotFound(item_id)
    if item_id == "bug":  # fails as a host's code can
        raise ValueError(f"invalid literal for int() with base 10: {item_id!r}")
    return {"kind": kind, "id": item_id, "reader": context.user.get_username()}


@test_endpoint.resource("test://admin-only", name="admin-only", scopes=["admin"])
def admin_only() -> str:
    """A resource no test key holds the scope for."""
    return "secret"


@test_endpoint.prompt(scopes=["read"])
def greet(name: str, tone: str = "friendly") -> str:
    """Greet someone."""
    return f"Say hello to {name} in a {tone} tone."


@test_endpoint.prompt(
    name="dialogue",
    description="A two-message conversation.",
    arguments=[PromptArgument("topic", "What to talk about")],
)
def dialogue(topic: str) -> list[Message]:
    return [
        Message(f"Tell me about {topic}."),
        Message(f"{topic.capitalize()} is a fine topic.", role="assistant"),
    ]


test_endpoint.template_prompt(
    "plan_project",
    "tracker/prompts/plan_week.txt",
    description="Plan a week in one project.",
    arguments=[PromptArgument("project", "The project's name", required=True)],
)


@test_endpoint.completer("ref/prompt", "greet", "name")
def complete_name(value: str, context: Context, arguments: Mapping[str, str]) -> list[str]:
    return [n for n in NAMES if n.startswith(value)]


@test_endpoint.completer("ref/resource", "test://items/{kind}/{item_id}", "item_id")
def complete_item_id(value: str, context: Context, arguments: Mapping[str, str]) -> list[str]:
    # More than a page of suggestions, so the answer says there are more.
    return [f"{value}{n}" for n in range(150)]


urlpatterns = [*host_urlpatterns, path("test-mcp", test_endpoint.urls)]
