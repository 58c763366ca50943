"""Tools: the registry, the base class, and tools made from plain Python functions."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, get_type_hints

import pydantic
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaValidationError

from mcp_endpoint.protocol.content import Content, Text, ToolResult, compact_json
from mcp_endpoint.protocol.jsonrpc import Encoded
from mcp_endpoint.protocol.tool_error import ToolError
from mcp_endpoint.registry import NamedRegistry
from mcp_endpoint.schema import portable

if TYPE_CHECKING:
    from mcp_endpoint.context import Context

logger = logging.getLogger("mcp_endpoint.tools")

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
EMPTY_INPUT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


class CallAbandoned(Exception):
    """A call whose outcome is not to be kept (its task was cancelled, or its credential
    revoked, while it ran): what it wrote is rolled back."""


class Tool:
    """One MCP tool. Subclasses set the attributes and implement :meth:`run`."""

    name: str = ""
    title: str | None = None
    description: str = ""
    input_schema: dict[str, Any] = EMPTY_INPUT
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    required_scopes: frozenset[str] = frozenset()
    # The natural group the tool belongs to (a viewset's, or one the host names): what a
    # client or a person picks to be served (see mcp_endpoint.toolsets).
    toolset: str = "general"
    # Whether the tool runs as a task (the tasks extension): "forbidden" (never), "optional"
    # (when the client declares the extension, else at once) or "required" (only so).
    task_support: str = "forbidden"
    # The tool's _meta in tools/list: an MCP App's {"ui": {"resourceUri": ...}} (mcp_endpoint.ui).
    meta: dict[str, Any] | None = None
    # Whether the tool, once ready(), stays as it is for every caller of one kind: its
    # unavailable(), toolset, read-only hint and required_scopes never change, and its
    # accepts() reads nothing of a credential but the class of its authenticator. Then the
    # tools a kind of caller is served are worked out once (mcp_endpoint.served). True of
    # Tool's own methods; a subclass that overrides accepts() or unavailable() is taken
    # not to be steady unless it says so.
    steady: bool = True
    # Which arguments the call log hides is not the tool's to say: the process-wide
    # REDACTED_ARGUMENTS setting names them, for every tool.
    _validator: Draft202012Validator | None = None
    _descriptor: dict[str, Any] | None = None
    _slim_descriptor: dict[str, Any] | None = None

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        """Do the work; return a :class:`ToolResult`, content, a ``str`` or JSON data."""
        raise NotImplementedError(".run() must be overridden")

    def prepare_task(self, arguments: dict[str, Any], call: Context) -> None:
        """Run in the request, before a task is created for a call of this tool.

        A tool that needs input from the client before it can go on alone asks for it
        here with ``call.ask``: the client answers in the retry of the same request, and
        the task, created only then, finds those answers when it asks again while it
        runs. The default asks nothing.
        """

    def accepts(self, credential: Any) -> bool:
        """Whether ``credential`` can call this tool at all, scopes aside (it is listed
        only then); a tool whose code decides who may call overrides this."""
        return True

    def ready(self) -> bool:
        """Whether the tool's schemas are known without building anything now (the system
        checks look only at tools that are: building may need the database)."""
        return True

    def unavailable(self) -> str | None:
        """Why the tool can be neither listed nor called (its schema could not be built, say),
        or None when it can. Such a tool is left out of ``tools/list``, and a call to it is a
        tool error that gives this reason."""
        return None

    def speaks(self, arguments: Any, tools: Any) -> bool:
        """Whether a call with ``arguments`` may use its stream itself, beyond log
        records: report progress, close the stream for the client to resume, ask the
        client for input. A call that may is run on a stream of its own whenever its
        client reads streams; one that cannot (say, a viewset action, which only logs
        through Python's logging) runs in the request thread, its log messages kept and
        sent ahead of its answer. ``tools`` is the endpoint's registry, for a tool that
        runs another. A tool that cannot tell says it may."""
        return True

    def target(self, arguments: dict[str, Any], call: Context) -> tuple[str, str] | None:
        """What a call with ``arguments`` acts on, as a person names it: its kind and its
        name or title (``("task", "Write copy")``), for the question asked before a
        destructive call; None when the tool cannot tell."""
        return None

    @property
    def read_only(self) -> bool:
        """Whether the tool says it changes nothing (it then runs without a transaction)."""
        return bool((self.annotations or {}).get("readOnlyHint"))

    @property
    def destructive(self) -> bool:
        """Whether the tool says it may destroy what it acts on (and not that it only reads):
        the user is asked first where ``CONFIRM_DESTRUCTIVE_TOOLS`` is on."""
        return bool((self.annotations or {}).get("destructiveHint")) and not self.read_only

    def describe(self, *, output: bool = True) -> dict[str, Any]:
        """The ``tools/list`` entry, built (and encoded) once; without its output schema
        when ``output`` is false (structured results are the same either way)."""
        cached = self._descriptor if output else self._slim_descriptor
        if cached is not None:
            return cached
        body: dict[str, Any] = {"name": self.name}
        if self.title:
            body["title"] = self.title
        body["description"] = self.description
        body["inputSchema"] = self.input_schema
        if output and self.output_schema is not None:
            body["outputSchema"] = self.output_schema
        body["annotations"] = explicit_annotations(self.annotations)
        if self.meta:
            body["_meta"] = self.meta
        descriptor = Encoded(body)
        if output:
            self._descriptor = descriptor
        else:
            self._slim_descriptor = descriptor
        return descriptor

    def validate(self, arguments: dict[str, Any]) -> None:
        """Raise ``invalid_arguments`` when the arguments fail the input schema."""
        if self._validator is None:
            self._validator = Draft202012Validator(
                self.input_schema, format_checker=Draft202012Validator.FORMAT_CHECKER
            )
        errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        if errors:
            raise ToolError(
                "The arguments do not match the tool's input schema",
                code="invalid_arguments",
                fields=schema_error_fields(errors),
            )


def explicit_annotations(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """The four hints, each stated: app directories reject a tool that leaves one out, and
    clients read a missing one as its protocol default. The defaults here are those (a
    tool that says nothing may change anything, more than once, and reach the world
    outside), except that a read-only tool is neither destructive nor unrepeatable."""
    annotations = dict(given or {})
    read_only = bool(annotations.setdefault("readOnlyHint", False))
    annotations.setdefault("destructiveHint", not read_only)
    annotations.setdefault("idempotentHint", read_only)
    annotations.setdefault("openWorldHint", True)
    return annotations


def schema_error_fields(errors: Iterable[SchemaValidationError]) -> dict[str, list[str]]:
    """jsonschema errors as DRF-style per-field messages (``{"due": ["..."]}``)."""
    fields: dict[str, list[str]] = {}
    for err in errors:
        if err.validator == "required":
            missing = re.findall(r"'([^']+)' is a required property", err.message)
            name = ".".join(str(p) for p in (*err.path, *missing)) or "non_field_errors"
            fields.setdefault(name, []).append("This field is required.")
        elif err.validator == "additionalProperties":
            extra = re.findall(r"'([^']+)'", err.message)
            for key in extra or ["non_field_errors"]:
                path = ".".join(str(p) for p in (*err.path, key))
                fields.setdefault(path, []).append("Unknown argument.")
        else:
            name = ".".join(str(p) for p in err.path) or "non_field_errors"
            fields.setdefault(name, []).append(err.message)
    return fields


def names_close_stream(fn: Callable[..., Any]) -> bool:
    """Whether ``close_stream`` is named in the code of ``fn`` or of a function defined
    in it (a tool that closes its stream through a helper of its module says so with
    ``polls=True``)."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    pending = [code] if code is not None else []
    while pending:
        current = pending.pop()
        if "close_stream" in current.co_names:
            return True
        pending.extend(c for c in current.co_consts if inspect.iscode(c))
    return False


class FunctionTool(Tool):
    """A tool made from a Python function; schemas come from its type hints.

    Arguments are the function's parameters (``Annotated[int, Field(description=...)]``
    works, as do dataclasses, ``TypedDict``, enums, ``Literal`` and dates). A parameter
    annotated as :class:`~mcp_endpoint.context.Context` receives the call (user,
    credential, request, progress). The return annotation gives the output schema unless
    it is ``str``, content or a :class:`ToolResult`.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        scopes: Iterable[str] = (),
        annotations: Mapping[str, Any] | None = None,
        task_support: str = "forbidden",
        toolset: str | None = None,
        polls: bool | None = None,
    ) -> None:
        from mcp_endpoint.context import Context

        self.fn = fn
        # Whether the function may close its stream for the client to poll (see
        # :meth:`speaks`): told, or read from its code.
        self.polls = names_close_stream(fn) if polls is None else polls
        if toolset is not None:
            self.toolset = toolset
        self.task_support = task_support
        self.name = name or fn.__name__
        self.title = title
        self.description = description or inspect.cleandoc(fn.__doc__ or "") or self.name
        self.required_scopes = frozenset(scopes)
        self.annotations = dict(annotations) if annotations else None
        hints = get_type_hints(fn, include_extras=True)
        fields: dict[str, Any] = {}
        self.call_parameter: str | None = None
        for pname, param in inspect.signature(fn).parameters.items():
            hint = hints.get(pname, Any)
            if inspect.isclass(hint) and issubclass(hint, Context):
                self.call_parameter = pname
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[pname] = (hint, default)
        self.arguments_model = pydantic.create_model(
            f"{self.name}_arguments",
            __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=True),
            **fields,
        )
        schema = portable(self.arguments_model.model_json_schema())
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        self.input_schema = schema
        self.returns = hints.get("return", inspect.Signature.empty)
        self.output_adapter: pydantic.TypeAdapter[Any] | None = None
        self.wrap_output = False
        if _has_structured_output(self.returns):
            self.output_adapter = pydantic.TypeAdapter(self.returns)
            output = portable(self.output_adapter.json_schema(mode="serialization"))
            if output.get("type") != "object":
                self.wrap_output = True
                output = {
                    "type": "object",
                    "properties": {"result": output},
                    "required": ["result"],
                    "additionalProperties": False,
                }
            self.output_schema = output

    def speaks(self, arguments: Any, tools: Any) -> bool:
        """Whether the function may close its stream (``context.close_stream()``): what
        else it says through its :class:`~mcp_endpoint.context.Context` (log messages) is
        sent ahead of its answer, and progress and questions for the client open a
        stream whatever the tool."""
        return self.call_parameter is not None and self.polls

    def validate(self, arguments: dict[str, Any]) -> None:
        """Nothing before the call: the arguments model validates (and converts) in :meth:`run`,
        with the same rules the input schema was made from."""

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        try:
            parsed = self.arguments_model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            raise ToolError(
                "The arguments do not match the tool's input schema",
                code="invalid_arguments",
                fields=pydantic_error_fields(exc),
            ) from exc
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        if self.call_parameter:
            kwargs[self.call_parameter] = call
        value = self.fn(**kwargs)
        if self.output_adapter is None:
            return value
        data = self.output_adapter.dump_python(value, mode="json")
        structured = {"result": data} if self.wrap_output else data
        return ToolResult(content=[Text(compact_json(data))], structured=structured)


# pydantic's wording for the two errors every tool shares, in the words DRF uses for them.
PYDANTIC_MESSAGES = {"missing": "This field is required.", "extra_forbidden": "Unknown argument."}


def pydantic_error_fields(exc: pydantic.ValidationError) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for err in exc.errors():
        name = ".".join(str(p) for p in err["loc"]) or "non_field_errors"
        fields.setdefault(name, []).append(PYDANTIC_MESSAGES.get(err["type"], err["msg"]))
    return fields


def _has_structured_output(returns: Any) -> bool:
    if returns in (inspect.Signature.empty, None, type(None), str, Any, ToolResult):
        return False
    if inspect.isclass(returns) and issubclass(returns, Content):
        return False
    origin = getattr(returns, "__origin__", None)
    if origin in (list, tuple):
        args = getattr(returns, "__args__", ())
        if args and inspect.isclass(args[0]) and issubclass(args[0], Content):
            return False
    return True


class ToolRegistry(NamedRegistry[Tool]):
    """The tools of one endpoint, in registration order; names are unique."""
