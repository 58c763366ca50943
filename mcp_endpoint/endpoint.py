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

import contextlib
import logging
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from django.core.checks import CheckMessage
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import URLPattern, re_path
from django.utils.module_loading import import_string

from mcp_endpoint import calllog, client_logging, interfaces, outages, skills, ui
from mcp_endpoint.conf import MCPSettings, endpoint_settings
from mcp_endpoint.context import Context
from mcp_endpoint.mrtr import SignedRequestState, confirm_destructive
from mcp_endpoint.prompts import (
    FunctionPrompt,
    MissingArgument,
    Prompt,
    PromptArgument,
    PromptRegistry,
    TemplatePrompt,
)
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol import skills as skills_extension
from mcp_endpoint.protocol.content import Text, ToolResult
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.mrtr import InputRequired
from mcp_endpoint.protocol.server import RequestContext, Server
from mcp_endpoint.protocol.tasks import FORBIDDEN, REQUIRED, TaskEngine
from mcp_endpoint.protocol.tool_error import OUTCOME_UNKNOWN
from mcp_endpoint.resources import (
    VARIABLE,
    Resource,
    ResourceNotFound,
    ResourceRegistry,
    ResourceTemplate,
    UriMapper,
)
from mcp_endpoint.skills import DirectorySkill, Skill, SkillRegistry
from mcp_endpoint.tools import (
    CallAbandoned,
    FunctionTool,
    Tool,
    ToolError,
    ToolRegistry,
    as_result,
    check_arguments,
)
from mcp_endpoint.toolsets import (
    DISCOVERY_TOOLS,
    SEARCH_TOOLS,
    CallTool,
    SearchTools,
    Selection,
    list_bytes,
    parse_selection,
    toolsets_of,
)

if TYPE_CHECKING:
    from mcp_endpoint.authentication import Credential

logger = logging.getLogger("mcp_endpoint")

F = TypeVar("F", bound=Callable[..., Any])
Completer = Callable[[str, Context, Mapping[str, str]], Iterable[str]]

MAX_COMPLETIONS = 100

# Every endpoint made in this process, for the system checks.
endpoints: weakref.WeakSet[Endpoint] = weakref.WeakSet()

# Where register_viewset and register_router live. Resolved when called, so that this
# module never imports the DRF adapter (which imports the tools this module defines).
DRF_ADAPTER = "mcp_endpoint.rest_framework"


class Registration(Protocol):
    """Something registered in bulk (a viewset and its tools) that can say what is wrong
    with it, as a ``ModelAdmin`` does for ``AdminSite.check()``."""

    def check(self, *, database: bool = False) -> list[CheckMessage]: ...


class Endpoint:
    """An MCP server: registries of tools, resources and prompts, settings, and its URLs."""

    def __init__(self, name: str = "mcp", *, settings: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.settings: MCPSettings = endpoint_settings(settings)
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts = PromptRegistry()
        self.skills = SkillRegistry(self)
        self.completers: dict[tuple[str, str, str], Completer] = {}
        self.server = Server(self)
        self.server.state_codec = SignedRequestState(self)
        self._instructions: tuple[tuple[str, str], str] | None = None
        self.registrations: list[Registration] = []
        self._task_engine: TaskEngine | None = None
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
    ) -> Any:
        """Register a function as a tool (``@endpoint.tool`` or ``@endpoint.tool(...)``).

        ``toolset`` names the group it belongs to (``"general"`` by default), for clients
        and people who pick toolsets.

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

    # -- what the protocol layer asks ----------------------------------------------------

    def server_info(self) -> dict[str, Any]:
        info = {"name": self.settings.SERVER_NAME, "version": self.settings.SERVER_VERSION}
        if self.settings.SERVER_TITLE:
            info["title"] = self.settings.SERVER_TITLE
        return info

    def instructions(self) -> str:
        # Rendered once per value of the settings, not once per request.
        source = (self.settings.INSTRUCTIONS, self.settings.INSTRUCTIONS_TEMPLATE)
        if self._instructions is None or self._instructions[0] != source:
            text, template = source
            if not text and template:
                text = render_to_string(template, {"endpoint": self})
            self._instructions = (source, (text or "").strip())
        return self._instructions[1]

    def supported_versions(self) -> Sequence[str]:
        versions: Sequence[str] = self.settings.PROTOCOL_VERSIONS
        return versions

    def capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {
            "tools": {"listChanged": False},
            "resources": {"listChanged": False},
            "prompts": {"listChanged": False},
        }
        if self.completers:
            capabilities["completions"] = {}
        if self.settings.LOGGING:
            capabilities["logging"] = {}
        if ui.apps_of(self):
            capabilities.setdefault("extensions", {})[ui.EXTENSION] = {}
        if len(self.skills):
            extensions = capabilities.setdefault("extensions", {})
            extensions[skills_extension.EXTENSION] = dict(skills_extension.SETTINGS)
        return capabilities

    def subscriptions_available(self) -> bool:
        """Whether legacy clients may subscribe: it needs sessions, where subscriptions live."""
        return bool(self.settings.SESSIONS)

    def live_updates(self, context: RequestContext) -> bool:
        """Whether the deployment serving this request delivers resource updates to its
        client (see :mod:`mcp_endpoint.deployment`)."""
        from mcp_endpoint import deployment

        return deployment.live_updates(self, context.transport, legacy=not context.modern)

    def tasks_runnable(self) -> bool:
        """Whether a task would be run: a backend that runs tasks, with a worker seen."""
        from mcp_endpoint import deployment

        return deployment.tasks_runnable(self)

    def subscribe(self, uri: str, context: RequestContext) -> None:
        from mcp_endpoint import subscriptions

        if not self.subscriptions_available():
            raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: resources/subscribe")
        subscriptions.subscribe(self, self.resources.canonical(uri), context)

    def unsubscribe(self, uri: str, context: RequestContext) -> None:
        from mcp_endpoint import subscriptions

        if not self.subscriptions_available():
            raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: resources/unsubscribe")
        subscriptions.unsubscribe(self.resources.canonical(uri), context)

    def listen_filter(
        self, notifications: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """What a listen stream will carry: resource updates of the URIs this credential
        may read now (no list-changed notifications: the lists do not change).

        A list longer than ``LISTEN_MAX_URIS`` is refused before anything is read; the
        rest is read once per resource, however many times and ways the list names it.
        """
        requested = notifications.get("resourceSubscriptions") or []
        limit: int = self.settings.LISTEN_MAX_URIS
        if len(requested) > limit:
            raise ProtocolError(
                jsonrpc.INVALID_PARAMS,
                f"Invalid params: a listen names at most {limit} resource URIs, this one "
                f"{len(requested)}; listen on fewer, or on more streams",
                {"limit": limit},
            )
        readable = []
        for uri in dict.fromkeys(self.resources.canonical(u) for u in requested):
            if not self.scopes_allow_reading(uri, context):
                continue  # known unreadable without reading it
            try:
                self.read_resource(uri, context)
            except ProtocolError:
                continue
            readable.append(uri)
        honoured: dict[str, Any] = {}
        if readable:
            honoured["resourceSubscriptions"] = readable
        return honoured

    def scopes_allow_reading(self, uri: str, context: RequestContext) -> bool:
        """Whether ``uri`` is a resource here whose scopes the credential holds. Cheap: it
        does not read the resource, so whether its user may read it is not known."""
        found = self.resources.find(uri)
        return found is not None and self.visible(found[0].required_scopes, context)

    def page_size(self) -> int:
        size: int = self.settings.LIST_PAGE_SIZE
        return size

    def ttl_ms(self) -> int:
        ttl: int = self.settings.TTL_MS
        return ttl

    def scopes(self) -> list[str]:
        """The scopes this endpoint's tools use, for the 401 challenge and metadata."""
        if self.settings.SCOPES is not None:
            return list(self.settings.SCOPES)
        found: set[str] = set()
        for tool in self.tools:
            found |= tool.required_scopes
        return sorted(found)

    def visible(self, required: frozenset[str], context: RequestContext) -> bool:
        credential: Credential | None = context.credential
        return credential is None or credential.allows(required)

    # -- what a connection is served (mcp_endpoint.toolsets) ----------------------------

    def toolsets(self) -> dict[str, int]:
        """Every toolset of this endpoint's tools and how many each holds, in order."""
        return toolsets_of(self.tools)

    def select(self, toolsets: str | None, read_only: str | None) -> Selection:
        """A client's choice of toolsets and read-only mode, from the text it sent in the
        URL or headers; :class:`~mcp_endpoint.toolsets.SelectionError` when it is
        malformed or names a toolset this endpoint does not have."""
        return parse_selection(toolsets, read_only, self.toolsets())

    def selection(self, context: RequestContext) -> Selection:
        """What this connection is served: the endpoint's own choice, narrowed by the
        client's."""
        configured = self.settings.TOOLSETS
        own = Selection(
            frozenset(configured) if configured is not None else None,
            bool(self.settings.READ_ONLY),
        )
        chosen = context.selection
        return own.narrowed(chosen) if isinstance(chosen, Selection) else own

    def served_tools(self, context: RequestContext) -> list[Tool]:
        """The tools this credential may call on this connection, in registration order."""
        selection = self.selection(context)
        show_all = self.settings.SHOW_ALL_TOOLS
        return [
            tool
            for tool in self.tools
            if tool.unavailable() is None
            and selection.serves(tool)
            and (
                show_all
                or (
                    self.visible(tool.required_scopes, context) and tool.accepts(context.credential)
                )
            )
        ]

    def list_tools(self, context: RequestContext) -> list[dict[str, Any]]:
        """The tools, or the smaller form of them a client can afford (see
        :mod:`mcp_endpoint.toolsets`)."""
        served = self.served_tools(context)
        discovery: str = self.settings.TOOL_DISCOVERY
        outputs: str = self.settings.OUTPUT_SCHEMAS
        budget: int = self.settings.TOOLS_LIST_BUDGET_BYTES
        page = self.page_size()
        if discovery != "always":
            full = [tool.describe(output=outputs != "never") for tool in served]
            if discovery == "never" or list_bytes(full, page) <= budget:
                return full
            if outputs == "auto":
                slim = [tool.describe(output=False) for tool in served]
                if list_bytes(slim, page) <= budget:
                    return slim
        return [tool.describe() for tool in self.discovery_tools(served, context)]

    def discovery_tools(self, served: list[Tool], context: RequestContext) -> list[Tool]:
        read_only = self.selection(context).read_only
        return [
            SearchTools(served, output_schemas=self.settings.OUTPUT_SCHEMAS == "always"),
            CallTool(read_only=read_only),
        ]

    def task_support(self, name: str, context: RequestContext) -> str:
        tool = self.tools.get(name)
        if tool is None or tool.unavailable() is not None:
            return FORBIDDEN
        if unrestorable(context.credential):
            # Its worker could not look the credential up again: the call runs now, or is
            # refused (run_tool) when the tool runs only as a task.
            return FORBIDDEN
        return tool.task_support

    def task_engine(self) -> TaskEngine | None:
        """The engine that runs this endpoint's long-running tools, when it has any."""
        if not any(tool.task_support != FORBIDDEN for tool in self.tools):
            return None
        if self._task_engine is None:
            from mcp_endpoint.tasks import DjangoTaskEngine

            self._task_engine = DjangoTaskEngine(self)
        return self._task_engine

    def call_tool(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        tool = self.tools.get(name)
        if tool is None and name in DISCOVERY_TOOLS and self.settings.TOOL_DISCOVERY != "never":
            return self.call_discovery_tool(name, arguments, context)
        if tool is None:
            raise ProtocolError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name}")
        selection = self.selection(context)
        if not selection.serves(tool):
            return selection.refusal(tool).to_result().to_dict()
        return self.call_served_tool(tool, arguments, context)

    def call_served_tool(
        self, tool: Tool, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        started = time.monotonic()
        result = self.run_tool(tool, arguments, context)
        self.text_budget(result)
        self.record_call(tool, arguments, context, result, (time.monotonic() - started) * 1000)
        return result.to_dict()

    def call_discovery_tool(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """``search_tools``, or ``call_tool``, which runs the tool it names exactly as a
        direct call would (the same checks, call log and result) when this credential is
        served it, and otherwise says it is unknown, as for a tool that does not exist."""
        served = self.served_tools(context)
        search, call = self.discovery_tools(served, context)
        if name == SEARCH_TOOLS:
            return self.call_served_tool(search, arguments, context)
        try:
            check_arguments(arguments, self.settings.MAX_ARGUMENT_DEPTH)
            call.validate(arguments)
        except ToolError as exc:
            return exc.to_result().to_dict()
        inner_name = arguments["name"]
        inner = next((t for t in served if t.name == inner_name), None)
        if inner is None:
            return (
                ToolError(
                    f"Unknown tool: {inner_name}; search_tools lists the tools you can call",
                    code="unknown_tool",
                )
                .to_result()
                .to_dict()
            )
        if inner.task_support == "required":
            return (
                ToolError(
                    f"The tool {inner_name} runs only as a task: call it directly",
                    code="task_required",
                )
                .to_result()
                .to_dict()
            )
        return self.call_served_tool(inner, dict(arguments.get("arguments") or {}), context)

    def record_call(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        context: RequestContext,
        result: ToolResult,
        duration_ms: float,
    ) -> None:
        """Log the call, write its row in the call log when that is on, and send
        :data:`~mcp_endpoint.signals.tool_called`.

        The call's work may be committed already: nothing here raises into the answer.
        """
        credential: Credential | None = context.credential
        outcome = calllog.Outcome.of(result.structured, result.is_error)
        label = credential.label() if credential is not None else "anonymous"
        logger.debug("tool %s by %s: %s in %.1f ms", tool.name, label, outcome.code, duration_ms)
        row = None
        if self.settings.LOG_TOOL_CALLS:
            row = calllog.record(self, tool, arguments, context, outcome, duration_ms)
        calllog.called(self, tool, arguments, context, outcome, duration_ms, row)

    def run_tool(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        context: RequestContext,
        keep: Callable[[ToolResult], bool] | None = None,
    ) -> ToolResult:
        """Check scopes and arguments, then run the tool in one transaction (if it writes).

        ``keep`` (a task worker's) is called with the result before that transaction
        commits: when it says False, nothing the tool wrote is kept, and
        :class:`CallAbandoned` is raised.

        This is the one broad exception boundary: a tool that raises anything but
        :class:`ToolError` is logged with its traceback and answered with a generic error.
        """
        credential: Credential | None = context.credential
        reason = tool.unavailable()
        if reason is not None:
            # Before the scopes and the arguments: both come from the schema it lacks.
            return ToolError(
                f"The tool {tool.name} is not available: {reason}", code="unavailable"
            ).to_result()
        if tool.task_support == REQUIRED and unrestorable(credential):
            return ToolError(
                f"The tool {tool.name} runs only as a task, and a task is run later with its "
                "credential looked up again by its user, which this credential has none of "
                "(its user is anonymous): call it with an API key or an OAuth token",
                code="task_unavailable",
            ).to_result()
        # A tool that cannot take this kind of credential at all says so itself, which
        # says more than a missing scope would.
        if (
            credential is not None
            and tool.accepts(credential)
            and not credential.allows(tool.required_scopes)
        ):
            return ToolError(
                f"This tool needs the scope(s) {' '.join(sorted(tool.required_scopes))}",
                code="insufficient_scope",
                required_scopes=sorted(tool.required_scopes),
                granted_scopes=sorted(credential.scopes or ()),
            ).to_result()
        call = Context(self, context)
        # A tool that says it only reads runs without a transaction, as a REST GET does.
        writes = not tool.read_only
        committing = False
        try:
            check_arguments(arguments, self.settings.MAX_ARGUMENT_DEPTH)
            tool.validate(arguments)
            confirm_destructive(self, tool, arguments, call)
            with transaction.atomic() if writes else contextlib.nullcontext():
                try:
                    result = as_result(tool.run(arguments, call))
                except ToolError:
                    if writes:
                        transaction.set_rollback(True)
                    raise
                if result.is_error and writes:
                    transaction.set_rollback(True)
                if keep is not None and not keep(result):
                    if writes:
                        transaction.set_rollback(True)
                    raise CallAbandoned(tool.name)
                # What fails from here on fails while the tool's writes commit.
                committing = writes
            return result
        except (InputRequired, ProtocolError, CallAbandoned):
            # Not failures of the tool: a question for the client, or a protocol error.
            raise
        except ToolError as exc:
            return exc.to_result()
        except Exception as exc:
            if committing and outages.commit_outcome_unknown(exc):
                # Not 503: a retry of a call whose commit may have gone through could do
                # its work twice. The client is told to look first.
                logger.warning("tool %s: its commit may or may not have gone through", tool.name)
                return outcome_unknown(tool).to_result()
            # Not the tool's fault, and not for the model to read: the transport answers
            # 503 with Retry-After, and the client retries the whole request.
            outages.raise_if_outage(exc)
            logger.exception("tool %s failed", tool.name, extra=client_logging.SERVER_ONLY)
            return ToolError("Internal error running tool", code="internal_error").to_result()

    def text_budget(self, result: ToolResult) -> None:
        budget: int = self.settings.TEXT_BUDGET_BYTES
        for index, block in enumerate(result.content):
            if isinstance(block, Text):
                encoded = block.text.encode("utf-8")
                if len(encoded) > budget:
                    cut = encoded[:budget].decode("utf-8", errors="ignore")
                    note = (
                        f"\n[cut at {budget} of {len(encoded)} bytes: narrow the query with "
                        "filters or search, ask for a smaller page_size, or read the next page]"
                    )
                    result.content[index] = Text(cut + note)

    def list_resources(self, context: RequestContext) -> list[dict[str, Any]]:
        return [
            r.describe()
            for r in self.resources.resources()
            if self.visible(r.required_scopes, context)
        ] + self.skills.describe_files(lambda scopes: self.visible(scopes, context))

    def list_resource_templates(self, context: RequestContext) -> list[dict[str, Any]]:
        return [
            t.describe()
            for t in self.resources.templates()
            if self.visible(t.required_scopes, context)
        ]

    def read_resource(self, uri: str, context: RequestContext) -> dict[str, Any]:
        found = self.resources.find(uri)
        try:
            skill_file = self.skills.read(uri, lambda scopes: self.visible(scopes, context))
            if skill_file is not None:
                return {"contents": [skill_file.to_dict()]}
            if found is None or not self.visible(found[0].required_scopes, context):
                raise ResourceNotFound(uri)
            resource, variables = found
            contents = resource.read(uri, variables, Context(self, context))
        except ResourceNotFound as exc:
            # The 2026-07-28 revision moved "not found" from -32002 to -32602.
            code = jsonrpc.INVALID_PARAMS if context.modern else jsonrpc.RESOURCE_NOT_FOUND
            raise ProtocolError(code, "Resource not found", {"uri": uri}) from exc
        except (InputRequired, ProtocolError):
            raise
        except Exception as exc:
            # The host's resource code, like a tool's, has a boundary of its own: its fault
            # is a JSON-RPC error with a fixed text (the traceback goes to the log), never a
            # 500 for the whole request; a database or cache outage is still a 503.
            outages.raise_if_outage(exc)
            logger.exception("resource %s failed", uri)
            raise ProtocolError(
                jsonrpc.INTERNAL_ERROR, "Internal error reading the resource", {"uri": uri}
            ) from exc
        return {"contents": [c.to_dict() for c in contents]}

    def list_prompts(self, context: RequestContext) -> list[dict[str, Any]]:
        return [p.describe() for p in self.prompts if self.visible(p.required_scopes, context)]

    def get_prompt(
        self, name: str, arguments: dict[str, str], context: RequestContext
    ) -> dict[str, Any]:
        prompt = self.prompts.get(name)
        if prompt is None or not self.visible(prompt.required_scopes, context):
            raise ProtocolError(jsonrpc.INVALID_PARAMS, f"Unknown prompt: {name}")
        try:
            return prompt.render(arguments, Context(self, context))
        except MissingArgument as exc:
            raise ProtocolError(jsonrpc.INVALID_PARAMS, str(exc)) from exc

    def list_skills(self, context: RequestContext) -> list[dict[str, Any]]:
        return skills.list_skills(self, context)

    def get_skill(self, uri: str, context: RequestContext) -> dict[str, Any]:
        return skills.get_skill(self, uri, context)

    def read_directory(self, uri: str, context: RequestContext) -> list[dict[str, Any]]:
        return skills.read_directory(self, uri, context)

    def complete(
        self,
        ref: dict[str, Any],
        argument: dict[str, Any],
        arguments: dict[str, str],
        context: RequestContext,
    ) -> dict[str, Any]:
        if not self.completers:
            raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: completion/complete")
        ref_type = ref.get("type")
        ref_name = ref.get("name") if ref_type == "ref/prompt" else ref.get("uri")
        if ref_type not in {"ref/prompt", "ref/resource"} or not isinstance(ref_name, str):
            raise ProtocolError(jsonrpc.INVALID_PARAMS, "Invalid params: unknown ref")
        # A prompt or template the credential may not see is not completed either.
        if ref_type == "ref/prompt":
            prompt = self.prompts.get(ref_name)
            if prompt is None or not self.visible(prompt.required_scopes, context):
                raise ProtocolError(jsonrpc.INVALID_PARAMS, f"Unknown prompt: {ref_name}")
        else:
            for template in self.resources.templates():
                if template.uri_template == ref_name and not self.visible(
                    template.required_scopes, context
                ):
                    raise ProtocolError(
                        jsonrpc.INVALID_PARAMS, f"Unknown resource template: {ref_name}"
                    )
        completer = self.completers.get((ref_type, ref_name, argument["name"]))
        values: list[str] = []
        if completer is not None:
            found = completer(argument["value"], Context(self, context), arguments)
            values = [str(v) for v in found]
        return {
            "completion": {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "hasMore": len(values) > MAX_COMPLETIONS,
            }
        }

    # -- serving -------------------------------------------------------------------------

    def handle(self, message: Any, context: RequestContext) -> dict[str, Any] | None:
        return self.server.handle(message, context)

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
        ]

    @property
    def urls(self) -> tuple[list[URLPattern], str, str]:
        """For ``path("mcp", endpoint.urls)``: the endpoint's URL patterns and namespace."""
        return self.get_urls(), "mcp_endpoint", self.name


def outcome_unknown(tool: Tool) -> ToolError:
    """The tool error of a call whose writes may or may not have been committed."""
    return ToolError(
        f"The outcome of this call of {tool.name} is unknown: the database connection was "
        "lost while its changes were being saved, so they may or may not have been. Check "
        "whether they were (read the object back, or list them) before you call it again.",
        code=OUTCOME_UNKNOWN,
    )


def unrestorable(credential: Credential | None) -> bool:
    """Whether a task could not run with ``credential``: its worker looks a credential up
    again by its user, and an anonymous-user credential (a product's team token) has none."""
    return bool(getattr(credential, "anonymous", False))
