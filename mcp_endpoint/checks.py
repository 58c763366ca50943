"""System checks: every misconfiguration found at start-up, each with a stable id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.utils import timezone
from django.utils.module_loading import import_string

from mcp_endpoint import server_card, ui
from mcp_endpoint.conf import DEFAULTS, IMPORT_STRINGS
from mcp_endpoint.protocol.headers import schema_problems as header_schema_problems
from mcp_endpoint.protocol.versions import ALL_VERSIONS
from mcp_endpoint.schema import has_ref_or_type_array, metaschema_errors
from mcp_endpoint.tools import TOOL_NAME
from mcp_endpoint.toolsets import (
    DISCOVERY_CHOICES,
    OUTPUT_SCHEMA_CHOICES,
    TOOLSET_NAME,
    list_bytes,
)


def all_endpoints() -> list[Any]:
    """Every endpoint, those the URL conf creates included (it is loaded first)."""
    from django.urls import get_resolver

    from mcp_endpoint.endpoint import endpoints

    get_resolver().url_patterns  # noqa: B018 - importing the URL conf creates endpoints
    return sorted(endpoints, key=lambda e: e.name)


POSITIVE_INTEGER_KEYS = (
    "MAX_REQUEST_BYTES",
    "LIST_PAGE_SIZE",
    "TEXT_BUDGET_BYTES",
    "MAX_BINARY_RESULT_BYTES",
    "TTL_MS",
    "API_KEY_DEFAULT_EXPIRY_DAYS",
    "MAX_ARGUMENT_DEPTH",
    "MAX_BATCH_SIZE",
    "MAX_QUERY_ARGUMENT_LENGTH",
    "OUTAGE_RETRY_AFTER",
    "OUTAGE_LOG_INTERVAL",
    "LOG_ROW_MAX_BYTES",
)
# The deepest body MAX_JSON_DEPTH may allow: well inside the decoder's recursion limit.
MAX_JSON_DEPTH = 500


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
        errors.extend(_check_schema_settings(label, values))
        errors.extend(_check_bearer_order(f"{label}['AUTHENTICATION_CLASSES']", values))
    rest = getattr(settings, "REST_FRAMEWORK", {})
    if isinstance(rest, dict):
        errors.extend(
            _check_bearer_order(
                "REST_FRAMEWORK['DEFAULT_AUTHENTICATION_CLASSES']",
                {"AUTHENTICATION_CLASSES": rest.get("DEFAULT_AUTHENTICATION_CLASSES")},
            )
        )
    return errors


def _check_bearer_order(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """W110: a class that refuses every bearer value not its own, before the app's classes.

    DRF tries the classes in order and stops at the first that refuses; the app's classes
    pass over bearer values that are not theirs, simplejwt's refuse them.
    """
    from mcp_endpoint.authentication import BEARER_CLAIMING_CLASSES, BEARER_SHARING_CLASSES

    classes = []
    for entry in values.get("AUTHENTICATION_CLASSES") or []:
        try:
            classes.append(import_string(entry) if isinstance(entry, str) else entry)
        except ImportError:
            continue  # E004
    names = [[base.__name__ for base in getattr(cls, "__mro__", ())] for cls in classes]
    for index, mro in enumerate(names):
        claiming = next((n for n in mro if n in BEARER_CLAIMING_CLASSES), None)
        later = [
            classes[i].__name__
            for i in range(index + 1, len(classes))
            if BEARER_SHARING_CLASSES & set(names[i])
        ]
        if claiming is not None and later:
            return [
                Warning(
                    f"{label} lists {classes[index].__name__} before {', '.join(later)}: "
                    f"{claiming} refuses every Bearer value that is not a JSON Web Token, so "
                    "API keys and OAuth access tokens are refused (401) before the classes "
                    "that read them are tried.",
                    hint=f"List {classes[index].__name__} after them; they pass over Bearer "
                    "values that are not theirs.",
                    id="mcp_endpoint.W110",
                )
            ]
    return []


FILTER_LOOKUP_CHOICES = ("exact", "grouped", "all")


def _check_schema_settings(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """The settings of what tool schemas hold and how large they may grow (E050)."""
    errors: list[CheckMessage] = []
    for key in ("LARGE_CHOICE_LIST", "TOOL_BUDGET_BYTES", "TOOLS_LIST_BUDGET_BYTES"):
        value = values.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            errors.append(
                Error(
                    f"{label}[{key!r}] must be a positive integer.",
                    hint=f"The default is {DEFAULTS[key]}.",
                    id="mcp_endpoint.E050",
                )
            )
    lookups = values.get("FILTER_LOOKUPS")
    if lookups is not None and lookups not in FILTER_LOOKUP_CHOICES:
        errors.append(
            Error(
                f"{label}['FILTER_LOOKUPS'] must be one of {', '.join(FILTER_LOOKUP_CHOICES)}.",
                hint="'grouped' offers each filter's exact form, and the other lookups in one "
                "object argument.",
                id="mcp_endpoint.E050",
            )
        )
    for key, choices in (
        ("TOOL_DISCOVERY", DISCOVERY_CHOICES),
        ("OUTPUT_SCHEMAS", OUTPUT_SCHEMA_CHOICES),
    ):
        if key in values and values[key] not in choices:
            errors.append(
                Error(
                    f"{label}[{key!r}] must be one of {', '.join(choices)}.",
                    hint="'auto' decides by the size of the list (TOOLS_LIST_BUDGET_BYTES).",
                    id="mcp_endpoint.E050",
                )
            )
    toolsets = values.get("TOOLSETS")
    if toolsets is not None and (
        not isinstance(toolsets, list | tuple)
        or not all(isinstance(t, str) and TOOLSET_NAME.match(t) for t in toolsets)
    ):
        errors.append(
            Error(
                f"{label}['TOOLSETS'] must be None or a list of toolset names.",
                hint="Names are lower-case letters, digits, '_' and '-' (a viewset's are "
                "named after its objects: 'device_types').",
                id="mcp_endpoint.E050",
            )
        )
    for key in ("READ_ONLY", "DYNAMIC_TOOLSETS"):
        if key in values and not isinstance(values[key], bool):
            errors.append(Error(f"{label}[{key!r}] must be True or False.", id="mcp_endpoint.E050"))
    if "ARRAY_BODIES" in values and not isinstance(values["ARRAY_BODIES"], bool):
        errors.append(
            Error(f"{label}['ARRAY_BODIES'] must be True or False.", id="mcp_endpoint.E050")
        )
    version = values.get("API_VERSION")
    if version is not None and not isinstance(version, str):
        errors.append(
            Error(
                f"{label}['API_VERSION'] must be a version string such as '2.1', or None.",
                id="mcp_endpoint.E050",
            )
        )
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
    for key in POSITIVE_INTEGER_KEYS:
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
    errors.extend(_check_body_limits(label, values))
    errors.extend(_check_rate_and_key_cache(label, values))
    errors.extend(_check_tool_middleware(label, values))
    errors.extend(_check_scopes_and_origins(label, values))
    return errors


def _check_body_limits(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """E042, E043: how deep a body may nest, how long a batch may take."""
    errors: list[CheckMessage] = []
    depth = values.get("MAX_JSON_DEPTH")
    if depth is not None and (
        not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= MAX_JSON_DEPTH
    ):
        errors.append(
            Error(
                f"{label}['MAX_JSON_DEPTH'] must be an integer from 1 to {MAX_JSON_DEPTH}.",
                hint="Python's JSON decoder recurses once per level and stops near 1,000 "
                "levels; a body nested that deep must be refused before it gets there.",
                id="mcp_endpoint.E042",
            )
        )
    budget = values.get("BATCH_TIME_BUDGET", 1.0)
    if budget is not None and (
        not isinstance(budget, int | float) or isinstance(budget, bool) or not budget >= 0
    ):
        errors.append(
            Error(
                f"{label}['BATCH_TIME_BUDGET'] must be a number of seconds (0 or more) or None.",
                hint="Keep it below the server's worker timeout (gunicorn's --timeout).",
                id="mcp_endpoint.E043",
            )
        )
    return errors


def _check_scopes_and_origins(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """E030, E005: the scope policy's method map, the origins a browser may call from."""
    errors: list[CheckMessage] = []
    if "SCOPES_BY_METHOD" in values and not _is_scope_mapping(values["SCOPES_BY_METHOD"]):
        errors.append(
            Error(
                f"{label}['SCOPES_BY_METHOD'] must map HTTP methods (or '*') to lists of "
                "scopes, or be None.",
                hint='For example {"GET": ["read"], "HEAD": ["read"], "OPTIONS": ["read"], '
                '"*": ["write"]}.',
                id="mcp_endpoint.E030",
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


def _check_tool_middleware(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """E111: the request path of tool calls, set wrongly or per endpoint; W111: a skipped
    middleware the product does not list."""
    keys = [k for k in ("TOOL_MIDDLEWARE", "TOOL_MIDDLEWARE_SKIP") if k in values]
    if label != "MCP_ENDPOINT":
        if not keys:
            return []
        return [
            Error(
                f"{label} sets {', '.join(keys)}: the middleware a tool call runs is the "
                "process's, not an endpoint's.",
                hint="Set it in MCP_ENDPOINT.",
                id="mcp_endpoint.E111",
            )
        ]
    errors: list[CheckMessage] = []
    if "TOOL_MIDDLEWARE" in values and not isinstance(values["TOOL_MIDDLEWARE"], bool):
        errors.append(
            Error(
                f"{label}['TOOL_MIDDLEWARE'] must be True or False.",
                hint="True runs the product's MIDDLEWARE for each viewset tool call.",
                id="mcp_endpoint.E111",
            )
        )
    skip = values.get("TOOL_MIDDLEWARE_SKIP", [])
    if not isinstance(skip, list | tuple) or not all(isinstance(m, str) for m in skip):
        errors.append(
            Error(
                f"{label}['TOOL_MIDDLEWARE_SKIP'] must be a list of dotted paths, as "
                "MIDDLEWARE lists them.",
                id="mcp_endpoint.E111",
            )
        )
        return errors
    listed = set(getattr(settings, "MIDDLEWARE", None) or [])
    for entry in skip:
        if entry not in listed:
            errors.append(
                Warning(
                    f"{label}['TOOL_MIDDLEWARE_SKIP'] names {entry!r}, which MIDDLEWARE "
                    "does not list: skipping it has no effect.",
                    hint="Spell it as MIDDLEWARE does, or remove it.",
                    id="mcp_endpoint.W111",
                )
            )
    return errors


def _is_scope_mapping(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, dict) and all(
        isinstance(method, str)
        and isinstance(scopes, list | tuple)
        and all(isinstance(s, str) for s in scopes)
        for method, scopes in value.items()
    )


@register(Tags.security, deploy=True)
def check_default_scopes(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W031 (deploy): the default scope policy is off, so "read" credentials can write."""
    sources = [("MCP_ENDPOINT", getattr(settings, "MCP_ENDPOINT", {}))] + [
        (f"Endpoint {e.name!r} settings", e.settings.overrides) for e in all_endpoints()
    ]
    return [
        Warning(
            f"{label}['SCOPES_BY_METHOD'] is None: on views that declare no scopes of their "
            "own, a key or token holding only 'read' can create, change and delete, on the "
            "REST API and at /mcp.",
            hint="Remove the key to get the default (read for GET, HEAD and OPTIONS, write "
            "for the rest), or give every view a scope policy of its own.",
            id="mcp_endpoint.W031",
        )
        for label, values in sources
        if isinstance(values, dict)
        and "SCOPES_BY_METHOD" in values
        and values["SCOPES_BY_METHOD"] is None
    ]


@register(Tags.compatibility)
def check_registries(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for endpoint in all_endpoints():
        for name in endpoint.tools.duplicates:
            errors.append(
                Error(
                    f"Endpoint {endpoint.name!r} registers more than one tool named {name!r}.",
                    hint="Give one of them another name: names={action: ...} or "
                    "name_prefix=... when registering (per_basename={basename: {...}} for one "
                    "viewset of a router); a router mounted under several include() "
                    "prefixes is registered once per prefix, each with its parents=[...].",
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
        errors.extend(check_endpoint_reachable(endpoint))
        errors.extend(server_card.check(endpoint))
        errors.extend(ui.check(endpoint))
        # Registrations build their tools here, with the database out of reach; the tools
        # whose schemas need it are checked by check_tool_schemas_with_database.
        errors.extend(endpoint.check())
        tools = [tool for tool in endpoint.tools if tool.ready()]
        errors.extend(tool_schema_messages(endpoint, tools))
        errors.extend(
            tools_list_budget(endpoint, tools, complete=len(tools) == len(endpoint.tools))
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
                        id="mcp_endpoint.E082",
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


def answering_pattern(path: str, urlconf: str | None = None) -> tuple[str, str, Any] | None:
    """What the URL conf routes ``path`` to: the pattern (``'.*'``), the view's dotted
    name, and the endpoint when the view is one's (else None); None when nothing does."""
    from django.urls import Resolver404, resolve

    try:
        match = resolve(path, urlconf)
    except Resolver404:
        return None
    func = getattr(match.func, "view_class", match.func)
    view = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', func)}"
    return str(match.route), view, getattr(match.func, "view_initkwargs", {}).get("endpoint")


def check_endpoint_reachable(endpoint: Any) -> list[CheckMessage]:
    """E016: the URL conf mounts the endpoint, but an earlier pattern answers its path (a
    single-page app's ``re_path(r".*", IndexView)``): clients reach that page, not MCP."""
    from django.urls import NoReverseMatch, reverse

    try:
        path = reverse(f"{endpoint.name}:endpoint")
    except NoReverseMatch:
        return []
    answered = answering_pattern(path)
    if answered is None:
        return []
    match_route, view, answering = answered
    if answering is endpoint:
        return []
    return [
        Error(
            f"Endpoint {endpoint.name!r} is mounted at {path}, but the URL pattern "
            f"{match_route!r} (view {view}) comes first and answers that path: clients get "
            "that page, not the endpoint.",
            hint="Put the endpoint's path() (and path('', include('mcp_endpoint.oauth.urls'))) "
            f"before {match_route!r} in urlpatterns: a catch-all route goes last.",
            obj=endpoint,
            id="mcp_endpoint.E016",
        )
    ]


def tool_schema_messages(endpoint: Any, tools: list[Any]) -> list[CheckMessage]:
    """E012 (not portable, or not valid JSON Schema 2020-12) and W051 (over the budget of
    one tool) for ``tools``, those that can be listed."""
    messages: list[CheckMessage] = []
    budget: int = endpoint.settings.TOOL_BUDGET_BYTES
    for tool in tools:
        if tool.unavailable() is not None:
            continue
        schemas = [tool.input_schema, tool.output_schema or {}]
        invalid = [e for s in schemas for e in metaschema_errors(s)]
        if (
            tool.input_schema.get("type") != "object"
            or (
                endpoint.settings.PORTABLE_SCHEMAS
                and any(has_ref_or_type_array(s) for s in schemas)
            )
            or invalid
        ):
            messages.append(
                Error(
                    f"Tool {tool.name!r} has a schema that is not portable (its input root is "
                    "not an object, it holds a $ref or a type array, or it is not valid JSON "
                    "Schema 2020-12" + (f": {invalid[0]}" if invalid else "") + ").",
                    hint="Pass the schema through mcp_endpoint.schema.portable().",
                    obj=endpoint,
                    id="mcp_endpoint.E012",
                )
            )
        for problem in header_schema_problems(tool.input_schema):
            messages.append(
                Error(
                    f"Tool {tool.name!r} marks an argument for a header that clients "
                    f"refuse: {problem}.",
                    hint="Clients drop such a tool; see x-mcp-header in the 2026-07-28 transport.",
                    obj=endpoint,
                    id="mcp_endpoint.E081",
                )
            )
        size = descriptor_bytes(tool.describe())
        if size > budget:
            messages.append(
                Warning(
                    f"Tool {tool.name!r} takes {size} bytes of tools/list, over the budget of "
                    f"{budget} (TOOL_BUDGET_BYTES).",
                    hint="Shorten its description; leave out arguments (FILTER_LOOKUPS, "
                    "exclude=...); long choice lists shrink with LARGE_CHOICE_LIST.",
                    obj=endpoint,
                    id="mcp_endpoint.W051",
                )
            )
    return messages


def tools_list_budget(endpoint: Any, tools: list[Any], *, complete: bool) -> list[CheckMessage]:
    """W052: with TOOL_DISCOVERY "never", the endpoint's ``tools`` together (those built
    without the database; all of them when ``complete``) over TOOLS_LIST_BUDGET_BYTES
    (otherwise the list a client is served stays within it: see mcp_endpoint.toolsets);
    W054: a toolset the endpoint serves (TOOLSETS) that none of its tools is in.

    Reported by the checks every run makes, never by the database-tagged one: Django runs
    checks in no set order, so a second report there would come twice, or before this one.
    Tools that need the database to build are not counted; without them the list is at
    least this large.
    """
    messages: list[CheckMessage] = []
    known = endpoint.toolsets()
    for name in endpoint.settings.TOOLSETS or ():
        if name not in known:
            messages.append(
                Warning(
                    f"Endpoint {endpoint.name!r} serves the toolset {name!r} (TOOLSETS), "
                    "which none of its tools is in.",
                    hint=f"Its toolsets are {', '.join(known) or 'none'}.",
                    obj=endpoint,
                    id="mcp_endpoint.W054",
                )
            )
    if endpoint.settings.TOOL_DISCOVERY != "never":
        return messages
    budget: int = endpoint.settings.TOOLS_LIST_BUDGET_BYTES
    listed = [tool.describe() for tool in tools if tool.unavailable() is None]
    size = list_bytes(listed, endpoint.features.page_size())
    if size <= budget:
        return messages
    more = "" if complete else " (at least: the tools that need the database are not counted)"
    messages.append(
        Warning(
            f"Endpoint {endpoint.name!r} lists {len(listed)} tools in {size} bytes{more}, over "
            f"the budget of {budget} (TOOLS_LIST_BUDGET_BYTES), with TOOL_DISCOVERY 'never': a "
            "model reads all of it before the conversation starts.",
            hint="Leave TOOL_DISCOVERY at 'auto' (a large list becomes search_tools and "
            "call_tool), serve fewer TOOLSETS, or register fewer actions.",
            obj=endpoint,
            id="mcp_endpoint.W052",
        )
    )
    return messages


def descriptor_bytes(descriptor: Any) -> int:
    """The size of a tool's tools/list entry, as JSON on the wire."""
    text = getattr(descriptor, "text", None)
    if not isinstance(text, str):
        text = json.dumps(descriptor, ensure_ascii=False, separators=(",", ":"))
    return len(text.encode("utf-8"))


@register(Tags.database)
def check_tool_schemas_with_database(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[CheckMessage]:
    """The tools whose schemas need the database to build: checked only when the databases
    are asked for (``check --database``, ``migrate``) and migrated (before that, building
    them would read tables that do not exist yet; they are built on first use)."""
    if not databases or any(unapplied_migrations(alias) for alias in databases):
        return []
    messages: list[CheckMessage] = []
    for endpoint in all_endpoints():
        waiting = {t.name for t in endpoint.tools if not t.ready()}
        messages.extend(endpoint.check(database=True))
        if not waiting:
            continue
        built = [t for t in endpoint.tools if t.name in waiting and t.ready()]
        messages.extend(tool_schema_messages(endpoint, built))
    return messages


def unapplied_migrations(alias: str) -> bool:
    from django.db import connections
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[alias])
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


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
    "SUBSCRIPTIONS_PER_SESSION",
    "LISTEN_MAX_URIS",
    "LOG_RETENTION_DAYS",
    "SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT",
    "STREAMED_CALLS_PER_CREDENTIAL",
    "PENDING_CLIENT_REQUESTS_PER_CREDENTIAL",
    "STREAM_POOL_SIZE",
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
                    id="mcp_endpoint.E080",
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
        if endpoint is None or "STREAMED_CALLS_PER_CREDENTIAL" in values:
            messages.extend(_check_stream_pool(label, values, user))
        if endpoint is not None:
            messages.extend(_check_shared_cache(label, endpoint))
    return messages


def _check_stream_pool(
    label: str, values: dict[str, Any], user: dict[str, Any]
) -> list[CheckMessage]:
    """E009: one credential must not be able to take every thread of the stream pool."""
    key = "STREAMED_CALLS_PER_CREDENTIAL"
    cap = values.get(key, user.get(key, DEFAULTS[key]))
    # The pool is the process's, so its size is read from MCP_ENDPOINT only.
    pool = user.get("STREAM_POOL_SIZE", DEFAULTS["STREAM_POOL_SIZE"])
    counts = (cap, pool)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in counts):
        return []  # E007 says so
    if cap < pool:
        return []
    return [
        Error(
            f"{label}[{key!r}] is {cap}, not below STREAM_POOL_SIZE ({pool}): one "
            "credential could take every thread that runs streamed calls.",
            hint="Lower it, or raise MCP_ENDPOINT['STREAM_POOL_SIZE'].",
            id="mcp_endpoint.E009",
        )
    ]


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


def _check_rate_and_key_cache(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """``PROTOCOL_RATE`` (E040), ``API_KEY_CACHE_SECONDS`` (E041) and
    ``KEY_MEMORY_SECONDS`` (E044)."""
    errors: list[CheckMessage] = []
    rate = values.get("PROTOCOL_RATE")
    if "PROTOCOL_RATE" in values and rate is not None and not _is_rate(rate):
        errors.append(
            Error(
                f"{label}['PROTOCOL_RATE'] must be a rate such as '1200/minute', or None.",
                hint="DRF's rate syntax: a number of requests, '/', and second, minute, hour "
                "or day.",
                id="mcp_endpoint.E040",
            )
        )
    for name, check_id in (
        ("API_KEY_CACHE_SECONDS", "mcp_endpoint.E041"),
        ("KEY_MEMORY_SECONDS", "mcp_endpoint.E044"),
    ):
        seconds = values.get(name)
        if seconds is not None and (
            not isinstance(seconds, int) or isinstance(seconds, bool) or seconds < 0
        ):
            errors.append(
                Error(
                    f"{label}[{name!r}] must be a whole number of seconds (0: off).",
                    id=check_id,
                )
            )
    return errors


def _is_rate(rate: Any) -> bool:
    if not isinstance(rate, str) or rate.count("/") != 1:
        return False
    number, period = rate.split("/")
    return number.isdigit() and int(number) > 0 and period[:1] in {"s", "m", "h", "d"}


@register(Tags.compatibility)
def check_key_cache(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W040: the cache of validated keys in a cache that each process keeps for itself."""
    from mcp_endpoint.conf import mcp_settings

    seconds = mcp_settings.API_KEY_CACHE_SECONDS
    if not isinstance(seconds, int) or seconds <= 0:
        return []
    alias = mcp_settings.CACHE
    backend = settings.CACHES.get(alias, {}).get("BACKEND", "")
    if backend not in PROCESS_LOCAL_CACHES:
        return []
    return [
        Warning(
            f"MCP_ENDPOINT['API_KEY_CACHE_SECONDS'] is {seconds}, but the cache {alias!r} "
            f"({backend.rsplit('.', 1)[-1]}) is kept by each process: a key revoked, edited or "
            "whose user is deactivated in one process keeps working in the others for up to "
            f"{seconds} s.",
            hint="Point MCP_ENDPOINT['CACHE'] at Redis or Memcached, or set "
            "API_KEY_CACHE_SECONDS to 0.",
            id="mcp_endpoint.W040",
        )
    ]


# Task backends that do not run a long-running tool on a worker of its own.
IN_PROCESS_TASK_BACKENDS = ("ImmediateBackend", "DummyBackend")


@register(Tags.compatibility)
def check_tasks(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Long-running tools (E090 to E093)."""
    from importlib.util import find_spec

    from mcp_endpoint.protocol.tasks import TASK_SUPPORT

    errors: list[CheckMessage] = []
    backends = getattr(settings, "TASKS", None) or {"default": {}}
    for endpoint in all_endpoints():
        label = f"Endpoint {endpoint.name!r}"
        long_running = [t for t in endpoint.tools if t.task_support != "forbidden"]
        for tool in endpoint.tools:
            if tool.task_support not in TASK_SUPPORT:
                errors.append(
                    Error(
                        f"Tool {tool.name!r} has task_support={tool.task_support!r}.",
                        hint=f"Use one of {', '.join(TASK_SUPPORT)}.",
                        obj=endpoint,
                        id="mcp_endpoint.E090",
                    )
                )
        for key in ("TASK_TTL_MS", "TASK_POLL_INTERVAL_MS", "TASK_HEARTBEAT_MS"):
            value = getattr(endpoint.settings, key)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                errors.append(
                    Error(
                        f"{label}: {key} must be a positive integer (milliseconds).",
                        obj=endpoint,
                        id="mcp_endpoint.E092",
                    )
                )
        if not long_running:
            continue
        if find_spec("django.tasks") is None and find_spec("django_tasks") is None:
            errors.append(
                Error(
                    f"{label} has long-running tools, and no task framework is installed.",
                    hint="Before Django 6.0, install django-tasks (and a backend such as "
                    "django-tasks-db), and set TASKS.",
                    obj=endpoint,
                    id="mcp_endpoint.E091",
                )
            )
        if endpoint.settings.TASK_BACKEND not in backends:
            errors.append(
                Error(
                    f"{label}: TASK_BACKEND {endpoint.settings.TASK_BACKEND!r} is not a backend "
                    "in the TASKS setting.",
                    obj=endpoint,
                    id="mcp_endpoint.E093",
                )
            )
    return errors


def long_running_backends() -> Iterator[tuple[Any, str]]:
    """``(endpoint, backend class path)`` of each endpoint with long-running tools."""
    backends = getattr(settings, "TASKS", None) or {}
    for endpoint in all_endpoints():
        if any(t.task_support != "forbidden" for t in endpoint.tools):
            alias = endpoint.settings.TASK_BACKEND
            yield endpoint, str(backends.get(alias, {}).get("BACKEND", ""))


@register(Tags.compatibility, deploy=True)
def check_task_workers(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W090 (deploy): long-running tools on a backend that runs them in the web worker."""
    warnings: list[CheckMessage] = []
    for endpoint, backend in long_running_backends():
        if not backend or backend.endswith(IN_PROCESS_TASK_BACKENDS):
            warnings.append(
                Warning(
                    f"Endpoint {endpoint.name!r} runs its long-running tools on "
                    f"{backend or 'the default immediate backend'}: in the web worker, or not "
                    "at all.",
                    hint="Use a backend with workers of its own (django-tasks-db's "
                    "DatabaseBackend and manage.py mcp_task_worker, say).",
                    obj=endpoint,
                    id="mcp_endpoint.W090",
                )
            )
    return warnings


@register(Tags.compatibility, deploy=True)
def check_task_worker_seen(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W091 (deploy): long-running tools, and no worker of their backend seen running."""
    from django.db import Error as DatabaseError

    from mcp_endpoint import task_recovery

    warnings: list[CheckMessage] = []
    for endpoint, backend in long_running_backends():
        if not backend or backend.endswith(IN_PROCESS_TASK_BACKENDS):
            continue  # W090's
        alias = endpoint.settings.TASK_BACKEND
        try:
            seen = task_recovery.last_worker_seen(alias)
        except DatabaseError:
            continue  # not migrated yet: migrate's own checks come first
        window = task_recovery.stale_after(endpoint.settings)
        if seen is not None and seen >= timezone.now() - window:
            continue
        when = f"last seen {seen.isoformat(timespec='seconds')}" if seen else "never seen"
        warnings.append(
            Warning(
                f"Endpoint {endpoint.name!r} has long-running tools on the task backend "
                f"{alias!r}, and no worker of it is running ({when}): their tasks would stay "
                "working, so the tasks extension is not announced.",
                hint="Start the backend's workers (manage.py mcp_task_worker for "
                "django-tasks-db, a Celery worker for mcp_endpoint.celery.CeleryBackend); "
                "see docs/deployment.md.",
                obj=endpoint,
                id="mcp_endpoint.W091",
            )
        )
    return warnings
