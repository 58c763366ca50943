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

from django.core.checks import CheckMessage, Error, Warning
from drf_spectacular.generators import EndpointEnumerator, SchemaGenerator
from rest_framework.routers import SimpleRouter

from mcp_endpoint.rest_framework.calling import tool_view_class
from mcp_endpoint.rest_framework.naming import (
    default_basename,
    default_tool_name,
    nouns,
    viewset_actions,
)
from mcp_endpoint.rest_framework.spec import ActionOptions, Route, build_spec
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
        self.problems: list[CheckMessage] = []
        self.built = False
        actions = viewset_actions(viewset)
        for action, detail in actions:
            if self.include is not None and action not in self.include:
                continue
            if action in self.exclude:
                continue
            options = self.options.get(action, ActionOptions())
            name = options.name or default_tool_name(action, detail, self.singular, self.plural)
            self.tools.append(ViewSetTool(self, action, detail, name, options))
        known = {action for action, _ in actions}
        for action in sorted(((self.include or set()) | self.exclude | set(self.options)) - known):
            self.problems.append(
                Error(
                    f"{viewset.__name__} has no action {action!r} to make a tool of.",
                    hint=f"Its actions are: {', '.join(sorted(known))}.",
                    obj=endpoint,
                    id="mcp_endpoint.E020",
                )
            )

    def __repr__(self) -> str:
        return f"<ViewSetRegistration {self.viewset.__name__} on {self.endpoint.name!r}>"

    def check(self) -> list[CheckMessage]:
        """What is wrong with this registration (E020 to E022, W020), for the system checks."""
        self.build()
        messages = list(self.problems)
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

    def build(self) -> None:
        """Build every tool's spec, once per process."""
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
            self.built = True

    def routes(self) -> dict[str, Route]:
        """The viewset's routes in the host's URL conf, or from a router of our own."""
        found: dict[str, Route] = {}
        for route in url_conf_routes():
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


_url_routes: list[Route] | None = None


def url_conf_routes() -> list[Route]:
    """Every DRF route of the host's URL conf, read once per process."""
    global _url_routes
    if _url_routes is None:
        _url_routes = [Route(p, r, m, c) for p, r, m, c in EndpointEnumerator().get_api_endpoints()]
    return _url_routes


def register_viewset(endpoint: Endpoint, viewset: type[Any], **options: Any) -> ViewSetRegistration:
    """Make each action of a DRF viewset a tool of ``endpoint``.

    Options: ``basename``, ``prefix``, ``include`` / ``exclude`` (action names), ``names``,
    ``titles``, ``descriptions``, ``annotations`` (each a dict keyed by action),
    ``singular`` / ``plural`` (the nouns in the tool names).
    """
    registration = ViewSetRegistration(endpoint, viewset, **options)
    for tool in registration.tools:
        endpoint.add_tool(tool)
    endpoint.add_registration(registration)
    return registration


def register_router(
    endpoint: Endpoint, router: BaseRouter, **options: Any
) -> list[ViewSetRegistration]:
    """Register every viewset of a DRF router, with its prefix and basename."""
    return [
        register_viewset(endpoint, viewset, basename=basename, prefix=prefix, **options)
        for prefix, viewset, basename in router.registry
    ]
