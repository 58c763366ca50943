"""What a registration reports to the system checks: where its router is mounted, the
credentials its views take, and what building its specs found, one message per viewset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from django.core.checks import CheckMessage, Error, Warning

from mcp_endpoint.credential import accepted_kinds
from mcp_endpoint.rest_framework.credentials import related

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint
    from mcp_endpoint.rest_framework.spec import Route
    from mcp_endpoint.rest_framework.tool import ViewSetTool


class ViewSetRegistration(Protocol):
    """What these reports read of a registration
    (:class:`mcp_endpoint.rest_framework.registration.ViewSetRegistration`)."""

    endpoint: Endpoint
    viewset: type[Any]
    basename: str
    parents: tuple[str, ...] | None
    parents_given: bool
    tools: list[ViewSetTool]
    build_problems: list[CheckMessage]

    def mounts(self) -> list[tuple[str, ...]]: ...

    def url_conf_routes(self) -> list[Route]: ...


def mount_problems(registration: ViewSetRegistration) -> list[CheckMessage]:
    """E101, E102 and W101: where a router's viewset is mounted, against its parents."""
    mounts = registration.mounts()
    name = registration.viewset.__name__
    example = (
        f"register_router(router, per_basename={{{registration.basename!r}: {{'parents': [...]}}}})"
    )
    if not mounts:
        if registration.parents_given and registration.url_conf_routes():
            return []  # routed by other patterns, under the parents the host named
        return [
            Warning(
                f"{name} is registered from a router that the URL conf does not include, "
                "so its tools call the router's own URLs, without any include() prefix "
                "or the URL kwargs such a prefix would give its views.",
                hint="Include the router's urls in the URL conf (the very router object "
                "registered), or name the URL kwargs of the routes that serve the viewset "
                f"with {example} or register_router(router, parents=[...]).",
                obj=registration.endpoint,
                id="mcp_endpoint.W101",
            )
        ]
    if registration.parents_given:
        if registration.parents in mounts:
            return []
        return [
            Error(
                f"{name} is registered under the parents {list(registration.parents or ())!r}, "
                "but its router is mounted where the URL kwargs are "
                + "; ".join(repr(list(m)) for m in mounts)
                + ".",
                hint="Pass parents= as one of those lists (the include() prefix's kwargs, "
                "then the router's own lookups).",
                obj=registration.endpoint,
                id="mcp_endpoint.E102",
            )
        ]
    if len(mounts) == 1:
        return []
    return [
        Error(
            f"{name}'s router is mounted under {len(mounts)} prefixes whose URL kwargs "
            "differ ("
            + "; ".join(repr(list(m)) for m in mounts)
            + "), so which one its tools call is a guess (the first).",
            hint=f"Say which with register_router(router, parents=[...]) or {example}, "
            "naming the kwargs of one of them; register the router once per prefix for "
            "tools under each (with a name_prefix to keep their names apart).",
            obj=registration.endpoint,
            id="mcp_endpoint.E101",
        )
    ]


def authentication_problems(registration: ViewSetRegistration) -> list[CheckMessage]:
    """W030: the viewset takes none of the credentials the endpoint authenticates."""
    classes = list(
        dict.fromkeys(
            cls
            for tool in registration.tools
            if tool._spec is not None
            for cls in tool._spec.authentication_classes
        )
    )
    endpoint_classes = list(registration.endpoint.settings.AUTHENTICATION_CLASSES)
    if not classes or any(related(cls, other) for cls in classes for other in endpoint_classes):
        return []
    return [
        Warning(
            f"{registration.viewset.__name__} accepts {accepted_kinds(classes)} only, none of the "
            f"credentials endpoint {registration.endpoint.name!r} authenticates "
            f"({accepted_kinds(endpoint_classes)}): its tools are listed for no caller "
            "and refuse every call.",
            hint=f"Add {classes[0].__module__}.{classes[0].__qualname__} to the "
            "endpoint's AUTHENTICATION_CLASSES (its callers can then send that "
            "credential to the endpoint), or one of the endpoint's classes to the "
            "viewset's authentication_classes, or leave the viewset out of the endpoint.",
            obj=registration.endpoint,
            id="mcp_endpoint.W030",
        )
    ]


def build_problems(registration: ViewSetRegistration) -> list[CheckMessage]:
    """E021, W022, W032 (from the build), W020, W050 and W053 (from the specs), and
    W030. The warnings the specs give are one per viewset, naming its tools, so that a
    product of hundreds of actions is told once what to do, not once per action."""
    messages = list(registration.build_problems)
    messages.extend(authentication_problems(registration))
    specs = [tool._spec for tool in registration.tools if tool._spec is not None]
    name = registration.viewset.__name__
    guesses = [(spec.name, warning) for spec in specs for warning in spec.warnings]
    if guesses:
        messages.append(
            Warning(
                f"The schemas of {len({n for n, _ in guesses})} tool(s) of {name} may be "
                "guesses: " + "; ".join(f"{n!r}: {w}" for n, w in guesses) + ".",
                hint="Describe those actions with drf-spectacular's @extend_schema.",
                obj=registration.endpoint,
                id="mcp_endpoint.W020",
            )
        )
    empty = [spec.name for spec in specs if spec.body_without_fields]
    if empty:
        messages.append(
            Warning(
                f"The tools {', '.join(map(repr, empty))} of {name} take a request body, "
                "but their schemas give it no fields, so a model can send nothing.",
                hint="Describe the body with @extend_schema(request=...): an object "
                "serializer, or one object or a list of them (ARRAY_BODIES chooses "
                "the list).",
                obj=registration.endpoint,
                id="mcp_endpoint.W050",
            )
        )
    guessed = [spec for spec in specs if spec.body_guessed]
    if guessed:
        messages.append(
            Warning(
                f"The custom actions {', '.join(repr(s.action) for s in guessed)} of "
                f"{name} have no request body of their own, so their schemas take the "
                f"viewset's serializer as a guess: its fields are optional in the tools "
                f"{', '.join(repr(s.name) for s in guessed)}.",
                hint="Say what each action reads: @extend_schema(request=None) when it "
                "reads no body, @extend_schema(request=TheSerializer) (or "
                "@action(serializer_class=...)) when it does, whose required fields "
                "are then required.",
                obj=registration.endpoint,
                id="mcp_endpoint.W053",
            )
        )
    return messages


def no_route(registration: ViewSetRegistration, tool: ViewSetTool) -> CheckMessage:
    return Error(
        f"{registration.viewset.__name__}.{tool.action} has no route, so it has no schema.",
        hint="Route the action (a @action decorator or a router) or exclude it.",
        obj=registration.endpoint,
        id="mcp_endpoint.E021",
    )


def not_json(registration: ViewSetRegistration, tool: ViewSetTool, exc: Exception) -> CheckMessage:
    return Warning(
        f"{registration.viewset.__name__}.{tool.action} is left out: {exc}.",
        hint="Give the action a renderer of JSON, text or a file, or exclude it.",
        obj=registration.endpoint,
        id="mcp_endpoint.W032",
    )


def no_schema(registration: ViewSetRegistration, tool: ViewSetTool, reason: str) -> CheckMessage:
    return Warning(
        f"No schema for {registration.viewset.__name__}.{tool.action}, so its tool "
        f"{tool.name!r} is not listed: {reason}",
        hint="Give the viewset a serializer_class, or describe the action "
        "with drf-spectacular's @extend_schema.",
        obj=registration.endpoint,
        id="mcp_endpoint.W022",
    )
