"""Registering viewsets and routers on an endpoint; each action becomes a :class:`ViewSetTool`.

A registration knows its viewset, its options and its tools. It builds the tools' specs
once per process, on first use (routes are read from the host's URL conf, which is not
loaded yet when ``mcp.py`` modules register), and reports what it could not build through
:meth:`ViewSetRegistration.check`, which the endpoint's checks collect.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from django.conf import settings as django_settings
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from django.urls import URLResolver, get_resolver, get_urlconf
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView
from rest_framework.viewsets import ViewSetMixin

from mcp_endpoint.database import DatabaseNeeded, database_blocked
from mcp_endpoint.rest_framework import problems
from mcp_endpoint.rest_framework.calling import tool_view_class
from mcp_endpoint.rest_framework.naming import (
    action_methods,
    default_basename,
    default_tool_name,
    identifier,
    method_tool_name,
    nouns,
    parent_noun,
    prefixed_nouns,
    viewset_actions,
)
from mcp_endpoint.rest_framework.spec import (
    ActionOptions,
    ActionSpec,
    NotJSON,
    Route,
    SchemaOptions,
    build_spec,
)
from mcp_endpoint.rest_framework.tool import ViewSetTool

if TYPE_CHECKING:
    from rest_framework.routers import BaseRouter

    from mcp_endpoint.endpoint import Endpoint
    from mcp_endpoint.rest_framework.spec import SchemaRequest

logger = logging.getLogger("mcp_endpoint.rest_framework")
_build_lock = threading.RLock()


def action_options(
    names: Mapping[str, str] | None,
    titles: Mapping[str, str] | None,
    descriptions: Mapping[str, str] | None,
    annotations: Mapping[str, Mapping[str, Any]] | None,
) -> dict[str, ActionOptions]:
    """The host's options for each action it names in any of them."""
    options: dict[str, ActionOptions] = {}
    for action in (
        set(names or {}) | set(titles or {}) | set(descriptions or {}) | set(annotations or {})
    ):
        options[action] = ActionOptions(
            name=(names or {}).get(action),
            title=(titles or {}).get(action),
            description=(descriptions or {}).get(action),
            annotations=dict((annotations or {}).get(action, {})),
        )
    return options


def method_options(options: ActionOptions, own: ActionOptions | None) -> ActionOptions:
    """The options of one method of an action routed for several: its own over the
    action's; a name is one tool's only."""
    if own is None:
        return replace(options, name=None)
    return ActionOptions(
        name=own.name,
        title=own.title or options.title,
        description=own.description or options.description,
        annotations={**options.annotations, **own.annotations},
    )


class ViewSetRegistration:
    """One registered viewset: its tools, and the specs built for them once."""

    def __init__(
        self,
        endpoint: Endpoint,
        viewset: type[Any],
        *,
        basename: str | None = None,
        prefix: str | None = None,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] = (),
        names: Mapping[str, str] | None = None,
        titles: Mapping[str, str] | None = None,
        descriptions: Mapping[str, str] | None = None,
        annotations: Mapping[str, Mapping[str, Any]] | None = None,
        task_support: Mapping[str, str] | None = None,
        singular: str | None = None,
        plural: str | None = None,
        version: str | None = None,
        parents: Sequence[str] | None = None,
        name_prefix: str | None = None,
        router: BaseRouter | None = None,
        schema_request: SchemaRequest | None = None,
        toolset: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.version = version
        if schema_request is not None and not callable(schema_request):
            raise ImproperlyConfigured(
                f"schema_request for {viewset.__name__} must be a callable that takes the "
                f"request the schema is built with; got {schema_request!r}."
            )
        self.schema_request = schema_request
        self.viewset = viewset
        self.basename = basename or default_basename(viewset)
        # A router's viewset is found by the views the router made for it; otherwise by
        # the URL kwargs of its parents, which tell a nested route from a flat one.
        self.router_callbacks: frozenset[Any] | None = None
        # Parents the host named: a router's routes under exactly those URL kwargs (those of
        # the include() prefix it is mounted under, and its own).
        self.parents_given = parents is not None
        naming_parents = self.mount(router, parents)
        if name_prefix is None:
            name_prefix = parent_noun(naming_parents[-1]) if naming_parents else ""
        self.prefix = prefix or self.basename
        self.include = set(include) if include is not None else None
        self.exclude = set(exclude)
        self.options = action_options(names, titles, descriptions, annotations)
        self.singular, self.plural = prefixed_nouns(
            name_prefix, *nouns(viewset, self.basename, singular, plural)
        )
        # The viewset's tools are one toolset, named after its objects unless the host
        # names it (several viewsets may share one).
        self.toolset = toolset or toolset_name(self.plural)
        self.view_class = tool_view_class(viewset)
        self.tools: list[ViewSetTool] = []
        # Found when registering (E020), and when building (E021, W022).
        self.problems: list[CheckMessage] = []
        self.build_problems: list[CheckMessage] = []
        self.built = False
        # The last build without the database stopped because host code needed it.
        self.deferred = False
        self.add_actions(task_support or {})

    def mount(
        self, router: BaseRouter | None, parents: Sequence[str] | None
    ) -> Sequence[str] | None:
        """Keep the router and the parents the routes are found under; return the parents
        the tools are named after."""
        naming_parents: Sequence[str] | None = parents
        if router is not None:
            self.router_callbacks, router_parents = router_entry(
                router, self.viewset, self.basename
            )
            parents = router_parents if parents is None else parents
            # Named after the router's own last lookup, not an include() prefix's kwarg
            # that every viewset mounted under it shares (a tenant, a project).
            naming_parents = router_parents
        self.router = router
        self.parents = tuple(parents) if parents is not None else None
        return naming_parents

    def add_actions(self, task_support: Mapping[str, str]) -> None:
        """The tools of each included action; E020 for an option naming no action."""
        actions = self.find_actions()
        # The option keys: each action, and "<action>.<method>" for each method of one
        # routed for several.
        known = {action for action, _ in actions} | {
            f"{action}.{method.lower()}"
            for action, _ in actions
            for method in self.multi_methods(action)
        }
        for action, detail in actions:
            if self.include is not None and action not in self.include:
                continue
            if action in self.exclude:
                continue
            self.add_tools(action, detail, task_support)
        named = (self.include or set()) | self.exclude | set(self.options) | set(task_support)
        for action in sorted(named - known):
            self.problems.append(
                Error(
                    f"{self.viewset.__name__} has no action {action!r} to make a tool of.",
                    hint=f"Its actions are: {', '.join(sorted(known))}.",
                    obj=self.endpoint,
                    id="mcp_endpoint.E020",
                )
            )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.viewset.__name__} on {self.endpoint.name!r}>"

    def find_actions(self) -> list[tuple[str, bool]]:
        """(action, detail) for each action that may become a tool."""
        return viewset_actions(self.viewset)

    def add_tools(self, action: str, detail: bool, task_support: Mapping[str, str]) -> None:
        """The tools of one action: one, or one per method of an action routed for several,
        each named and described on its own (``names={"notes.post": ...}`` names one, and
        ``exclude=["notes.delete"]`` leaves one out)."""
        for method, handler in self.multi_methods(action).items() or [(None, action)]:
            key = f"{action}.{method.lower()}" if method else action
            if key in self.exclude:
                continue
            options = self.options.get(action, ActionOptions())
            if method is not None:
                options = method_options(options, self.options.get(key))
            name = options.name or (
                self.default_name(action, detail)
                if method is None
                else self.method_name(action, method, detail)
            )
            if method is not None:
                options = replace(options, name=name)  # titled after it, as a renamed tool
            tool = ViewSetTool(self, action, detail, name, options, method, handler)
            # A long-running action runs as a task for clients that can poll.
            tool.task_support = task_support.get(key, task_support.get(action, tool.task_support))
            self.tools.append(tool)

    def default_name(self, action: str, detail: bool) -> str:
        return default_tool_name(action, detail, self.singular, self.plural)

    def multi_methods(self, action: str) -> dict[str, str]:
        """METHOD -> handler for an action routed for several methods; else empty."""
        return action_methods(self.viewset, action)

    def method_name(self, action: str, method: str, detail: bool) -> str:
        return method_tool_name(action, method, detail, self.singular, self.plural)

    def matches(self, route: Route) -> bool:
        """Whether a route of the URL conf is one of this registration's (asked only of the
        routes of its view class: :func:`view_routes`)."""
        return getattr(route.callback, "cls", None) is self.viewset

    def route_parents(self, route: Route) -> tuple[str, ...]:
        """The URL kwargs of a route that name parent objects (``user_pk`` in
        ``users/{user_pk}/snippets/{pk}/``): all but the lookup, the format suffix and a
        URL path version."""
        own = {
            getattr(self.viewset, "lookup_url_kwarg", None)
            or getattr(self.viewset, "lookup_field", "pk"),
            getattr(getattr(self.viewset, "versioning_class", None), "version_param", None),
            "format",
        }
        return tuple(k for k in re.findall(r"{(\w+)}", route.path) if k not in own)

    def routed_families(self) -> tuple[list[Route], list[tuple[str, ...]]]:
        """The viewset's routes in the URL conf, and their parents, each set once."""
        routes = [route for route in view_routes(self.viewset) if self.matches(route)]
        return routes, list(dict.fromkeys(self.route_parents(route) for route in routes))

    def url_conf_routes(self) -> list[Route]:
        """This registration's routes in the URL conf.

        A viewset routed flat and nested (``snippets/`` and ``users/{user_pk}/snippets/``)
        is registered once for each: without ``parents`` the flat routes are taken (or the
        first nested ones when it has no flat route), with them the routes under exactly
        those parents. A router's routes are those it made, under the ``include()`` prefix
        it is mounted under: the prefix's URL kwargs (``tenant`` in
        ``(?P<tenant>[^/]+)/``) are parents of its viewsets like its own lookups.
        """
        routes, families = self.routed_families()
        if self.router_callbacks is not None:
            own = [route for route in routes if route.callback in self.router_callbacks]
            if own and not self.parents_given:
                first = self.route_parents(own[0])
                return [route for route in own if self.route_parents(route) == first]
            if own:
                return [route for route in own if self.route_parents(route) == self.parents]
        wanted = self.parents
        if wanted is None:
            wanted = () if () in families or not families else families[0]
        return [route for route in routes if self.route_parents(route) == wanted]

    def routed_parents(self) -> tuple[str, ...] | None:
        """The parents of the routes the tools call (an ``include()`` prefix's URL kwargs
        and a nested route's lookups), or None when the URL conf does not route them."""
        routes = self.url_conf_routes()
        return self.route_parents(routes[0]) if routes else None

    def mounts(self) -> list[tuple[str, ...]]:
        """The parents of each place the URL conf mounts this registration's router."""
        if self.router_callbacks is None:
            return []
        return list(
            dict.fromkeys(
                self.route_parents(route)
                for route in view_routes(self.viewset)
                if route.callback in self.router_callbacks
            )
        )

    def check_routes(self) -> list[CheckMessage]:
        """Problems of the URL conf for this registration, found before the specs are built."""
        if self.router_callbacks is not None:
            return self.check_mounts()
        if self.parents is None:
            return []
        _, families = self.routed_families()
        if not families or self.parents in families:
            return []
        return [
            Error(
                f"{self.viewset.__name__} is registered under the parents "
                f"{list(self.parents)!r}, but no route of it takes exactly those URL kwargs.",
                hint="Its routes take: "
                + "; ".join(repr(list(family)) for family in families)
                + " (parents=[] for the flat routes).",
                obj=self.endpoint,
                id="mcp_endpoint.E100",
            )
        ]

    def check_mounts(self) -> list[CheckMessage]:
        """E101, E102 and W101: where a router's viewset is mounted, against its parents."""
        return problems.mount_problems(self)

    def check_authentication(self) -> list[CheckMessage]:
        """W030: the viewset takes none of the credentials the endpoint authenticates."""
        return problems.authentication_problems(self)

    def check(self, *, database: bool = False) -> list[CheckMessage]:
        """What is wrong with this registration, for the system checks.

        Without ``database`` (every check run): the problems found when registering, and,
        when the specs build without the database, those found building them. With it (the
        ``database``-tagged check, once the database is migrated): the build problems of a
        registration that needed the database to build, which the first kind left out.
        """
        if database:
            if not self.built and not self.deferred:
                self.build(database=False)
            if self.built:
                return []  # built without the database: the other check reports it
            try:
                self.build()
            except DatabaseError as exc:
                return [
                    Warning(
                        f"The tools of {self.viewset.__name__} could not be built: {exc}",
                        hint="They are built on first use; run the check again once the "
                        "database is ready.",
                        obj=self.endpoint,
                        id="mcp_endpoint.W022",
                    )
                ]
            return self.build_messages()
        self.build(database=False)
        return list(self.problems) + (self.build_messages() if self.built else [])

    def build_messages(self) -> list[CheckMessage]:
        """What the build found and the specs say, for the system checks."""
        return problems.build_problems(self)

    def schema_options(self) -> SchemaOptions:
        settings = self.endpoint.settings
        return SchemaOptions(
            version=self.version or settings.API_VERSION,
            filter_lookups=settings.FILTER_LOOKUPS,
            array_bodies=settings.ARRAY_BODIES,
            large_choice_list=settings.LARGE_CHOICE_LIST,
            max_query_length=settings.MAX_QUERY_ARGUMENT_LENGTH,
        )

    def build(self, *, database: bool = True) -> None:
        """Build every tool's spec, once per process.

        Without ``database`` (the system checks), every database is out of reach: when host
        code needs one (a serializer that reads rows while its fields are built), nothing
        is kept, and the specs are built on first use instead. A :class:`DatabaseError`
        (tables not migrated yet, an outage) is raised and nothing is kept either, so the
        next use tries again.
        """
        if self.built:
            return
        with _build_lock:
            if self.built:
                return
            if database:
                specs, found = self.build_specs(log=True)
            else:
                with database_blocked() as block:
                    try:
                        specs, found = self.build_specs(log=False)
                    except DatabaseNeeded:
                        specs, found = {}, []
                # Host code may have caught the refusal and built something else instead.
                if block.touched:
                    self.deferred = True
                    return
            for tool in self.tools:
                tool._spec = specs.get(tool.name)
            self.build_problems = found
            self.built = True

    def build_specs(self, *, log: bool) -> tuple[dict[str, ActionSpec], list[CheckMessage]]:
        """The specs of the tools that build, and the problems of those that do not."""
        specs: dict[str, ActionSpec] = {}
        found: list[CheckMessage] = self.check_routes()
        routes = self.method_routes()
        generator = SchemaGenerator()
        options = self.schema_options()
        for tool in self.tools:
            route = routes.get((tool.handler, tool.method))
            if route is None:
                tool._problem = "its action has no route"
                found.append(problems.no_route(self, tool))
                continue
            try:
                specs[tool.name] = build_spec(
                    viewset=self.viewset,
                    name=tool.name,
                    action=tool.action,
                    detail=tool.detail,
                    options=tool.options,
                    singular=self.singular,
                    plural=self.plural,
                    route=route,
                    generator=generator,
                    schema_options=options,
                    scopes_by_method=self.endpoint.settings.SCOPES_BY_METHOD,
                    schema_request=self.schema_request,
                )
            except (DatabaseNeeded, DatabaseError):
                raise
            except NotJSON as exc:
                tool._problem = str(exc)
                found.append(problems.not_json(self, tool, exc))
            except Exception as exc:
                # The host's serializers, filtersets and querysets run here, and may raise
                # anything: that tool is left out of tools/list, and its calls say why.
                reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
                tool._problem = f"its schema could not be built ({reason})"
                if log:
                    logger.warning(
                        "no schema for %s.%s", self.viewset.__name__, tool.action, exc_info=True
                    )
                found.append(problems.no_schema(self, tool, reason))
        return specs, found

    def routes(self) -> dict[str, Route]:
        """The viewset's routes by action: the first method each is routed for."""
        return {
            action: route
            for (action, method), route in self.method_routes().items()
            if method is None
        }

    def method_routes(self) -> dict[tuple[str, str | None], Route]:
        """The viewset's routes in the host's URL conf, or from a router of our own, by
        (handler, method), and by (handler, None) for the first method routed."""
        found: dict[tuple[str, str | None], Route] = {}

        def add(route: Route) -> None:
            found.setdefault((route.action, route.method), route)
            found.setdefault((route.action, None), route)

        for route in self.url_conf_routes():
            add(route)
        if found or not issubclass(self.viewset, ViewSetMixin):
            return found
        if self.router is not None:
            # The router is not in the URL conf: its own URLs, without an include() prefix.
            patterns = self.router.urls
        elif not self.parents:
            router = SimpleRouter()
            router.register(self.prefix, self.viewset, basename=self.basename)
            patterns = router.urls
        else:
            return found
        callbacks = self.router_callbacks
        for path, regex, method, callback in EndpointEnumerator(patterns).get_api_endpoints():
            route = Route(path, regex, method, callback)
            if self.matches(route) and (callbacks is None or callback in callbacks):
                add(route)
        return found


def router_entry(
    router: BaseRouter, viewset: type[Any], basename: str
) -> tuple[frozenset[Any], tuple[str, ...]]:
    """The views a router made for one of its viewsets, and the URL kwargs all their
    routes take (a nested router's parent lookups, ``("user_pk",)``), in URL order.

    A router builds its URLs once and keeps them, so the views found here are the very
    ones the URL conf routes when it includes ``router.urls``.
    """
    callbacks: list[Any] = []
    shared: list[str] | None = None
    for pattern in router.urls:
        callback = getattr(pattern, "callback", None)
        if getattr(callback, "cls", None) is not viewset:
            continue
        if getattr(callback, "initkwargs", {}).get("basename") != basename:
            continue
        callbacks.append(callback)
        groups = pattern.pattern.regex.groupindex
        names = [n for n in sorted(groups, key=groups.__getitem__) if n != "format"]
        shared = names if shared is None else [n for n in shared if n in names]
    return frozenset(callbacks), tuple(shared or ())


# The DRF routes of each URL conf (by its module name), by their view class (a callback's
# ``cls``), in the URL conf's order: read once per process.
_url_routes: dict[str, dict[Any, list[Route]]] = {}


def current_urlconf() -> str:
    """The name of the URL conf in use (ROOT_URLCONF, or one a middleware set)."""
    urlconf = get_urlconf() or django_settings.ROOT_URLCONF
    return urlconf if isinstance(urlconf, str) else getattr(urlconf, "__name__", repr(urlconf))


def view_routes(view: type[Any]) -> list[Route]:
    """The routes of the URL conf in use whose view class is ``view``, in the URL conf's
    order. A registration looks among these, not among every route of the product: done
    for each viewset of a large product, that look grew with the square of its size."""
    key = current_urlconf()
    by_view = _url_routes.get(key)
    if by_view is None:
        by_view = _url_routes[key] = {}
        for p, r, m, c in EndpointEnumerator().get_api_endpoints():
            by_view.setdefault(getattr(c, "cls", None), []).append(Route(p, r, m, c))
    return by_view.get(view, [])


class APIViewRegistration(ViewSetRegistration):
    """An ``APIView`` (or ``GenericAPIView``) routed under a URL name: each HTTP method it
    handles is a tool (``get``, ``post``, ``put``, ``patch``, ``delete`` are its actions)."""

    def __init__(
        self, endpoint: Endpoint, view: type[Any], *, url_name: str, **options: Any
    ) -> None:
        self.url_name = url_name
        options.setdefault("basename", identifier(url_name.rsplit(":", 1)[-1]))
        super().__init__(endpoint, view, **options)

    def find_actions(self) -> list[tuple[str, bool]]:
        return [(m, False) for m in API_VIEW_VERBS if hasattr(self.viewset, m)]

    def default_name(self, action: str, detail: bool) -> str:
        return f"{API_VIEW_VERBS[action]}_{self.singular}"

    def matches(self, route: Route) -> bool:
        return super().matches(route) and route.callback in named_callbacks(self.url_name)

    def check_routes(self) -> list[CheckMessage]:
        if named_callbacks(self.url_name):
            return []
        return [
            Error(
                f"{self.viewset.__name__} is registered under the URL name "
                f"{self.url_name!r}, which the URL conf does not have.",
                hint="Pass the name of the path() that routes the view.",
                obj=self.endpoint,
                id="mcp_endpoint.E021",
            )
        ]


# The tool verbs of an APIView's handlers.
API_VIEW_VERBS = {
    "get": "get",
    "post": "create",
    "put": "replace",
    "patch": "update",
    "delete": "delete",
}


def named_callbacks(url_name: str) -> list[Any]:
    """The view callables the URL conf routes under ``url_name`` (``"ns:name"`` too)."""
    *namespaces, name = url_name.split(":")
    found: list[Any] = []

    def walk(patterns: Iterable[Any], path: tuple[str, ...]) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = (*path, pattern.namespace) if pattern.namespace else path
                walk(pattern.url_patterns, inner)
            elif (
                pattern.name == name
                and (list(path[-len(namespaces) :]) if namespaces else []) == namespaces
            ):
                found.append(pattern.callback)

    walk(get_resolver().url_patterns, ())
    return found


def register_view(
    endpoint: Endpoint, view: type[Any], *, url_name: str, **options: Any
) -> ViewSetRegistration:
    """Make each HTTP method of a DRF ``APIView`` a tool of ``endpoint``.

    ``url_name`` is the name of the ``path()`` that routes the view (it also gives the
    noun of the tool names: ``snippet-stats`` -> ``get_snippet_stats``); the other options
    are :func:`register_viewset`'s, keyed by method (``names={"get": "snippet_stats"}``).
    """
    if not (isinstance(view, type) and issubclass(view, APIView)):
        raise ImproperlyConfigured(f"{view!r} is not a DRF APIView: it cannot be registered.")
    if issubclass(view, ViewSetMixin):
        raise ImproperlyConfigured(
            f"{view.__name__} is a viewset: register it with register_viewset()."
        )
    return _register(endpoint, APIViewRegistration(endpoint, view, url_name=url_name, **options))


def toolset_name(noun: str) -> str:
    """A toolset's name from a noun: ``device_types`` from "device types"."""
    name = re.sub(r"[^a-z0-9]+", "_", noun.lower()).strip("_")[:64]
    return name or "general"


def register_viewset(endpoint: Endpoint, viewset: type[Any], **options: Any) -> ViewSetRegistration:
    """Make each action of a DRF viewset a tool of ``endpoint``.

    Options: ``basename``, ``prefix``, ``include`` / ``exclude`` (action names), ``names``,
    ``titles``, ``descriptions``, ``annotations``, ``task_support`` (each a dict keyed by
    action; ``task_support={"export": "optional"}`` makes an action long-running),
    ``singular`` / ``plural`` (the nouns in the tool names), ``version`` (the API version
    its views are described and called with, over the endpoint's ``API_VERSION``),
    ``parents`` (the URL kwargs of a nested route's parents, ``["user_pk"]``: the routes
    under them, and names after the last parent, ``list_user_snippets``), ``name_prefix``
    (the word before the nouns in the tool names, over the parent's noun; ``""`` for none),
    ``schema_request`` (a callable given the request each schema is built with, before the
    view reads it: it sets what the product's middleware sets on a real request, such as
    ``request.tenant``, and may return a context manager that the build runs inside, such
    as an active row scope; see docs/rest_framework.md).
    ``toolset`` (the toolset its tools belong to, over one named after its objects).
    """
    if not (isinstance(viewset, type) and issubclass(viewset, ViewSetMixin)):
        name = getattr(viewset, "__name__", repr(viewset))
        if isinstance(viewset, type) and issubclass(viewset, APIView):
            raise ImproperlyConfigured(
                f"{name} is an APIView, not a viewset: register it with "
                f"register_view({name}, url_name=...), naming the path() that routes it."
            )
        raise ImproperlyConfigured(f"{name} is not a DRF viewset: it cannot be registered.")
    return _register(endpoint, ViewSetRegistration(endpoint, viewset, **options))


def _register(endpoint: Endpoint, registration: ViewSetRegistration) -> ViewSetRegistration:
    for tool in registration.tools:
        endpoint.add_tool(tool)
    endpoint.add_registration(registration)
    return registration


def register_router(
    endpoint: Endpoint,
    router: BaseRouter,
    *,
    per_basename: Mapping[str, Mapping[str, Any]] | None = None,
    **options: Any,
) -> list[ViewSetRegistration]:
    """Register every viewset of a DRF router, with its prefix and basename.

    ``options`` apply to every viewset; ``per_basename`` adds options for one viewset,
    keyed by its basename (``{"snippet": {"exclude": ["destroy"]}}``), so that a name
    collision (``{"snippet": {"name_prefix": "my"}}``) or an action to leave out does not
    force unrolling the router. A nested router's viewsets (drf-nested-routers) are named
    after their parent (``list_user_snippets``), and each registration takes the routes
    its router made, so one viewset can be registered flat and nested.

    A router ``include()``d under a prefix with URL kwargs of its own
    (``(?P<tenant>[^/]+)/projects/(?P<project>[^/]+)/``) is found where the URL conf mounts
    it: the prefix's kwargs are parents of each viewset (required arguments of its tools),
    before the router's own lookups; tool names follow the router's own nesting only.
    ``parents=["tenant", "project"]`` (here, or per basename) says which mount to call
    when the router is mounted under several prefixes whose kwargs differ (E101).
    """
    per_basename = dict(per_basename or {})
    registry = list(router.registry)
    unknown = sorted(set(per_basename) - {basename for _, _, basename in registry})
    if unknown:
        raise ImproperlyConfigured(
            f"register_router(per_basename=...) names {', '.join(map(repr, unknown))}, "
            f"which the router does not register; its basenames are "
            f"{', '.join(repr(b) for _, _, b in registry)}."
        )
    return [
        register_viewset(
            endpoint,
            viewset,
            **{
                "basename": basename,
                "prefix": prefix,
                "router": router,
                **options,
                **per_basename.get(basename, {}),
            },
        )
        for prefix, viewset, basename in registry
    ]
