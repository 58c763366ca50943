"""What the transport, the state it consults and the task worker use of an endpoint.

The view, sessions, streams, subscriptions, the event store, the call log, request
states and the task engine are handed the :class:`~mcp_endpoint.endpoint.Endpoint` they
serve; they see it through :class:`EndpointLike`, so that none of them imports the
endpoint module, which imports them (a request flows from the view into the endpoint,
never back). A task's worker runs its tool with the endpoint's ``executor``; the state
the transport consults reads resources through its ``features``. A task worker finds
the endpoint of a task by name with :func:`find`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from mcp_endpoint.conf import MCPSettings
from mcp_endpoint.protocol.content import ToolResult
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.protocol.server import Features
from mcp_endpoint.registry import NamedRegistry

# The executor's record of one call (:class:`~mcp_endpoint.calllog.CallRecord`): opaque to
# those who hand it from ``start`` to ``run`` and ``record``, so that this module, which the
# call log imports, does not import it back.
Record = TypeVar("Record")


class ExecutorLike(Protocol[Record]):
    """What runs a tool (:class:`~mcp_endpoint.executor.ToolExecutor`), as a task's worker
    runs it: the call, the text budget, the record."""

    def run(
        self,
        tool: Any,
        arguments: dict[str, Any],
        context: RequestContext,
        keep: Callable[[ToolResult], bool] | None = None,
        log: Record | None = None,
    ) -> ToolResult: ...

    def start(self, tool: Any, arguments: dict[str, Any], context: RequestContext) -> Record: ...

    def record(self, log: Record, result: ToolResult) -> None: ...

    def text_budget(self, result: ToolResult) -> None: ...


class FeaturesLike(Features, Protocol):
    """The protocol's features of an endpoint (:class:`~mcp_endpoint.features.EndpointFeatures`),
    with the cheap scope test that streams repeat while they are open."""

    def scopes_allow_reading(self, uri: str, context: RequestContext) -> bool: ...


class EndpointLike(Protocol):
    name: str
    settings: MCPSettings

    # What runs its tools (streamed calls and task workers run them here too), and what
    # answers the protocol for it.
    @property
    def executor(self) -> ExecutorLike[Any]: ...

    @property
    def features(self) -> FeaturesLike: ...

    @property
    def tools(self) -> NamedRegistry[Any]: ...

    def scopes(self) -> list[str]: ...

    def select(self, toolsets: str | None, read_only: str | None) -> Any: ...

    def handle(self, message: Any, context: RequestContext) -> dict[str, Any] | None: ...


# Every endpoint made in this process, by name (the endpoint module keeps the full set for
# the system checks).
by_name: weakref.WeakValueDictionary[str, EndpointLike] = weakref.WeakValueDictionary()


def find(name: str) -> EndpointLike | None:
    """The endpoint of that name in this process, once the URLconf has been loaded."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - importing the URLconf makes the endpoints
    return by_name.get(name)
