"""System checks: every misconfiguration found at start-up, each with a stable id."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.utils.module_loading import import_string

from mcp_endpoint.conf import DEFAULTS, IMPORT_STRINGS
from mcp_endpoint.protocol.headers import schema_problems as header_schema_problems
from mcp_endpoint.protocol.versions import ALL_VERSIONS
from mcp_endpoint.schema import has_ref_or_type_array
from mcp_endpoint.tools import TOOL_NAME


def all_endpoints() -> list[Any]:
    """Every endpoint, those the URL conf creates included (it is loaded first)."""
    from django.urls import get_resolver

    from mcp_endpoint.endpoint import endpoints

    get_resolver().url_patterns  # noqa: B018 - importing the URL conf creates endpoints
    return sorted(endpoints, key=lambda e: e.name)


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    user = getattr(settings, "MCP_ENDPOINT", {})
    if not isinstance(user, dict):
        return [Error("MCP_ENDPOINT must be a dict.", id="mcp_endpoint.E001")]
    sources = [("MCP_ENDPOINT", user)] + [
        (f"Endpoint {e.name!r} settings", e.settings.overrides) for e in all_endpoints()
    ]
    for label, values in sources:
        errors.extend(_check_values(label, values))
    return errors


def _check_values(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for key in sorted(set(values) - set(DEFAULTS)):
        errors.append(
            Error(
                f"{label} has an unknown key {key!r}.",
                hint=f"Known keys: {', '.join(sorted(DEFAULTS))}.",
                id="mcp_endpoint.E001",
            )
        )
    versions = values.get("PROTOCOL_VERSIONS")
    if versions is not None and (
        not isinstance(versions, list | tuple)
        or not versions
        or any(v not in ALL_VERSIONS for v in versions)
    ):
        errors.append(
            Error(
                f"{label}['PROTOCOL_VERSIONS'] must be a non-empty list of known revisions.",
                hint=f"Known revisions: {', '.join(ALL_VERSIONS)}.",
                id="mcp_endpoint.E002",
            )
        )
    for key in ("MAX_REQUEST_BYTES", "LIST_PAGE_SIZE", "TEXT_BUDGET_BYTES", "TTL_MS"):
        value = values.get(key)
        if value is not None and (
            not isinstance(value, int)
            or isinstance(value, bool)
            or value < (0 if key == "TTL_MS" else 1)
        ):
            errors.append(
                Error(f"{label}[{key!r}] must be a positive integer.", id="mcp_endpoint.E003")
            )
    for key in IMPORT_STRINGS:
        for dotted in values.get(key) or []:
            if isinstance(dotted, str):
                try:
                    import_string(dotted)
                except ImportError as exc:
                    errors.append(
                        Error(
                            f"{label}[{key!r}] names {dotted!r}, which cannot be imported.",
                            hint=str(exc),
                            id="mcp_endpoint.E004",
                        )
                    )
    origins = values.get("ALLOWED_ORIGINS")
    if origins is not None and (
        not isinstance(origins, list | tuple)
        or not all(
            isinstance(o, str) and (o.startswith(("http://", "https://", "*."))) for o in origins
        )
    ):
        errors.append(
            Error(
                f"{label}['ALLOWED_ORIGINS'] must list origins such as 'https://claude.ai' "
                "or host globs such as '*.example.com'.",
                id="mcp_endpoint.E005",
            )
        )
    return errors


@register(Tags.compatibility)
def check_registries(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for endpoint in all_endpoints():
        for name in endpoint.tools.duplicates:
            errors.append(
                Error(
                    f"Endpoint {endpoint.name!r} registers more than one tool named {name!r}.",
                    hint="Give one of them another name (name=... when registering).",
                    obj=endpoint,
                    id="mcp_endpoint.E010",
                )
            )
        for tool in endpoint.tools:
            if not TOOL_NAME.match(tool.name):
                errors.append(
                    Error(
                        f"Tool name {tool.name!r} is not 1-64 characters of [A-Za-z0-9_-].",
                        hint="Clients refuse other names; pass name=... when registering.",
                        obj=endpoint,
                        id="mcp_endpoint.E011",
                    )
                )
            schemas = [tool.input_schema, tool.output_schema or {}]
            if tool.input_schema.get("type") != "object" or (
                endpoint.settings.PORTABLE_SCHEMAS
                and any(has_ref_or_type_array(s) for s in schemas)
            ):
                errors.append(
                    Error(
                        f"Tool {tool.name!r} has a schema that is not portable (its input root is "
                        "not an object, or it holds a $ref or a type array).",
                        hint="Pass the schema through mcp_endpoint.schema.portable().",
                        obj=endpoint,
                        id="mcp_endpoint.E012",
                    )
                )
            for problem in header_schema_problems(tool.input_schema):
                errors.append(
                    Error(
                        f"Tool {tool.name!r} marks an argument for a header that clients "
                        f"refuse: {problem}.",
                        hint="Clients drop such a tool; see x-mcp-header in the 2026-07-28 "
                        "transport.",
                        obj=endpoint,
                        id="mcp_endpoint.E041",
                    )
                )
        for registration in endpoint.viewset_registrations:
            registration.build()
            for check_id, message, hint in registration.problems:
                errors.append(Error(message, hint=hint, obj=endpoint, id=check_id))
            for tool in registration.tools:
                for warning in tool.warnings:
                    errors.append(
                        Warning(
                            f"The schema of tool {tool.name!r} may be a guess: {warning}",
                            hint="Describe the action with drf-spectacular's @extend_schema.",
                            obj=endpoint,
                            id="mcp_endpoint.W020",
                        )
                    )
        for uri in endpoint.resources.duplicates:
            errors.append(
                Error(
                    f"Endpoint {endpoint.name!r} registers the resource {uri!r} more than once.",
                    obj=endpoint,
                    id="mcp_endpoint.E013",
                )
            )
        for template in endpoint.resources.templates():
            unmapped = [m for m, mapper in template.follows.items() if mapper is None]
            if unmapped:
                errors.append(
                    Error(
                        f"Resource template {template.uri_template!r} follows "
                        f"{', '.join(m._meta.label for m in unmapped)} without saying which "
                        "URIs a changed row changes.",
                        hint="Pass follows={Model: lambda row: {'variable': ...}}.",
                        obj=endpoint,
                        id="mcp_endpoint.E042",
                    )
                )
        for name in endpoint.prompts.duplicates:
            errors.append(
                Error(
                    f"Endpoint {endpoint.name!r} registers more than one prompt named {name!r}.",
                    obj=endpoint,
                    id="mcp_endpoint.E014",
                )
            )
    return errors


BOOLEAN_KEYS = (
    "SESSIONS",
    "CONFIRM_DESTRUCTIVE_TOOLS",
    "STREAMING",
    "LOGGING",
    "WSGI_GET_STREAMS",
)
SECONDS_KEYS = (
    "SESSION_IDLE_SECONDS",
    "SESSIONS_PER_CREDENTIAL",
    "REQUEST_STATE_TTL",
    "CLIENT_REQUEST_TIMEOUT",
    "STREAM_KEEPALIVE_SECONDS",
    "STREAM_RESUME_SECONDS",
    "STREAMS_PER_CREDENTIAL",
)
# Caches whose entries one process cannot see from another.
PROCESS_LOCAL_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
}


@register(Tags.compatibility)
def check_sessions_and_rounds(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Sessions, streaming and multi round-trip settings (E006 to E008, W009)."""
    user = getattr(settings, "MCP_ENDPOINT", {})
    if not isinstance(user, dict):
        return []  # E001 says so already
    messages: list[CheckMessage] = []
    sources = [("MCP_ENDPOINT", user, None)] + [
        (f"Endpoint {e.name!r} settings", e.settings.overrides, e) for e in all_endpoints()
    ]
    for label, values, endpoint in sources:
        for key in BOOLEAN_KEYS:
            if key in values and not isinstance(values[key], bool):
                messages.append(
                    Error(f"{label}[{key!r}] must be True or False.", id="mcp_endpoint.E006")
                )
        for key in SECONDS_KEYS:
            value = values.get(key)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                messages.append(
                    Error(f"{label}[{key!r}] must be a positive integer.", id="mcp_endpoint.E007")
                )
        loggers = values.get("CLIENT_LOGGERS")
        if loggers is not None and (
            not isinstance(loggers, list | tuple)
            or not all(isinstance(n, str) and n for n in loggers)
        ):
            messages.append(
                Error(
                    f"{label}['CLIENT_LOGGERS'] must be a list of logger names.",
                    hint="For instance ['mcp_endpoint', 'myapp']: each logger's children "
                    "are included.",
                    id="mcp_endpoint.E040",
                )
            )
        alias = values.get("CACHE")
        if alias is not None and alias not in settings.CACHES:
            messages.append(
                Error(
                    f"{label}['CACHE'] names {alias!r}, which is not in CACHES.",
                    hint=f"Known caches: {', '.join(sorted(settings.CACHES))}.",
                    id="mcp_endpoint.E008",
                )
            )
        if endpoint is not None:
            messages.extend(_check_shared_cache(label, endpoint))
    return messages


def _check_shared_cache(label: str, endpoint: Any) -> list[CheckMessage]:
    if not endpoint.settings.SESSIONS:
        return []
    alias = endpoint.settings.CACHE
    backend = settings.CACHES.get(alias, {}).get("BACKEND", "")
    if backend not in PROCESS_LOCAL_CACHES:
        return []
    return [
        Warning(
            f"{label}: sessions are on, but the cache {alias!r} ({backend.rsplit('.', 1)[-1]}) "
            "is not shared between processes: a session opened in one worker is unknown in "
            "the others.",
            hint="Point MCP_ENDPOINT['CACHE'] at Redis, Memcached or the database cache.",
            id="mcp_endpoint.W009",
        )
    ]
