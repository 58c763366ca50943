"""The tool of one viewset action: a thin holder of its :class:`ActionSpec`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from jsonschema import Draft202012Validator

from mcp_endpoint.permissions import HasScopes
from mcp_endpoint.rest_framework.calling import Caller, call_view
from mcp_endpoint.rest_framework.credentials import refusal, takes
from mcp_endpoint.rest_framework.filters import LOOKUPS_ARGUMENT
from mcp_endpoint.rest_framework.results import result_from
from mcp_endpoint.rest_framework.spec import ITEMS_ARGUMENT
from mcp_endpoint.schema import strings_over
from mcp_endpoint.tools import EMPTY_INPUT, Tool, ToolError

if TYPE_CHECKING:
    from mcp_endpoint.context import Context
    from mcp_endpoint.endpoint import Endpoint
    from mcp_endpoint.rest_framework.spec import ActionOptions, ActionSpec


# The fields of a REST representation that name the object, in the order they are tried.
NAME_FIELDS = (
    "name",
    "title",
    "display_name",
    "full_name",
    "label",
    "subject",
    "summary",
    "username",
    "email",
    "slug",
)


class SpecSource(Protocol):
    """What a tool needs of its registration: the specs built, the view class to call."""

    endpoint: Endpoint
    view_class: type[Any]
    built: bool
    toolset: str
    tools: list[ViewSetTool]

    def build(self) -> None: ...


class ViewSetTool(Tool):
    """A tool that runs one action of a viewset through DRF.

    Its name is known when it is registered; everything else comes from its spec, which
    the registration builds on first use (the URL conf must be loaded to find routes).
    """

    def __init__(
        self,
        registration: SpecSource,
        action: str,
        detail: bool,
        name: str,
        options: ActionOptions,
        method: str | None = None,
        handler: str | None = None,
    ) -> None:
        self.registration = registration
        self.action = action
        # The HTTP method of one tool of an action routed for several (None: its only one),
        # and the viewset method that answers it (``.mapping`` may name another).
        self.method = method
        self.handler = handler or action
        self.detail = detail
        self.name = name
        self.options = options
        self._spec: ActionSpec | None = None
        # Why the spec could not be built, once the registration tried.
        self._problem: str | None = None

    @property
    def spec(self) -> ActionSpec | None:
        """The action's spec; None when its schema could not be built (a check says why)."""
        self.registration.build()
        return self._spec

    def ready(self) -> bool:
        return self.registration.built

    def unavailable(self) -> str | None:
        if self.spec is not None:
            return None
        return self._problem or "its schema could not be built"

    @property
    def input_schema(self) -> dict[str, Any]:  # type: ignore[override]
        spec = self.spec
        return spec.input_schema if spec is not None else dict(EMPTY_INPUT)

    @property
    def output_schema(self) -> dict[str, Any] | None:  # type: ignore[override]
        spec = self.spec
        return spec.output_schema if spec is not None else None

    @property
    def annotations(self) -> dict[str, Any] | None:  # type: ignore[override]
        spec = self.spec
        return spec.annotations if spec is not None else None

    @property
    def required_scopes(self) -> frozenset[str]:  # type: ignore[override]
        spec = self.spec
        return spec.required_scopes if spec is not None else frozenset()

    @property
    def description(self) -> str:  # type: ignore[override]
        spec = self.spec
        return spec.description if spec is not None else ""

    @property
    def toolset(self) -> str:  # type: ignore[override]
        return self.registration.toolset

    @property
    def title(self) -> str | None:  # type: ignore[override]
        return (self.annotations or {}).get("title")

    def accepts(self, credential: Any) -> bool:
        """Hidden from callers whose kind of credential the view cannot authenticate, and
        from everyone when the tool has no spec (a check says why)."""
        spec = self.spec
        return spec is not None and takes(spec.authentication_classes, credential)

    def validate(self, arguments: dict[str, Any]) -> None:
        """Only what DRF would not check itself: unknown arguments and the lookup.

        Values are left to the view (filterset, paginator, serializer), so a bad value gets
        exactly the message the REST API gives for it.
        """
        spec = self.spec
        if self._validator is None and spec is not None:
            self._validator = Draft202012Validator(
                {
                    "type": "object",
                    # The lookups' names are checked here: the filterset would ignore an
                    # unknown one, where a model needs to hear that it did not filter. A
                    # list body must be a list: the view would take one object as well.
                    "properties": {
                        name: (
                            prop
                            if name in spec.path_arguments
                            or (name == LOOKUPS_ARGUMENT and spec.lookup_arguments)
                            else {"type": "array"}
                            if name == ITEMS_ARGUMENT and spec.body_list
                            else {}
                        )
                        for name, prop in spec.input_schema.get("properties", {}).items()
                    },
                    "required": list(spec.path_arguments),
                    "additionalProperties": False,
                }
            )
        super().validate(as_rest_takes_them(spec, arguments) if spec is not None else arguments)
        if spec is not None:
            limit = self.registration.endpoint.settings.MAX_QUERY_ARGUMENT_LENGTH
            query = {*spec.query_arguments, LOOKUPS_ARGUMENT}
            too_long = sorted(n for n in query if strings_over(arguments.get(n), limit))
            if too_long:
                message = f"Ensure this field has no more than {limit} characters."
                raise ToolError(
                    "The arguments do not match the tool's input schema",
                    code="invalid_arguments",
                    fields={name: [message] for name in too_long},
                )

    # Once its registration is built, its spec is fixed, and accepts() reads only the
    # credential's authenticator.
    steady = True

    def speaks(self, arguments: Any, tools: Any) -> bool:
        """A viewset's action only logs (through Python's logging): it never streams."""
        return False

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        spec = self.spec
        if spec is None:
            raise ToolError(
                f"The tool {self.name} is not available: {self.unavailable()}",
                code="unavailable",
            )
        http_request = call.http_request
        if http_request is None:
            raise ToolError("This tool runs only over HTTP", code="internal_error")
        settings = self.registration.endpoint.settings
        caller = Caller(
            call.credential,
            call.request_context.counted_throttle_keys,
            scope_policy=HasScopes(settings.SCOPES_BY_METHOD),
        )
        response, kwargs = call_view(
            spec, self.registration.view_class, as_integers(spec, arguments), http_request, caller
        )
        return result_from(
            spec,
            response,
            kwargs,
            credential=call.credential,
            max_items=settings.MAX_LIST_ITEMS,
            refusal=refusal(spec.authentication_classes, call.credential),
            max_bytes=settings.MAX_BINARY_RESULT_BYTES,
            # A file the action answers with is named by its REST URL.
            uri=http_request.build_absolute_uri(spec.route.url_path(kwargs)),
        )

    def target(self, arguments: dict[str, Any], call: Context) -> tuple[str, str] | None:
        """The object of a detail action as its REST representation names it: the
        viewset's own ``retrieve``, run with the same URL arguments and credential."""
        spec = self.spec
        http_request = call.http_request
        if spec is None or not spec.detail or http_request is None:
            return None
        retrieve = next(
            (t.spec for t in self.registration.tools if t.action == "retrieve" and t.spec),
            None,
        )
        if retrieve is None or not set(retrieve.path_arguments) <= set(arguments):
            return None
        lookup = {name: arguments[name] for name in retrieve.path_arguments}
        caller = Caller(call.credential, call.request_context.counted_throttle_keys)
        try:
            response, _kwargs = call_view(
                retrieve, self.registration.view_class, as_integers(retrieve, lookup),
                http_request, caller,
            )  # fmt: skip
        except ToolError:
            return None
        data = getattr(response, "data", None)
        if response.status_code != 200 or not isinstance(data, dict):
            return None
        for field in NAME_FIELDS:
            value = data.get(field)
            if isinstance(value, str) and value.strip():
                return spec.singular, value.strip()
        return None


def as_rest_takes_them(spec: ActionSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments to check against the schema, with an integer URL kwarg given as its
    digits (``"2"``) taken as the integer: the URL carries text, and REST takes it."""
    properties = spec.input_schema.get("properties", {})
    checked = dict(arguments)
    for name in spec.path_arguments:
        value = arguments.get(name)
        if (
            isinstance(value, str)
            and properties.get(name, {}).get("type") == "integer"
            and re.fullmatch(r"-?[0-9]+", value)
        ):
            checked[name] = int(value)
    return checked


def integral(value: Any, schema: Any) -> Any:
    """``value``, or the int it is when it is an integral float (``2.0``, an integer to
    JSON Schema) and ``schema`` types an integer: the URL and the query string would
    otherwise carry ``"2.0"``, which no integer route or paginator reads."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    typed = kind == "integer" or (isinstance(kind, list) and "integer" in kind)
    if typed and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def as_integers(spec: ActionSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments for the view, with integral floats for integer URL kwargs and query
    arguments made ints."""
    properties = spec.input_schema.get("properties", {})
    called = dict(arguments)
    for name in (*spec.path_arguments, *spec.query_arguments):
        if name in called:
            called[name] = integral(called[name], properties.get(name))
    return called
