"""System checks: every misconfiguration found at start-up, each with a stable id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning, register
from django.utils import timezone
from django.utils.module_loading import import_string

from mcp_endpoint import ui
from mcp_endpoint.conf import DEFAULTS, PROCESS_KEYS, SETTINGS, Setting, backend_class
from mcp_endpoint.protocol.headers import schema_problems as header_schema_problems
from mcp_endpoint.schema import has_ref_or_type_array, metaschema_errors
from mcp_endpoint.tools import TOOL_NAME
from mcp_endpoint.toolsets import list_bytes


def all_endpoints() -> list[Any]:
    """Every endpoint, those the URL conf creates included (it is loaded first)."""
    from django.urls import get_resolver

    from mcp_endpoint.endpoint import endpoints

    get_resolver().url_patterns  # noqa: B018 - importing the URL conf creates endpoints
    return sorted(endpoints, key=lambda e: e.name)


@register(Tags.compatibility)
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """``MCP_ENDPOINT`` and every endpoint's own settings: unknown keys (E001), each value
    under its key's own id, process keys set per endpoint (E015, E111), W111 and W110."""
    errors: list[CheckMessage] = []
    user = getattr(settings, "MCP_ENDPOINT", {})
    if not isinstance(user, dict):
        return [Error("MCP_ENDPOINT must be a dict.", id="mcp_endpoint.E001")]
    sources = [("MCP_ENDPOINT", user)] + [
        (f"Endpoint {e.name!r} settings", e.settings.overrides) for e in all_endpoints()
    ]
    for label, values in sources:
        errors.extend(_check_values(label, values))
        errors.extend(check_setting_values(label, values))
        if label != "MCP_ENDPOINT":
            errors.extend(_check_process_keys(label, values))
        errors.extend(_check_tool_middleware(label, values))
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
            continue  # its type check says so
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
    return errors


def check_setting_values(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """Each value of ``values`` (``MCP_ENDPOINT``, or an endpoint's settings) that its
    key's validator refuses, under that key's own check id (see :data:`conf.SETTINGS`)."""
    errors: list[CheckMessage] = []
    for setting in SETTINGS:
        if setting.name in values:
            errors.extend(_setting_errors(label, setting, values[setting.name]))
    return errors


def _setting_errors(label: str, setting: Setting, value: Any) -> list[CheckMessage]:
    problem = setting.problem(value)
    if problem is None:
        return []
    return [Error(f"{label}[{setting.name!r}] {problem}.", hint=setting.hint, id=setting.check_id)]


def _check_process_keys(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """E015: an endpoint's settings set a key the process reads once for every endpoint,
    so the endpoint's value would be silently ignored (E111 says so for the middleware)."""
    keys = sorted(PROCESS_KEYS.intersection(values) - {"TOOL_MIDDLEWARE", "TOOL_MIDDLEWARE_SKIP"})
    if not keys:
        return []
    return [
        Error(
            f"{label} sets {', '.join(keys)}: the process reads "
            f"{'it' if len(keys) == 1 else 'them'} from MCP_ENDPOINT alone, for every endpoint.",
            hint=f"Set {'it' if len(keys) == 1 else 'them'} in MCP_ENDPOINT.",
            id="mcp_endpoint.E015",
        )
    ]


def _check_tool_middleware(label: str, values: dict[str, Any]) -> list[CheckMessage]:
    """E111: the request path of tool calls, set per endpoint; W111: a skipped middleware
    the product does not list."""
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
    skip = values.get("TOOL_MIDDLEWARE_SKIP", [])
    if not isinstance(skip, list | tuple) or not all(isinstance(m, str) for m in skip):
        return errors  # its own type check says so
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


# Caches whose entries one process cannot see from another.
PROCESS_LOCAL_CACHES = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)


def derives_from(path: str, names: tuple[str, ...]) -> bool:
    """Whether the class at the import path ``path``, or one it derives from (a host's
    subclass keeps its parent's nature), has an import path ending with one of ``names``.
    A path that cannot be imported is matched as written (its own check reports it)."""
    cls = backend_class(path)
    paths = [f"{k.__module__}.{k.__qualname__}" for k in cls.__mro__] if cls else [path]
    return any(p.endswith(names) for p in paths)


@register(Tags.compatibility)
def check_sessions_and_rounds(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The stream pool and sessions across the settings (E009, W009)."""
    user = getattr(settings, "MCP_ENDPOINT", {})
    if not isinstance(user, dict):
        return []  # E001 says so already
    messages: list[CheckMessage] = []
    sources = [("MCP_ENDPOINT", user, None)] + [
        (f"Endpoint {e.name!r} settings", e.settings.overrides, e) for e in all_endpoints()
    ]
    for label, values, endpoint in sources:
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
        return []  # their type checks say so
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
    backend = str(settings.CACHES.get(alias, {}).get("BACKEND", ""))
    if not derives_from(backend, PROCESS_LOCAL_CACHES):
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


@register(Tags.compatibility)
def check_key_cache(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W040: the cache of validated keys in a cache that each process keeps for itself."""
    from mcp_endpoint.conf import mcp_settings

    seconds = mcp_settings.API_KEY_CACHE_SECONDS
    if not isinstance(seconds, int) or seconds <= 0:
        return []
    alias = mcp_settings.CACHE
    backend = str(settings.CACHES.get(alias, {}).get("BACKEND", ""))
    if not derives_from(backend, PROCESS_LOCAL_CACHES):
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


# Apps that switch the database schema per request: a batch of the call-log spool is
# written in whatever schema is active when it is due, not the one of its calls.
SCHEMA_PER_TENANT_APPS = ("django_tenants", "tenant_schemas")


@register(Tags.compatibility)
def check_call_log_spool(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """W112: a ``LOG_SPOOL_DIR`` this process cannot write in; W113: a spool beside an
    app that switches the database schema per request."""
    from mcp_endpoint.conf import mcp_settings

    return call_log_spool_problems(mcp_settings.LOG_SPOOL_DIR, settings.INSTALLED_APPS)


def call_log_spool_problems(folder: Any, installed_apps: list[str]) -> list[CheckMessage]:
    import os
    from pathlib import Path

    if not isinstance(folder, str) or not folder:
        return []
    found: list[CheckMessage] = []
    path = Path(folder)
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None or not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        found.append(
            Warning(
                f"MCP_ENDPOINT['LOG_SPOOL_DIR'] is {folder!r}, which this process cannot "
                "create or write in: each call-log row is written at once instead, with a "
                "warning per call.",
                hint="Name a local folder the web and task workers can write in, or None.",
                id="mcp_endpoint.W112",
            )
        )
    tenants = [app for app in SCHEMA_PER_TENANT_APPS if app in installed_apps]
    if tenants:
        found.append(
            Warning(
                f"MCP_ENDPOINT['LOG_SPOOL_DIR'] is set beside {tenants[0]}, which switches the "
                "database schema per request: a batch of spooled call-log rows is written in "
                "the schema active when it is due, which may be another tenant's.",
                hint="Set LOG_SPOOL_DIR to None: each row is then written with its call.",
                id="mcp_endpoint.W113",
            )
        )
    return found


# Task backends that do not run a long-running tool on a worker of its own.
IN_PROCESS_TASK_BACKENDS = (".ImmediateBackend", ".DummyBackend")


@register(Tags.compatibility)
def check_tasks(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """Long-running tools (E090, E091, E093)."""
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
        if not backend or derives_from(backend, IN_PROCESS_TASK_BACKENDS):
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
        if not backend or derives_from(backend, IN_PROCESS_TASK_BACKENDS):
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
