"""The frozen facts of one viewset action, built once from drf-spectacular.

:func:`build_spec` asks drf-spectacular for the action's operation, the way its schema
view does (the view instantiated for the route, with a request), and turns it into an
:class:`ActionSpec`: the tool's input and output schemas, the scopes the view's
permissions ask for, the annotations, the description, and how arguments map onto the
URL, the query string and the body. Nothing here runs per call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from django.core.exceptions import ImproperlyConfigured
from django.urls import get_resolver
from django.utils.encoding import force_str
from django.utils.functional import Promise
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import modify_for_versioning, operation_matches_version
from drf_spectacular.settings import spectacular_settings
from rest_framework import permissions as drf_permissions
from rest_framework import serializers
from rest_framework.versioning import AcceptHeaderVersioning

from mcp_endpoint.compat import is_toolkit_class, skip_absent_geodjango, spectacular_messages
from mcp_endpoint.rest_framework.descriptions import description_for
from mcp_endpoint.rest_framework.filters import (
    LOOKUPS_ARGUMENT,
    NO_FILTERS,
    FilterArguments,
    filter_arguments,
)
from mcp_endpoint.rest_framework.naming import STANDARD_ACTIONS, identifier, model_of, plural_of
from mcp_endpoint.schema import SchemaError, bound_strings, compact_choices, portable
from mcp_endpoint.scopes import declares_scopes, default_scopes

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"})
# drf-spectacular's errors for a view whose serializer it could not get (it skips the view).
NO_SERIALIZER = re.compile(r"unable to guess serializer|exception raised while getting serializer")
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})
# The methods of a custom action whose body drf-spectacular guesses from the viewset.
BODY_GUESS_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The argument that holds the list, when a one-or-many body is offered in its list form.
ITEMS_ARGUMENT = "items"
JSON = "application/json"


class NotJSON(SchemaError):
    """The action renders a stream of unknown length: no tool result can carry its answer."""


# Renderers whose answer goes on for as long as the view likes (server-sent events, a
# multipart stream of frames): nothing a tool result can hold.
STREAM_MEDIA_TYPES = frozenset({"text/event-stream", "multipart/x-mixed-replace"})


@dataclass(frozen=True)
class Route:
    """One (viewset, action, method) found in the URL conf or in a router of our own."""

    path: str
    path_regex: str
    method: str
    callback: Any

    @property
    def action(self) -> str:
        """The viewset action; for an ``APIView``, the handler's method (``get``)."""
        actions = getattr(self.callback, "actions", None)
        action: str = actions[self.method.lower()] if actions else self.method.lower()
        return action

    @property
    def detail(self) -> bool:
        return bool(self.callback.initkwargs.get("detail"))

    def url_path(self, kwargs: Mapping[str, str]) -> str:
        """The route's path with the URL kwargs of one call filled in."""
        return re.sub(
            r"{(\w+)}", lambda m: quote(kwargs.get(m.group(1), m.group(0)), safe=""), self.path
        )


@dataclass(frozen=True)
class ActionOptions:
    """Per-action overrides a host passes to ``register_viewset``."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SchemaOptions:
    """What an endpoint (or one registration) chooses about the schemas of its tools."""

    # The API version to describe and call; None for each view's default version.
    version: str | None = None
    # "exact", "grouped" or "all": see mcp_endpoint.rest_framework.filters.
    filter_lookups: str = "grouped"
    # A one-or-many body in its list form (one "items" argument), not the object's fields.
    array_bodies: bool = False
    # Choice lists longer than this are made compact (mcp_endpoint.schema.compact_choices).
    large_choice_list: int = 50
    # The longest string passed on as a query parameter (MAX_QUERY_ARGUMENT_LENGTH).
    max_query_length: int = 500


@dataclass(frozen=True)
class ActionSpec:
    """Everything about one action's tool that does not change between calls."""

    name: str
    action: str
    detail: bool
    route: Route
    singular: str
    plural: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    # What the answer's items are, for the text of a result: the tool's own nouns, or, for
    # a custom action that answers with another kind (a document's notes), that kind's.
    item_singular: str
    item_plural: str
    annotations: dict[str, Any]
    description: str
    required_scopes: frozenset[str]
    # argument name -> URL kwarg, in URL order
    path_arguments: Mapping[str, str]
    # URL kwargs with one value for the tool (a URL path version drf-spectacular fixed)
    fixed_kwargs: Mapping[str, str]
    query_arguments: frozenset[str]
    body_arguments: frozenset[str]
    # The body goes under a "body" argument when its fields clash with path or query names.
    body_nested: bool
    # drf-spectacular described a bare list: the result is wrapped as {"results": [...]}.
    list_output: bool
    # The view's own authentication classes, which decide who may call.
    authentication_classes: tuple[type[Any], ...] = ()
    # What the call asks the view for: JSON, or the text type of an action that renders
    # only text (StaticHTMLRenderer, TemplateHTMLRenderer), whose tool answers with text.
    media_type: str = JSON
    # The paginator's query parameters that move to another page (page, offset, cursor).
    page_arguments: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    # The Accept header of a call: the API version the view was described for.
    accept: str = JSON
    # Filters offered inside the "lookups" argument rather than as arguments of their own.
    lookup_arguments: frozenset[str] = frozenset()
    # Query arguments whose list is sent as one comma-separated value, as their OpenAPI
    # parameter says (style form, explode false: django-filter's BaseInFilter); other
    # lists are sent as repeated parameters.
    comma_arguments: frozenset[str] = frozenset()
    # Query arguments named otherwise than their parameter, which a path parameter's name
    # takes (``query_id`` for ``?id=``): argument -> query parameter.
    query_names: Mapping[str, str] = field(default_factory=dict)
    # The body is a list, held by the "items" argument.
    body_list: bool = False
    # The action takes a body whose schema yielded no fields (nothing to send).
    body_without_fields: bool = False
    # The body is a custom action's guess (the viewset's serializer): no field is required.
    body_guessed: bool = False

    @property
    def method(self) -> str:
        return self.route.method


# What a registration's ``schema_request`` is: given the request a schema is built with
# (the Django request, as a middleware would see it), it sets what the product's middleware
# sets, and may return a context manager the build runs inside (a row scope, say).
SchemaRequest = Callable[[Any], AbstractContextManager[Any] | None]


def build_spec(*, schema_request: SchemaRequest | None = None, **facts: Any) -> ActionSpec:
    """The spec of one routed action (:func:`describe`'s), its view given the request a
    real call would carry as far as ``schema_request`` says (see :data:`SchemaRequest`)."""
    with ExitStack() as stack:
        return describe(**facts, prepare=lambda request: prepared(request, schema_request, stack))


def prepared(request: Any, schema_request: SchemaRequest | None, stack: ExitStack) -> None:
    if schema_request is None:
        return
    # DRF's Request reads attributes it lacks from the Django request, as a view reads
    # what a middleware set there.
    entered = schema_request(getattr(request, "_request", request))
    if entered is not None:
        stack.enter_context(entered)


def describe(
    *,
    viewset: type[Any],
    name: str,
    action: str,
    detail: bool,
    options: ActionOptions,
    singular: str,
    plural: str,
    route: Route,
    generator: SchemaGenerator,
    scopes_by_method: Mapping[str, Any] | None = None,
    schema_options: SchemaOptions | None = None,
    prepare: Callable[[Any], None] | None = None,
) -> ActionSpec:
    """The spec of one routed action; raises :class:`SchemaError` when there is no schema.
    ``prepare`` is given the view's request before the view reads it."""
    choices = schema_options or SchemaOptions()
    method = route.method
    view = generator.create_view(route.callback, method)
    path = generator.coerce_path(route.path, method, view)
    view.request = spectacular_settings.GET_MOCK_REQUEST(method, path, view, None)
    if prepare is not None:
        prepare(view.request)
    path, accept = apply_version(view, method, path, choices.version)
    operation, components, errors, warnings = spectacular_operation(view, route, path, generator)
    media_type = answer_media_type(view)
    no_serializer = [e for e in errors if NO_SERIALIZER.search(e)]
    if no_serializer and media_type == JSON:
        # drf-spectacular found no serializer and skipped the view: there is no schema.
        raise SchemaError(no_serializer[0])
    path_map, fixed_kwargs = align_path(route.path, path)
    arguments = parameter_arguments(view, route, path_map, operation, components)
    filters = arguments.filter(view, route, choices)
    arguments.add_body(view, viewset, route, action, detail, operation, components, choices)
    output = output_facts(
        view, viewset, route, action, operation, components, media_type, choices, singular, plural
    )
    warnings.extend(output.warnings)
    query_arguments = arguments.query
    return ActionSpec(
        name=name,
        action=action,
        detail=detail,
        route=route,
        singular=singular,
        plural=plural,
        item_singular=output.item_singular,
        item_plural=output.item_plural,
        input_schema=arguments.input_schema(choices),
        output_schema=output.schema,
        annotations=annotations_for(action, detail, method, options, singular, plural),
        description=tool_description(
            view, viewset, action, name, options, operation, arguments, filters, singular, plural
        ),
        required_scopes=required_scopes(view, method, scopes_by_method),
        path_arguments=arguments.path,
        fixed_kwargs=fixed_kwargs,
        query_arguments=frozenset(query_arguments),
        comma_arguments=frozenset(arguments.comma & query_arguments),
        query_names=arguments.query_names,
        body_arguments=frozenset(arguments.body),
        body_nested=arguments.body_nested,
        list_output=output.list_output,
        authentication_classes=tuple(type(a) for a in view.get_authenticators()),
        media_type=media_type,
        page_arguments=page_arguments(view),
        warnings=tuple(warnings),
        accept=accept,
        lookup_arguments=filters.hidden if filters.grouped is not None else frozenset(),
        body_list=arguments.body_list,
        body_without_fields=arguments.body_without_fields,
        body_guessed=arguments.body_guessed,
    )


def tool_description(
    view: Any,
    viewset: type[Any],
    action: str,
    name: str,
    options: ActionOptions,
    operation: dict[str, Any],
    arguments: Arguments,
    filters: FilterArguments,
    singular: str,
    plural: str,
) -> str:
    query_arguments = arguments.query
    return description_for(
        view=view,
        viewset=viewset,
        action=action,
        options_description=options.description,
        operation=operation,
        query_arguments=(
            {*query_arguments, LOOKUPS_ARGUMENT} if filters.grouped is not None else query_arguments
        ),
        path_arguments=arguments.path,
        singular=singular,
        plural=plural,
    ) or name.replace("_", " ")


def spectacular_operation(
    view: Any, route: Route, path: str, generator: SchemaGenerator
) -> tuple[dict[str, Any], dict[str, Any], list[str], list[str]]:
    """drf-spectacular's operation for the view, its components, and the errors and warnings
    it had while making them (as plain data)."""
    skip_absent_geodjango()
    with spectacular_messages() as messages:
        operation = spectacular_schema(view).get_operation(
            path, route.path_regex, "^/", route.method, generator.registry
        )
        components = generator.registry.build({}).get("schemas", {})
    errors = messages.errors
    warnings = messages.warnings + [e for e in errors if not NO_SERIALIZER.search(e)]
    return plain(operation or {}), plain(components), errors, warnings


@dataclass
class Arguments:
    """A tool's arguments as they are put together from the operation: each one's schema,
    and where it goes in the call (the path, the query string, the body)."""

    properties: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)
    # argument -> URL kwarg
    path: dict[str, str] = field(default_factory=dict)
    query: set[str] = field(default_factory=set)
    # Query parameters whose list is one comma-separated value (style form, explode false).
    comma: set[str] = field(default_factory=set)
    body: set[str] = field(default_factory=set)
    # Query parameters renamed because a path parameter has their name (a document's
    # notes at {id}/notes/ deleting the note ?id=...): argument -> query parameter.
    query_names: dict[str, str] = field(default_factory=dict)
    body_nested: bool = False
    body_list: bool = False
    body_without_fields: bool = False
    body_guessed: bool = False

    def filter(self, view: Any, route: Route, choices: SchemaOptions) -> FilterArguments:
        """Offer a list's django-filter lookups as :func:`filter_arguments` says."""
        query = {n: self.properties[n] for n in self.query}
        filters = (
            filter_arguments(view, query, choices.filter_lookups)
            if route.method == "GET" and not route.detail
            else NO_FILTERS
        )
        for hidden in filters.hidden:
            self.properties.pop(hidden, None)
            self.query.discard(hidden)
        if filters.grouped is not None:
            self.properties[LOOKUPS_ARGUMENT] = filters.grouped
        return filters

    def add_body(
        self,
        view: Any,
        viewset: type[Any],
        route: Route,
        action: str,
        detail: bool,
        operation: dict[str, Any],
        components: dict[str, Any],
        choices: SchemaOptions,
    ) -> None:
        """The arguments of the request body: beside the others, or under ``body`` where a
        name clashes, or the list form under ``items``."""
        method = route.method
        body = json_content(operation.get("requestBody", {}))
        # A custom action on one object whose body is only the viewset's serializer, guessed:
        # many such actions (mark_paid, archive) read no body at all, so nothing is required.
        self.body_guessed = body is not None and guessed_body(view, viewset, action, detail, method)
        if body is None:
            return
        one, many = body_branches(portable(body, components))
        body_schema = one or {}
        if choices.array_bodies and many is not None:
            # The list form, as one argument: {"items": [{...}, {...}]}.
            self.body_list = True
            body_schema = {
                "type": "object",
                "properties": {ITEMS_ARGUMENT: many},
                "required": [ITEMS_ARGUMENT],
            }
        body_properties = {
            k: v for k, v in body_schema.get("properties", {}).items() if not v.get("readOnly")
        }
        self.body_without_fields = method in WRITE_METHODS and not body_properties
        body_required = (
            []
            if method == "PATCH" or self.body_guessed
            else [r for r in body_schema.get("required", []) if r in body_properties]
        )
        if self.body_list:
            self.properties.update(body_properties)
            self.required.extend(body_required)
        elif set(body_properties) & set(self.properties):
            self.body_nested = True
            self.properties["body"] = {
                "type": "object",
                "properties": body_properties,
                "additionalProperties": False,
            }
            if body_required:
                self.properties["body"]["required"] = body_required
            if method != "PATCH" and not self.body_guessed:
                self.required.append("body")
        else:
            self.properties.update(body_properties)
            self.required.extend(body_required)
            self.body = set(body_properties)

    def input_schema(self, choices: SchemaOptions) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": self.properties}
        if self.required:
            schema["required"] = self.required
        schema["additionalProperties"] = False
        return bound_strings(
            compact_choices(
                strip_flagged(schema, "readOnly"), limit=choices.large_choice_list, output=False
            ),
            {*self.query, LOOKUPS_ARGUMENT},
            choices.max_query_length,
        )


def parameter_arguments(
    view: Any,
    route: Route,
    path_map: Mapping[str, str],
    operation: dict[str, Any],
    components: dict[str, Any],
) -> Arguments:
    """The arguments of the operation's path and query parameters."""
    arguments = Arguments()
    kwarg_schemas = url_kwarg_schemas(route.path_regex)
    in_path = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "path"}
    for parameter in operation.get("parameters", []):
        pname = parameter["name"]
        if parameter.get("in") == "query" and pname in in_path:
            arguments.query_names[f"query_{pname}"] = pname
            pname = f"query_{pname}"
        schema = portable(parameter.get("schema", {"type": "string"}), components)
        if parameter.get("description") and "description" not in schema:
            schema["description"] = parameter["description"]
        if parameter.get("in") == "path":
            arguments.path[pname] = path_map.get(pname, pname)
            schema = path_schema(view, schema, kwarg_schemas.get(arguments.path[pname]))
            if arguments.path[pname] == version_param(view):
                # A URL path version: the versions the view allows, the default first.
                allowed = [str(v) for v in view.versioning_class.allowed_versions]
                schema = {"type": "string", "enum": allowed}
            arguments.required.append(pname)
        elif parameter.get("in") == "query":
            arguments.query.add(pname)
            if parameter.get("explode") is False and parameter.get("style", "form") == "form":
                arguments.comma.add(pname)
        else:
            continue
        arguments.properties[pname] = schema
    refine_query_schemas(view, arguments.properties)
    return arguments


def path_schema(view: Any, schema: dict[str, Any], typed: dict[str, Any] | None) -> dict[str, Any]:
    if typed is None or "enum" in schema:
        return schema
    # What the route's converter or regex lets through, which drf-spectacular cannot know
    # for a kwarg that is not a model field (a nested route's user_pk), and which a model
    # field's type must not contradict (a list of choices says more).
    return {**{k: v for k, v in schema.items() if k not in KWARG_TYPE_KEYWORDS}, **typed}


def version_param(view: Any) -> str | None:
    """The URL kwarg that holds the API version, when the view's versioning allows a list."""
    versioning = getattr(view, "versioning_class", None)
    if not getattr(versioning, "allowed_versions", None):
        return None
    param: str | None = getattr(versioning, "version_param", None)
    return param


@dataclass(frozen=True)
class OutputFacts:
    schema: dict[str, Any] | None
    list_output: bool
    item_singular: str
    item_plural: str
    warnings: tuple[str, ...] = ()


def output_facts(
    view: Any,
    viewset: type[Any],
    route: Route,
    action: str,
    operation: dict[str, Any],
    components: dict[str, Any],
    media_type: str,
    choices: SchemaOptions,
    singular: str,
    plural: str,
) -> OutputFacts:
    """The output schema, whether the answer is a list, the nouns of its items, and the
    warning of a list action described as one object."""
    warnings = []
    output_schema, list_output = output_from(operation, components)
    answer_serializer = response_serializer(view)
    if output_schema is not None:
        output_schema = untyped_method_fields(output_schema, answer_serializer)
    item_singular, item_plural = (
        (singular, plural)
        if action in STANDARD_ACTIONS
        else item_nouns(answer_serializer, viewset, singular, plural)
    )
    if output_schema is not None:
        # Large choice lists first (their listing in the description goes with them), then
        # what no output schema constrains.
        output_schema = requiring_nothing(
            compact_choices(output_schema, limit=choices.large_choice_list, output=True)
        )
        if list_output:
            output_schema["required"] = ["results"]  # the tool's own wrapper: always there
    if (
        route.method == "GET"
        and media_type == JSON
        and not route.detail
        and not list_output
        and "results" not in (output_schema or {}).get("properties", {})
        and not declares_one_object(view, viewset)
    ):
        if output_schema is not None:
            output_schema = one_or_many(output_schema)
        warnings.append(
            f"the list action {action!r} is described as returning one object, so "
            "its tool gets no filter or page arguments and an output schema that admits "
            "one object or a list of them; add @extend_schema(responses=Serializer(many=True))"
        )
    return OutputFacts(output_schema, list_output, item_singular, item_plural, tuple(warnings))


def guessed_body(view: Any, viewset: type[Any], action: str, detail: bool, method: str) -> bool:
    """Whether the body of a custom ``detail`` action that writes is only drf-spectacular's
    guess: the viewset's ``serializer_class``, with neither ``@extend_schema(request=...)``
    nor a ``serializer_class`` of the action's own (nor a ``get_serializer_class()`` that
    picks another) to say what the endpoint reads.

    drf-spectacular describes such an action's body with the viewset's serializer, so an
    action that reads no body (``mark_paid``) would demand every field of the object. A
    declared request serializer is the same object each time it is asked for; the guess is
    a new instance from ``view.get_serializer()`` each time.
    """
    if action in STANDARD_ACTIONS or not detail or method not in BODY_GUESS_METHODS:
        return False
    try:
        if view.get_serializer_class() is not getattr(viewset, "serializer_class", None):
            return False
        inspector = spectacular_schema(view)
        first, second = inspector.get_request_serializer(), inspector.get_request_serializer()
    except Exception:
        # Host code (get_serializer_class, a serializer's __init__) on a request made up for
        # the schema, which drf-spectacular tolerated: the body stays as described.
        return False
    return first is not second and type(first) is type(second)


def declares_one_object(view: Any, viewset: type[Any]) -> bool:
    """Whether a list-route action says it answers with one object: its response is
    declared (``@extend_schema(responses=StatsSerializer)``), or the action has a
    serializer of its own (``@action(serializer_class=...)``), not the viewset's guessed.

    A declared response is the same object each time drf-spectacular asks for it; the
    guess is a new instance from ``view.get_serializer()`` each time.
    """
    try:
        if view.get_serializer_class() is not getattr(viewset, "serializer_class", None):
            return True
        inspector = spectacular_schema(view)
        return bool(inspector.get_response_serializers() is inspector.get_response_serializers())
    except Exception:
        # Host code on the made-up request the schema is built for: still a guess.
        return False


def spectacular_schema(view: Any) -> AutoSchema:
    """drf-spectacular's inspector for the view, whatever the host's DEFAULT_SCHEMA_CLASS.

    A host that generates its OpenAPI document with DRF's own generator (or another) still
    gets tool schemas from drf-spectacular; only the REST API's schema view uses theirs.
    """
    inspector = view.schema
    if isinstance(inspector, AutoSchema):
        return inspector
    inspector = AutoSchema()
    inspector.view = view
    return inspector


def align_path(route_path: str, schema_path: str) -> tuple[dict[str, str], dict[str, str]]:
    """Map drf-spectacular's path parameter names to the URL kwargs they stand for.

    ``route_path`` names the URL kwargs (``/api/{version}/snippets/{pk}/``); drf-spectacular
    may rename one (``{pk}`` -> ``{id}``) and fill one in (a URL path version, ``v1``).
    Segment by segment: a renamed kwarg maps to its argument, a filled one is fixed.
    """
    route_segments = route_path.split("/")
    schema_segments = schema_path.split("/")
    mapping: dict[str, str] = {}
    fixed: dict[str, str] = {}
    if len(route_segments) == len(schema_segments):
        for route_segment, schema_segment in zip(route_segments, schema_segments, strict=True):
            kwargs = re.findall(r"{(\w+)}", route_segment)
            names = re.findall(r"{(\w+)}", schema_segment)
            if kwargs and len(names) == len(kwargs):
                mapping.update(zip(names, kwargs, strict=True))
            elif len(kwargs) == 1 and not names and route_segment == "{" + kwargs[0] + "}":
                fixed[kwargs[0]] = schema_segment
        return mapping, fixed
    kwargs = re.findall(r"{(\w+)}", route_path)
    names = re.findall(r"{(\w+)}", schema_path)
    return dict(zip(names, kwargs, strict=False)), fixed


# URL kwargs the route types: Django's converters, and the regexes that say the same.
KWARG_SCHEMAS: dict[str, dict[str, Any]] = {
    "int": {"type": "integer", "minimum": 0},
    "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
    "uuid": {"type": "string", "format": "uuid"},
}
REGEX_SCHEMAS: dict[str, dict[str, Any]] = {
    "[0-9]+": KWARG_SCHEMAS["int"],
    r"\d+": KWARG_SCHEMAS["int"],
    "-?[0-9]+": {"type": "integer"},
    r"-?\d+": {"type": "integer"},
    "[-a-zA-Z0-9_]+": KWARG_SCHEMAS["slug"],
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}": KWARG_SCHEMAS["uuid"],
}
# What a route's own typing replaces in drf-spectacular's schema of a kwarg.
KWARG_TYPE_KEYWORDS = frozenset({"type", "format", "pattern", "minimum", "maximum"})


def url_kwarg_schemas(pattern: str) -> dict[str, dict[str, Any]]:
    """The schema of each URL kwarg whose converter (``<int:user_pk>``, ``<slug:...>``,
    ``<uuid:...>``) or regex (``(?P<user_pk>[0-9]+)``) types it; ``str``, ``path`` and
    other regexes leave it to drf-spectacular."""
    schemas: dict[str, dict[str, Any]] = {}
    for converter, name in re.findall(r"<(?:(\w+):)?(\w+)>", pattern):
        if converter in KWARG_SCHEMAS:
            schemas[name] = dict(KWARG_SCHEMAS[converter])
    for name, regex in re.findall(r"\(\?P<(\w+)>((?:[^()]|\([^()]*\))*)\)", pattern):
        if regex in REGEX_SCHEMAS:
            schemas[name] = dict(REGEX_SCHEMAS[regex])
    return schemas


def page_arguments(view: Any) -> tuple[str, ...]:
    """The query parameters the view's paginator reads to pick a page, whatever its class."""
    paginator = getattr(view, "paginator", None)
    names = (
        getattr(paginator, attribute, None)
        for attribute in ("page_query_param", "offset_query_param", "cursor_query_param")
    )
    return tuple(name for name in names if isinstance(name, str) and name)


def answer_media_type(view: Any) -> str:
    """JSON when the view renders it; else the type it renders (a page, a file, whose
    tool answers with its text or the file); :class:`NotJSON` for a stream."""
    media_types = [str(r.media_type).split(";")[0].strip() for r in view.get_renderers()]
    if any(m == JSON or m.endswith("+json") for m in media_types):
        return JSON
    answers = [m for m in media_types if m.lower() not in STREAM_MEDIA_TYPES]
    if not answers:
        raise NotJSON(
            f"the action renders {', '.join(media_types) or 'nothing'}, a stream of unknown length"
        )
    # A text type first (TemplateHTMLRenderer beside a download, say), else the first.
    return next((m for m in answers if m.startswith("text/")), answers[0])


def apply_version(view: Any, method: str, path: str, requested: str | None) -> tuple[str, str]:
    """drf-spectacular's versioning step, for a view whose version is in the Accept header:
    the view is described for the requested version (or its default one), and the calls
    ask for that version. The path, and the Accept header of a call."""
    versioning = getattr(view, "versioning_class", None)
    if versioning is None or not issubclass(versioning, AcceptHeaderVersioning):
        return path, JSON
    version = requested or versioning.default_version
    if not version:
        return path, JSON
    path = modify_for_versioning(get_resolver().url_patterns, method, path, view, version)
    if not operation_matches_version(view, version):
        allowed = ", ".join(map(str, versioning.allowed_versions or ())) or "none"
        raise SchemaError(
            f"the view does not serve API version {version!r} (its versions: {allowed})"
        )
    return path, f"{JSON}; {versioning.version_param}={version}"


def body_branches(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The object, and the list of objects, a request body may be: a plain object body is
    the first; a ``oneOf``/``anyOf`` body (one object, or a list of them, as a bulk-capable
    create takes) may be both."""
    branches = schema.get("oneOf") or schema.get("anyOf")
    if "properties" in schema or not isinstance(branches, list):
        return schema, None
    one = next((b for b in branches if b.get("type") == "object" or "properties" in b), None)
    many = next(
        (
            b
            for b in branches
            if b.get("type") == "array"
            and isinstance(b.get("items"), dict)
            and (b["items"].get("type") == "object" or "properties" in b["items"])
        ),
        None,
    )
    return one, many


def refine_query_schemas(view: Any, properties: dict[str, Any]) -> None:
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
    operation: dict[str, Any], components: dict[str, Any]
) -> tuple[dict[str, Any] | None, bool]:
    """The output schema from the first 2xx JSON response, and whether it wraps a list."""
    responses = operation.get("responses", {})
    for status in sorted(code for code in responses if str(code).startswith("2")):
        schema = json_content(responses[status])
        if schema is None:
            continue
        output = strip_flagged(portable(schema, components), "writeOnly")
        if output.get("type") != "object":
            # structuredContent must be an object: a bare list becomes {"results": [...]}.
            return {
                "type": "object",
                "properties": {"results": output},
                "required": ["results"],
            }, True
        return output, False
    return None, False


# Keywords of a schema whose values are schemas, or lists or maps of schemas.
SUBSCHEMA_KEYWORDS = ("items", "additionalProperties", "not", "contains")
SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


# What a serializer checks of a value written, which says nothing of the values read: a
# row saved before a choice was removed, or by another path than the serializer, is sent
# as it is by REST.
WRITE_CONSTRAINTS = frozenset(
    {"required", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum"}
    | {"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
)


def one_or_many(item: dict[str, Any]) -> dict[str, Any]:
    """The output schema of a list action described as answering one object: the view may
    answer that object, or a list of them (which the tool wraps as ``{"results": [...]}``);
    nothing says which, so the schema admits both, requiring neither."""
    properties = dict(item.get("properties") or {})
    properties["results"] = {"type": "array", "items": item}
    return {**item, "properties": properties}


def requiring_nothing(schema: Any) -> Any:
    """An output schema that names properties and types, and constrains nothing else.

    The rule for every advertised output schema: it names the properties a result may have
    and their types, requires none of them, and carries none of the checks a serializer
    makes of what is written (choices, lengths, bounds, patterns). A host's serializer can
    leave any field out (``to_representation`` that drops one, a ``fields=`` or
    ``full_perms`` parameter that picks them), and a stored value can predate a choice list;
    nothing in the OpenAPI document says which, and a client that validates (the official
    SDKs do) would refuse every such result. (The tool's own wrapper of a bare list,
    ``results``, is always there: :func:`build_spec` requires it again.)
    """
    if isinstance(schema, list):
        return [requiring_nothing(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in WRITE_CONSTRAINTS and not isinstance(value, dict):
            continue
        if key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
            out[key] = {name: requiring_nothing(sub) for name, sub in value.items()}
        elif key in SUBSCHEMA_KEYWORDS or key in SUBSCHEMA_LISTS:
            out[key] = requiring_nothing(value)
        else:
            out[key] = value
    return out


def response_serializer(view: Any) -> Any:
    """The serializer drf-spectacular described the action's answer with, when it is one
    (not a dict of them by status, nor a bare type); None when host code cannot say."""
    try:
        serializer = spectacular_schema(view).get_response_serializers()
    except Exception:
        # Host code (get_serializer_class, a serializer's __init__) on the made-up request
        # the schema is built for: the schema stays as drf-spectacular wrote it.
        return None
    if isinstance(serializer, type) and issubclass(serializer, serializers.BaseSerializer):
        try:
            serializer = serializer()
        except Exception:
            return None
    return serializer if isinstance(serializer, serializers.BaseSerializer) else None


def item_nouns(serializer: Any, viewset: type[Any], singular: str, plural: str) -> tuple[str, str]:
    """(singular, plural) of what a custom action answers with: its serializer's model's
    names when that is another model than the viewset's (``Note``, ``notes``), the
    serializer's own name when it has no model (``StatisticsSerializer``: ``statistics``),
    else the tool's own nouns."""
    if isinstance(serializer, serializers.ListSerializer):
        serializer = serializer.child
    if serializer is None:
        return singular, plural
    model = getattr(getattr(serializer, "Meta", None), "model", None)
    if model is not None:
        if model is model_of(viewset):
            return singular, plural
        one = force_str(model._meta.verbose_name)
        declared = "verbose_name_plural" in model._meta.original_attrs
        many = force_str(model._meta.verbose_name_plural) if declared else plural_of(one)
        return identifier(one), identifier(many)
    name = type(serializer).__name__.removesuffix("Serializer")
    if not name or name == "Serializer":
        return singular, plural
    one = identifier(re.sub(r"(?<!^)(?=[A-Z])", "_", name))
    return one, identifier(plural_of(one.replace("_", " ")))


def untyped_method_fields(schema: dict[str, Any], serializer: Any) -> dict[str, Any]:
    """``schema`` with the type of each ``SerializerMethodField`` of the answer's serializer
    left open (its description kept), unless the host declared it with
    ``@extend_schema_field``.

    drf-spectacular types such a field from the method's Python return hint, which nothing
    checks against what the method returns (``-> str`` over a count, a ``set``); a wrong
    hint would make real results fail the advertised schema.
    """
    if serializer is None:
        return schema
    item = schema
    results = schema.get("properties", {}).get("results")
    if isinstance(results, dict) and isinstance(results.get("items"), dict):
        item = results["items"]  # a bare list wrapped, or a paginator's page
    _open_method_fields(item, serializer)
    return schema


def _open_method_fields(schema: Any, serializer: Any) -> None:
    if isinstance(serializer, serializers.ListSerializer):
        serializer = serializer.child
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not isinstance(serializer, serializers.Serializer):
        return
    try:
        fields = serializer.fields
    except Exception:
        return  # host code building the fields on a made-up request
    for name, declared in fields.items():
        prop = properties.get(name)
        if not isinstance(prop, dict):
            continue
        if isinstance(declared, serializers.SerializerMethodField):
            method = getattr(declared.parent, declared.method_name, None)
            if not hasattr(method, "_spectacular_annotation"):
                properties[name] = {k: v for k, v in prop.items() if k in ("description", "title")}
        elif isinstance(declared, serializers.BaseSerializer):
            nested = (
                prop.get("items", prop)
                if isinstance(declared, serializers.ListSerializer)
                else prop
            )
            branches = nested.get("anyOf") if isinstance(nested, dict) else None
            for branch in branches if isinstance(branches, list) else [nested]:
                _open_method_fields(branch, declared)


def annotations_for(
    action: str,
    detail: bool,
    method: str,
    options: ActionOptions,
    singular: str,
    plural: str,
) -> dict[str, Any]:
    noun = (
        plural
        if (action == "list" or (action not in STANDARD_ACTIONS and not detail))
        else singular
    )
    verb = STANDARD_ACTIONS.get(action, (action, False))[0]
    default_title = f"{verb.replace('_', ' ').capitalize()} {noun.replace('_', ' ')}"
    if options.name:
        # A renamed tool is titled after its name, not after the action it replaced.
        default_title = options.name.replace("_", " ").capitalize()
    annotations: dict[str, Any] = {
        "title": options.title or default_title,
        "readOnlyHint": method in SAFE_METHODS,
    }
    # A custom POST action may do anything (a bulk edit that deletes, a send): destructive
    # unless the host says otherwise; the standard create only adds.
    annotations["destructiveHint"] = method == "DELETE" or (
        method == "POST" and action not in STANDARD_ACTIONS
    )
    annotations["idempotentHint"] = method in IDEMPOTENT_METHODS
    annotations["openWorldHint"] = False
    annotations.update(options.annotations)
    return annotations


def required_scopes(
    view: Any, method: str, by_method: Mapping[str, Any] | None = None
) -> frozenset[str]:
    """The scopes a call of ``method`` needs: the view's own scope policy (the scopes
    django-oauth-toolkit's permissions on it ask for), or the default policy's."""
    if not declares_scopes(view):
        return default_scopes(view, method, by_method)
    request = SimpleNamespace(method=method)
    scopes: set[str] = set()
    for permission in view.get_permissions():
        scopes |= _permission_scopes(permission, request, view)
    return frozenset(scopes)


def _permission_scopes(permission: Any, request: Any, view: Any) -> set[str]:
    if is_toolkit_class(type(permission), {"TokenHasScope"}):
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


def json_content(section: Mapping[str, Any]) -> dict[str, Any] | None:
    content = section.get("content") or {}
    for media, value in content.items():
        # "application/json; version=4.1" when the view reads its version from Accept.
        base = media.split(";", 1)[0].strip()
        if base == JSON or base.endswith("+json"):
            schema: dict[str, Any] | None = value.get("schema")
            return schema
    return None


def strip_flagged(schema: Any, flag: str) -> Any:
    """Drop properties marked ``readOnly`` (from inputs) or ``writeOnly`` (from outputs)."""
    if isinstance(schema, list):
        return [strip_flagged(s, flag) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strip_flagged(v, flag) for k, v in schema.items() if k != "properties"}
    if "properties" in schema:
        kept = {
            k: strip_flagged(v, flag)
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


def plain(value: Any) -> Any:
    """JSON-ready data: lazy translations and other proxies as strings."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Promise):
        return force_str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.loads(json.dumps(value, default=str))
