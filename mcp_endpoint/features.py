"""The protocol's features of an endpoint: what :class:`~mcp_endpoint.protocol.server.Server`
asks of the host side (its ``Features``), answered from the endpoint's registries.

The identity and capabilities, instructions, the lists (with toolsets, scopes and the
compact discovery form), resources and their subscriptions, prompts, completions and the
task engine. A tool call is handed to the endpoint's
:class:`~mcp_endpoint.executor.ToolExecutor`, which runs it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from django.template.loader import render_to_string

from mcp_endpoint import dynamic_toolsets, outages, skills, ui
from mcp_endpoint.conf import MCPSettings
from mcp_endpoint.context import Context
from mcp_endpoint.executor import ToolExecutor, check_arguments, unrestorable
from mcp_endpoint.interfaces import EndpointLike
from mcp_endpoint.prompts import MissingArgument, PromptRegistry
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol import skills as skills_extension
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.mrtr import InputRequired
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.protocol.tasks import FORBIDDEN, TaskEngine
from mcp_endpoint.resources import ResourceNotFound, ResourceRegistry
from mcp_endpoint.served import ServedList, ServedMemo, walk
from mcp_endpoint.tools import Tool, ToolError, ToolRegistry
from mcp_endpoint.toolsets import (
    CALL_TOOL,
    DISCOVERY_TOOLS,
    CallTool,
    EnableToolset,
    SearchTools,
    Selection,
    list_bytes,
)

if TYPE_CHECKING:
    from mcp_endpoint.credential import Credential

logger = logging.getLogger("mcp_endpoint")

# Suggestions for a prompt argument or a template variable: (value, context, arguments).
Completer = Callable[[str, Context, Mapping[str, str]], Iterable[str]]


class Served(EndpointLike, Protocol):
    """The endpoint the features answer for (:class:`~mcp_endpoint.endpoint.Endpoint`):
    its registries and its executor."""

    @property
    def tools(self) -> ToolRegistry: ...

    @property
    def resources(self) -> ResourceRegistry: ...

    @property
    def prompts(self) -> PromptRegistry: ...

    @property
    def completers(self) -> dict[tuple[str, str, str], Completer]: ...

    @property
    def executor(self) -> ToolExecutor: ...

    @property
    def skills(self) -> skills.SkillRegistry: ...


MAX_COMPLETIONS = 100


class EndpointFeatures:
    """The protocol's callbacks for one endpoint, as
    :class:`~mcp_endpoint.protocol.server.Features` names them."""

    def __init__(self, endpoint: Served) -> None:
        self.endpoint = endpoint
        self._instructions: tuple[tuple[str, str], str] | None = None
        self._task_engine: TaskEngine | None = None
        self._served = ServedMemo()

    @property
    def settings(self) -> MCPSettings:
        return self.endpoint.settings

    @property
    def tools(self) -> ToolRegistry:
        return self.endpoint.tools

    @property
    def resources(self) -> ResourceRegistry:
        return self.endpoint.resources

    @property
    def prompts(self) -> PromptRegistry:
        return self.endpoint.prompts

    @property
    def completers(self) -> dict[tuple[str, str, str], Completer]:
        return self.endpoint.completers

    @property
    def executor(self) -> ToolExecutor:
        return self.endpoint.executor

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
                text = render_to_string(template, {"endpoint": self.endpoint})
            self._instructions = (source, (text or "").strip())
        return self._instructions[1]

    def supported_versions(self) -> Sequence[str]:
        versions: Sequence[str] = self.settings.PROTOCOL_VERSIONS
        return versions

    def capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {
            "tools": {"listChanged": False},  # True where tools_list_changes() says so
            "resources": {"listChanged": False},
            "prompts": {"listChanged": False},
        }
        if self.completers:
            capabilities["completions"] = {}
        if self.settings.LOGGING:
            capabilities["logging"] = {}
        if ui.apps_of(self.endpoint):
            capabilities.setdefault("extensions", {})[ui.EXTENSION] = {}
        if len(self.endpoint.skills):
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

        return deployment.live_updates(self.endpoint, context.transport, legacy=not context.modern)

    def tasks_runnable(self) -> bool:
        """Whether a task would be run: a backend that runs tasks, with a worker seen."""
        from mcp_endpoint import deployment

        return deployment.tasks_runnable(self.endpoint)

    def subscribe(self, uri: str, context: RequestContext) -> None:
        from mcp_endpoint import subscriptions

        if not self.subscriptions_available():
            raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: resources/subscribe")
        subscriptions.subscribe(self.endpoint, self.resources.canonical(uri), context)

    def unsubscribe(self, uri: str, context: RequestContext) -> None:
        from mcp_endpoint import subscriptions

        if not self.subscriptions_available():
            raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: resources/unsubscribe")
        subscriptions.unsubscribe(self.resources.canonical(uri), context)

    def listen_filter(
        self, notifications: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """What a listen stream will carry: resource updates of the URIs this credential
        may read now, and the tools list's changes where it can change
        (:meth:`tools_list_changes`; the resource and prompt lists do not).

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
        if notifications.get("toolsListChanged") is True and self.tools_list_changes(context):
            honoured["toolsListChanged"] = True
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

    def visible(self, required: frozenset[str], context: RequestContext) -> bool:
        credential: Credential | None = context.credential
        return credential is None or credential.allows(required)

    # -- what a connection is served (mcp_endpoint.toolsets) ----------------------------

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
        return self.served_list(context).tools

    def served_list(self, context: RequestContext) -> ServedList:
        """:meth:`served_tools` and the list made of them, worked out once for each kind
        of caller (:mod:`mcp_endpoint.served`)."""
        selection = self.selection(context)
        # SHOW_ALL_TOOLS: listed whatever the credential may call (each call decides).
        visible = None if self.settings.SHOW_ALL_TOOLS else self.visible_to(context)
        credential = context.credential
        return self._served.get(
            self.tools,
            self.settings,
            selection,
            credential,
            lambda: walk(self.tools, selection, credential, visible),
        )

    def list_tools(self, context: RequestContext) -> list[dict[str, Any]]:
        """The tools, or the smaller form of them a client can afford (see
        :mod:`mcp_endpoint.toolsets`), with the toolsets the connection enabled."""
        served_list = self.served_list(context)
        full = self.whole_list(served_list)
        if full is not None:
            return full
        listed = [tool.describe() for tool in self.discovery_tools(served_list, context)]
        enabled = dynamic_toolsets.enabled_tools(self.endpoint, served_list.tools, context)
        return listed + dynamic_toolsets.describe(self.endpoint, enabled)

    def tools_list_changes(self, context: RequestContext) -> bool:
        """Whether this connection's tools list can change and its client hear it
        (announced as ``tools.listChanged``): toolsets it may enable, and a way to tell it."""
        return (
            dynamic_toolsets.hears_list_changes(self.endpoint, context)
            and self.whole_list(self.served_list(context)) is None
        )

    def whole_list(self, served_list: ServedList) -> list[dict[str, Any]] | None:
        """The served tools as ``tools/list`` describes them, or None when the discovery
        tools stand in for them (:func:`full_list`), made once per served list."""
        return served_list.full(lambda tools: full_list(self.settings, tools))

    def discovery_tools(self, served_list: ServedList, context: RequestContext) -> list[Tool]:
        read_only = self.selection(context).read_only
        served = served_list.tools
        outputs = self.settings.OUTPUT_SCHEMAS == "always"
        tools: list[Tool] = [
            served_list.search(lambda tools: SearchTools(tools, output_schemas=outputs)),
            CallTool(read_only=read_only),
        ]
        if dynamic_toolsets.hears_list_changes(self.endpoint, context):
            described = [tool.describe() for tool in tools]

            def enable(toolset: str, request: RequestContext) -> dict[str, Any]:
                offered = [*described, enabler.describe()]
                return dynamic_toolsets.enable(self.endpoint, toolset, served, offered, request)

            enabler = EnableToolset(enable)
            tools.append(enabler)
        return tools

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

            self._task_engine = DjangoTaskEngine(self.endpoint)
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
        return self.executor.call(tool, arguments, context)

    def call_discovery_tool(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """``search_tools``, or ``call_tool``, which runs the tool it names exactly as a
        direct call would (the same checks, call log and result) when this credential is
        served it, and otherwise says it is unknown, as for a tool that does not exist."""
        served_list = self.served_list(context)
        offered = {tool.name: tool for tool in self.discovery_tools(served_list, context)}
        if name not in offered:
            raise ProtocolError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name}")
        if name != CALL_TOOL:
            return self.call_served_tool(offered[name], arguments, context)
        call = offered[CALL_TOOL]
        try:
            check_arguments(arguments, self.settings.MAX_ARGUMENT_DEPTH)
            call.validate(arguments)
        except ToolError as exc:
            return exc.to_result().to_dict()
        inner = served_list.named(arguments["name"])
        refusal = call_tool_refusal(arguments["name"], inner)
        if refusal is not None:
            return refusal.to_result().to_dict()
        assert inner is not None
        return self.call_served_tool(inner, dict(arguments.get("arguments") or {}), context)

    def list_resources(self, context: RequestContext) -> list[dict[str, Any]]:
        return [
            r.describe()
            for r in self.resources.resources()
            if self.visible(r.required_scopes, context)
        ] + self.endpoint.skills.describe_files(lambda scopes: self.visible(scopes, context))

    def list_resource_templates(self, context: RequestContext) -> list[dict[str, Any]]:
        return [
            t.describe()
            for t in self.resources.templates()
            if self.visible(t.required_scopes, context)
        ]

    def read_resource(self, uri: str, context: RequestContext) -> dict[str, Any]:
        found = self.resources.find(uri)
        try:
            skill_file = self.endpoint.skills.read(
                uri, lambda scopes: self.visible(scopes, context)
            )
            if skill_file is not None:
                return {"contents": [skill_file.to_dict()]}
            if found is None or not self.visible(found[0].required_scopes, context):
                raise ResourceNotFound(uri)
            resource, variables = found
            contents = resource.read(uri, variables, Context(self.endpoint, context))
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
            return prompt.render(arguments, Context(self.endpoint, context))
        except MissingArgument as exc:
            raise ProtocolError(jsonrpc.INVALID_PARAMS, str(exc)) from exc

    def list_skills(self, context: RequestContext) -> list[dict[str, Any]]:
        return skills.list_skills(self.endpoint.skills, self.visible_to(context))

    def get_skill(self, uri: str, context: RequestContext) -> dict[str, Any]:
        return skills.get_skill(self.endpoint.skills, uri, self.visible_to(context))

    def read_directory(self, uri: str, context: RequestContext) -> list[dict[str, Any]]:
        return skills.read_directory(self.endpoint.skills, uri, self.visible_to(context))

    def visible_to(self, context: RequestContext) -> Callable[[frozenset[str]], bool]:
        return lambda scopes: self.visible(scopes, context)

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
            found = completer(argument["value"], Context(self.endpoint, context), arguments)
            values = [str(v) for v in found]
        return {
            "completion": {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "hasMore": len(values) > MAX_COMPLETIONS,
            }
        }


def full_list(settings: MCPSettings, served: list[Tool]) -> list[dict[str, Any]] | None:
    """``served`` as ``tools/list`` describes them when they fit the budget (or
    ``TOOL_DISCOVERY`` says so); None when the discovery tools stand in for them."""
    discovery: str = settings.TOOL_DISCOVERY
    outputs: str = settings.OUTPUT_SCHEMAS
    budget: int = settings.TOOLS_LIST_BUDGET_BYTES
    page: int = settings.LIST_PAGE_SIZE
    if discovery == "always":
        return None
    full = [tool.describe(output=outputs != "never") for tool in served]
    if discovery == "never" or list_bytes(full, page) <= budget:
        return full
    if outputs == "auto":
        slim = [tool.describe(output=False) for tool in served]
        if list_bytes(slim, page) <= budget:
            return slim
    return None


def call_tool_refusal(name: str, inner: Tool | None) -> ToolError | None:
    """Why ``call_tool`` does not run the tool ``name`` (``inner``, when this connection
    is served it), or None."""
    if inner is None:
        return ToolError(
            f"Unknown tool: {name}; search_tools lists the tools you can call",
            code="unknown_tool",
        )
    if inner.task_support == "required":
        return ToolError(
            f"The tool {name} runs only as a task: call it directly", code="task_required"
        )
    return None
