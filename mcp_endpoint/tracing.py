"""OpenTelemetry spans and metrics for MCP messages and tool calls, when it is installed.

Named and attributed by the OpenTelemetry semantic conventions for MCP and GenAI:

- one ``SERVER`` span per message, ``{mcp.method.name} {target}`` (``tools/call
  list_tasks``, ``prompts/get triage``, ``initialize``), with ``mcp.method.name``,
  ``jsonrpc.request.id``, ``mcp.session.id``, ``mcp.protocol.version``,
  ``gen_ai.tool.name`` / ``gen_ai.prompt.name`` / ``mcp.resource.uri`` where they apply,
  and ``error.type`` (the JSON-RPC error code, or ``tool_error`` for an ``isError`` result);
- one ``INTERNAL`` span per tool run, ``execute_tool {gen_ai.tool.name}`` (with
  ``gen_ai.operation.name``, ``gen_ai.tool.description`` and ``error.type``), current while the
  tool runs, so that the viewset's own spans and any SQL instrumentation nest under it;
- the ``mcp.server.operation.duration`` histogram, in seconds.

A message's span is a child of the client's span from ``params._meta`` (W3C trace context,
``traceparent``/``tracestate``/``baggage``, read with the configured propagators), linked
to the span current in the process (an HTTP server span, as
``opentelemetry-instrumentation-django`` opens one); without trace context in ``_meta``, it
is a child of that current span, or else of the request's ``traceparent`` header.

A tool run as a task runs later, on a task worker: the asynchronous case of the messaging
conventions. The task keeps the trace context current when it is created (the ``tools/call``
message's span, injected with the configured propagators: :func:`task_context`), and the
worker's ``execute_tool`` span is a child of it, and links to it (:func:`task_tool`).

Only ``opentelemetry-api`` is needed (``pip install mcp-endpoint[otel]``); where it is not
installed nothing here imports it and every hook just calls through. The SDK, exporters and
sampling are the host's to configure (docs/operations.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any, TypeVar

from mcp_endpoint.calllog import Outcome, client_address
from mcp_endpoint.protocol.mrtr import InputRequired
from mcp_endpoint.protocol.request_context import MODERN, RequestContext
from mcp_endpoint.protocol.server import METHODS
from mcp_endpoint.protocol.versions import META_PROTOCOL_VERSION

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, propagate, trace
except ImportError:  # the optional "otel" extra is not installed
    trace = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from mcp_endpoint.tools import Tool, ToolResult

T = TypeVar("T")

INSTRUMENTATION = "mcp_endpoint"
# The semantic conventions' advice for MCP operation durations, in seconds.
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
EXECUTE_TOOL = "execute_tool"
# A method nobody defined stays out of span names and metric attributes, which a client
# could otherwise fill with names of its own.
OTHER = "_OTHER"
NOTIFICATIONS = frozenset(
    {
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/message",
        "notifications/roots/list_changed",
        "notifications/tasks/status",
    }
)
KNOWN_METHODS = frozenset(METHODS) | NOTIFICATIONS
RESOURCE_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
# Metric attributes: the span's low-cardinality ones (no ids, no URIs).
METRIC_ATTRIBUTES = (
    "mcp.method.name",
    "error.type",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "rpc.response.status_code",
    "mcp.protocol.version",
    "network.protocol.name",
    "network.transport",
)

if trace is not None:
    try:
        VERSION = metadata.version("mcp-endpoint")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        VERSION = ""
    tracer = trace.get_tracer(INSTRUMENTATION, VERSION)
    # The proxy instrument records into whatever meter provider the host sets, even later.
    duration = metrics.get_meter(INSTRUMENTATION, VERSION).create_histogram(
        "mcp.server.operation.duration",
        unit="s",
        description="MCP request or notification duration as observed on the receiver "
        "from the time it was received until the result or ack is sent.",
        explicit_bucket_boundaries_advisory=list(DURATION_BUCKETS),
    )


def enabled() -> bool:
    """Whether ``opentelemetry-api`` is installed, and so whether anything is traced."""
    return trace is not None


def recording() -> bool:
    """Whether a span or a measurement made now reaches anything: False while the host has
    set neither a tracer provider nor a meter provider (the API's stand-ins are in place),
    so that a host with the API but no SDK pays nothing for spans no one records (about
    2 % of a list call). Asked on every message: a provider set later is honoured from the
    next message on."""
    if trace is None:
        return False
    return not (unset_tracer_provider(trace.get_tracer_provider()) and unset_meter_provider())


def unset_tracer_provider(provider: Any) -> bool:
    return isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def unset_meter_provider() -> bool:
    """Whether the global meter provider is still the API's stand-in (or its no-op one).

    The stand-in's class is private to ``opentelemetry-api``
    (``opentelemetry.metrics._internal._ProxyMeterProvider``): this is the one place that
    names it, and a test fails the day it moves. Where it cannot be found, every message
    is measured, as before this check existed.
    """
    provider = metrics.get_meter_provider()
    if isinstance(provider, metrics.NoOpMeterProvider):
        return True
    return PROXY_METER_PROVIDER is not None and isinstance(provider, PROXY_METER_PROVIDER)


PROXY_METER_PROVIDER: Any = None
if trace is not None:
    try:
        from opentelemetry.metrics._internal import _ProxyMeterProvider as PROXY_METER_PROVIDER
    except ImportError:  # pragma: no cover - a future API that moved it
        PROXY_METER_PROVIDER = None


def message(
    handle: Callable[[Any, RequestContext], dict[str, Any] | None],
    tools: Any,
    request: Any,
    context: RequestContext,
) -> dict[str, Any] | None:
    """``handle(request, context)`` in the message's span; ``tools`` says which tool names
    are the endpoint's own (and so may name a span)."""
    if not isinstance(request, dict) or not isinstance(request.get("method"), str):
        # Not a message with a method (a parse error, a client's answer): nothing to name.
        return handle(request, context)
    if not recording():
        return handle(request, context)
    attributes = request_attributes(request, tools, context)
    parent, links = parent_of(request, context)
    name = span_name(attributes)
    started = time.perf_counter()
    answer = None
    with tracer.start_as_current_span(
        name,
        context=parent,
        kind=trace.SpanKind.SERVER,
        links=links,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            answer = handle(request, context)
        except BaseException as exc:
            failed(span, attributes, exc)
            raise
        finally:
            # The session and the negotiated version are known once the message is handled.
            answered(span, attributes, request, context, answer)
            duration.record(
                time.perf_counter() - started,
                {key: attributes[key] for key in METRIC_ATTRIBUTES if key in attributes},
            )
    return answer


def tool(run: Callable[..., ToolResult], tool: Tool, *args: Any) -> ToolResult:
    """``run(tool, *args)`` in an ``execute_tool`` span that is current while it runs."""
    if not recording():
        return run(tool, *args)
    return traced_run(run, tool, args, [])


def task_context() -> dict[str, str]:
    """The trace context current here, as the configured propagators write it (W3C
    ``traceparent``, ``tracestate``, ``baggage`` by default): what a task keeps of the
    message that creates it. Empty without OpenTelemetry or without a current span."""
    if trace is None:
        return {}
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def task_tool(
    run: Callable[..., ToolResult], tool: Tool, kept: Any, *args: Any, updated: Any = None
) -> ToolResult:
    """``run(tool, *args)`` on a task's worker, in an ``execute_tool`` span that belongs to
    the trace of the request that created the task.

    ``kept`` is what :func:`task_context` returned then. The worker runs the call later,
    perhaps in another process, as a consumer processes a message: the span is a child of
    that creation context, so that the run is in the request's trace under its
    ``tools/call`` span, and it also links to it, as the messaging conventions ask of a
    process span for each message it handles (a backend that cuts long traces, or a
    sampler that dropped the parent, still leads from the run to the request). That
    context, and its baggage, are current while the tool runs, so that SQL and the
    viewset's spans nest under the tool's span as in a request. A span current on the
    worker (a task framework's own instrumentation) is linked, as the HTTP span is for a
    message. Kept context that is missing or malformed is ignored: the run starts a trace
    of its own (or is a child of the worker's current span).

    ``updated`` is what :func:`task_context` returned in the ``tasks/update`` that brought
    the last answer a waiting task needed: the run it started links to that message too.
    """
    if trace is None:
        return run(tool, *args)
    creation = extract(strings(kept))
    extra = [] if updated is None else [extract(strings(updated))]
    also = [span_context(found) for found in extra if found is not None]
    if creation is None:
        return traced_run(run, tool, args, [trace.Link(c) for c in also])
    created = span_context(creation)
    links = [trace.Link(created)]
    ambient = trace.get_current_span().get_span_context()
    for other in [*also, ambient]:
        if other.is_valid and all(other.span_id != link.context.span_id for link in links):
            links.append(trace.Link(other))
    token = otel_context.attach(creation)
    try:
        return traced_run(run, tool, args, links)
    finally:
        otel_context.detach(token)


def traced_run(
    run: Callable[..., ToolResult], tool: Tool, args: tuple[Any, ...], links: list[Any]
) -> ToolResult:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": EXECUTE_TOOL,
        "gen_ai.tool.name": tool.name,
    }
    if tool.description:
        attributes["gen_ai.tool.description"] = tool.description
    with tracer.start_as_current_span(
        f"{EXECUTE_TOOL} {tool.name}",
        kind=trace.SpanKind.INTERNAL,
        links=links,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            result = run(tool, *args)
        except InputRequired:
            raise  # a question for the client: the run goes on once it is answered
        except BaseException as exc:
            # A protocol error, a call abandoned, an outage: the conventions' error.type
            # (the exception's class) and an ERROR status; the message's span has the code.
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(trace.StatusCode.ERROR, str(exc) or None)
            raise
        if result.is_error:
            outcome = Outcome.of(result.structured, result.is_error)
            span.set_attribute("error.type", outcome.code)
            span.set_status(trace.StatusCode.ERROR, outcome.message or None)
        return result


def carried(work: Callable[[], T]) -> Callable[[], T]:
    """``work``, to run on another thread in the trace context current here."""
    if trace is None:
        return work
    captured = otel_context.get_current()

    def run() -> T:
        token = otel_context.attach(captured)
        try:
            return work()
        finally:
            otel_context.detach(token)

    return run


# -- attributes ----------------------------------------------------------------------------


def request_attributes(
    request: dict[str, Any], tools: Any, context: RequestContext
) -> dict[str, Any]:
    method: str = request["method"]
    params = request.get("params")
    params = params if isinstance(params, dict) else {}
    attributes: dict[str, Any] = {
        "mcp.method.name": method if method in KNOWN_METHODS else OTHER,
        "network.transport": "tcp",
        "network.protocol.name": "http",
    }
    request_id = request.get("id")
    if request_id is not None and not isinstance(request_id, bool):
        attributes["jsonrpc.request.id"] = str(request_id)
    version = request.get("jsonrpc")
    if isinstance(version, str) and version != "2.0":
        attributes["jsonrpc.protocol.version"] = version
    name = params.get("name")
    if method == "tools/call" and isinstance(name, str):
        attributes["gen_ai.operation.name"] = EXECUTE_TOOL
        attributes["gen_ai.tool.name"] = name if name in tools else OTHER
    elif method == "prompts/get" and isinstance(name, str):
        attributes["gen_ai.prompt.name"] = name[:200]
    uri = params.get("uri")
    if method in RESOURCE_METHODS and isinstance(uri, str):
        attributes["mcp.resource.uri"] = uri
    transport = context.transport
    meta = getattr(transport, "META", None)
    if isinstance(meta, Mapping):
        server_protocol = meta.get("SERVER_PROTOCOL", "")
        if isinstance(server_protocol, str) and server_protocol.startswith("HTTP/"):
            attributes["network.protocol.version"] = server_protocol[5:]
        # The client behind the proxies the host declares, as the call log has it; its
        # port only when it is the peer itself (a proxy's port says nothing of it).
        address = client_address(transport)
        if address:
            attributes["client.address"] = address
            port = meta.get("REMOTE_PORT")
            if address == meta.get("REMOTE_ADDR") and str(port).isdigit():
                attributes["client.port"] = int(str(port))
    return attributes


def span_name(attributes: Mapping[str, Any]) -> str:
    method = attributes["mcp.method.name"]
    target = attributes.get("gen_ai.tool.name") or attributes.get("gen_ai.prompt.name")
    if target and target != OTHER:
        return f"{method} {target}"
    return str(method)


def answered(
    span: Span,
    attributes: dict[str, Any],
    request: dict[str, Any],
    context: RequestContext,
    answer: dict[str, Any] | None,
) -> None:
    finished: dict[str, Any] = {}
    version = protocol_version(request, context, answer)
    if version:
        finished["mcp.protocol.version"] = version
    session = getattr(context.session, "id", None)
    if isinstance(session, str) and session:
        finished["mcp.session.id"] = session
    if isinstance(answer, dict):
        error = answer.get("error")
        result = answer.get("result")
        if isinstance(error, dict):
            code = str(error.get("code", OTHER))
            finished["error.type"] = code
            finished["rpc.response.status_code"] = code
            message = error.get("message")
            span.set_status(trace.StatusCode.ERROR, message if isinstance(message, str) else None)
        elif isinstance(result, dict) and result.get("isError") is True:
            finished["error.type"] = "tool_error"
            span.set_status(trace.StatusCode.ERROR)
    attributes.update(finished)
    span.set_attributes(finished)


def failed(span: Span, attributes: dict[str, Any], exc: BaseException) -> None:
    """An exception out of the handler: the transport answers it (503, 500), the span says
    what it was."""
    attributes["error.type"] = type(exc).__qualname__
    span.record_exception(exc)
    span.set_status(trace.StatusCode.ERROR, str(exc) or None)


def protocol_version(
    request: dict[str, Any], context: RequestContext, answer: dict[str, Any] | None
) -> str:
    params = request.get("params")
    if context.era == MODERN and isinstance(params, dict):
        meta = params.get("_meta")
        version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if isinstance(version, str):
            return version
    result = answer.get("result") if isinstance(answer, dict) else None
    if request.get("method") == "initialize" and isinstance(result, dict):
        negotiated = result.get("protocolVersion")
        if isinstance(negotiated, str):
            return negotiated
    return context.protocol_version


# -- parents -------------------------------------------------------------------------------


def parent_of(request: dict[str, Any], context: RequestContext) -> tuple[Any, list[Any]]:
    """The parent context for a message's span and the links it carries.

    The client's span from ``params._meta`` comes first, as the conventions ask: one MCP
    request may travel over several HTTP requests, and one HTTP request carry several
    messages. The span current here (the HTTP server span of a Django instrumentation), or
    else the HTTP headers' trace context, is then linked rather than parent.
    """
    ambient = trace.get_current_span().get_span_context()
    from_meta = extract(meta_of(request))
    if from_meta is not None:
        linked = ambient if ambient.is_valid else span_context(extract(headers_of(context)))
        links = [trace.Link(linked)] if linked is not None and linked.is_valid else []
        return from_meta, links
    if ambient.is_valid:
        return None, []
    return extract(headers_of(context)), []


def meta_of(request: dict[str, Any]) -> Mapping[str, Any] | None:
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return strings(meta)


def strings(carrier: Any) -> Mapping[str, str] | None:
    """The string entries of ``carrier`` (a propagator reads header values), or None when
    it is no dict."""
    if not isinstance(carrier, dict):
        return None
    return {
        key: value
        for key, value in carrier.items()
        if isinstance(key, str) and isinstance(value, str)
    }


def headers_of(context: RequestContext) -> Mapping[str, Any] | None:
    headers = getattr(context.transport, "headers", None)
    return headers if isinstance(headers, Mapping) else None


def extract(carrier: Mapping[str, Any] | None) -> Any:
    """The context the configured propagators read from ``carrier``, or None when it holds
    no valid span context (so that the span falls back rather than starting a new trace)."""
    if not carrier:
        return None
    try:
        extracted = propagate.extract(carrier)
    except (ValueError, TypeError):
        return None
    if not trace.get_current_span(extracted).get_span_context().is_valid:
        return None
    return extracted


def span_context(extracted: Any) -> Any:
    if extracted is None:
        return None
    return trace.get_current_span(extracted).get_span_context()
