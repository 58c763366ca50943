"""The MCP method table: one parsed message and its context in, one answer dict out."""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mcp_endpoint.protocol import jsonrpc, mrtr, skills, tasks
from mcp_endpoint.protocol.jsonrpc import ProtocolError, Request
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.protocol.versions import (
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    MODERN_VERSIONS,
    negotiate_legacy,
    unsupported_version,
)

logger = logging.getLogger("mcp_endpoint.protocol")


class Features(Protocol):
    """What the server needs from the host side: the registries and the server identity."""

    def server_info(self) -> dict[str, Any]: ...

    def instructions(self) -> str: ...

    def supported_versions(self) -> Sequence[str]: ...

    def capabilities(self) -> dict[str, Any]: ...

    def page_size(self) -> int: ...

    def subscriptions_available(self) -> bool: ...

    def live_updates(self, context: RequestContext) -> bool:
        """Whether the deployment serving this request can deliver resource updates to
        its client (announced as ``resources.subscribe``)."""
        ...

    def tasks_runnable(self) -> bool:
        """Whether a task created now would be run (the tasks extension is announced)."""
        ...

    def tools_list_changes(self, context: RequestContext) -> bool:
        """Whether this client's tools list can change and it would hear so (announced as
        ``tools.listChanged``)."""
        ...

    def subscribe(self, uri: str, context: RequestContext) -> None: ...

    def unsubscribe(self, uri: str, context: RequestContext) -> None: ...

    def listen_filter(
        self, notifications: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]: ...

    def ttl_ms(self) -> int: ...

    def list_tools(self, context: RequestContext) -> list[dict[str, Any]]: ...

    def task_support(self, name: str, context: RequestContext) -> str: ...

    def task_engine(self) -> tasks.TaskEngine | None: ...

    def call_tool(
        self, name: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]: ...

    def list_resources(self, context: RequestContext) -> list[dict[str, Any]]: ...

    def list_resource_templates(self, context: RequestContext) -> list[dict[str, Any]]: ...

    def read_resource(self, uri: str, context: RequestContext) -> dict[str, Any]: ...

    def list_prompts(self, context: RequestContext) -> list[dict[str, Any]]: ...

    def get_prompt(
        self, name: str, arguments: dict[str, str], context: RequestContext
    ) -> dict[str, Any]: ...

    def complete(
        self,
        ref: dict[str, Any],
        argument: dict[str, Any],
        arguments: dict[str, str],
        context: RequestContext,
    ) -> dict[str, Any]: ...

    # The skills extension (mcp_endpoint.protocol.skills).

    def list_skills(self, context: RequestContext) -> list[dict[str, Any]]: ...

    def get_skill(self, uri: str, context: RequestContext) -> dict[str, Any]: ...

    def read_directory(self, uri: str, context: RequestContext) -> list[dict[str, Any]]: ...


Handler = Callable[["Server", dict[str, Any], RequestContext], dict[str, Any]]

# Results whose answer may be cached by a modern client (ttlMs and cacheScope).
CACHEABLE = {
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    *skills.CACHEABLE,
}
# Methods the 2026-07-28 revision removed: unknown there, whatever the legacy era says.
REMOVED_IN_MODERN = {
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
}


class Server:
    """Dispatches JSON-RPC requests to MCP method handlers, era by era."""

    def __init__(self, features: Features) -> None:
        self.features = features
        # Seals and opens the requestState of multi round-trip requests; the host sets it.
        self.state_codec: mrtr.RequestStateCodec | None = None

    # -- entry point -------------------------------------------------------------------

    def handle(self, message: Any, context: RequestContext) -> dict[str, Any] | None:
        """The answer to one message, or None for a notification (which gets none)."""
        try:
            request = jsonrpc.parse(message)
        except ProtocolError as exc:
            return jsonrpc.error(jsonrpc.request_id_of(message), exc.code, exc.message, exc.data)
        if request.is_notification:
            return None
        try:
            value = self.dispatch(request, context)
        except ProtocolError as exc:
            return jsonrpc.error(request.id, exc.code, exc.message, exc.data)
        return jsonrpc.result(request.id, value)

    def dispatch(self, request: Request, context: RequestContext) -> dict[str, Any]:
        if context.modern:
            self.read_modern_meta(request, context)
            if request.method in REMOVED_IN_MODERN:
                raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {request.method}")
        handler = METHODS.get(request.method)
        if handler is None:
            raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {request.method}")
        if request.method != "tools/call" and jsonrpc.holds_forbidden_characters(request.params):
            # A tool call's arguments get the same check as a tool error the model can read.
            raise ProtocolError(
                jsonrpc.INVALID_PARAMS,
                "Invalid params: null characters and lone surrogates are not allowed",
            )
        rounds = context.modern and request.method in mrtr.INPUT_REQUIRED_METHODS
        if rounds:
            mrtr.read_round(request.method, request.params, context, self.state_codec)
        try:
            value = handler(self, request.params, context)
        except mrtr.InputRequired as exc:
            if not rounds:
                return mrtr.no_round_possible(request.method, exc)
            value = mrtr.input_required_result(
                exc, request.method, request.params, context, self.state_codec
            )
        if context.modern:
            value = self.finish_modern(request.method, value, context)
        return value

    # -- the modern revision's envelope ------------------------------------------------

    def read_modern_meta(self, request: Request, context: RequestContext) -> None:
        meta = request.params.get("_meta")
        if not isinstance(meta, dict):
            raise ProtocolError(jsonrpc.INVALID_PARAMS, "Missing params._meta")
        version = meta.get(META_PROTOCOL_VERSION)
        if not isinstance(version, str):
            raise ProtocolError(
                jsonrpc.INVALID_PARAMS, f"Missing params._meta[{META_PROTOCOL_VERSION!r}]"
            )
        supported = [v for v in self.features.supported_versions() if v in MODERN_VERSIONS]
        if version not in supported:
            raise unsupported_version(version, self.features.supported_versions())
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if not isinstance(capabilities, dict):
            raise ProtocolError(
                jsonrpc.INVALID_PARAMS,
                f"Missing params._meta[{META_CLIENT_CAPABILITIES!r}] (an object; {{}} for none)",
            )
        client_info = meta.get(META_CLIENT_INFO)
        context.protocol_version = version
        context.client_capabilities = capabilities
        context.client_info = client_info if isinstance(client_info, dict) else None
        context.meta = meta
        token = meta.get("progressToken")
        if isinstance(token, str | int) and not isinstance(token, bool):
            context.progress_token = token
        if META_LOG_LEVEL in meta:
            level = meta[META_LOG_LEVEL]
            if level not in LOG_LEVELS:
                raise ProtocolError(
                    jsonrpc.INVALID_PARAMS,
                    f"Invalid params._meta[{META_LOG_LEVEL!r}]: one of {', '.join(LOG_LEVELS)}",
                )
            context.log_level = level

    def finish_modern(
        self, method: str, value: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        value.setdefault("resultType", "complete")
        meta = value.setdefault("_meta", {})
        meta[META_SERVER_INFO] = self.features.server_info()
        if method in CACHEABLE and value["resultType"] == "complete":
            value["ttlMs"] = self.features.ttl_ms()
            # Lists and reads depend on the credential (tool visibility, per-user data).
            value["cacheScope"] = "private" if context.credential is not None else "public"
        return value

    # -- pagination --------------------------------------------------------------------

    def paginate(
        self, items: list[dict[str, Any]], key: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        size = self.features.page_size()
        start = decode_cursor(params.get("cursor"), len(items))
        page = items[start : start + size]
        body: dict[str, Any] = {key: page}
        if start + size < len(items):
            body["nextCursor"] = encode_cursor(start + size)
        return body


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode("ascii")


def decode_cursor(cursor: object, total: int) -> int:
    if cursor is None or cursor == "":
        return 0
    if not isinstance(cursor, str):
        raise ProtocolError(jsonrpc.INVALID_PARAMS, "Invalid cursor")
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        kind, _, number = text.partition(":")
        offset = int(number)
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, "Invalid cursor") from exc
    if kind != "o" or not 0 <= offset <= total:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, "Invalid cursor")
    return offset


# -- method handlers ---------------------------------------------------------------------


def _initialize(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    version = negotiate_legacy(params.get("protocolVersion"), server.features.supported_versions())
    context.protocol_version = version
    capabilities = listing_capabilities(server, context)
    if server.features.subscriptions_available() and server.features.live_updates(context):
        # Legacy only: the 2026-07-28 revision subscribes through subscriptions/listen.
        capabilities["resources"] = {**capabilities.get("resources", {}), "subscribe": True}
    body: dict[str, Any] = {
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": server.features.server_info(),
    }
    instructions = server.features.instructions()
    if instructions:
        body["instructions"] = instructions
    return body


def listing_capabilities(server: Server, context: RequestContext) -> dict[str, Any]:
    """The server's capabilities, with ``tools.listChanged`` where this client hears it."""
    capabilities = server.features.capabilities()
    if server.features.tools_list_changes(context):
        capabilities["tools"] = {**capabilities.get("tools", {}), "listChanged": True}
    return capabilities


def _ping(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    return {}


def _set_log_level(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    # Legacy only (the modern revision removed it); the level lives in the session, if any.
    if "logging" not in server.features.capabilities():
        raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: logging/setLevel")
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS,
            f'Invalid params: "level" must be one of {", ".join(LOG_LEVELS)}',
        )
    context.log_level = level
    if context.session is not None:
        context.session.set_log_level(level)
    return {}


def _discover(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    body: dict[str, Any] = {
        "supportedVersions": list(server.features.supported_versions()),
        "capabilities": listing_capabilities(server, context),
    }
    if context.modern:
        # Subscriptions to resources travel on subscriptions/listen streams in this revision;
        # announced only where this deployment can hold one and deliver to it.
        capabilities = body["capabilities"]
        if server.features.live_updates(context):
            capabilities["resources"] = {**capabilities.get("resources", {}), "subscribe": True}
        if server.features.task_engine() is not None and server.features.tasks_runnable():
            extensions = capabilities.setdefault("extensions", {})
            extensions[tasks.EXTENSION] = {}
    else:
        # The modern answer carries the identity in _meta; a legacy-shaped call gets it inline.
        body["serverInfo"] = server.features.server_info()
    instructions = server.features.instructions()
    if instructions:
        body["instructions"] = instructions
    return body


def _tools_list(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    return server.paginate(server.features.list_tools(context), "tools", params)


def _tools_call(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "name" must be a string')
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "arguments" must be an object')
    _progress_token(params, context)
    task = tasks.call_as_task(server, name, arguments, context)
    if task is not None:
        return task
    return server.features.call_tool(name, arguments, context)


def _progress_token(params: dict[str, Any], context: RequestContext) -> None:
    meta = params.get("_meta")
    if isinstance(meta, dict):
        token = meta.get("progressToken")
        if isinstance(token, str | int) and not isinstance(token, bool):
            context.progress_token = token


def _resources_list(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    return server.paginate(server.features.list_resources(context), "resources", params)


def _resource_templates_list(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    templates = server.features.list_resource_templates(context)
    return server.paginate(templates, "resourceTemplates", params)


def _resources_read(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "uri" must be a string')
    return server.features.read_resource(uri, context)


def _resource_uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "uri" must be a string')
    return uri


def _subscribe(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    server.features.subscribe(_resource_uri(params), context)
    return {}


def _unsubscribe(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    server.features.unsubscribe(_resource_uri(params), context)
    return {}


def _listen(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    """``subscriptions/listen``: which of the requested notifications will be sent.

    The transport answers with a stream that starts with the acknowledgement of this
    filter; the result itself ends the stream.
    """
    if not context.modern:
        raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, "Method not found: subscriptions/listen")
    notifications = params.get("notifications")
    if not isinstance(notifications, dict):
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS, 'Invalid params: "notifications" must be an object'
        )
    uris = notifications.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(u, str) and u for u in uris):
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS,
            'Invalid params: "resourceSubscriptions" must be a list of URIs',
        )
    return {"notifications": server.features.listen_filter(notifications, context)}


def _prompts_list(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    return server.paginate(server.features.list_prompts(context), "prompts", params)


def _prompts_get(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "name" must be a string')
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS, 'Invalid params: "arguments" must map names to strings'
        )
    return server.features.get_prompt(name, arguments, context)


def _complete(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS, 'Invalid params: "ref" and "argument" must be objects'
        )
    if not isinstance(argument.get("name"), str) or not isinstance(argument.get("value"), str):
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS, 'Invalid params: "argument" needs string "name" and "value"'
        )
    extra = params.get("context")
    arguments = extra.get("arguments") if isinstance(extra, dict) else None
    if not isinstance(arguments, dict):
        arguments = {}
    return server.features.complete(ref, argument, arguments, context)


METHODS: dict[str, Handler] = {
    "initialize": _initialize,
    "ping": _ping,
    "logging/setLevel": _set_log_level,
    "server/discover": _discover,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "resources/list": _resources_list,
    "resources/templates/list": _resource_templates_list,
    "resources/read": _resources_read,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "subscriptions/listen": _listen,
    "prompts/list": _prompts_list,
    "prompts/get": _prompts_get,
    "completion/complete": _complete,
    **tasks.METHODS,
    **skills.METHODS,
}
