"""Toolsets, the read-only mode, and the compact ``tools/list`` of a large product.

Every tool belongs to a toolset (a registered viewset's, a function tool's declared one,
``"general"`` otherwise). What one connection is served is a :class:`Selection`: the
toolsets and read-only mode the endpoint serves (its ``TOOLSETS`` and ``READ_ONLY``
settings), narrowed by what the client asked for in the URL (``?toolsets=a,b&read_only=1``)
or in headers (``MCP-Toolsets``, ``MCP-Read-Only``). A tool outside it is neither listed
nor callable.

A client loads every tool it is listed. When the tools a connection is served would be
over ``TOOLS_LIST_BUDGET_BYTES`` together, the list is made smaller: first without output
schemas (``OUTPUT_SCHEMAS="auto"``), then, if still over, as two discovery tools,
:data:`SEARCH_TOOLS` (the matching tools with their input schemas) and :data:`CALL_TOOL`
(runs one of them, as a direct call would). Any operation is then two calls away.
``TOOL_DISCOVERY`` says whether that happens by size (``"auto"``), always or never.

Where the client can hear ``notifications/tools/list_changed`` (``DYNAMIC_TOOLSETS``, see
:mod:`mcp_endpoint.dynamic_toolsets`), a third discovery tool, :data:`ENABLE_TOOLSET`, adds a
toolset's tools to the list as the model goes.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.urls import URLPattern, re_path

from mcp_endpoint.conf import TOOLSET_NAME
from mcp_endpoint.protocol.jsonrpc import Encoded
from mcp_endpoint.protocol.tool_error import ToolError
from mcp_endpoint.tools import Tool

if TYPE_CHECKING:
    from mcp_endpoint.context import Context
    from mcp_endpoint.protocol.request_context import RequestContext

DEFAULT_TOOLSET = "general"
SEARCH_TOOLS = "search_tools"
CALL_TOOL = "call_tool"
ENABLE_TOOLSET = "enable_toolset"
DISCOVERY_TOOLS = (SEARCH_TOOLS, CALL_TOOL, ENABLE_TOOLSET)

# Where a client says what it wants: the endpoint's URL path (/mcp/x/a,b/readonly,
# /mcp/readonly), its query string, or headers.
PATH_TOOLSETS = "toolsets"
PATH_READ_ONLY = "readonly"
QUERY_TOOLSETS = "toolsets"
QUERY_READ_ONLY = "read_only"
HEADER_TOOLSETS = "HTTP_MCP_TOOLSETS"
HEADER_READ_ONLY = "HTTP_MCP_READ_ONLY"
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})

# What search_tools returns at most per call, and by default.
SEARCH_LIMIT = 20
SEARCH_DEFAULT = 5
# The toolsets named in search_tools' own description, at most (the rest it lists).
DESCRIBED_TOOLSETS_BYTES = 6 * 1024
# What one page of tools/list adds around its tools (the JSON-RPC envelope, the cursor).
PAGE_ENVELOPE_BYTES = 256

OUTPUT_SCHEMA_CHOICES = ("auto", "always", "never")
DISCOVERY_CHOICES = ("auto", "always", "never")


class SelectionError(ValueError):
    """A toolset selection that names nothing this endpoint serves, or is malformed."""


@dataclass(frozen=True)
class Selection:
    """The toolsets (None: all) and the read-only mode one connection is served."""

    toolsets: frozenset[str] | None = None
    read_only: bool = False

    def serves(self, tool: Tool) -> bool:
        if self.toolsets is not None and tool.toolset not in self.toolsets:
            return False
        return not self.read_only or tool.read_only

    def narrowed(self, other: Selection) -> Selection:
        """What both allow: a client narrows what the endpoint serves, never widens it."""
        if self.toolsets is None:
            toolsets = other.toolsets
        elif other.toolsets is None:
            toolsets = self.toolsets
        else:
            toolsets = self.toolsets & other.toolsets
        return Selection(toolsets, self.read_only or other.read_only)

    def refusal(self, tool: Tool) -> ToolError:
        if self.read_only and not tool.read_only:
            return ToolError(
                f"The tool {tool.name} changes data, and this connection is read-only",
                code="read_only",
            )
        return ToolError(
            f"The tool {tool.name} is in the toolset {tool.toolset!r}, which this "
            f"connection does not serve (it serves {', '.join(sorted(self.toolsets or ()))})",
            code="toolset_not_served",
        )


def parse_selection(
    toolsets: str | None, read_only: str | None, known: Collection[str]
) -> Selection:
    """A client's selection from the text of the URL's or headers' values.

    ``toolsets`` is a comma-separated list of toolset names (empty or absent: all of them);
    ``read_only`` one of ``1 true yes on`` or ``0 false no off``.
    """
    chosen: frozenset[str] | None = None
    if toolsets is not None and toolsets.strip():
        names = [n.strip() for n in toolsets.split(",") if n.strip()]
        bad = [n for n in names if not TOOLSET_NAME.match(n)]
        if bad or not names:
            raise SelectionError(
                f"Invalid toolsets: {', '.join(map(repr, bad)) or repr(toolsets)} "
                "(a comma-separated list of toolset names)"
            )
        unknown = sorted(set(names) - set(known))
        if unknown:
            raise SelectionError(
                f"Unknown toolset(s): {', '.join(unknown)}; this endpoint has "
                f"{', '.join(sorted(known)) or 'none'}"
            )
        chosen = frozenset(names)
    flag = (read_only or "").strip().lower()
    if flag not in TRUE_WORDS | FALSE_WORDS:
        raise SelectionError(
            f"Invalid read_only: {read_only!r} (one of 1, true, yes, on, 0, false, no, off)"
        )
    return Selection(chosen, flag in TRUE_WORDS)


def toolset_urls(view: Any) -> list[URLPattern]:
    """The endpoint's URLs that choose toolsets or the read-only mode by path, as GitHub's
    MCP server does: ``/x/<toolset>[,<toolset>...]``, with ``/readonly`` after it or alone.
    With or without a trailing slash, as the endpoint's own URL. (``(?:/)`` rather than a
    bare leading slash, which Django's urls.W002 takes for a mistake: the endpoint is
    included as ``path("mcp", ...)``, without one.)"""
    return [
        re_path(
            rf"^(?:/)x/(?P<{PATH_TOOLSETS}>[^/]+)(?:/(?P<{PATH_READ_ONLY}>readonly))?/?\Z",
            view,
            name="toolsets",
        ),
        re_path(rf"^(?:/)(?P<{PATH_READ_ONLY}>readonly)/?\Z", view, name="read_only"),
    ]


def path_choice(kwargs: dict[str, Any]) -> tuple[str | None, str | None]:
    """The toolsets and read-only mode a client chose in the URL's path (its kwargs)."""
    toolsets = kwargs.get(PATH_TOOLSETS)
    return toolsets, ("1" if kwargs.get(PATH_READ_ONLY) else None)


def list_bytes(descriptors: Sequence[Any], page_size: int) -> int:
    """What a client loads fetching all of these as ``tools/list`` pages, in bytes."""
    size = sum(len(descriptor_text(d).encode("utf-8")) + 1 for d in descriptors) + 1
    pages = max(1, -(-len(descriptors) // max(page_size, 1)))
    return size + pages * PAGE_ENVELOPE_BYTES


def descriptor_text(descriptor: Any) -> str:
    text = getattr(descriptor, "text", None)
    if isinstance(text, str):
        return text
    return Encoded(descriptor).text


def toolsets_of(tools: Iterable[Tool]) -> dict[str, int]:
    """Each toolset's name and how many of ``tools`` it holds, in the tools' order."""
    counts: dict[str, int] = {}
    for tool in tools:
        counts[tool.toolset] = counts.get(tool.toolset, 0) + 1
    return counts


WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("_", " "))


# A tool's words, by field (sorted, for a prefix's lookup), each with its weight: its
# name counts most, then its toolset and title, then its description.
Fields = tuple[tuple[tuple[str, ...], int], ...]


def fields_of(tool: Tool) -> Fields:
    return tuple(
        (tuple(sorted(set(words(text)))), weight)
        for text, weight in (
            (tool.name, 4),
            (tool.toolset, 3),
            (tool.title or "", 2),
            (tool.description, 1),
        )
    )


def stems(query: str) -> list[str]:
    """The words of ``query``, a plural as its singular, each once."""
    return [
        term[:-1] if len(term) > 3 and term.endswith("s") else term
        for term in dict.fromkeys(words(query))
    ]


def score(query_stems: list[str], fields: Fields) -> int:
    """How well a tool (its :func:`fields_of`) matches a query (its :func:`stems`): each
    stem counts the weight of the first field with a word that starts with it (``task``
    finds ``tasks``; a plural was made its singular)."""
    total = 0
    for stem in query_stems:
        for found, weight in fields:
            at = bisect.bisect_left(found, stem)
            if at < len(found) and found[at].startswith(stem):
                total += weight
                break
    return total


class SearchTools(Tool):
    """The discovery tool that finds tools: each with its name, description, input schema
    and annotations, so that the next call can run it (with :class:`CallTool`)."""

    name = SEARCH_TOOLS
    title = "Search tools"
    annotations = {
        "title": "Search tools",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    input_schema = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "maxLength": 200,
                "description": "Words for what you want to do, such as 'create invoice' or "
                "'list open tasks'; empty to list a toolset's tools.",
            },
            "toolset": {
                "type": "string",
                "maxLength": 64,
                "description": "Only the tools of this toolset.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": SEARCH_LIMIT,
                "description": f"Tools to return, at most (default {SEARCH_DEFAULT}).",
            },
        },
        "additionalProperties": False,
    }

    def __init__(self, tools: Sequence[Tool], *, output_schemas: bool) -> None:
        self.tools = tools
        self.output_schemas = output_schemas
        self._fields: list[Fields] | None = None
        counts = toolsets_of(tools)
        named: list[str] = []
        size = 0
        for toolset, count in counts.items():
            size += len(toolset) + 8
            if size > DESCRIBED_TOOLSETS_BYTES:
                break
            named.append(f"{toolset} ({count})")
        rest = len(counts) - len(named)
        more = f", and {rest} more (search with no query lists them)" if rest else ""
        self.description = (
            f"Find the tools of this server ({len(tools)} in all): returns each matching "
            "tool's name, description and input schema. Run one with call_tool. "
            f"Toolsets: {', '.join(named)}{more}."
        )

    def speaks(self, arguments: Any, tools: Any) -> bool:
        return False

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        query = str(arguments.get("query") or "").strip()
        toolset = arguments.get("toolset") or None
        limit = int(arguments.get("limit") or SEARCH_DEFAULT)
        counts = toolsets_of(self.tools)
        if toolset is not None and toolset not in counts:
            raise ToolError(
                f"Unknown toolset: {toolset!r}; the toolsets are {', '.join(counts)}",
                code="invalid_arguments",
                fields={"toolset": ["Unknown toolset."]},
            )
        if self._fields is None:
            # Each tool's words, split once for every search of this list.
            self._fields = [fields_of(t) for t in self.tools]
        pool = [
            (t, fields)
            for t, fields in zip(self.tools, self._fields, strict=True)
            if toolset is None or t.toolset == toolset
        ]
        if query:
            wanted = stems(query)
            scored = [(score(wanted, f), index, t) for index, (t, f) in enumerate(pool)]
            found = [t for score, _, t in sorted(scored, key=lambda s: (-s[0], s[1])) if score]
        else:
            found = [t for t, _ in pool]
        data: dict[str, Any] = {
            "tools": [self.entry(t) for t in found[:limit]],
            "total": len(found),
        }
        if not query and toolset is None:
            data["toolsets"] = [{"name": n, "tools": c} for n, c in counts.items()]
        return data

    def entry(self, tool: Tool) -> dict[str, Any]:
        entry = dict(tool.describe(output=self.output_schemas))
        entry["toolset"] = tool.toolset
        return entry


class CallTool(Tool):
    """The discovery tool that runs another tool by name. The endpoint runs that tool
    itself (its scopes, throttles, call log and result are a direct call's): this class
    only describes the call."""

    name = CALL_TOOL
    title = "Call a tool"
    input_schema = {
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "maxLength": 64,
                "description": "The tool's name, as search_tools gave it.",
            },
            "arguments": {
                "type": "object",
                "description": "The tool's arguments, as its input schema says.",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, *, read_only: bool) -> None:
        self.description = (
            "Run a tool found with search_tools, with its arguments; returns what the tool returns."
        )
        # What the tools it can run might do, at worst.
        self.annotations = {
            "title": "Call a tool",
            "readOnlyHint": read_only,
            "destructiveHint": not read_only,
            "idempotentHint": read_only,
            "openWorldHint": False,
        }

    def speaks(self, arguments: Any, tools: Any) -> bool:
        """As the tool it runs would (an unknown one answers with an error)."""
        inner = arguments.get("arguments") if isinstance(arguments, dict) else None
        name = arguments.get("name") if isinstance(arguments, dict) else None
        tool = tools.get(name) if isinstance(name, str) and name != self.name else None
        return tool is not None and tool.speaks(inner if isinstance(inner, dict) else {}, tools)

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        raise ToolError("call_tool runs through its endpoint", code="internal_error")


class EnableToolset(Tool):
    """The discovery tool that adds a toolset's tools to the connection's ``tools/list``;
    the endpoint keeps what was enabled and tells the client the list changed (see
    :mod:`mcp_endpoint.dynamic_toolsets`)."""

    name = ENABLE_TOOLSET
    title = "Enable a toolset"
    # It changes what the connection is listed, never the product's data.
    annotations = {
        "title": "Enable a toolset",
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    input_schema = {
        "type": "object",
        "properties": {
            "toolset": {
                "type": "string",
                "maxLength": 64,
                "description": "The toolset's name, as search_tools lists it.",
            },
        },
        "required": ["toolset"],
        "additionalProperties": False,
    }

    def __init__(self, enable: Callable[[str, RequestContext], dict[str, Any]]) -> None:
        self.enable = enable
        self.description = (
            "Add a toolset's tools to your tool list, to call them directly (search_tools "
            "with no query lists the toolsets). The list keeps the toolsets enabled last "
            "that fit it; call_tool runs any tool, enabled or not."
        )

    def speaks(self, arguments: Any, tools: Any) -> bool:
        return False  # its one notification, the list that changed, goes ahead of the answer

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        return self.enable(str(arguments["toolset"]), call.request_context)
