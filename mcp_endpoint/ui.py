"""MCP Apps (the ``io.modelcontextprotocol/ui`` extension): a tool's result as a page.

An app is an HTML page at a ``ui://`` URI, served with ``resources/read`` as
``text/html;profile=mcp-app`` with its content security policy and rendering preferences
in ``_meta.ui``. A tool points at it with ``_meta.ui.resourceUri``; a host that renders
apps shows the tool's result in the page, in a sandboxed frame, and the page calls tools
back through the host (``tools/call``), with the same credential and permissions as any
call::

    site.app(
        "ui://tracker/task-board",
        template_name="tracker/task_board.html",
        tools=["list_tasks", "overdue_tasks"],
        name="Task board",
    )

A host that does not render apps sees an ordinary tool and its text result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from django.core.checks import CheckMessage, Error
from django.template.loader import render_to_string

from mcp_endpoint.protocol.content import ResourceContents
from mcp_endpoint.resources import Resource, ResourceRegistry

if TYPE_CHECKING:
    from mcp_endpoint.tools import ToolRegistry

EXTENSION = "io.modelcontextprotocol/ui"
MIME_TYPE = "text/html;profile=mcp-app"
SCHEME = "ui://"
# The keys of _meta.ui.csp: origins the page may reach (connect-src), load from
# (img/script/style/font/media-src), frame (frame-src) and use as its base (base-uri).
CSP_KEYS = frozenset({"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"})
VISIBILITY = frozenset({"model", "app"})


class App(Resource):
    """One app: its page (text, or a template rendered once) and what it may reach."""

    def __init__(
        self,
        uri: str,
        *,
        html: str | None = None,
        template_name: str | None = None,
        name: str | None = None,
        description: str | None = None,
        csp: Mapping[str, Iterable[str]] | None = None,
        prefers_border: bool | None = None,
        domain: str | None = None,
        tools: Iterable[str] = (),
        app_only_tools: Iterable[str] = (),
        scopes: Iterable[str] = (),
    ) -> None:
        self.html = html
        self.template_name = template_name
        self._page: str | None = None
        super().__init__(
            self.page,
            uri,
            name=name or uri.removeprefix(SCHEME),
            description=description or "",
            mime_type=MIME_TYPE,
            scopes=scopes,
        )
        self.csp = {k: list(v) for k, v in (csp or {}).items()}
        self.prefers_border = prefers_border
        self.domain = domain
        self.tools = list(tools)
        self.app_only_tools = list(app_only_tools)

    def page(self) -> str:
        if self._page is None:
            if self.template_name:
                self._page = render_to_string(self.template_name, {"app": self})
            else:
                self._page = self.html or ""
        return self._page

    def ui_meta(self) -> dict[str, Any]:
        """The resource's ``_meta.ui``: its policy and how it would like to be shown."""
        meta: dict[str, Any] = {"csp": {k: v for k, v in self.csp.items() if v}}
        if self.prefers_border is not None:
            meta["prefersBorder"] = self.prefers_border
        if self.domain:
            meta["domain"] = self.domain
        return meta

    def describe(self) -> dict[str, Any]:
        body = super().describe()
        body["_meta"] = {"ui": self.ui_meta()}
        return body

    def read(self, uri: str, variables: dict[str, str], context: Any) -> list[ResourceContents]:
        return [
            ResourceContents(
                uri=uri, text=self.page(), mime_type=MIME_TYPE, meta={"ui": self.ui_meta()}
            )
        ]

    def tool_meta(self, tool_name: str) -> dict[str, Any]:
        """The ``_meta`` of a tool that shows its result in this app."""
        ui: dict[str, Any] = {"resourceUri": self.uri}
        if tool_name in self.app_only_tools:
            # Called by the page only (a refresh, a button), never offered to the model.
            ui["visibility"] = ["app"]
        return {"ui": ui}


def attach(endpoint: AppHost, app: App) -> App:
    """Register ``app`` and point its tools at it (those registered by now; :func:`check`
    reports a name that is none)."""
    endpoint.resources.register(app)
    for name in [*app.tools, *app.app_only_tools]:
        tool = endpoint.tools.get(name)
        if tool is not None:
            tool.meta = {**(tool.meta or {}), **app.tool_meta(name)}
    return app


class HasResources(Protocol):
    @property
    def resources(self) -> ResourceRegistry: ...


class AppHost(HasResources, Protocol):
    """What an app is attached to: an endpoint's name, tools and resources."""

    name: str

    @property
    def tools(self) -> ToolRegistry: ...


def apps_of(endpoint: HasResources) -> list[App]:
    return [r for r in endpoint.resources.resources() if isinstance(r, App)]


def check(endpoint: AppHost) -> list[CheckMessage]:
    """E143: an app that names a tool the endpoint lacks, a URI outside ``ui://``, or a
    policy key the extension does not define."""
    messages: list[CheckMessage] = []
    for app in apps_of(endpoint):
        problems = []
        if not app.uri.startswith(SCHEME):
            problems.append(f"its URI {app.uri!r} is not a {SCHEME} URI")
        unknown = [n for n in [*app.tools, *app.app_only_tools] if n not in endpoint.tools]
        if unknown:
            problems.append(f"it names tools the endpoint lacks: {', '.join(unknown)}")
        bad_keys = sorted(set(app.csp) - CSP_KEYS)
        if bad_keys:
            problems.append(f"its csp has keys the extension does not define: {bad_keys}")
        for problem in problems:
            messages.append(
                Error(
                    f"The app {app.uri} on endpoint {endpoint.name!r} cannot be served: {problem}.",
                    hint="Register the tools before the app, use a ui:// URI, and give csp "
                    f"only {', '.join(sorted(CSP_KEYS))}.",
                    obj=endpoint,
                    id="mcp_endpoint.E143",
                )
            )
    return messages
