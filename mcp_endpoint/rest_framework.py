"""DRF viewsets as MCP tools: the one place that knows viewsets.

``endpoint.register_viewset(TaskViewSet)`` turns each action of the viewset into a tool.
Schemas come from drf-spectacular (serializers, filtersets, search, ordering, paginators,
``extend_schema``), made portable by :func:`mcp_endpoint.schema.portable`, built once per
process. A call becomes a real DRF request dispatched to the viewset, carrying the MCP
request's credential, host and client address, so the view's authentication, permissions,
``required_scopes``, querysets, throttles, validation, pagination and exception handler
all run exactly as they do for the REST API.
"""

from __future__ import annotations

import io
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIRequest
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponseBase
from django.utils.encoding import force_str
from django.utils.functional import Promise
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from drf_spectacular.settings import spectacular_settings
from oauth2_provider.contrib.rest_framework import TokenHasScope
from rest_framework import permissions as drf_permissions
from rest_framework.routers import SimpleRouter
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.viewsets import ViewSetMixin

from mcp_endpoint import throttling
from mcp_endpoint.protocol.content import Text, ToolResult
from mcp_endpoint.schema import SchemaError, bound_strings, portable, strings_over
from mcp_endpoint.tools import Tool, ToolError

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.routers import BaseRouter

    from mcp_endpoint.context import Context
    from mcp_endpoint.endpoint import Endpoint

logger = logging.getLogger("mcp_endpoint.rest_framework")

# Standard actions: the verb of the tool name, and whether the noun is plural.
STANDARD_ACTIONS: dict[str, tuple[str, bool]] = {
    "list": ("list", True),
    "retrieve": ("get", False),
    "create": ("create", False),
    "update": ("replace", False),
    "partial_update": ("update", False),
    "destroy": ("delete", False),
}
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# Left out of the text rendering (they stay in structuredContent): noise for a model.
BOOKKEEPING_FIELDS = {"created", "updated", "modified", "created_at", "updated_at", "url"}
SKIPPED_IN_TEXT = BOOKKEEPING_FIELDS | {"id", "pk"}
IDEMPOTENT_METHODS = {"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"}
# drf-spectacular's errors for a view whose serializer it could not get (it skips the view).
NO_SERIALIZER = re.compile(r"unable to guess serializer|exception raised while getting serializer")
_build_lock = threading.RLock()


class APIKeyScheme(OpenApiAuthenticationExtension):
    """Describes API keys to drf-spectacular (and keeps it from warning about them)."""

    target_class = "mcp_endpoint.authentication.APIKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer"}


@dataclass
class ActionOptions:
    """Per-action overrides a host passes to :meth:`Endpoint.register_viewset`."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)


@dataclass
class Route:
    """One (viewset, action, method) found in the URL conf or in a router of our own."""

    path: str
    path_regex: str
    method: str
    callback: Any

    @property
    def action(self) -> str:
        action: str = self.callback.actions[self.method.lower()]
        return action

    @property
    def detail(self) -> bool:
        return bool(self.callback.initkwargs.get("detail"))


class ViewSetRegistration:
    """One registered viewset: its tools, and the schemas built for them once."""

    def __init__(
        self,
        endpoint: Endpoint,
        viewset: type[ViewSetMixin],
        *,
        basename: str | None = None,
        prefix: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
        names: Mapping[str, str] | None = None,
        titles: Mapping[str, str] | None = None,
        descriptions: Mapping[str, str] | None = None,
        annotations: Mapping[str, Mapping[str, Any]] | None = None,
        singular: str | None = None,
        plural: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.viewset = viewset
        self.basename = basename or _default_basename(viewset)
        self.prefix = prefix or self.basename
        self.include = set(include) if include is not None else None
        self.exclude = set(exclude)
        self.options: dict[str, ActionOptions] = {}
        for action in (
            set(names or {}) | set(titles or {}) | set(descriptions or {}) | set(annotations or {})
        ):
            self.options[action] = ActionOptions(
                name=(names or {}).get(action),
                title=(titles or {}).get(action),
                description=(descriptions or {}).get(action),
                annotations=dict((annotations or {}).get(action, {})),
            )
        self.singular, self.plural = _nouns(viewset, self.basename, singular, plural)
        self.tools: list[ViewSetTool] = []
        self.problems: list[tuple[str, str, str]] = []  # (check id, message, hint)
        self.built = False
        self.dedup_class = _deduplicating_subclass(viewset)
        for action, detail in _viewset_actions(viewset):
            if self.include is not None and action not in self.include:
                continue
            if action in self.exclude:
                continue
            self.tools.append(ViewSetTool(self, action, detail))
        known = {action for action, _ in _viewset_actions(viewset)}
        for action in sorted(((self.include or set()) | self.exclude | set(self.options)) - known):
            self.problems.append(
                (
                    "mcp_endpoint.E020",
                    f"{viewset.__name__} has no action {action!r} to make a tool of.",
                    f"Its actions are: {', '.join(sorted(known))}.",
                )
            )

    # -- schema building, once per process -------------------------------------------

    def build(self) -> None:
        if self.built:
            return
        with _build_lock:
            if self.built:
                return
            routes = self.routes()
            generator = SchemaGenerator()
            for tool in self.tools:
                route = routes.get(tool.action)
                if route is None:
                    self.problems.append(
                        (
                            "mcp_endpoint.E021",
                            f"{self.viewset.__name__}.{tool.action} has no route, so it has no "
                            "schema.",
                            "Route the action (a @action decorator or a router) or exclude it.",
                        )
                    )
                    tool.broken = True
                    continue
                try:
                    tool.build(route, generator)
                except (SchemaError, AssertionError, AttributeError, TypeError) as exc:
                    self.problems.append(
                        (
                            "mcp_endpoint.E022",
                            f"No schema for {self.viewset.__name__}.{tool.action}: {exc}",
                            "Give the viewset a serializer_class, or describe the action with "
                            "drf-spectacular's @extend_schema.",
                        )
                    )
                    tool.broken = True
            self.built = True

    def routes(self) -> dict[str, Route]:
        """The viewset's routes in the host's URL conf, or from a router of our own."""
        found: dict[str, Route] = {}
        for route in _url_conf_routes():
            cls = getattr(route.callback, "cls", None)
            if cls is self.viewset and route.action not in found:
                found[route.action] = route
        if not found:
            router = SimpleRouter()
            router.register(self.prefix, self.viewset, basename=self.basename)
            for path, regex, method, callback in EndpointEnumerator(
                router.urls
            ).get_api_endpoints():
                route = Route(path, regex, method, callback)
                found.setdefault(route.action, route)
        return found


class ViewSetTool(Tool):
    """A tool that runs one action of a viewset through DRF."""

    def __init__(self, registration: ViewSetRegistration, action: str, detail: bool) -> None:
        self.registration = registration
        self.action = action
        self.detail = detail
        self.broken = False
        options = registration.options.get(action, ActionOptions())
        self.options = options
        self.name = options.name or self.default_name()
        self.route: Route | None = None
        self._input_schema: dict[str, Any] | None = None
        self._output_schema: dict[str, Any] | None = None
        self._annotations: dict[str, Any] | None = None
        self._required_scopes: frozenset[str] = frozenset()
        self._description = ""
        self.path_arguments: dict[str, str] = {}  # argument name -> URL kwarg
        self.query_arguments: set[str] = set()
        self.body_arguments: set[str] = set()
        self.body_nested = False
        self.list_output = False
        self.callback: Callable[..., HttpResponseBase] | None = None
        self.warnings: list[str] = []

    def default_name(self) -> str:
        reg = self.registration
        verb, plural = STANDARD_ACTIONS.get(self.action, (self.action, not self.detail))
        return f"{verb}_{reg.plural if plural else reg.singular}"

    # Attributes the registry reads are built on first use.
    @property
    def input_schema(self) -> dict[str, Any]:  # type: ignore[override]
        self.registration.build()
        return self._input_schema or {
            "type": "object",
            "properties": {},
            "additionalProperties": False,
        }

    @property
    def output_schema(self) -> dict[str, Any] | None:  # type: ignore[override]
        self.registration.build()
        return self._output_schema

    @property
    def annotations(self) -> dict[str, Any] | None:  # type: ignore[override]
        self.registration.build()
        return self._annotations

    @property
    def required_scopes(self) -> frozenset[str]:  # type: ignore[override]
        self.registration.build()
        return self._required_scopes

    @property
    def description(self) -> str:  # type: ignore[override]
        self.registration.build()
        return self._description

    @property
    def title(self) -> str | None:  # type: ignore[override]
        self.registration.build()
        return (self._annotations or {}).get("title")

    def build(self, route: Route, generator: SchemaGenerator) -> None:
        self.route = route
        method = route.method
        view = generator.create_view(route.callback, method)
        path = generator.coerce_path(route.path, method, view)
        view.request = spectacular_settings.GET_MOCK_REQUEST(method, path, view, None)
        with GENERATOR_STATS.silence():
            GENERATOR_STATS.reset()
            operation = view.schema.get_operation(
                path, route.path_regex, "^/", method, generator.registry
            )
            components = generator.registry.build({}).get("schemas", {})
            errors = sorted(GENERATOR_STATS._error_cache)
            self.warnings = sorted(GENERATOR_STATS._warn_cache) + [
                e for e in errors if not NO_SERIALIZER.search(e)
            ]
            GENERATOR_STATS.reset()
        no_serializer = [e for e in errors if NO_SERIALIZER.search(e)]
        if no_serializer:
            # drf-spectacular found no serializer and skipped the view: there is no schema.
            raise SchemaError(no_serializer[0])
        operation = _plain(operation or {})
        components = _plain(components)
        # URL kwargs in order, against the names drf-spectacular gave them ({pk} -> {id}).
        kwargs_in_regex = re.findall(r"\(\?P<(\w+)>", route.path_regex)
        names_in_path = re.findall(r"{(\w+)}", path)
        path_map = dict(zip(names_in_path, kwargs_in_regex, strict=False))
        self.path_arguments = {}
        properties: dict[str, Any] = {}
        required: list[str] = []
        for parameter in operation.get("parameters", []):
            name = parameter["name"]
            schema = portable(parameter.get("schema", {"type": "string"}), components)
            if parameter.get("description") and "description" not in schema:
                schema["description"] = parameter["description"]
            if parameter.get("in") == "path":
                self.path_arguments[name] = path_map.get(name, name)
                required.append(name)
            elif parameter.get("in") == "query":
                self.query_arguments.add(name)
            else:
                continue
            properties[name] = schema
        self.refine_query_schemas(view, properties)
        body = _json_content(operation.get("requestBody", {}))
        if body is not None:
            body_schema = portable(body, components)
            body_properties = {
                k: v for k, v in body_schema.get("properties", {}).items() if not v.get("readOnly")
            }
            body_required = (
                []
                if method == "PATCH"
                else [r for r in body_schema.get("required", []) if r in body_properties]
            )
            if set(body_properties) & set(properties):
                self.body_nested = True
                properties["body"] = {
                    "type": "object",
                    "properties": body_properties,
                    "additionalProperties": False,
                }
                if body_required:
                    properties["body"]["required"] = body_required
                if method != "PATCH":
                    required.append("body")
            else:
                properties.update(body_properties)
                required.extend(body_required)
                self.body_arguments = set(body_properties)
        input_schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            input_schema["required"] = required
        input_schema["additionalProperties"] = False
        self._input_schema = bound_strings(
            _strip_rw(input_schema, "readOnly"),
            self.query_arguments,
            self.registration.endpoint.settings.MAX_QUERY_ARGUMENT_LENGTH,
        )
        self._output_schema = self.output_from(operation, components)
        self._required_scopes = required_scopes(view, method)
        self._annotations = self.annotations_for(method)
        self._description = self.description_for(operation, set(properties))
        if (
            method == "GET"
            and not route.detail
            and not self.list_output
            and "results" not in (self._output_schema or {}).get("properties", {})
        ):
            self.warnings.append(
                f"the list action {self.action!r} is described as returning one object, so "
                "its tool gets no filter or page arguments and an output schema that the "
                "answer will not match; add @extend_schema(responses=Serializer(many=True))"
            )
        reg = self.registration
        self.callback = reg.dedup_class.as_view(route.callback.actions, **route.callback.initkwargs)

    def refine_query_schemas(self, view: Any, properties: dict[str, Any]) -> None:
        """What drf-spectacular leaves vague: the allowed orderings, the page size cap."""
        from rest_framework.filters import OrderingFilter

        if "ordering" in properties and any(
            issubclass(b, OrderingFilter) for b in getattr(view, "filter_backends", [])
        ):
            fields = getattr(view, "ordering_fields", None)
            if isinstance(fields, list | tuple) and fields:
                names = [f if isinstance(f, str) else f[0] for f in fields]
                properties["ordering"] = {
                    "type": "string",
                    "enum": [v for n in names for v in (n, f"-{n}")],
                    "description": "Order by this field; a leading '-' orders descending.",
                }
        paginator = getattr(view, "paginator", None)
        max_size = getattr(paginator, "max_page_size", None)
        size_param = getattr(paginator, "page_size_query_param", None) or "limit"
        if max_size and size_param in properties:
            properties[size_param]["maximum"] = max_size
            properties[size_param].setdefault("minimum", 1)

    def output_from(
        self, operation: dict[str, Any], components: dict[str, Any]
    ) -> dict[str, Any] | None:
        responses = operation.get("responses", {})
        for status in sorted(code for code in responses if str(code).startswith("2")):
            schema = _json_content(responses[status])
            if schema is None:
                continue
            output = _strip_rw(portable(schema, components), "writeOnly")
            if output.get("type") != "object":
                # structuredContent must be an object: a bare list becomes {"results": [...]}.
                self.list_output = True
                output = {
                    "type": "object",
                    "properties": {"results": output},
                    "required": ["results"],
                }
            return output
        return None

    def annotations_for(self, method: str) -> dict[str, Any]:
        reg = self.registration
        noun = (
            reg.plural
            if (self.action == "list" or (self.action not in STANDARD_ACTIONS and not self.detail))
            else reg.singular
        )
        verb = STANDARD_ACTIONS.get(self.action, (self.action, False))[0]
        default_title = f"{verb.replace('_', ' ').capitalize()} {noun.replace('_', ' ')}"
        if self.options.name:
            # A renamed tool is titled after its name, not after the action it replaced.
            default_title = self.options.name.replace("_", " ").capitalize()
        annotations: dict[str, Any] = {
            "title": self.options.title or default_title,
            "readOnlyHint": method in SAFE_METHODS,
        }
        if method not in SAFE_METHODS:
            annotations["destructiveHint"] = method == "DELETE"
        annotations["idempotentHint"] = method in IDEMPOTENT_METHODS
        annotations["openWorldHint"] = False
        annotations.update(self.options.annotations)
        return annotations

    def description_for(self, operation: dict[str, Any], arguments: set[str]) -> str:
        if self.options.description:
            return self.options.description
        reg = self.registration
        handler = getattr(reg.viewset, self.action, None)
        own = (
            _first_paragraph(getattr(handler, "__doc__", None))
            if self.action not in (STANDARD_ACTIONS)
            else ""
        )
        described = operation.get("description") or ""
        viewset_doc = _first_paragraph(reg.viewset.__doc__)
        if self.action not in STANDARD_ACTIONS:
            return own or _first_paragraph(described) or self.name.replace("_", " ")
        if described and _first_paragraph(described) != viewset_doc:
            return _first_paragraph(described)
        ways = [
            label
            for label, present in (
                ("a page at a time", bool(arguments & {"page", "limit", "cursor"})),
                (
                    "with filters",
                    bool(
                        arguments
                        - {"page", "page_size", "limit", "offset", "cursor", "search", "ordering"}
                    ),
                ),
                ("searchable", "search" in arguments),
                ("in the order you ask", "ordering" in arguments),
            )
            if present
        ]
        lookup = next(iter(self.path_arguments), "id")
        default = {
            "list": f"List {reg.plural.replace('_', ' ')}"
            + (f", {', '.join(ways)}." if ways else "."),
            "retrieve": f"Get one {reg.singular.replace('_', ' ')} by {lookup}.",
            "create": f"Create a {reg.singular.replace('_', ' ')}.",
            "update": f"Replace a {reg.singular.replace('_', ' ')}: every writable field.",
            "partial_update": f"Update some fields of a {reg.singular.replace('_', ' ')}.",
            "destroy": f"Delete a {reg.singular.replace('_', ' ')}.",
        }[self.action]
        return f"{default} {viewset_doc}".strip()

    # -- calling -----------------------------------------------------------------------

    def validate(self, arguments: dict[str, Any]) -> None:
        """Only what DRF would not check itself: unknown arguments and the lookup.

        Values are left to the view (filterset, paginator, serializer), so a bad value gets
        exactly the message the REST API gives for it.
        """
        self.registration.build()
        if self._validator is None:
            from jsonschema import Draft202012Validator

            schema = self.input_schema
            self._validator = Draft202012Validator(
                {
                    "type": "object",
                    "properties": {
                        name: (prop if name in self.path_arguments else {})
                        for name, prop in schema.get("properties", {}).items()
                    },
                    "required": list(self.path_arguments),
                    "additionalProperties": False,
                }
            )
        super().validate(arguments)
        limit = self.registration.endpoint.settings.MAX_QUERY_ARGUMENT_LENGTH
        too_long = sorted(
            name
            for name in self.query_arguments
            if name in arguments and strings_over(arguments[name], limit)
        )
        if too_long:
            message = f"Ensure this field has no more than {limit} characters."
            raise ToolError(
                "The arguments do not match the tool's input schema",
                code="invalid_arguments",
                fields={name: [message] for name in too_long},
            )

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        self.registration.build()
        if self.broken or self.route is None or self.callback is None:
            raise ToolError(
                "This tool is not available: its schema could not be built", code="internal_error"
            )
        http_request = call.http_request
        if http_request is None:
            raise ToolError("This tool runs only over HTTP", code="internal_error")
        method = self.route.method
        kwargs = {self.path_arguments[n]: str(arguments[n]) for n in self.path_arguments}
        path = re.sub(
            r"{(\w+)}",
            lambda m: quote(kwargs.get(m.group(1), m.group(0)), safe=""),
            self.route.path,
        )
        query = {k: v for k, v in arguments.items() if k in self.query_arguments and v is not None}
        if self.body_nested:
            body = arguments.get("body")
        elif self.body_arguments or method in {"POST", "PUT", "PATCH"}:
            body = {k: v for k, v in arguments.items() if k in self.body_arguments}
        else:
            body = None
        request = inner_request(http_request, method, path, query, body)
        request.mcp = call  # type: ignore[attr-defined]
        try:
            response = self.callback(request, **kwargs)
        except IntegrityError as exc:
            raise ToolError(
                "The change conflicts with existing data",
                code="conflict",
                detail=str(exc).splitlines()[0][:200],
            ) from exc
        return self.result_from(response, kwargs, call)

    def result_from(
        self, response: HttpResponseBase, kwargs: dict[str, str], call: Context
    ) -> ToolResult:
        status = response.status_code
        data = getattr(response, "data", None)
        if (
            data is None
            and status != 204
            and response.get("Content-Type", "").startswith("application/json")
        ):
            content = response.content if hasattr(response, "content") else b""
            data = json.loads(content or b"null")
        if 200 <= status < 300:
            return self.success(status, data, kwargs)
        raise self.error_from(status, data, response, call)

    def success(self, status: int, data: Any, kwargs: dict[str, str]) -> ToolResult:
        reg = self.registration
        if status == 204 or data is None:
            target = " ".join(kwargs.values())
            verb = "Deleted" if self.action == "destroy" else "Done:"
            noun = reg.singular.replace("_", " ")
            return ToolResult(content=[Text(f"{verb} {noun} {target}".strip() + ".")])
        # The serializer's data goes out as it is; the answer's encoder copes with dates,
        # decimals and lazy strings, so no walk over it is needed here.
        cap: int = self.registration.endpoint.settings.MAX_LIST_ITEMS
        if isinstance(data, list):
            note = None
            if len(data) > cap:
                note = (
                    f"[showing the first {cap} of {len(data)} {reg.plural}; narrow the query "
                    "with filters or search]"
                )
                data = data[:cap]
            structured: dict[str, Any] = {"results": data}
            text = render_list(reg, data, None, note)
        elif isinstance(data, dict) and isinstance(data.get("results"), list):
            structured = data
            text = render_list(reg, data["results"], data, None)
        elif isinstance(data, dict):
            structured = data
            text = render_object(reg.singular, data)
        else:
            structured = {"results": data}
            text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
        return ToolResult(content=[Text(text)], structured=structured)

    def error_from(
        self, status: int, data: Any, response: HttpResponseBase, call: Context
    ) -> ToolError:
        detail = _detail(data)
        if status == 400:
            fields = _field_errors(data)
            return ToolError("The arguments were refused", code="invalid_arguments", fields=fields)
        if status == 404:
            return ToolError(
                detail or f"No such {self.registration.singular}, or it is not visible to you.",
                code="not_found",
            )
        if status == 409:
            return ToolError(
                detail or "The request conflicts with the current state", code="conflict"
            )
        if status == 429:
            retry = response.get("Retry-After")
            return ToolError(
                detail or "Rate limit reached",
                code="throttled",
                retry_after=int(retry) if retry and retry.isdigit() else None,
            )
        if status in (401, 403):
            credential = call.credential
            scopes = self.required_scopes
            granted = credential.scopes if credential is not None else None
            if scopes and granted is not None and not scopes <= granted:
                return ToolError(
                    f"This tool needs the scope(s) {' '.join(sorted(scopes))}",
                    code="insufficient_scope",
                    required_scopes=sorted(scopes),
                    granted_scopes=sorted(granted),
                )
            return ToolError(
                detail or "You do not have permission to do this", code="permission_denied"
            )
        logger.error("tool %s: the view answered %s: %s", self.name, status, detail)
        return ToolError("Internal error running tool", code="internal_error")


def _deduplicating_subclass(viewset: type[ViewSetMixin]) -> type[Any]:
    """The viewset as it runs a tool call: the caller's credential, counted once.

    Two things differ from a REST request, both so one MCP request is one REST request:
    the credential the transport already authenticated is handed to the view when the view
    accepts that kind of credential (authenticating again would cost a second look-up, and
    would refuse an OAuth token bound to the MCP endpoint because the view's URL is another
    resource); and throttle keys the transport already counted are not counted again.
    """

    def initialize_request(self: Any, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        drf_request: Any = viewset.initialize_request(self, request, *args, **kwargs)
        call = getattr(request, "mcp", None)
        credential: Any = getattr(call, "credential", None)
        authenticator = getattr(credential, "authenticator", None)
        if authenticator is not None and any(
            isinstance(authenticator, type(a)) for a in drf_request.authenticators or ()
        ):
            # Set deliberately, all three, so nothing lazily authenticates again.
            drf_request._authenticator = authenticator
            drf_request.user = credential.user
            drf_request.auth = credential.auth
        return drf_request

    def check_throttles(self: Any, request: Request) -> None:
        counted = throttling.counted_keys(request._request)
        durations = []
        for throttle in self.get_throttles():
            if (
                counted
                and isinstance(throttle, SimpleRateThrottle)
                and (throttle.get_cache_key(request, self) in counted)
            ):
                continue
            if not throttle.allow_request(request, self):
                durations.append(throttle.wait())
        if durations:
            self.throttled(request, max((d for d in durations if d is not None), default=None))

    return type(
        viewset.__name__,
        (viewset,),
        {
            "check_throttles": check_throttles,
            "initialize_request": initialize_request,
            "__module__": viewset.__module__,
            "__qualname__": viewset.__qualname__,
            "__doc__": viewset.__doc__,
        },
    )


def inner_request(
    request: HttpRequest, method: str, path: str, query: Mapping[str, Any], body: Any
) -> HttpRequest:
    """A Django request for the view, made from the MCP request (host, scheme, client, auth)."""
    payload = b"" if body is None else json.dumps(body).encode("utf-8")
    environ = {
        k: v
        for k, v in request.META.items()
        if isinstance(k, str) and not k.startswith(("HTTP_MCP_", "wsgi.", "CONTENT_"))
    }
    environ.update(
        {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "SCRIPT_NAME": request.META.get("SCRIPT_NAME", ""),
            "QUERY_STRING": urlencode({k: _query_value(v) for k, v in query.items()}, doseq=True),
            "HTTP_ACCEPT": "application/json",
            "wsgi.input": io.BytesIO(payload),
            "wsgi.url_scheme": request.scheme,
            "wsgi.version": (1, 0),
            "wsgi.errors": request.META.get("wsgi.errors", io.StringIO()),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
    )
    if body is not None:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(payload))
    inner = WSGIRequest(environ)
    # What middleware would have set on a REST request with the same headers and cookies.
    if hasattr(request, "user"):
        inner.user = request.user
    if hasattr(request, "session"):
        inner.session = request.session
    if "django.contrib.messages" in django_settings.INSTALLED_APPS:
        from django.contrib.messages.storage import default_storage

        inner._messages = default_storage(inner)  # type: ignore[attr-defined]
    setattr(inner, throttling.COUNTED_KEYS_ATTRIBUTE, throttling.counted_keys(request))
    return inner


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return [_query_value(v) for v in value]
    return value


def required_scopes(view: Any, method: str) -> frozenset[str]:
    """The scopes django-oauth-toolkit's permissions on ``view`` ask for ``method``."""
    request = SimpleNamespace(method=method)
    scopes: set[str] = set()
    for permission in view.get_permissions():
        scopes |= _permission_scopes(permission, request, view)
    return frozenset(scopes)


def _permission_scopes(permission: Any, request: Any, view: Any) -> set[str]:
    if isinstance(permission, TokenHasScope):
        try:
            return set(permission.get_scopes(request, view) or ())
        except ImproperlyConfigured:
            # TokenHasScope on a view without required_scopes: REST refuses every call.
            return set()
    if isinstance(permission, drf_permissions.AND):
        # An AND of two permissions needs the scopes of both.
        first, second = permission.op1, permission.op2  # type: ignore[attr-defined]
        return _permission_scopes(first, request, view) | _permission_scopes(second, request, view)
    return set()


def _viewset_actions(viewset: type[ViewSetMixin]) -> list[tuple[str, bool]]:
    """(action, detail) for the standard actions the viewset has and its extra actions."""
    found = [(a, a not in ("list", "create")) for a in STANDARD_ACTIONS if hasattr(viewset, a)]
    for extra in viewset.get_extra_actions():
        found.append((extra.__name__, bool(getattr(extra, "detail", False))))
    return found


def _default_basename(viewset: type[ViewSetMixin]) -> str:
    queryset = getattr(viewset, "queryset", None)
    if queryset is not None:
        return str(queryset.model._meta.model_name)
    serializer = getattr(viewset, "serializer_class", None)
    model = getattr(getattr(serializer, "Meta", None), "model", None)
    if model is not None:
        return str(model._meta.model_name)
    name = viewset.__name__.removesuffix("ViewSet").removesuffix("Viewset")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() or "item"


def _nouns(
    viewset: type[ViewSetMixin], basename: str, singular: str | None, plural: str | None
) -> tuple[str, str]:
    model = None
    queryset = getattr(viewset, "queryset", None)
    if queryset is not None:
        model = queryset.model
    else:
        serializer = getattr(viewset, "serializer_class", None)
        model = getattr(getattr(serializer, "Meta", None), "model", None)
    if model is not None:
        one = force_str(model._meta.verbose_name)
        many = force_str(model._meta.verbose_name_plural)
    else:
        one, many = basename, f"{basename}s"
    return _identifier(singular or one), _identifier(plural or many)


def _identifier(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def _first_paragraph(text: str | None) -> str:
    if not text:
        return ""
    from inspect import cleandoc

    return cleandoc(text).split("\n\n")[0].replace("\n", " ").strip()


def _json_content(section: Mapping[str, Any]) -> dict[str, Any] | None:
    content = section.get("content") or {}
    for media, value in content.items():
        if media == "application/json" or media.endswith("+json"):
            schema: dict[str, Any] | None = value.get("schema")
            return schema
    return None


def _strip_rw(schema: Any, flag: str) -> Any:
    """Drop properties marked ``readOnly`` (from inputs) or ``writeOnly`` (from outputs)."""
    if isinstance(schema, list):
        return [_strip_rw(s, flag) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strip_rw(v, flag) for k, v in schema.items() if k != "properties"}
    if "properties" in schema:
        kept = {
            k: _strip_rw(v, flag)
            for k, v in schema["properties"].items()
            if not (isinstance(v, dict) and v.get(flag))
        }
        out["properties"] = kept
        if "required" in out:
            out["required"] = [r for r in out["required"] if r in kept]
            if not out["required"]:
                del out["required"]
    for key in ("readOnly", "writeOnly"):
        out.pop(key, None)
    return out


def _plain(value: Any) -> Any:
    """JSON-ready data: lazy translations and other proxies as strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Promise):
        return force_str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.loads(json.dumps(value, default=str))


def _detail(data: Any) -> str:
    if isinstance(data, dict) and "detail" in data:
        return str(data["detail"])
    if isinstance(data, str):
        return data
    return ""


def _field_errors(data: Any) -> dict[str, Any]:
    if isinstance(data, dict):
        return {str(k): _field_messages(v) for k, v in data.items()}
    if isinstance(data, list):
        return {"non_field_errors": [str(m) for m in data]}
    return {"non_field_errors": [str(data)]}


def _field_messages(value: Any) -> Any:
    """One field's messages as strings; a nested serializer's errors keep their shape, as in
    the REST answer (``{"address": {"city": [...]}}``, ``{"items": {"1": {...}}}``)."""
    if isinstance(value, dict):
        return {str(k): _field_messages(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_field_messages(m) if isinstance(m, dict | list) else str(m) for m in value]
    return [str(value)]


def render_object(noun: str, data: Mapping[str, Any]) -> str:
    """One line naming the object's id, then its short fields: compact, not the JSON."""
    ident = data.get("id", data.get("pk"))
    head = f"{noun.replace('_', ' ').capitalize()} {ident}" if ident is not None else noun
    parts = []
    for key, value in data.items():
        if value is None or key in SKIPPED_IN_TEXT:
            continue
        if isinstance(value, str):
            text = value
        elif isinstance(value, dict):
            text = str(value.get("id", "{…}"))
        elif isinstance(value, list):
            text = ",".join(
                str(v.get("id", "…") if isinstance(v, dict) else v) for v in value[:10]
            ) + ("…" if len(value) > 10 else "")
        else:
            text = str(value)
        if not text:
            continue
        if len(text) > 80:
            text = text[:77] + "…"
        if " " in text or '"' in text:
            text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        parts.append(f"{key}={text}")
    return f"{head}: {', '.join(parts)}" if parts else head


def render_list(
    registration: ViewSetRegistration,
    items: Sequence[Any],
    envelope: Mapping[str, Any] | None,
    note: str | None,
) -> str:
    plural = registration.plural.replace("_", " ")
    if envelope is not None and "count" in envelope:
        head = f"{envelope['count']} {plural} in all; {len(items)} on this page."
    else:
        head = f"{len(items)} {plural}."
    if envelope is not None and envelope.get("next"):
        head += " More on the next page (ask for the next page number)."
    lines = [head]
    for item in items:
        lines.append(
            "- "
            + (render_object(registration.singular, item) if isinstance(item, dict) else str(item))
        )
    if note:
        lines.append(note)
    return "\n".join(lines)


_url_routes: list[Route] | None = None


def _url_conf_routes() -> list[Route]:
    global _url_routes
    if _url_routes is None:
        _url_routes = [Route(p, r, m, c) for p, r, m, c in EndpointEnumerator().get_api_endpoints()]
    return _url_routes


def register_viewset(
    endpoint: Endpoint, viewset: type[ViewSetMixin], **options: Any
) -> ViewSetRegistration:
    registration = ViewSetRegistration(endpoint, viewset, **options)
    for tool in registration.tools:
        endpoint.add_tool(tool)
    endpoint.viewset_registrations.append(registration)
    return registration


def register_router(
    endpoint: Endpoint, router: BaseRouter, **options: Any
) -> list[ViewSetRegistration]:
    return [
        register_viewset(endpoint, viewset, basename=basename, prefix=prefix, **options)
        for prefix, viewset, basename in router.registry
    ]
