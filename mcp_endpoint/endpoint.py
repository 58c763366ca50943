"""The :class:`Endpoint`: one MCP server a host mounts at a URL, like Django's ``AdminSite``.

``mcp_endpoint.site`` is the default instance, for the product's ``/mcp``; a host can make
others (a fixture endpoint for the conformance suite, an internal endpoint with other
tools and settings) and mount each at its own URL::

    from mcp_endpoint import site

    @site.tool(scopes=["read"])
    def count_open_tasks(context: Context) -> int:
        ...

    urlpatterns = [path("mcp", site.urls)]
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from django.core.checks import CheckMessage
from django.urls import URLPattern, re_path
from django.utils.module_loading import import_string

from mcp_endpoint import interfaces, tracing, ui
from mcp_endpoint.conf import (
    PROCESS_KEYS,
    SETTINGS_BY_NAME,
    MCPSettings,
    endpoint_overrides,
    endpoint_settings,
)
from mcp_endpoint.executor import ToolExecutor
from mcp_endpoint.features import Completer, EndpointFeatures
from mcp_endpoint.mrtr import SignedRequestState
from mcp_endpoint.prompts import (
    FunctionPrompt,
    Prompt,
    PromptArgument,
    PromptRegistry,
    TemplatePrompt,
)
from mcp_endpoint.protocol.server import RequestContext, Server
from mcp_endpoint.resources import (
    VARIABLE,
    Resource,
    ResourceRegistry,
    ResourceTemplate,
    UriMapper,
)
from mcp_endpoint.skills import DirectorySkill, Skill, SkillRegistry
from mcp_endpoint.tools import (
    FunctionTool,
    Tool,
    ToolRegistry,
)
from mcp_endpoint.toolsets import (
    Selection,
    parse_selection,
    toolset_urls,
    toolsets_of,
)

if TYPE_CHECKING:
    from typing import Unpack

    from mcp_endpoint.conf import EndpointOptions

F = TypeVar("F", bound=Callable[..., Any])

# Every endpoint made in this process, for the system checks.
endpoints: weakref.WeakSet[Endpoint] = weakref.WeakSet()

# Where register_viewset and register_router live. Resolved when called, so that this
# module never imports the DRF adapter (which imports the tools this module defines).
DRF_ADAPTER = "mcp_endpoint.rest_framework"


class Registration(Protocol):
    """Something registered in bulk (a viewset and its tools) that can say what is wrong
    with it, as a ``ModelAdmin`` does for ``AdminSite.check()``."""

    def check(self, *, database: bool = False) -> list[CheckMessage]: ...


def deprecated_settings(name: str, settings: Mapping[str, Any]) -> str:
    """What the deprecation of ``Endpoint(name, settings=settings)`` says: its new spelling."""
    arguments = [
        f"{key.lower()}={value!r}"
        for key, value in settings.items()
        if key in SETTINGS_BY_NAME and key not in PROCESS_KEYS
    ]
    spelling = ", ".join([repr(name), *arguments])
    text = f"Endpoint(settings={{...}}) is deprecated: write Endpoint({spelling})."
    process = sorted(PROCESS_KEYS.intersection(settings))
    if process:
        text += f" Set {', '.join(process)} in MCP_ENDPOINT: the process reads it once."
    return text


class Endpoint:
    """An MCP server: registries of tools, resources and prompts, settings, and its URLs.

    What the protocol layer asks of it is answered by ``features``
    (:class:`~mcp_endpoint.features.EndpointFeatures`); a tool call runs in ``executor``
    (:class:`~mcp_endpoint.executor.ToolExecutor`).
    """

    def __init__(
        self,
        name: str = "mcp",
        *,
        settings: Mapping[str, Any] | None = None,
        **options: Unpack[EndpointOptions],
    ) -> None:
        """``options`` are this endpoint's own values of the ``MCP_ENDPOINT`` keys an
        endpoint may set, in lower case (``Endpoint("mcp", max_batch_size=10)``); each is
        checked here. ``settings`` (a dict of upper-case keys) is the deprecated spelling."""
        overrides = endpoint_overrides(name, options)
        if settings is not None:
            warnings.warn(deprecated_settings(name, settings), DeprecationWarning, stacklevel=2)
            overrides = {**settings, **overrides}
        self.name = name
        self.settings: MCPSettings = endpoint_settings(overrides)
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts = PromptRegistry()
        self.skills = SkillRegistry(self)
        self.completers: dict[tuple[str, str, str], Completer] = {}
        # Running a tool, and answering the protocol, are objects of their own.
        self.executor = ToolExecutor(self)
        self.features = EndpointFeatures(self)
        self.server = Server(self.features)
        self.server.state_codec = SignedRequestState(self)
        self.registrations: list[Registration] = []
        endpoints.add(self)
        interfaces.by_name.setdefault(name, self)

    def __repr__(self) -> str:
        return f"<Endpoint {self.name!r}: {len(self.tools)} tools>"

    # -- registration ------------------------------------------------------------------

    def tool(
        self,
        fn: F | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        scopes: Iterable[str] = (),
        annotations: Mapping[str, Any] | None = None,
        task_support: str = "forbidden",
        toolset: str | None = None,
        polls: bool | None = None,
    ) -> Any:
        """Register a function as a tool (``@endpoint.tool`` or ``@endpoint.tool(...)``).

        ``toolset`` names the group it belongs to (``"general"`` by default), for clients
        and people who pick toolsets.

        ``polls=True`` says the function may close its stream for the client to poll
        (``context.close_stream()``); a function that calls it itself is known to.

        ``task_support="optional"`` marks it long-running: a client that declares the tasks
        extension gets a task to poll, and the call runs on the task backend's workers;
        ``"required"`` runs it only so (see docs/tasks.md).
        """

        def decorator(func: F) -> F:
            self.add_tool(
                FunctionTool(
                    func,
                    name=name,
                    title=title,
                    description=description,
                    scopes=scopes,
                    annotations=annotations,
                    task_support=task_support,
                    toolset=toolset,
                    polls=polls,
                )
            )
            return func

        return decorator(fn) if fn is not None else decorator

    def add_tool(self, tool: Tool) -> Tool:
        return self.tools.register(tool)

    def add_registration(self, registration: Registration) -> None:
        """Keep a bulk registration, so that :meth:`check` reports its problems."""
        self.registrations.append(registration)

    def register_viewset(self, viewset: type[Any], **options: Any) -> Any:
        """Make each action of a DRF viewset a tool.

        Options: ``basename``, ``prefix``, ``include`` / ``exclude`` (action names),
        ``names``, ``titles``, ``descriptions``, ``annotations``, ``task_support`` (each a
        dict keyed by action), ``singular`` / ``plural`` (the nouns in the tool names). See
        :func:`mcp_endpoint.rest_framework.register_viewset`.
        """
        return import_string(f"{DRF_ADAPTER}.register_viewset")(self, viewset, **options)

    def register_router(self, router: Any, **options: Any) -> list[Any]:
        """Register every viewset of a DRF router, with its prefix and basename, called
        where the URL conf mounts it (an ``include()`` prefix's kwargs become parents; say
        which mount with ``parents=``). See :func:`mcp_endpoint.rest_framework.register_router`."""
        return import_string(f"{DRF_ADAPTER}.register_router")(self, router, **options)

    def register_view(self, view: type[Any], *, url_name: str, **options: Any) -> Any:
        """Make each HTTP method of a DRF ``APIView`` a tool; ``url_name`` names its path().
        See :func:`mcp_endpoint.rest_framework.register_view`."""
        return import_string(f"{DRF_ADAPTER}.register_view")(
            self, view, url_name=url_name, **options
        )

    def check(self, *, database: bool = False) -> list[CheckMessage]:
        """The problems of every bulk registration, for the system checks; with
        ``database``, those only a build that reads the database can find."""
        messages: list[CheckMessage] = []
        for registration in self.registrations:
            messages.extend(registration.check(database=database))
        return messages

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        scopes: Iterable[str] = (),
        follows: Iterable[type[Any]] | Mapping[type[Any], UriMapper | None] = (),
    ) -> Callable[[F], F]:
        """Register a function as a resource; a URI with ``{variables}`` makes a template.

        ``follows`` names the models whose saved or deleted rows change the resource: a
        list of models for a fixed URI, or a dict from model to a function of the row that
        returns the template's variables (or a list of them, or None for no URI), which
        makes the resource live for subscribed clients (see :mod:`mcp_endpoint.subscriptions`).
        """

        def decorator(func: F) -> F:
            cls = ResourceTemplate if VARIABLE.search(uri) else Resource
            resource = self.resources.register(
                cls(
                    func,
                    uri,
                    name=name,
                    title=title,
                    description=description,
                    mime_type=mime_type,
                    scopes=scopes,
                    follows=follows,
                )
            )
            if resource.follows:
                from mcp_endpoint import subscriptions

                subscriptions.follow(self, resource)
            return func

        return decorator

    def prompt(
        self,
        fn: F | None = None,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        arguments: Sequence[PromptArgument] | None = None,
        scopes: Iterable[str] = (),
    ) -> Any:
        """Register a function as a prompt; its parameters are the prompt's arguments."""

        def decorator(func: F) -> F:
            self.prompts.register(
                FunctionPrompt(
                    func,
                    name=name,
                    title=title,
                    description=description,
                    arguments=arguments,
                    scopes=scopes,
                )
            )
            return func

        return decorator(fn) if fn is not None else decorator

    def template_prompt(
        self,
        name: str,
        template_name: str,
        *,
        title: str | None = None,
        description: str = "",
        arguments: Sequence[PromptArgument] = (),
        scopes: Iterable[str] = (),
    ) -> Prompt:
        """Register a prompt rendered from a Django template."""
        return self.prompts.register(
            TemplatePrompt(
                name,
                template_name,
                title=title,
                description=description,
                arguments=arguments,
                scopes=scopes,
            )
        )

    def add_skill(self, skill: Skill) -> Skill:
        """Serve a skill (see :mod:`mcp_endpoint.skills`)."""
        if not len(self.skills):
            self.add_registration(self.skills)
        return self.skills.register(skill)

    def skill_directory(
        self, directory: Any, *, path: str | None = None, scopes: Iterable[str] = ()
    ) -> Skill:
        """Serve the skill in a folder (its ``SKILL.md`` and the files beside it)."""
        return self.add_skill(DirectorySkill(directory, path=path, scopes=scopes))

    def product_skill(self, name: str, **options: Any) -> Skill:
        """Serve a skill describing the registered viewsets' resources and how they relate.
        See :class:`mcp_endpoint.rest_framework.skill.ProductSkill`."""
        skill: Skill = import_string(f"{DRF_ADAPTER}.skill.ProductSkill")(self, name, **options)
        return self.add_skill(skill)

    def app(self, uri: str, **options: Any) -> ui.App:
        """Serve an MCP App at a ``ui://`` URI and show the results of ``tools=[...]`` in it
        (register those tools first). See :class:`mcp_endpoint.ui.App` for the options."""
        return ui.attach(self, ui.App(uri, **options))

    def completer(self, ref_type: str, ref_name: str, argument: str) -> Callable[[F], F]:
        """Register suggestions for a prompt argument or a resource-template variable.

        ``ref_type`` is ``"ref/prompt"`` (``ref_name`` the prompt's name) or
        ``"ref/resource"`` (``ref_name`` the URI template). The function gets the typed
        value, the context and the other arguments, and returns candidate strings.
        """

        def decorator(func: F) -> F:
            self.completers[(ref_type, ref_name, argument)] = func
            return func

        return decorator

    # -- what its registries say ----------------------------------------------------------

    def scopes(self) -> list[str]:
        """The scopes this endpoint's tools use, for the 401 challenge and metadata."""
        if self.settings.SCOPES is not None:
            return list(self.settings.SCOPES)
        found: set[str] = set()
        for tool in self.tools:
            found |= tool.required_scopes
        return sorted(found)

    # -- what a connection is served (mcp_endpoint.toolsets) ----------------------------

    def toolsets(self) -> dict[str, int]:
        """Every toolset of this endpoint's tools and how many each holds, in order."""
        return toolsets_of(self.tools)

    def select(self, toolsets: str | None, read_only: str | None) -> Selection:
        """A client's choice of toolsets and read-only mode, from the text it sent in the
        URL or headers; :class:`~mcp_endpoint.toolsets.SelectionError` when it is
        malformed or names a toolset this endpoint does not have."""
        # The toolsets are counted over every tool, so only when a client names some: most
        # requests name none, and each would pay for the count twice (URL and headers).
        named = toolsets is not None and bool(toolsets.strip())
        return parse_selection(toolsets, read_only, self.toolsets() if named else ())

    # -- serving -------------------------------------------------------------------------

    def handle(self, message: Any, context: RequestContext) -> dict[str, Any] | None:
        return tracing.message(self.server.handle, self.tools, message, context)

    def get_urls(self) -> list[URLPattern]:
        from mcp_endpoint.server_card import server_card_view
        from mcp_endpoint.views import MCPView

        view = MCPView.as_view(endpoint=self)
        # Both /mcp and /mcp/ answer directly: clients do not repeat a POST after a redirect.
        return [
            re_path(r"^(?:/)?\Z", view, name="endpoint"),
            # Mounted as path("mcp", ...), the slash is the pattern's own (a group, not a
            # leading "/", which Django's urls.W002 would take for a mistake).
            re_path(
                r"^(?:/)server-card\Z", server_card_view, {"endpoint": self}, name="server-card"
            ),
            *toolset_urls(view),
        ]

    @property
    def urls(self) -> tuple[list[URLPattern], str, str]:
        """For ``path("mcp", endpoint.urls)``: the endpoint's URL patterns and namespace."""
        return self.get_urls(), "mcp_endpoint", self.name
