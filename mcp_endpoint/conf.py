"""The ``MCP_ENDPOINT`` settings, read through one object with defaults.

A host configures the app with one dict in its settings::

    MCP_ENDPOINT = {
        "SERVER_NAME": "task-tracker",
        "PROTOCOL_VERSIONS": ["2025-11-25", "2025-06-18"],
    }

Every key has a default below; an unknown key is a system check error (``mcp_endpoint.E001``).
An :class:`~mcp_endpoint.endpoint.Endpoint` may override any key for itself with its
``settings`` argument, so two endpoints in one host can differ.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from django.conf import settings as django_settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.module_loading import import_string

from mcp_endpoint.protocol.versions import ALL_VERSIONS

DEFAULTS: dict[str, Any] = {
    # Who the server says it is, in ``initialize`` and ``server/discover``.
    "SERVER_NAME": "mcp-endpoint",
    "SERVER_TITLE": "",
    "SERVER_VERSION": "1.0.0",
    # The server card at <endpoint>/server-card (mcp_endpoint.server_card): off, on, or a
    # dict of the fields a host gives (a reverse-DNS "name", "description", "websiteUrl").
    "SERVER_CARD": False,
    # Instructions for the model: a plain string, or a template rendered once per process.
    "INSTRUCTIONS": "",
    "INSTRUCTIONS_TEMPLATE": "",
    # The protocol revisions served, legacy and modern alike.
    "PROTOCOL_VERSIONS": list(ALL_VERSIONS),
    # Requests with a larger body are refused with 413 before they are read.
    "MAX_REQUEST_BYTES": 1024 * 1024,
    # Arrays and objects nested deeper than this in a body are a parse error (-32700).
    "MAX_JSON_DEPTH": 200,
    # A tool's arguments nested deeper than this are invalid_arguments.
    "MAX_ARGUMENT_DEPTH": 32,
    # Messages in one legacy batch; a longer batch is refused (-32600).
    "MAX_BATCH_SIZE": 50,
    # Seconds one batch may spend; messages not started by then are answered with an
    # error each instead of running (the first always runs). None for no budget.
    "BATCH_TIME_BUDGET": 20.0,
    # Longest string a viewset list tool passes on as a query parameter (search, filters);
    # shown as maxLength in the tool's input schema.
    "MAX_QUERY_ARGUMENT_LENGTH": 500,
    # Database or cache unreachable: answered 503 with this Retry-After (seconds), and
    # logged once per outage kind per worker per this many seconds.
    "OUTAGE_RETRY_AFTER": 5,
    "OUTAGE_LOG_INTERVAL": 60,
    # Origins allowed besides django-cors-headers' own list. Loopback on any port is always
    # allowed; entries are exact origins ("https://claude.ai") or "*.example.com" host globs.
    "ALLOWED_ORIGINS": [
        "https://claude.ai",
        "https://claude.com",
        "https://chatgpt.com",
        "https://chat.openai.com",
        "https://platform.openai.com",
    ],
    # Whether a request needs a credential at all; a fixture endpoint may turn this off.
    "REQUIRE_CREDENTIAL": True,
    # Answer only clients on the loopback interface (403 for any other REMOTE_ADDR).
    "LOOPBACK_ONLY": False,
    # DRF authentication classes that turn a request into a credential, tried in order.
    "AUTHENTICATION_CLASSES": [
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "mcp_endpoint.authentication.OAuth2TokenAuthentication",
    ],
    # DRF throttle classes applied to every request; None means the host's
    # REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"], so MCP and REST share one budget.
    "THROTTLE_CLASSES": None,
    # The default scope policy, for views that declare none (mcp_endpoint.scopes): the scopes
    # a key or token needs per HTTP method ("*" for the others), on REST and /mcp alike.
    # None turns it off: a "read" credential then writes wherever the user may.
    "SCOPES_BY_METHOD": {
        "GET": ["read"],
        "HEAD": ["read"],
        "OPTIONS": ["read"],
        "*": ["write"],
    },
    # The per-credential limit on protocol messages (initialize, ping, lists, discover), in
    # DRF's rate syntax; None for none. Messages that run host code count against
    # THROTTLE_CLASSES instead, as REST requests do.
    "PROTOCOL_RATE": "1200/minute",
    # The scopes the endpoint's tools use, for the 401 challenge; None derives them.
    "SCOPES": None,
    # Refuse to start (system check E012) when a tool's schema is not portable; an endpoint
    # that serves deliberately rich schemas (a conformance fixture) may turn this off.
    "PORTABLE_SCHEMAS": True,
    # The size of what a model reads about the tools: a choice list longer than this appears
    # once per input schema as an enum (without the generated list of its labels) and not at
    # all in output schemas; a check warns when one tool's descriptor, or the whole
    # tools/list, is over its budget (in bytes of JSON).
    "LARGE_CHOICE_LIST": 50,
    "TOOL_BUDGET_BYTES": 16 * 1024,
    # What a client loads of tools/list (every page together, in bytes of JSON): past this,
    # the list a connection is served drops its output schemas (OUTPUT_SCHEMAS "auto"),
    # then becomes two discovery tools, search_tools and call_tool (TOOL_DISCOVERY "auto").
    # "always" and "never" decide regardless of size (see mcp_endpoint.toolsets).
    "TOOLS_LIST_BUDGET_BYTES": 32 * 1024,
    "TOOL_DISCOVERY": "auto",
    "OUTPUT_SCHEMAS": "auto",
    # The toolsets this endpoint serves (None: all) and whether it serves read-only tools
    # only; a client narrows both with ?toolsets=a,b&read_only=1 or MCP-Toolsets and
    # MCP-Read-Only headers.
    "TOOLSETS": None,
    "READ_ONLY": False,
    # In the compact form, enable_toolset adds a toolset's tools to the list as a model
    # goes, where the client hears notifications/tools/list_changed (mcp_endpoint.dynamic_toolsets).
    "DYNAMIC_TOOLSETS": True,
    # Which django-filter filters a list tool offers: "exact" (each field's exact filter and
    # its multi-value form, such as name and id__in), "grouped" (those, and every other
    # lookup in one object argument, "lookups") or "all" (every filter its own argument).
    "FILTER_LOOKUPS": "grouped",
    # A request body that is one object or a list of them (a bulk-capable create) gives the
    # tool the object's fields; True gives it one "items" argument, the list, instead.
    "ARRAY_BODIES": False,
    # The API version the views are called with (AcceptHeaderVersioning, say) and described
    # for; None means each view's default version. register_viewset(version=...) wins.
    "API_VERSION": None,
    # List results per page for tools/list, resources/list, prompts/list.
    "LIST_PAGE_SIZE": 100,
    # A list tool whose view is not paginated returns at most this many items.
    "MAX_LIST_ITEMS": 100,
    # The largest file (a PDF, an image, a CSV export) a tool returns as an embedded
    # resource; a larger one is a tool error that says so, never a cut file.
    "MAX_BINARY_RESULT_BYTES": 5 * 1024 * 1024,
    # A viewset tool's call goes through the product's MIDDLEWARE for the action's URL, as
    # its REST request would (False: straight to the view); process-wide (read from
    # MCP_ENDPOINT only). TOOL_MIDDLEWARE_SKIP lists MIDDLEWARE entries a call does not run,
    # besides those it never runs (the app's outage middleware, CORS, WhiteNoise, and the
    # session middleware when the call shares the MCP request's session).
    "TOOL_MIDDLEWARE": True,
    "TOOL_MIDDLEWARE_SKIP": [],
    # tools/list shows every tool, not only those the credential's scopes allow.
    "SHOW_ALL_TOOLS": False,
    # A tool's text rendering is cut past this many bytes, with a note on how to narrow it.
    "TEXT_BUDGET_BYTES": 24_000,
    # Modern-revision caching hint on list and read results, in milliseconds.
    "TTL_MS": 60_000,
    # API keys: the visible prefix every key starts with, and the model that stores them.
    "API_KEY_PREFIX": "mcp",
    "API_KEY_MODEL": "mcp_endpoint.APIKey",
    # Keep validated API keys in CACHE for this many seconds (0: off), so a request with a
    # known key needs no query. Key and user changes drop the entry at once (signals); with
    # a per-process cache only in the process that made them (check W040). Global only.
    "API_KEY_CACHE_SECONDS": 0,
    # Keep verified API keys in each worker's memory for this many seconds (0: off), where
    # CACHE is Redis: a key or user change is published there and every worker drops the
    # entry before the change is acknowledged (mcp_endpoint.key_memory). Global only.
    "KEY_MEMORY_SECONDS": 60,
    # The expiry a new key is offered by default, in days (the account pages and the admin).
    "API_KEY_DEFAULT_EXPIRY_DAYS": 90,
    # Write a ToolCall row per tools/call, and which argument names to redact in it.
    "LOG_TOOL_CALLS": False,
    "REDACTED_ARGUMENTS": ["password", "secret", "token"],
    # Bytes a call-log row's arguments (as JSON) and error text may take together; past it,
    # both are cut and the cut is marked.
    "LOG_ROW_MAX_BYTES": 64 * 1024,
    # Rows of the call log older than this many days go at ``manage.py mcp_prune_calls``;
    # None keeps them all.
    "LOG_RETENTION_DAYS": 90,
    # The canonical URL of the endpoint for OAuth resource binding; None derives it per request.
    "RESOURCE_URL": None,
    # OAuth: what django-oauth-toolkit leaves to its host. Everything the toolkit knows
    # (PKCE, registration on or off, metadata documents, scopes) stays in OAUTH2_PROVIDER.
    # Checks every dynamic registration must pass, in order, before the toolkit sees it.
    "OAUTH_REGISTRATION_POLICY_CLASSES": [
        "mcp_endpoint.oauth.registration.ApplicationTypePolicy",
        "mcp_endpoint.oauth.registration.RedirectURIPolicy",
    ],
    # Throttles on the registration endpoint (DRF throttle classes, counted per client IP:
    # REMOTE_ADDR, or X-Forwarded-For only when REST_FRAMEWORK["NUM_PROXIES"] declares proxies).
    "OAUTH_REGISTRATION_THROTTLE_CLASSES": [
        "mcp_endpoint.oauth.registration.RegistrationRateThrottle"
    ],
    # Registrations one address may make, in DRF's rate syntax; None for no limit.
    "OAUTH_REGISTRATION_RATE": "20/hour",
    # Self-registered clients that never obtained a token are deleted by mcp_oauth_cleanup
    # once they are this many seconds old.
    "OAUTH_UNUSED_CLIENT_SECONDS": 24 * 3600,
    # Accept at /mcp an access token issued without a resource (RFC 8707), which any other
    # service of the site would accept too. Off: such a token gets 401 invalid_token.
    "OAUTH_ACCEPT_UNBOUND_TOKENS": False,
    # Hosts an https redirect URI may name, in ALLOWED_HOSTS syntax ("*" for any host).
    # Loopback (any port, http or https) is always allowed, for native clients (RFC 8252);
    # private-use schemes are those in OAUTH2_PROVIDER["ALLOWED_REDIRECT_URI_SCHEMES"].
    "OAUTH_REDIRECT_URI_HOSTS": [
        "claude.ai",
        "claude.com",
        "chatgpt.com",
        "chat.openai.com",
        "platform.openai.com",
        "vscode.dev",
        "insiders.vscode.dev",
    ],
    # The Django cache (an alias in CACHES) for sessions, used request states and answers a
    # client posts back; it must be shared by every worker process (Redis in production).
    "CACHE": "default",
    # Multi round-trip requests: how long a requestState stays valid, in seconds.
    "REQUEST_STATE_TTL": 600,
    # Ask the user to confirm destructive tools through elicitation, when the client
    # declares elicitation (a client that does not is never asked).
    "CONFIRM_DESTRUCTIVE_TOOLS": False,
    # Answer as a request-scoped SSE stream when the client accepts text/event-stream and
    # the call reports progress or logs; plain JSON otherwise.
    "STREAMING": True,
    # Seconds between SSE comment lines that keep an idle stream open through proxies.
    "STREAM_KEEPALIVE_SECONDS": 15,
    # In a legacy session, a streamed answer's events stay in CACHE this long after the
    # last one, so a client whose stream broke resumes it (GET with Last-Event-ID).
    "STREAM_RESUME_SECONDS": 60,
    # Announce the (deprecated) logging capability: log messages of tools reach the client.
    "LOGGING": False,
    # With LOGGING on: Python loggers (and their children) whose records, emitted while a
    # streamed call runs, reach that call's client at the level the client chose.
    "CLIENT_LOGGERS": ["mcp_endpoint"],
    # Legacy sessions (Mcp-Session-Id), kept in CACHE: off by default; idle expiry in
    # seconds; how many one credential may hold (the least recently used goes first).
    "SESSIONS": False,
    "SESSION_IDLE_SECONDS": 600,
    "SESSIONS_PER_CREDENTIAL": 8,
    # Resource subscriptions: the Redis that carries updates between processes (None: the
    # Redis of CACHE when it is Django's RedisCache, else this process only); whether a
    # session's GET stream may hold a WSGI worker (under ASGI it is async code); how many
    # GET streams one credential may hold open at once (resumed streams and
    # subscriptions/listen streams count too); how many resources one session may subscribe
    # to; how many URIs one subscriptions/listen may name (a longer list is refused, -32602).
    "SUBSCRIPTIONS_REDIS_URL": None,
    "WSGI_GET_STREAMS": False,
    "STREAMS_PER_CREDENTIAL": 4,
    "SUBSCRIPTIONS_PER_SESSION": 32,
    "LISTEN_MAX_URIS": 32,
    # How long a tool waits for the client to answer a request sent during the call; the
    # bound under a WSGI server that serves one request per process at a time
    # (wsgi.multithread false: gunicorn's sync workers), where a waiting call holds the
    # whole worker and must end before the server's worker timeout (30 s in gunicorn).
    "CLIENT_REQUEST_TIMEOUT": 300,
    "SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT": 20,
    # Per credential (counted in CACHE, so across processes): calls running in the stream
    # pool (beyond, a call answers unstreamed in its request thread), and requests to the
    # client awaiting its answer (beyond, the call ends with a tool error).
    "STREAMED_CALLS_PER_CREDENTIAL": 8,
    "PENDING_CLIENT_REQUESTS_PER_CREDENTIAL": 4,
    # Threads per process that run streamed calls, started on the first one; process-wide
    # (read from MCP_ENDPOINT only). A call that finds them all busy answers unstreamed.
    "STREAM_POOL_SIZE": 32,
    # Long-running tools (the tasks extension): the task backend (an alias in Django's TASKS)
    # they run on, how long a task and its result are kept after creation (ttlMs, in
    # milliseconds), and how often a client is told to poll (pollIntervalMs).
    "TASK_BACKEND": "default",
    "TASK_TTL_MS": 3_600_000,
    "TASK_POLL_INTERVAL_MS": 1000,
    # How often the worker running a task says it is alive; a task whose worker missed
    # three is failed as lost (a worker killed, or cut off from the database).
    "TASK_HEARTBEAT_MS": 10_000,
}

IMPORT_STRINGS = {
    "AUTHENTICATION_CLASSES",
    "THROTTLE_CLASSES",
    "OAUTH_REGISTRATION_POLICY_CLASSES",
    "OAUTH_REGISTRATION_THROTTLE_CLASSES",
}


class MCPSettings:
    """Settings with defaults; ``overrides`` win over the ``MCP_ENDPOINT`` dict."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})
        # What was read since the last reload (also kept as instance attributes).
        self._cache: dict[str, Any] = {}

    @property
    def user_settings(self) -> dict[str, Any]:
        return dict(getattr(django_settings, "MCP_ENDPOINT", {}) or {})

    def __getattr__(self, name: str) -> Any:
        # Called only for a setting not read since the last reload: the value is then kept
        # as an instance attribute, which later reads find without calling this (as DRF's
        # api_settings does). A view reads a dozen settings per request.
        if name not in DEFAULTS:
            raise AttributeError(f"Invalid MCP_ENDPOINT setting: {name!r}")
        if name in self.overrides:
            value = self.overrides[name]
        else:
            value = self.user_settings.get(name, DEFAULTS[name])
        if name in IMPORT_STRINGS and value is not None:
            value = [import_string(v) if isinstance(v, str) else v for v in value]
        self._cache[name] = value
        setattr(self, name, value)
        return value

    def reload(self) -> None:
        for name in list(self._cache):
            self.__dict__.pop(name, None)
        self._cache.clear()


mcp_settings = MCPSettings()
_instances: weakref.WeakSet[MCPSettings] = weakref.WeakSet()


def endpoint_settings(overrides: Mapping[str, Any] | None) -> MCPSettings:
    """A settings object for one endpoint, reloaded with the others on ``setting_changed``."""
    instance = MCPSettings(overrides)
    _instances.add(instance)
    return instance


@receiver(setting_changed)
def reload_settings(*, setting: str, **kwargs: Any) -> None:
    if setting in {"MCP_ENDPOINT", "REST_FRAMEWORK", "CORS_ALLOWED_ORIGINS"}:
        mcp_settings.reload()
        for instance in _instances:
            instance.reload()
