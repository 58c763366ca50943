"""Registering viewsets and routers on an endpoint; each action becomes a :class:`ViewSetTool`.

A registration knows its viewset, its options and its tools. It builds the tools' specs
once per process, on first use (routes are read from the host's URL conf, which is not
loaded yet when ``mcp.py`` modules register), and reports what it could not build through
:meth:`ViewSetRegistration.check`, which the endpoint's checks collect.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings as django_settings
from django.core.checks import CheckMessage, Error, Warning
from django.core.exceptions import ImproperlyConfigured
from django.urls import URLResolver, get_resolver, get_urlconf
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from rest_framework.routers import SimpleRouter
from rest_framework.views import APIView
from rest_framework.viewsets import ViewSetMixin

from mcp_endpoint.rest_framework.calling import tool_view_class
from mcp_endpoint.rest_framework.credentials import accepted_kinds, related
from mcp_endpoint.rest_framework.naming import (
    default_basename,
    default_tool_name,
    identifier,
    nouns,
    viewset_actions,
)
from mcp_endpoint.rest_framework.spec import ActionOptions, NotJSON, Route, build_spec
from mcp_endpoint.rest_framework.tool import ViewSetTool
from mcp_endpoint.schema import SchemaError

if TYPE_CHECKING:
    from rest_framework.routers import BaseRouter

    from mcp_endpoint.endpoint import Endpoint

_build_lock = threading.RLock()


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
        singular: str | None = None,
        plural: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.viewset = viewset
        self.basename = basename or default_basename(viewset)
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
        self.singular, self.plural = nouns(viewset, self.basename, singular, plural)
        self.view_class = tool_view_class(viewset)
        self.tools: list[ViewSetTool] = []
        # What is wrong with the registration itself (E020), and with what the last build
        # found in the URL conf (E021, E022, W032).
        self.registration_problems: list[CheckMessage] = []
        self.problems: list[CheckMessage] = []
        # The URL conf the specs were built from: they are built again for another one
        # (a test that swaps ROOT_URLCONF), and once per process otherwise.
        self.built_for: str | None = None
        actions = self.find_actions()
        for action, detail in actions:
            if self.include is not None and action not in self.include:
                continue
            if action in self.exclude:
                continue
            options = self.options.get(action, ActionOptions())
            name = options.name or self.default_name(action, detail)
            self.tools.append(ViewSetTool(self, action, detail, name, options))
        known = {action for action, _ in actions}
        for action in sorted(((self.include or set()) | self.exclude | set(self.options)) - known):
            self.registration_problems.append(
                Error(
                    f"{viewset.__name__} has no action {action!r} to make a tool of.",
                    hint=f"Its actions are: {', '.join(sorted(known))}.",
                    obj=endpoint,
                    id="mcp_endpoint.E020",
                )
            )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.viewset.__name__} on {self.endpoint.name!r}>"

    def find_actions(self) -> list[tuple[str, bool]]:
        """(action, detail) for each action that may become a tool."""
        return viewset_actions(self.viewset)

    def default_name(self, action: str, detail: bool) -> str:
        return default_tool_name(action, detail, self.singular, self.plural)

    def matches(self, route: Route) -> bool:
        """Whether a route of the URL conf is one of this registration's."""
        return getattr(route.callback, "cls", None) is self.viewset

    def check(self) -> list[CheckMessage]:
        """What is wrong with this registration (E020 to E022, W020, W030), for the checks."""
        self.build()
        messages = [*self.registration_problems, *self.problems]
        messages.extend(self.check_authentication())
        for tool in self.tools:
            spec = tool._spec
            for warning in spec.warnings if spec is not None else ():
                messages.append(
                    Warning(
                        f"The schema of tool {tool.name!r} may be a guess: {warning}",
                        hint="Describe the action with drf-spectacular's @extend_schema.",
                        obj=self.endpoint,
                        id="mcp_endpoint.W020",
                    )
                )
        return messages

    def check_authentication(self) -> list[CheckMessage]:
        """W030: the viewset takes none of the credentials the endpoint authenticates."""
        classes = list(
            dict.fromkeys(
                cls
                for tool in self.tools
                if tool._spec is not None
                for cls in tool._spec.authentication_classes
            )
        )
        endpoint_classes = list(self.endpoint.settings.AUTHENTICATION_CLASSES)
        if not any(tool._spec is not None for tool in self.tools) or any(
            related(cls, other) for cls in classes for other in endpoint_classes
        ):
            return []
        return [
            Warning(
                f"{self.viewset.__name__} accepts {accepted_kinds(classes)} only, none of the "
                f"credentials endpoint {self.endpoint.name!r} authenticates "
                f"({accepted_kinds(endpoint_classes)}): its tools are listed for no caller "
                "and refuse every call.",
                hint="Add one of the endpoint's AUTHENTICATION_CLASSES to the viewset's "
                "authentication_classes, or leave the viewset out of the endpoint.",
                obj=self.endpoint,
                id="mcp_endpoint.W030",
            )
        ]

    @property
    def built(self) -> bool:
        return self.built_for is not None

    def check_routes(self) -> list[CheckMessage]:
        """Problems of the URL conf for this registration, found before the specs are built."""
        return []

    def build(self) -> None:
        """Build every tool's spec, once per process (and URL conf)."""
        urlconf = current_urlconf()
        if self.built_for == urlconf:
            return
        with _build_lock:
            if self.built_for == urlconf:
                return
            self.problems = self.check_routes()
            for tool in self.tools:
                tool._spec = None
            routes = self.routes()
            generator = SchemaGenerator()
            for tool in self.tools:
                route = routes.get(tool.action)
                if route is None:
                    self.problems.append(
                        Error(
                            f"{self.viewset.__name__}.{tool.action} has no route, so it has no "
                            "schema.",
                            hint="Route the action (a @action decorator or a router) or "
                            "exclude it.",
                            obj=self.endpoint,
                            id="mcp_endpoint.E021",
                        )
                    )
                    continue
                try:
                    tool._spec = build_spec(
                        viewset=self.viewset,
                        name=tool.name,
                        action=tool.action,
                        detail=tool.detail,
                        options=tool.options,
                        singular=self.singular,
                        plural=self.plural,
                        route=route,
                        generator=generator,
                        scopes_by_method=self.endpoint.settings.SCOPES_BY_METHOD,
                    )
                except NotJSON as exc:
                    self.problems.append(
                        Warning(
                            f"{self.viewset.__name__}.{tool.action} is left out: {exc}.",
                            hint="Give the action a JSON renderer, or exclude it.",
                            obj=self.endpoint,
                            id="mcp_endpoint.W032",
                        )
                    )
                except (SchemaError, AssertionError, AttributeError, TypeError) as exc:
                    self.problems.append(
                        Error(
                            f"No schema for {self.viewset.__name__}.{tool.action}: {exc}",
                            hint="Give the viewset a serializer_class, or describe the action "
                            "with drf-spectacular's @extend_schema.",
                            obj=self.endpoint,
                            id="mcp_endpoint.E022",
                        )
                    )
            self.built_for = urlconf

    def routes(self) -> dict[str, Route]:
        """The viewset's routes in the host's URL conf, or from a router of our own."""
        found: dict[str, Route] = {}
        for route in url_conf_routes():
            if self.matches(route) and route.action not in found:
                found[route.action] = route
        if not found and issubclass(self.viewset, ViewSetMixin):
            router = SimpleRouter()
            router.register(self.prefix, self.viewset, basename=self.basename)
            for path, regex, method, callback in EndpointEnumerator(
                router.urls
            ).get_api_endpoints():
                route = Route(path, regex, method, callback)
                found.setdefault(route.action, route)
        return found


# The DRF routes of each URL conf (by its module name), read once per process.
_url_routes: dict[str, list[Route]] = {}


def current_urlconf() -> str:
    """The name of the URL conf in use (ROOT_URLCONF, or one a middleware set)."""
    urlconf = get_urlconf() or django_settings.ROOT_URLCONF
    return urlconf if isinstance(urlconf, str) else getattr(urlconf, "__name__", repr(urlconf))


def url_conf_routes() -> list[Route]:
    """Every DRF route of the URL conf in use (ROOT_URLCONF, or the request's)."""
    key = current_urlconf()
    if key not in _url_routes:
        _url_routes[key] = [
            Route(p, r, m, c) for p, r, m, c in EndpointEnumerator().get_api_endpoints()
        ]
    return _url_routes[key]


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
                walk(
                    pattern.url_patterns, (*path, pattern.namespace) if pattern.namespace else path
                )
            elif (
                pattern.name == name
                and list(path[-len(namespaces) :] if namespaces else []) == namespaces
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


def register_viewset(endpoint: Endpoint, viewset: type[Any], **options: Any) -> ViewSetRegistration:
    """Make each action of a DRF viewset a tool of ``endpoint``.

    Options: ``basename``, ``prefix``, ``include`` / ``exclude`` (action names), ``names``,
    ``titles``, ``descriptions``, ``annotations`` (each a dict keyed by action),
    ``singular`` / ``plural`` (the nouns in the tool names).
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
    collision or an action to leave out does not force unrolling the router.
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
            **{"basename": basename, "prefix": prefix, **options, **per_basename.get(basename, {})},
        )
        for prefix, viewset, basename in registry
    ]
