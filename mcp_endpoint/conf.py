"""The ``MCP_ENDPOINT`` settings, read through one object with defaults.

A host configures the process with one dict in its settings::

    MCP_ENDPOINT = {
        "SERVER_NAME": "task-tracker",
        "PROTOCOL_VERSIONS": ["2025-11-25", "2025-06-18"],
    }

Every key is one :class:`Setting` of :data:`SETTINGS`: its default, what a valid value is
(checked at start-up, each key under its own check id), whether it is the process's or may
differ per endpoint, and a line of documentation (docs/configuration.md is generated from
the table: ``python -m mcp_endpoint.conf``). An unknown key is a system check error
(``mcp_endpoint.E001``). An :class:`~mcp_endpoint.endpoint.Endpoint` takes the keys of
scope ``"endpoint"`` as keyword arguments in lower case (``Endpoint("mcp",
max_batch_size=10)``), so two endpoints in one host can differ.
"""

from __future__ import annotations

import difflib
import math
import re
import reprlib
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from django.conf import settings as django_settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.functional import Promise
from django.utils.module_loading import import_string

from mcp_endpoint.protocol.versions import ALL_VERSIONS

# -- what a valid value is ----------------------------------------------------------------
#
# A validator returns None for a valid value, else what is wrong with it, as the end of a
# sentence that starts with the key ("must be a positive integer"). ``kind`` says what it
# takes, for the documentation.

Scope = Literal["process", "endpoint"]


@dataclass(frozen=True)
class Flag:
    kind = "bool"

    def __call__(self, value: Any) -> str | None:
        return None if isinstance(value, bool) else "must be True or False"


@dataclass(frozen=True)
class Integer:
    minimum: int = 1
    maximum: int | None = None
    optional: bool = False

    @property
    def kind(self) -> str:
        if self.maximum is not None:
            text = f"int {self.minimum}..{self.maximum}"
        else:
            text = "int > 0" if self.minimum == 1 else f"int >= {self.minimum}"
        return f"{text} or None" if self.optional else text

    def __call__(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and value >= self.minimum
            and (self.maximum is None or value <= self.maximum)
        ):
            return None
        if self.maximum is not None:
            wanted = f"an integer from {self.minimum} to {self.maximum}"
        elif self.minimum == 1:
            wanted = "a positive integer"
        else:
            wanted = f"a whole number, {self.minimum} or more"
        return f"must be {wanted}" + (", or None" if self.optional else "")


@dataclass(frozen=True)
class Number:
    minimum: float = 0
    optional: bool = False

    @property
    def kind(self) -> str:
        return f"number >= {self.minimum:g}" + (" or None" if self.optional else "")

    def __call__(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and not math.isnan(value)
            and value >= self.minimum
        ):
            return None
        return f"must be a number, {self.minimum:g} or more" + (
            ", or None" if self.optional else ""
        )


def _is_text(value: Any) -> bool:
    # A lazy translation (gettext_lazy) is text too.
    return isinstance(value, str | Promise)


@dataclass(frozen=True)
class Text:
    optional: bool = False
    nonempty: bool = False

    @property
    def kind(self) -> str:
        return "str or None" if self.optional else "str"

    def __call__(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if _is_text(value) and (value or not self.nonempty):
            return None
        wanted = "a non-empty string" if self.nonempty else "a string"
        return f"must be {wanted}" + (", or None" if self.optional else "")


@dataclass(frozen=True)
class Choice:
    values: tuple[str, ...]

    @property
    def kind(self) -> str:
        return " | ".join(f'"{v}"' for v in self.values)

    def __call__(self, value: Any) -> str | None:
        if isinstance(value, str) and value in self.values:
            return None
        return f"must be one of {', '.join(self.values)}"


@dataclass(frozen=True)
class TextList:
    optional: bool = False
    nonempty_items: bool = False
    item: Callable[[str], bool] | None = None
    items_are: str = "strings"

    @property
    def kind(self) -> str:
        return "list of str or None" if self.optional else "list of str"

    def __call__(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if isinstance(value, list | tuple) and all(
            isinstance(v, str)
            and (v or not self.nonempty_items)
            and (self.item is None or self.item(v))
            for v in value
        ):
            return None
        return f"must be a list of {self.items_are}" + (", or None" if self.optional else "")


@dataclass(frozen=True)
class DottedPaths:
    """A list of classes, each given as a dotted path (or the class itself)."""

    optional: bool = False

    @property
    def kind(self) -> str:
        return "list of dotted paths" + (" or None" if self.optional else "")

    def __call__(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if not isinstance(value, list | tuple):
            return "must be a list of dotted paths" + (", or None" if self.optional else "")
        for dotted in value:
            if not isinstance(dotted, str):
                continue
            try:
                import_string(dotted)
            except ImportError as exc:
                return f"names {dotted!r}, which cannot be imported ({exc})"
        return None


@dataclass(frozen=True)
class Check:
    """A validator of its own: ``test(value)`` is whether the value is valid."""

    test: Callable[[Any], bool]
    wanted: str
    kind: str

    def __call__(self, value: Any) -> str | None:
        return None if self.test(value) else f"must be {self.wanted}, not {reprlib.repr(value)}"


Validator = Flag | Integer | Number | Text | Choice | TextList | DottedPaths | Check


def _protocol_versions(value: Any) -> bool:
    return (
        isinstance(value, list | tuple)
        and bool(value)
        and all(isinstance(v, str) and v in ALL_VERSIONS for v in value)
    )


def _origins(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(
        isinstance(o, str) and o.startswith(("http://", "https://", "*.")) for o in value
    )


def _scope_mapping(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, dict) and all(
        isinstance(method, str)
        and isinstance(scopes, list | tuple)
        and all(isinstance(s, str) for s in scopes)
        for method, scopes in value.items()
    )


def _rate(value: Any) -> bool:
    if value is None:
        return True
    if not isinstance(value, str) or value.count("/") != 1:
        return False
    number, period = value.split("/")
    return number.isdigit() and int(number) > 0 and period[:1] in {"s", "m", "h", "d"}


# The server card's fields a host may give (SERVER_CARD); the rest the endpoint knows
# better than a setting would.
SERVER_CARD_FIELDS = frozenset(
    {"name", "description", "title", "websiteUrl", "repository", "icons", "_meta"}
)
# What a toolset's name may be (TOOLSETS, and the names a request selects).
TOOLSET_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def _server_card(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, Mapping) and set(value) <= SERVER_CARD_FIELDS:
        name = value.get("name")
        return name is None or (isinstance(name, str) and name.count("/") == 1)
    return False


def _cache_alias(value: Any) -> bool:
    # Read when checked: CACHES is the host's.
    return isinstance(value, str) and value in django_settings.CACHES


def _model_label(value: Any) -> bool:
    return isinstance(value, str) and value.count(".") == 1 and all(value.split("."))


def _toolset_name(value: str) -> bool:
    return bool(TOOLSET_NAME.match(value))


# -- the table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One key of ``MCP_ENDPOINT``.

    ``scope`` is ``"process"`` for a key the process reads once for all its endpoints
    (``MCP_ENDPOINT`` only), ``"endpoint"`` for one an endpoint may set for itself.
    ``check_id`` is the system check that refuses a value ``validator`` refuses.
    """

    name: str
    default: Any
    validator: Validator
    check_id: str
    scope: Scope
    doc: str
    hint: str | None = None

    @property
    def argument(self) -> str:
        """The keyword argument of :class:`~mcp_endpoint.endpoint.Endpoint` that sets it."""
        return self.name.lower()

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` for this key, or None when it is valid."""
        return self.validator(value)


E: Scope = "endpoint"
P: Scope = "process"
DISCOVERY_CHOICES = ("auto", "always", "never")
FILTER_LOOKUP_CHOICES = ("exact", "grouped", "all")
# The deepest body MAX_JSON_DEPTH may allow: well inside the decoder's recursion limit.
MAX_JSON_DEPTH = 500
DEFAULT_ORIGINS = [
    "https://claude.ai",
    "https://claude.com",
    "https://chatgpt.com",
    "https://chat.openai.com",
    "https://platform.openai.com",
]

SETTINGS: tuple[Setting, ...] = (
    # Who the server says it is, in initialize and server/discover.
    Setting(
        "SERVER_NAME",
        "mcp-endpoint",
        Text(nonempty=True),
        "mcp_endpoint.E200",
        E,
        "the server's name in `initialize` and `server/discover`",
    ),
    Setting(
        "SERVER_TITLE",
        "",
        Text(),
        "mcp_endpoint.E201",
        E,
        "its title; the default endpoint's also heads the sign-in page",
    ),
    Setting(
        "SERVER_VERSION",
        "1.0.0",
        Text(nonempty=True),
        "mcp_endpoint.E202",
        E,
        "its version in `initialize` and `server/discover`",
    ),
    Setting(
        "SERVER_CARD",
        False,
        Check(_server_card, "True, False, or a dict of the fields a host may give", "bool or dict"),
        "mcp_endpoint.E142",
        E,
        (
            "the server card (SEP-2127, experimental) at `<endpoint URL>/server-card`: `True`, or"
            ' a dict of fields to give (a reverse-DNS `name` such as `"com.example/tracker"`, '
            "`description`, `title`, `websiteUrl`, `repository`, `icons`, `_meta`); name, "
            "version, the streamable HTTP remote with its revisions and authentication, "
            "capabilities and extensions; never tools, resources or prompts (they depend on the "
            "caller). `mcp_doctor` reads it"
        ),
        hint='A "name" is reverse-DNS with one slash: "com.example/tracker".',
    ),
    Setting(
        "INSTRUCTIONS",
        "",
        Text(),
        "mcp_endpoint.E203",
        E,
        "instructions for the model, as plain text",
    ),
    Setting(
        "INSTRUCTIONS_TEMPLATE",
        "",
        Text(),
        "mcp_endpoint.E204",
        E,
        "instructions for the model, as a template name (rendered once per process)",
    ),
    Setting(
        "PROTOCOL_VERSIONS",
        list(ALL_VERSIONS),
        Check(_protocol_versions, "a non-empty list of known revisions", "list of revisions"),
        "mcp_endpoint.E002",
        E,
        "the revisions served",
        hint=f"Known revisions: {', '.join(ALL_VERSIONS)}.",
    ),
    Setting(
        "MAX_REQUEST_BYTES",
        1024 * 1024,
        Integer(),
        "mcp_endpoint.E205",
        E,
        "larger bodies get 413 before they are read",
    ),
    Setting(
        "MAX_JSON_DEPTH",
        200,
        Integer(1, MAX_JSON_DEPTH),
        "mcp_endpoint.E042",
        E,
        (
            "arrays and objects nested deeper in a body are a parse error (400, `-32700`); at "
            "most 500"
        ),
        hint="Python's JSON decoder recurses once per level and stops near 1,000 levels; a "
        "body nested that deep must be refused before it gets there.",
    ),
    Setting(
        "MAX_ARGUMENT_DEPTH",
        32,
        Integer(),
        "mcp_endpoint.E206",
        E,
        "tool arguments nested deeper are `invalid_arguments`",
    ),
    Setting(
        "MAX_BATCH_SIZE",
        50,
        Integer(),
        "mcp_endpoint.E207",
        E,
        "messages in one legacy batch; a longer batch is 400, `-32600`, saying the limit",
    ),
    Setting(
        "BATCH_TIME_BUDGET",
        20.0,
        Number(0, optional=True),
        "mcp_endpoint.E043",
        E,
        (
            "seconds one batch may spend; messages not started by then are answered with an error"
            " each (`-32000`, not run); the first always runs; `None` for no budget. Keep it "
            "under the server's worker timeout"
        ),
        hint="Keep it below the server's worker timeout (gunicorn's --timeout).",
    ),
    Setting(
        "MAX_QUERY_ARGUMENT_LENGTH",
        500,
        Integer(),
        "mcp_endpoint.E208",
        E,
        (
            "the longest string a viewset tool passes on as a query parameter (search, filters), "
            "shown as `maxLength` in its input schema; longer is `invalid_arguments`"
        ),
    ),
    Setting(
        "OUTAGE_RETRY_AFTER",
        5,
        Integer(),
        "mcp_endpoint.E209",
        E,
        "a database or cache outage is answered 503 with this `Retry-After` (seconds)",
    ),
    Setting(
        "OUTAGE_LOG_INTERVAL",
        60,
        Integer(),
        "mcp_endpoint.E210",
        E,
        "an outage is logged once per kind per worker per this many seconds",
    ),
    Setting(
        "ALLOWED_ORIGINS",
        DEFAULT_ORIGINS,
        Check(
            _origins,
            "a list of origins such as 'https://claude.ai' or host globs such as '*.example.com'",
            "list of origins",
        ),
        "mcp_endpoint.E005",
        E,
        (
            "origins allowed besides loopback (any port) and django-cors-headers' allowed "
            "origins; `*.example.com` globs allowed"
        ),
    ),
    Setting(
        "REQUIRE_CREDENTIAL",
        True,
        Flag(),
        "mcp_endpoint.E211",
        E,
        "whether a request needs a credential",
    ),
    Setting(
        "LOOPBACK_ONLY",
        False,
        Flag(),
        "mcp_endpoint.E212",
        E,
        "answer loopback clients only",
    ),
    Setting(
        "AUTHENTICATION_CLASSES",
        [
            "mcp_endpoint.authentication.APIKeyAuthentication",
            "mcp_endpoint.authentication.OAuth2TokenAuthentication",
        ],
        DottedPaths(),
        "mcp_endpoint.E213",
        E,
        (
            "DRF authentication classes tried for the credential, in order, as DRF tries them: "
            "the first that refuses ends the search. Add the host's own classes (simplejwt's "
            "`JWTAuthentication`, a custom class, `SessionAuthentication`) after the app's; see "
            "[Authentication variety](rest_framework.md#authentication-variety)"
        ),
        hint="Check the spelling, and that the module imports.",
    ),
    Setting(
        "THROTTLE_CLASSES",
        None,
        DottedPaths(optional=True),
        "mcp_endpoint.E214",
        E,
        (
            "DRF throttles for each message that runs host code (`tools/call`, `resources/read`, "
            "`prompts/get`, `completion/complete`), with the REST API's counters; `None` means "
            '`REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]`'
        ),
        hint="Check the spelling, and that the module imports.",
    ),
    Setting(
        "SCOPES_BY_METHOD",
        {"GET": ["read"], "HEAD": ["read"], "OPTIONS": ["read"], "*": ["write"]},
        Check(
            _scope_mapping,
            "a mapping of HTTP methods (or '*') to lists of scopes, or None",
            "dict of lists or None",
        ),
        "mcp_endpoint.E030",
        E,
        (
            "the default scope policy: on views that declare no scope policy of their own, the "
            'scopes a key or token needs per HTTP method (`"*"` for the others), on the REST API '
            "and at `/mcp` alike, refused by the permission `mcp_endpoint.permissions.HasScopes` "
            "(which the app's authentication classes apply to views that do not list it); `None` "
            "turns it off (`W031` under `check --deploy`)"
        ),
        hint='For example {"GET": ["read"], "HEAD": ["read"], "OPTIONS": ["read"], '
        '"*": ["write"]}.',
    ),
    Setting(
        "PROTOCOL_RATE",
        "1200/minute",
        Check(_rate, "a rate such as '1200/minute', or None", "rate or None"),
        "mcp_endpoint.E040",
        E,
        (
            "the per-credential limit on every other message (`initialize`, `ping`, lists, "
            "`server/discover`), in DRF's rate syntax; `None` for none; notifications are never "
            "counted"
        ),
        hint="DRF's rate syntax: a number of requests, '/', and second, minute, hour or day.",
    ),
    Setting(
        "SCOPES",
        None,
        TextList(optional=True),
        "mcp_endpoint.E215",
        E,
        "the scopes named in the 401 challenge; `None` derives them from the tools",
    ),
    Setting(
        "PORTABLE_SCHEMAS",
        True,
        Flag(),
        "mcp_endpoint.E216",
        E,
        "refuse to start when a tool schema has a `$ref` or a type array",
    ),
    Setting(
        "LARGE_CHOICE_LIST",
        50,
        Integer(),
        "mcp_endpoint.E217",
        E,
        (
            "a choice list longer than this appears once per input schema as `enum`, without "
            "drf-spectacular's generated list of its labels, and not at all in output schemas "
            "(the type stays)"
        ),
    ),
    Setting(
        "TOOL_BUDGET_BYTES",
        16 * 1024,
        Integer(),
        "mcp_endpoint.E218",
        E,
        "a check warns when one tool's `tools/list` entry is larger (JSON bytes)",
    ),
    Setting(
        "TOOLS_LIST_BUDGET_BYTES",
        32 * 1024,
        Integer(),
        "mcp_endpoint.E219",
        E,
        (
            "what a client loads of `tools/list` (every page together): past it, the list a "
            "connection is served drops its output schemas (`OUTPUT_SCHEMAS`), then becomes "
            "`search_tools` and `call_tool` (`TOOL_DISCOVERY`); see [a large "
            "product](rest_framework.md#a-large-product-toolsets-read-only-and-discovery)"
        ),
    ),
    Setting(
        "TOOL_DISCOVERY",
        "auto",
        Choice(DISCOVERY_CHOICES),
        "mcp_endpoint.E220",
        E,
        (
            '`"auto"`: the two discovery tools replace a list over the budget; `"always"`: '
            'whatever its size; `"never"`: the full list however large (`W052` warns)'
        ),
        hint="'auto' decides by the size of the list (TOOLS_LIST_BUDGET_BYTES).",
    ),
    Setting(
        "OUTPUT_SCHEMAS",
        "auto",
        Choice(DISCOVERY_CHOICES),
        "mcp_endpoint.E221",
        E,
        (
            '`"auto"`: output schemas are sent when the list fits with them (never in '
            '`search_tools` results); `"always"`; `"never"`. Structured results are the same '
            "either way"
        ),
        hint="'auto' decides by the size of the list (TOOLS_LIST_BUDGET_BYTES).",
    ),
    Setting(
        "TOOLSETS",
        None,
        TextList(optional=True, item=_toolset_name, items_are="toolset names"),
        "mcp_endpoint.E222",
        E,
        (
            "the toolsets this endpoint serves (`None`: all); a tool outside them is neither "
            "listed nor callable. A client narrows it with `/mcp/x/a,b`, `?toolsets=a,b` or "
            "`MCP-Toolsets: a,b`"
        ),
        hint="Names are lower-case letters, digits, '_' and '-' (a viewset's are named "
        "after its objects: 'device_types').",
    ),
    Setting(
        "READ_ONLY",
        False,
        Flag(),
        "mcp_endpoint.E223",
        E,
        (
            "serve read-only tools only; a client asks for it with `/mcp/readonly`, "
            "`?read_only=1` or `MCP-Read-Only: 1`"
        ),
    ),
    Setting(
        "DYNAMIC_TOOLSETS",
        True,
        Flag(),
        "mcp_endpoint.E224",
        E,
        (
            "in the compact form, offer `enable_toolset` (a toolset's tools join the list, "
            "`notifications/tools/list_changed` says so, `tools.listChanged` is announced) where "
            "the client hears the change: a legacy client that accepts `text/event-stream` with "
            "`STREAMING` on, a 2026-07-28 one where listen streams are served; see [a large "
            "product](rest_framework.md#a-large-product-toolsets-read-only-and-discovery)"
        ),
    ),
    Setting(
        "FILTER_LOOKUPS",
        "grouped",
        Choice(FILTER_LOOKUP_CHOICES),
        "mcp_endpoint.E225",
        E,
        (
            'the django-filter filters of a list tool: `"exact"` (each field\'s exact filter and '
            'its multi-value form, `name`, `id__in`), `"grouped"` (those, and every other lookup '
            'in one `lookups` object argument) or `"all"` (every filter an argument of its own)'
        ),
        hint="'grouped' offers each filter's exact form, and the other lookups in one "
        "object argument.",
    ),
    Setting(
        "ARRAY_BODIES",
        False,
        Flag(),
        "mcp_endpoint.E226",
        E,
        (
            "a body that is one object or a list of them gives the tool the object's fields; "
            "`True` gives it one `items` argument, the list"
        ),
    ),
    Setting(
        "API_VERSION",
        None,
        Text(optional=True),
        "mcp_endpoint.E227",
        E,
        (
            "the API version views are described and called with (`Accept: application/json; "
            "version=...` under `AcceptHeaderVersioning`); `None` means each view's default "
            "version; `register_viewset(version=...)` wins"
        ),
        hint="A version string such as '2.1'.",
    ),
    Setting(
        "LIST_PAGE_SIZE",
        100,
        Integer(),
        "mcp_endpoint.E228",
        E,
        "page size of `tools/list`, `resources/list`, `prompts/list`",
    ),
    Setting(
        "MAX_LIST_ITEMS",
        100,
        Integer(),
        "mcp_endpoint.E229",
        E,
        "cap on the items of an unpaginated list tool",
    ),
    Setting(
        "MAX_BINARY_RESULT_BYTES",
        5 * 1024 * 1024,
        Integer(),
        "mcp_endpoint.E230",
        E,
        (
            "the largest file (PDF, image, CSV export) an action's tool returns as an embedded "
            "resource; a larger one is a `too_large` tool error, never a cut file"
        ),
    ),
    Setting(
        "TOOL_MIDDLEWARE",
        True,
        Flag(),
        "mcp_endpoint.E231",
        P,
        (
            "a viewset tool's call passes through the product's `MIDDLEWARE` for the action's "
            "URL, as its REST request would; `False` calls the view directly. Process-wide: "
            "`MCP_ENDPOINT` only; see [rest_framework.md](rest_framework.md#calls)"
        ),
        hint="True runs the product's MIDDLEWARE for each viewset tool call.",
    ),
    Setting(
        "TOOL_MIDDLEWARE_SKIP",
        [],
        TextList(items_are="dotted paths, as MIDDLEWARE lists them"),
        "mcp_endpoint.E232",
        P,
        (
            "`MIDDLEWARE` entries a tool call does not run, besides those it never runs (the "
            "app's outage middleware, CORS, WhiteNoise, and the session middleware when the "
            "session is shared). Process-wide"
        ),
    ),
    Setting(
        "SHOW_ALL_TOOLS",
        False,
        Flag(),
        "mcp_endpoint.E233",
        E,
        "list tools whose scopes the credential lacks",
    ),
    Setting(
        "TEXT_BUDGET_BYTES",
        24_000,
        Integer(),
        "mcp_endpoint.E234",
        E,
        "a tool's text is cut past this, with a note on narrowing the query",
    ),
    Setting(
        "TTL_MS",
        60_000,
        Integer(0),
        "mcp_endpoint.E235",
        E,
        "`ttlMs` on cacheable modern results",
    ),
    Setting(
        "API_KEY_PREFIX",
        "mcp",
        Text(nonempty=True),
        "mcp_endpoint.E236",
        P,
        "the visible prefix every API key starts with",
    ),
    Setting(
        "API_KEY_MODEL",
        "mcp_endpoint.APIKey",
        Check(_model_label, "a model label such as 'mcp_endpoint.APIKey'", "model label"),
        "mcp_endpoint.E237",
        P,
        "the model that stores API keys",
    ),
    Setting(
        "API_KEY_CACHE_SECONDS",
        0,
        Integer(0),
        "mcp_endpoint.E041",
        P,
        (
            "keep validated API keys (with their user) in `CACHE` this long, never past a key's "
            "expiry; key and user saves and deletes drop the entry at once (see "
            "[performance](performance.md)); global only"
        ),
    ),
    Setting(
        "KEY_MEMORY_SECONDS",
        60,
        Integer(0),
        "mcp_endpoint.E044",
        P,
        (
            "keep verified API keys (with their user) in each worker's own memory this long, "
            "never past a key's expiry, where `CACHE` is Redis (elsewhere it is off); every key "
            "and user change is published on Redis once committed and dropped by every worker "
            "before the change is acknowledged; `0` turns it off (see "
            "[performance](performance.md#each-workers-memory-of-keys)); global only"
        ),
    ),
    Setting(
        "API_KEY_DEFAULT_EXPIRY_DAYS",
        90,
        Integer(),
        "mcp_endpoint.E238",
        P,
        "the expiry a new key is offered, in days, on the account pages and in the admin",
    ),
    Setting(
        "LOG_TOOL_CALLS",
        False,
        Flag(),
        "mcp_endpoint.E239",
        E,
        "write a call-log row per `tools/call`",
    ),
    Setting(
        "REDACTED_ARGUMENTS",
        ["password", "secret", "token"],
        TextList(),
        "mcp_endpoint.E240",
        E,
        "argument names whose values the call log redacts (names containing them)",
    ),
    Setting(
        "LOG_ROW_MAX_BYTES",
        64 * 1024,
        Integer(),
        "mcp_endpoint.E241",
        E,
        (
            "the most a call-log row's arguments (as JSON) and error text take together; past it "
            'the error text keeps a quarter and the arguments become `{"[truncated]": "<size> '
            'bytes …", "start": "<their JSON, cut>"}`'
        ),
    ),
    Setting(
        "LOG_SPOOL_DIR",
        None,
        Text(optional=True),
        "mcp_endpoint.E273",
        P,
        (
            "a local folder where each worker appends the call-log rows of calls that commit "
            "nothing (reads) and writes them to the database in batches, so a read pays no "
            "round trip for its row; a worker killed leaves its file for the next one; "
            "`None` writes each row at once (see "
            "[operations](operations.md#the-call-log-spool)); global only"
        ),
    ),
    Setting(
        "LOG_RETENTION_DAYS",
        90,
        Integer(optional=True),
        "mcp_endpoint.E242",
        P,
        "`manage.py mcp_prune_calls` deletes log rows older than this; `None` keeps them all",
    ),
    Setting(
        "RESOURCE_URL",
        None,
        Text(optional=True),
        "mcp_endpoint.E243",
        E,
        "the canonical URL of the endpoint for OAuth; `None` derives it per request",
    ),
    Setting(
        "OAUTH_REGISTRATION_POLICY_CLASSES",
        [
            "mcp_endpoint.oauth.registration.ApplicationTypePolicy",
            "mcp_endpoint.oauth.registration.RedirectURIPolicy",
        ],
        DottedPaths(),
        "mcp_endpoint.E244",
        P,
        "checks every dynamic registration passes before django-oauth-toolkit sees it",
        hint="Check the spelling, and that the module imports.",
    ),
    Setting(
        "OAUTH_REGISTRATION_THROTTLE_CLASSES",
        ["mcp_endpoint.oauth.registration.RegistrationRateThrottle"],
        DottedPaths(),
        "mcp_endpoint.E245",
        P,
        "throttles on the registration endpoint, per client address",
        hint="Check the spelling, and that the module imports.",
    ),
    Setting(
        "OAUTH_REGISTRATION_RATE",
        "20/hour",
        Check(_rate, "a rate such as '20/hour', or None", "rate or None"),
        "mcp_endpoint.E246",
        P,
        "registrations one address may make, in DRF's rate syntax; `None` for no limit",
    ),
    Setting(
        "OAUTH_UNUSED_CLIENT_SECONDS",
        24 * 3600,
        Integer(0),
        "mcp_endpoint.E247",
        P,
        (
            "age after which `manage.py mcp_oauth_cleanup` deletes a self-registered client that "
            "never obtained a token"
        ),
    ),
    Setting(
        "OAUTH_ACCEPT_UNBOUND_TOKENS",
        False,
        Flag(),
        "mcp_endpoint.E248",
        P,
        (
            "accept at `/mcp` OAuth tokens issued for no resource (RFC 8707); read once for the "
            "process, not per endpoint"
        ),
    ),
    Setting(
        "OAUTH_REDIRECT_URI_HOSTS",
        [
            "claude.ai",
            "claude.com",
            "chatgpt.com",
            "chat.openai.com",
            "platform.openai.com",
            "vscode.dev",
            "insiders.vscode.dev",
        ],
        TextList(),
        "mcp_endpoint.E249",
        P,
        "hosts an https redirect URI may name (loopback is always allowed)",
    ),
    Setting(
        "CACHE",
        "default",
        Check(_cache_alias, "an alias in CACHES", "cache alias"),
        "mcp_endpoint.E008",
        E,
        (
            "the cache (an alias in `CACHES`) for sessions, used request states and answers "
            "posted back by clients; every worker must share it"
        ),
        hint="Name a key of CACHES ('default' unless the host names others).",
    ),
    Setting(
        "REQUEST_STATE_TTL",
        600,
        Integer(),
        "mcp_endpoint.E250",
        E,
        "seconds a multi round-trip `requestState` stays valid",
    ),
    Setting(
        "CONFIRM_DESTRUCTIVE_TOOLS",
        False,
        Flag(),
        "mcp_endpoint.E251",
        E,
        (
            "ask the user through elicitation before a destructive tool runs, when the client "
            "declares elicitation; a legacy client without a session cannot be asked and gets the"
            " tool error `confirmation_unavailable` instead"
        ),
    ),
    Setting(
        "STREAMING",
        True,
        Flag(),
        "mcp_endpoint.E252",
        E,
        (
            "answer a tool call as SSE when the client accepts `text/event-stream` and the call "
            "reports progress or logs"
        ),
    ),
    Setting(
        "STREAM_KEEPALIVE_SECONDS",
        15,
        Integer(),
        "mcp_endpoint.E253",
        E,
        "comment lines on a quiet stream",
    ),
    Setting(
        "STREAM_RESUME_SECONDS",
        60,
        Integer(),
        "mcp_endpoint.E254",
        E,
        (
            "in a legacy session, how long a streamed answer's events stay in `CACHE` after the "
            "last one, for a client that resumes (`GET` with `Last-Event-ID`)"
        ),
    ),
    Setting(
        "LOGGING",
        False,
        Flag(),
        "mcp_endpoint.E255",
        E,
        (
            "announce the (deprecated) `logging` capability; tools' `context.log()` and the "
            "`CLIENT_LOGGERS` records then reach clients that ask"
        ),
    ),
    Setting(
        "CLIENT_LOGGERS",
        ["mcp_endpoint"],
        TextList(nonempty_items=True, items_are="logger names"),
        "mcp_endpoint.E080",
        E,
        (
            "Python loggers (children included) whose records, emitted while a streamed call "
            "runs, go to that call's client as `notifications/message`"
        ),
        hint="For instance ['mcp_endpoint', 'myapp']: each logger's children are included.",
    ),
    Setting(
        "SESSIONS",
        False,
        Flag(),
        "mcp_endpoint.E256",
        E,
        "legacy sessions (`Mcp-Session-Id`)",
    ),
    Setting(
        "SESSION_IDLE_SECONDS",
        600,
        Integer(),
        "mcp_endpoint.E257",
        E,
        "a session's idle expiry, in seconds",
    ),
    Setting(
        "SESSIONS_PER_CREDENTIAL",
        8,
        Integer(),
        "mcp_endpoint.E258",
        E,
        "sessions one credential holds (the least recently used goes first)",
    ),
    Setting(
        "SUBSCRIPTIONS_REDIS_URL",
        None,
        Text(optional=True),
        "mcp_endpoint.E259",
        E,
        (
            "the Redis whose pub/sub carries resource updates between processes; `None` uses the "
            "Redis of `CACHE` when it is Django's `RedisCache`, else updates stay in one process "
            "(and `resources.subscribe` is announced only by a server that is one process: see "
            "[deployment](deployment.md))"
        ),
    ),
    Setting(
        "WSGI_GET_STREAMS",
        False,
        Flag(),
        "mcp_endpoint.E260",
        E,
        (
            "serve a session's `GET` stream (resource updates) under WSGI too, where it holds a "
            "worker while open; under ASGI it is always served. `resources.subscribe` is "
            "announced to a WSGI client only with it on and a threaded server "
            "(`wsgi.multithread`)"
        ),
    ),
    Setting(
        "STREAMS_PER_CREDENTIAL",
        4,
        Integer(),
        "mcp_endpoint.E261",
        E,
        (
            "open streams one credential may hold: session `GET` streams, resumed streams "
            "(`Last-Event-ID`) and `subscriptions/listen` streams (429 beyond)"
        ),
    ),
    Setting(
        "SUBSCRIPTIONS_PER_SESSION",
        32,
        Integer(),
        "mcp_endpoint.E262",
        E,
        (
            "resources one legacy session may subscribe to; one more is refused (`-32602`, saying"
            " the limit) until the client unsubscribes from one"
        ),
    ),
    Setting(
        "LISTEN_MAX_URIS",
        32,
        Integer(),
        "mcp_endpoint.E263",
        E,
        (
            "resource URIs one `subscriptions/listen` may name, duplicates included; a longer "
            "list is refused (`-32602`, saying the limit) before any is read"
        ),
    ),
    Setting(
        "CLIENT_REQUEST_TIMEOUT",
        300,
        Integer(),
        "mcp_endpoint.E264",
        E,
        "seconds a tool waits for the client's answer to a request sent during the call",
    ),
    Setting(
        "SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT",
        20,
        Integer(),
        "mcp_endpoint.E265",
        E,
        (
            "the same wait under a WSGI server that serves one request per process at a time "
            "(`wsgi.multithread` false: gunicorn's sync workers), where a waiting call holds the "
            "whole worker: kept under gunicorn's 30 s worker timeout; the smaller of the two "
            "applies"
        ),
    ),
    Setting(
        "STREAMED_CALLS_PER_CREDENTIAL",
        8,
        Integer(),
        "mcp_endpoint.E266",
        E,
        (
            "calls of one credential running at once in the stream pool (counted in `CACHE`, "
            "across processes); beyond, a call answers as plain JSON in its request thread, and "
            "asking its client for input ends it with the tool error `stream_capacity`; below "
            "`STREAM_POOL_SIZE`"
        ),
    ),
    Setting(
        "PENDING_CLIENT_REQUESTS_PER_CREDENTIAL",
        4,
        Integer(),
        "mcp_endpoint.E267",
        E,
        (
            "requests (elicitation, sampling, roots) of one credential's calls awaiting the "
            "client's answer at once (counted in `CACHE`); beyond, the call ends with the tool "
            "error `too_many_waiting` before anything is sent"
        ),
    ),
    Setting(
        "STREAM_POOL_SIZE",
        32,
        Integer(),
        "mcp_endpoint.E268",
        P,
        (
            "threads per process that run streamed calls, started with the first one; a call that"
            " finds them all busy answers as plain JSON; global only"
        ),
    ),
    Setting(
        "TASK_BACKEND",
        "default",
        Text(nonempty=True),
        "mcp_endpoint.E269",
        E,
        (
            "the backend (an alias in Django's `TASKS`) long-running tools run on; see "
            "[tasks](tasks.md)"
        ),
    ),
    Setting(
        "TASK_TTL_MS",
        3_600_000,
        Integer(),
        "mcp_endpoint.E270",
        E,
        (
            "how long a task and its result are kept after it was created (`ttlMs`); `tasks/get` "
            "then says it does not exist"
        ),
    ),
    Setting(
        "TASK_POLL_INTERVAL_MS",
        1000,
        Integer(),
        "mcp_endpoint.E271",
        E,
        "how often a client is told to poll a task (`pollIntervalMs`)",
    ),
    Setting(
        "TASK_HEARTBEAT_MS",
        10_000,
        Integer(),
        "mcp_endpoint.E272",
        E,
        (
            "how often the worker running a task writes that it is alive; a task still `working` "
            "whose worker missed three is failed as lost (see [tasks](tasks.md))"
        ),
    ),
)

SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
DEFAULTS: dict[str, Any] = {s.name: s.default for s in SETTINGS}
# The keys whose values are class paths, imported when read.
IMPORT_STRINGS = {s.name for s in SETTINGS if isinstance(s.validator, DottedPaths)}
PROCESS_KEYS = frozenset(s.name for s in SETTINGS if s.scope == P)
ARGUMENTS: dict[str, Setting] = {s.argument: s for s in SETTINGS if s.scope == E}


class EndpointOptions(TypedDict, total=False):
    """The keyword arguments of :class:`~mcp_endpoint.endpoint.Endpoint`: each key of scope
    ``"endpoint"`` in lower case (a test keeps this in step with :data:`SETTINGS`)."""

    server_name: str
    server_title: str
    server_version: str
    server_card: bool | Mapping[str, Any]
    instructions: str
    instructions_template: str
    protocol_versions: Sequence[str]
    max_request_bytes: int
    max_json_depth: int
    max_argument_depth: int
    max_batch_size: int
    batch_time_budget: float | None
    max_query_argument_length: int
    outage_retry_after: int
    outage_log_interval: int
    allowed_origins: Sequence[str]
    require_credential: bool
    loopback_only: bool
    authentication_classes: Sequence[str | type[Any]]
    throttle_classes: Sequence[str | type[Any]] | None
    scopes_by_method: Mapping[str, Sequence[str]] | None
    protocol_rate: str | None
    scopes: Sequence[str] | None
    portable_schemas: bool
    large_choice_list: int
    tool_budget_bytes: int
    tools_list_budget_bytes: int
    tool_discovery: str
    output_schemas: str
    toolsets: Sequence[str] | None
    read_only: bool
    dynamic_toolsets: bool
    filter_lookups: str
    array_bodies: bool
    api_version: str | None
    list_page_size: int
    max_list_items: int
    max_binary_result_bytes: int
    show_all_tools: bool
    text_budget_bytes: int
    ttl_ms: int
    log_tool_calls: bool
    redacted_arguments: Sequence[str]
    log_row_max_bytes: int
    resource_url: str | None
    cache: str
    request_state_ttl: int
    confirm_destructive_tools: bool
    streaming: bool
    stream_keepalive_seconds: int
    stream_resume_seconds: int
    logging: bool
    client_loggers: Sequence[str]
    sessions: bool
    session_idle_seconds: int
    sessions_per_credential: int
    subscriptions_redis_url: str | None
    wsgi_get_streams: bool
    streams_per_credential: int
    subscriptions_per_session: int
    listen_max_uris: int
    client_request_timeout: int
    single_threaded_client_request_timeout: int
    streamed_calls_per_credential: int
    pending_client_requests_per_credential: int
    task_backend: str
    task_ttl_ms: int
    task_poll_interval_ms: int
    task_heartbeat_ms: int


def endpoint_overrides(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``MCP_ENDPOINT`` keys that :class:`~mcp_endpoint.endpoint.Endpoint`'s keyword
    arguments ``options`` set, each checked: a TypeError for an unknown argument (naming
    the closest known one) or a process-wide key, a ValueError for a refused value."""
    overrides: dict[str, Any] = {}
    for argument, value in options.items():
        setting = ARGUMENTS.get(argument)
        if setting is None:
            raise TypeError(unknown_argument(name, argument))
        problem = setting.problem(value)
        if problem is not None:
            raise ValueError(f"Endpoint {name!r}: {argument} {problem} ({setting.check_id}).")
        overrides[setting.name] = value
    return overrides


def unknown_argument(name: str, argument: str) -> str:
    process = SETTINGS_BY_NAME.get(argument.upper())
    if process is not None and process.scope == P:
        return (
            f"Endpoint {name!r}: {argument} is the process's, not an endpoint's: set "
            f'MCP_ENDPOINT["{process.name}"] instead.'
        )
    close = difflib.get_close_matches(argument.lower(), ARGUMENTS, n=1)
    suggestion = f"; did you mean {close[0]}?" if close else "."
    return f"Endpoint() got an unexpected keyword argument {argument!r}{suggestion}"


def settings_table() -> str:
    """The table of every key for docs/configuration.md (Markdown)."""
    rows = [
        "| key | default | value | scope | check | meaning |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for s in SETTINGS:
        check = s.check_id.removeprefix("mcp_endpoint.")
        rows.append(
            f"| `{s.name}` | {_shown(s.default)} | {s.validator.kind.replace('|', '/')} "
            f"| {s.scope} | `{check}` | {s.doc} |"
        )
    return "\n".join(rows) + "\n"


def _shown(value: Any) -> str:
    if isinstance(value, list) and len(value) > 3:
        return f"{len(value)} entries"
    if isinstance(value, dict):
        return f"{len(value)} entries"
    text = repr(value).replace("'", '"').replace("|", "\\|")
    return f"`{text}`"


class SettingValues:
    """The type of each key's value as :class:`MCPSettings` returns it: an endpoint's
    keyword argument's type, with class paths imported (a test keeps this in step with
    :data:`SETTINGS` and :class:`EndpointOptions`). Annotations only: reading a key goes
    through :meth:`MCPSettings.__getattr__` all the same.
    """

    SERVER_NAME: str
    SERVER_TITLE: str
    SERVER_VERSION: str
    SERVER_CARD: bool | Mapping[str, Any]
    INSTRUCTIONS: str
    INSTRUCTIONS_TEMPLATE: str
    PROTOCOL_VERSIONS: Sequence[str]
    MAX_REQUEST_BYTES: int
    MAX_JSON_DEPTH: int
    MAX_ARGUMENT_DEPTH: int
    MAX_BATCH_SIZE: int
    BATCH_TIME_BUDGET: float | None
    MAX_QUERY_ARGUMENT_LENGTH: int
    OUTAGE_RETRY_AFTER: int
    OUTAGE_LOG_INTERVAL: int
    ALLOWED_ORIGINS: Sequence[str]
    REQUIRE_CREDENTIAL: bool
    LOOPBACK_ONLY: bool
    AUTHENTICATION_CLASSES: list[type[Any]]
    THROTTLE_CLASSES: list[type[Any]] | None
    SCOPES_BY_METHOD: Mapping[str, Sequence[str]] | None
    PROTOCOL_RATE: str | None
    SCOPES: Sequence[str] | None
    PORTABLE_SCHEMAS: bool
    LARGE_CHOICE_LIST: int
    TOOL_BUDGET_BYTES: int
    TOOLS_LIST_BUDGET_BYTES: int
    TOOL_DISCOVERY: str
    OUTPUT_SCHEMAS: str
    TOOLSETS: Sequence[str] | None
    READ_ONLY: bool
    DYNAMIC_TOOLSETS: bool
    FILTER_LOOKUPS: str
    ARRAY_BODIES: bool
    API_VERSION: str | None
    LIST_PAGE_SIZE: int
    MAX_LIST_ITEMS: int
    MAX_BINARY_RESULT_BYTES: int
    SHOW_ALL_TOOLS: bool
    TEXT_BUDGET_BYTES: int
    TTL_MS: int
    LOG_TOOL_CALLS: bool
    REDACTED_ARGUMENTS: Sequence[str]
    LOG_ROW_MAX_BYTES: int
    LOG_SPOOL_DIR: str | None
    RESOURCE_URL: str | None
    CACHE: str
    REQUEST_STATE_TTL: int
    CONFIRM_DESTRUCTIVE_TOOLS: bool
    STREAMING: bool
    STREAM_KEEPALIVE_SECONDS: int
    STREAM_RESUME_SECONDS: int
    LOGGING: bool
    CLIENT_LOGGERS: Sequence[str]
    SESSIONS: bool
    SESSION_IDLE_SECONDS: int
    SESSIONS_PER_CREDENTIAL: int
    SUBSCRIPTIONS_REDIS_URL: str | None
    WSGI_GET_STREAMS: bool
    STREAMS_PER_CREDENTIAL: int
    SUBSCRIPTIONS_PER_SESSION: int
    LISTEN_MAX_URIS: int
    CLIENT_REQUEST_TIMEOUT: int
    SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT: int
    STREAMED_CALLS_PER_CREDENTIAL: int
    PENDING_CLIENT_REQUESTS_PER_CREDENTIAL: int
    TASK_BACKEND: str
    TASK_TTL_MS: int
    TASK_POLL_INTERVAL_MS: int
    TASK_HEARTBEAT_MS: int
    # The process's own keys.
    TOOL_MIDDLEWARE: bool
    TOOL_MIDDLEWARE_SKIP: Sequence[str]
    API_KEY_PREFIX: str
    API_KEY_MODEL: str
    API_KEY_CACHE_SECONDS: int
    KEY_MEMORY_SECONDS: int
    API_KEY_DEFAULT_EXPIRY_DAYS: int
    LOG_RETENTION_DAYS: int | None
    OAUTH_REGISTRATION_POLICY_CLASSES: list[type[Any]]
    OAUTH_REGISTRATION_THROTTLE_CLASSES: list[type[Any]]
    OAUTH_REGISTRATION_RATE: str | None
    OAUTH_UNUSED_CLIENT_SECONDS: int
    OAUTH_ACCEPT_UNBOUND_TOKENS: bool
    OAUTH_REDIRECT_URI_HOSTS: Sequence[str]
    STREAM_POOL_SIZE: int


class MCPSettings(SettingValues):
    """Settings with defaults; ``overrides`` win over the ``MCP_ENDPOINT`` dict."""

    def __init__(self, overrides: Mapping[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})
        # What was read since the last reload (also kept as instance attributes).
        self._cache: dict[str, Any] = {}
        # Reloads so far: a value read on one thread while another reloads is returned
        # but not kept, or the value of the settings before the reload would outlive it.
        self._generation = 0
        self._lock = threading.Lock()

    @property
    def generation(self) -> int:
        """Counts the reloads: what is worked out from the values is worked out again
        when it changes."""
        return self._generation

    @property
    def user_settings(self) -> dict[str, Any]:
        return dict(getattr(django_settings, "MCP_ENDPOINT", {}) or {})

    def __getattr__(self, name: str) -> Any:
        # Called only for a setting not read since the last reload: the value is then kept
        # as an instance attribute, which later reads find without calling this (as DRF's
        # api_settings does). A view reads a dozen settings per request.
        if name not in DEFAULTS:
            raise AttributeError(f"Invalid MCP_ENDPOINT setting: {name!r}")
        generation = self._generation
        if name in self.overrides:
            value = self.overrides[name]
        else:
            value = self.user_settings.get(name, DEFAULTS[name])
        if name in IMPORT_STRINGS and value is not None:
            value = [import_string(v) if isinstance(v, str) else v for v in value]
        with self._lock:
            if self._generation == generation:
                self._cache[name] = value
                setattr(self, name, value)
        return value

    def reload(self) -> None:
        with self._lock:
            self._generation += 1
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


DOCS_START = "<!-- settings table: generated by `python -m mcp_endpoint.conf`, do not edit -->"
DOCS_END = "<!-- end of settings table -->"


def documented(text: str) -> str:
    """``text`` (docs/configuration.md) with the table between its markers regenerated."""
    before, start, rest = text.partition(DOCS_START)
    _, end, after = rest.partition(DOCS_END)
    if not start or not end:
        raise ValueError(f"The markers {DOCS_START!r} and {DOCS_END!r} are missing.")
    return f"{before}{DOCS_START}\n{settings_table()}{DOCS_END}{after}"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    # With a path (docs/configuration.md), rewrite its table; without, print the table.
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
        path.write_text(documented(path.read_text()))
    else:
        sys.stdout.write(settings_table())


def backend_class(path: Any) -> type | None:
    """The class a setting names by its import path (a cache's or a task framework's
    ``BACKEND``), or None when it is not a path or cannot be imported (the setting's own
    check reports that). Checks look at the class, not at the path as written, so that a
    host's subclass of a backend is taken for what it derives from."""
    if not isinstance(path, str) or not path:
        return None
    try:
        cls = import_string(path)
    except ImportError:
        return None
    return cls if isinstance(cls, type) else None
