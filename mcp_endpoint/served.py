"""The tools one kind of caller is served, worked out once: :class:`ServedMemo`.

``tools/list``, ``initialize`` (whose capabilities depend on whether the whole list fits),
``search_tools`` and ``call_tool`` each need the tools a connection is served: every tool
of the endpoint the caller's toolsets and read-only mode keep, that its scopes let it see
and that its kind of credential can call. On a product of a thousand tools that walk, and
the list's size summed over every descriptor, cost more than the rest of the request. What
they depend on is few things: the registry, the settings, the selection, the credential's
scopes and the class that authenticated it; so the walk is made once for each such
combination and kept until one of them changes.

Kept only while every tool is ``ready()`` (its schema built: a registration left to its
first request may still build, or fail) and ``steady`` (a tool subclass whose
``accepts()`` or ``unavailable()`` reads more is walked for each request, as before).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

from mcp_endpoint.tools import Tool

if TYPE_CHECKING:
    from mcp_endpoint.conf import MCPSettings
    from mcp_endpoint.registry import NamedRegistry
    from mcp_endpoint.toolsets import Selection

# Kinds of caller remembered per endpoint; the oldest go first past it.
MEMO_SIZE = 256
UNSET: Any = object()


class ServedList:
    """The tools one kind of caller is served, and the ``tools/list`` made of them."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = tools
        self._full: Any = UNSET
        self._search: Any = UNSET
        self._by_name: dict[str, Tool] | None = None

    def full(
        self, make: Callable[[list[Tool]], list[dict[str, Any]] | None]
    ) -> list[dict[str, Any]] | None:
        """``make(tools)`` (the whole list, or None when the discovery tools stand in),
        made once."""
        if self._full is UNSET:
            self._full = make(self.tools)
        full: list[dict[str, Any]] | None = self._full
        return full

    def named(self, name: Any) -> Tool | None:
        """The served tool called ``name``, if there is one."""
        if self._by_name is None:
            self._by_name = {tool.name: tool for tool in self.tools}
        return self._by_name.get(name) if isinstance(name, str) else None

    def search(self, make: Callable[[list[Tool]], Tool]) -> Tool:
        """``make(tools)``, the ``search_tools`` of these tools (its description counts
        them by toolset), made once."""
        if self._search is UNSET:
            self._search = make(self.tools)
        return self._search


class ServedMemo:
    """One endpoint's :class:`ServedList` for each kind of caller."""

    def __init__(self) -> None:
        self._lists: dict[Hashable, ServedList] = {}
        self._lock = threading.Lock()
        # The registry version whose tools were all ready and steady.
        self._steady_version: int | None = None

    def get(
        self,
        tools: NamedRegistry[Tool],
        settings: MCPSettings,
        selection: Selection,
        credential: Any,
        walk: Callable[[], list[Tool]],
    ) -> ServedList:
        """The list for this caller: remembered, or ``walk()``'s (kept when it may be)."""
        if not self.steady(tools):
            return ServedList(walk())
        authenticator = getattr(credential, "authenticator", None)
        key = (
            tools.version,
            settings.generation,
            selection,
            getattr(credential, "scopes", None),
            type(authenticator) if authenticator is not None else None,
        )
        found = self._lists.get(key)
        if found is None:
            found = ServedList(walk())
            with self._lock:
                if len(self._lists) >= MEMO_SIZE:
                    self._lists.pop(next(iter(self._lists)), None)
                self._lists[key] = found
        return found

    def steady(self, tools: NamedRegistry[Tool]) -> bool:
        """Whether every tool is ready and steady (known once per registry version)."""
        version = tools.version
        if self._steady_version == version:
            return True
        if not all(tool.ready() and is_steady(type(tool)) for tool in tools):
            return False
        self._steady_version = version
        return True


def walk(
    tools: Iterable[Tool],
    selection: Selection,
    credential: Any,
    visible: Callable[[frozenset[str]], bool] | None,
) -> list[Tool]:
    """The available ``tools`` that ``selection`` serves and, unless ``visible`` is None
    (every tool listed), whose scopes ``visible`` lets the caller see and that accept its
    credential; in registration order."""
    return [
        tool
        for tool in tools
        if tool.unavailable() is None
        and selection.serves(tool)
        and (visible is None or (visible(tool.required_scopes) and tool.accepts(credential)))
    ]


def is_steady(cls: type[Tool]) -> bool:
    """Whether ``cls`` is ``steady``, said by a class that defines (or inherits) its
    ``accepts()`` and ``unavailable()``: one that overrides them below the class that
    said so is not."""
    mro = cls.__mro__
    said = next(i for i, k in enumerate(mro) if "steady" in k.__dict__)
    for method in ("accepts", "unavailable"):
        if next(i for i, k in enumerate(mro) if method in k.__dict__) < said:
            return False
    return bool(cls.steady)
