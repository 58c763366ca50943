"""The host's URLs plus the benchmark-only endpoints.

- ``/bench/mcp``: 500 function tools of a realistic shape, plus the trivial ``add``, behind
  the same credential rule as the product's ``/mcp`` (an API key or an OAuth token).
- ``/bench/mcp-all``: the same tool objects, with a list page big enough for all of them, so
  one ``tools/list`` answers every descriptor.
- ``/bench/open-mcp``: only ``add``, with no credential required, to show what the key
  lookup costs a call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from django.urls import path
from pydantic import Field

from mcp_endpoint.endpoint import Endpoint
from mcp_endpoint.tools import FunctionTool
from project.urls import urlpatterns as host_urlpatterns

TOOL_COUNT = 500


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def make_tool(number: int) -> Callable[..., Any]:
    """A function shaped like a typical product tool: a few described, typed parameters."""

    def tool(
        record_id: Annotated[int, Field(description="The record's id", ge=1)],
        query: Annotated[str, Field(description="Text to search titles and bodies for")] = "",
        status: Literal["open", "in_progress", "done"] | None = None,
        limit: Annotated[int, Field(description="At most this many results", le=100)] = 20,
    ) -> dict[str, Any]:
        return {"record_id": record_id, "query": query, "status": status, "limit": limit}

    tool.__name__ = f"tool_{number:03d}"
    tool.__doc__ = (
        f"Look up records of kind {number} by id and search text, optionally filtered by "
        "status; returns the matching records, a page at a time."
    )
    return tool


# Rows 3 and 3b time the listing itself, page by page: the full list, never the two
# discovery tools that replace a list this size by default (TOOL_DISCOVERY "auto").
bench = Endpoint("bench", server_name="bench", tool_discovery="never")
for number in range(TOOL_COUNT):
    bench.add_tool(
        FunctionTool(
            make_tool(number),
            scopes=["read"],
            annotations={"readOnlyHint": True, "openWorldHint": False},
        )
    )
# A trivial tool says what it is: it reads nothing and changes nothing.
TRIVIAL = {"readOnlyHint": True, "openWorldHint": False}
bench.add_tool(FunctionTool(add, scopes=["read"], annotations=TRIVIAL))

# The same tool objects, listed in one page.
bench_all = Endpoint(
    "bench-all", server_name="bench-all", list_page_size=TOOL_COUNT + 1, tool_discovery="never"
)
for tool in bench.tools:
    bench_all.add_tool(tool)

open_bench = Endpoint("bench-open", server_name="bench-open", require_credential=False)
open_bench.add_tool(FunctionTool(add, annotations=TRIVIAL))

urlpatterns = [
    *host_urlpatterns,
    path("bench/mcp", bench.urls),
    path("bench/mcp-all", bench_all.urls),
    path("bench/open-mcp", open_bench.urls),
]
