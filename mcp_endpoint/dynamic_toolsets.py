"""Toolsets a model enables as it goes, and the ``notifications/tools/list_changed`` that
tells its client to fetch ``tools/list`` again.

When a connection's tools are served in the compact form (``search_tools`` and
``call_tool``, see :mod:`mcp_endpoint.toolsets`) and its client can hear that the list
changed, the list also offers ``enable_toolset``. Enabling one adds that toolset's tools,
in full, to what ``tools/list`` answers, until the list would pass
``TOOLS_LIST_BUDGET_BYTES``: then the toolsets enabled first leave it again. ``call_tool``
keeps reaching every tool, so a client that never re-lists loses nothing.

What was enabled is kept where the connection's state lives: in the legacy session when
sessions are on, else for the caller (its credential and user, as a 2026-07-28 client's
``cacheScope: "private"`` caches the list) in the endpoint's ``CACHE``, for
``SESSION_IDLE_SECONDS`` after the last change.

Where the client hears of the change, which decides whether ``tools.listChanged`` is
announced and ``enable_toolset`` offered:

- **legacy** (``initialize``): on the answer of the call that enabled the toolset, as a
  request-scoped SSE stream (the notification, then the result), when the client accepts
  ``text/event-stream`` and ``STREAMING`` is on. It needs nothing of the deployment.
- **2026-07-28**: on the caller's ``subscriptions/listen`` streams that asked for
  ``toolsListChanged``, where the deployment holds such streams and reaches every process
  with an update (:func:`mcp_endpoint.deployment.live_updates`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.core.cache import caches
from django.http import HttpRequest

from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol.tool_error import ToolError
from mcp_endpoint.subscriptions import LIST_CHANGED, changed_key, hub_for, list_changed
from mcp_endpoint.toolsets import list_bytes, toolsets_of

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.protocol.request_context import RequestContext
    from mcp_endpoint.tools import Tool


def hears_list_changes(endpoint: EndpointLike, context: RequestContext) -> bool:
    """Whether this request's client would hear that its tools list changed."""
    if not endpoint.settings.DYNAMIC_TOOLSETS:
        return False
    if context.modern:
        from mcp_endpoint import deployment

        return deployment.live_updates(endpoint, context.transport, legacy=False)
    from mcp_endpoint.streaming import accepts_event_stream

    request = context.transport
    return (
        bool(endpoint.settings.STREAMING)
        and isinstance(request, HttpRequest)
        and accepts_event_stream(request)
    )


class EnabledToolsets:
    """The toolsets enabled on one connection, oldest first."""

    def __init__(self, endpoint: EndpointLike) -> None:
        self.endpoint = endpoint
        self.cache = caches[endpoint.settings.CACHE]
        self.idle: int = endpoint.settings.SESSION_IDLE_SECONDS

    def key(self, context: RequestContext) -> str:
        return f"mcp_endpoint:toolsets:{self.endpoint.name}:{principal(context)}"

    def get(self, context: RequestContext) -> list[str]:
        session = context.session
        if session is not None:
            return list(session.toolsets)
        names = self.cache.get(self.key(context))
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def set(self, context: RequestContext, names: list[str]) -> None:
        session = context.session
        if session is not None:
            session.set_toolsets(names)
        else:
            self.cache.set(self.key(context), names, timeout=self.idle)


def enabled_tools(
    endpoint: EndpointLike, served: Sequence[Tool], context: RequestContext
) -> list[Tool]:
    """The served tools of the toolsets this connection enabled, in registration order."""
    if not hears_list_changes(endpoint, context):
        return []
    names = set(EnabledToolsets(endpoint).get(context))
    return [tool for tool in served if tool.toolset in names] if names else []


def describe(endpoint: EndpointLike, tools: Sequence[Tool]) -> list[dict[str, Any]]:
    return [tool.describe(output=endpoint.settings.OUTPUT_SCHEMAS != "never") for tool in tools]


def enable(
    endpoint: EndpointLike,
    toolset: str,
    served: Sequence[Tool],
    discovery: Sequence[dict[str, Any]],
    context: RequestContext,
) -> dict[str, Any]:
    """Enable ``toolset`` on this connection and tell its client the list changed.

    ``served`` are the tools the connection may call, ``discovery`` the descriptors of the
    discovery tools, listed whatever is enabled.
    """
    counts = toolsets_of(served)
    if toolset not in counts:
        raise ToolError(
            f"Unknown toolset: {toolset!r}; the toolsets are {', '.join(counts)}",
            code="invalid_arguments",
            fields={"toolset": ["Unknown toolset."]},
        )
    store = EnabledToolsets(endpoint)
    before = store.get(context)
    wanted = [n for n in before if n in counts and n != toolset] + [toolset]
    budget: int = endpoint.settings.TOOLS_LIST_BUDGET_BYTES
    page: int = endpoint.settings.LIST_PAGE_SIZE

    def size(names: list[str]) -> int:
        listed = describe(endpoint, [t for t in served if t.toolset in set(names)])
        return list_bytes([*discovery, *listed], page)

    if size([toolset]) > budget:
        raise ToolError(
            f"The toolset {toolset} ({counts[toolset]} tools) is over what a tool list may "
            f"hold ({budget} bytes): find its tools with search_tools and run them with "
            "call_tool",
            code="toolset_too_large",
        )
    dropped: list[str] = []
    while size(wanted) > budget:
        dropped.append(wanted.pop(0))
    if wanted != before:
        store.set(context, wanted)
        notify(endpoint, context)
    added = [t.name for t in served if t.toolset == toolset]
    return {
        "enabled": wanted,
        "tools": added,
        "dropped": dropped,
        "message": (
            f"The toolset {toolset} is enabled: its {len(added)} tools are in your tool list"
            + (f"; {', '.join(dropped)} left it to make room" if dropped else "")
            + ". call_tool runs any tool too."
        ),
    }


def notify(endpoint: EndpointLike, context: RequestContext) -> None:
    """Tell the client its tools list changed, where it hears it (see the module)."""
    if context.modern:
        hub_for(endpoint).publish(changed_key(principal(context)))
        return
    channel = context.channel
    send = getattr(channel, "notify", None)
    if callable(send):  # the call's answer already streams: the notification goes first
        send(LIST_CHANGED, {})
    else:
        context.notifications.append(list_changed())
