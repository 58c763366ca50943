"""The call log: one :class:`~mcp_endpoint.models.ToolCall` row per ``tools/call``.

Writing the row is the last step of a call whose work may already be committed, so nothing
here may raise into the answer: the arguments are made storable in one bounded pass
(redacted, no NUL bytes, no lone surrogates, no NaN or Infinity, nesting cut at
:data:`MAX_DEPTH`), and when the database still refuses the row, a row with the arguments
replaced by :data:`UNLOGGABLE` is written instead. A call is never left out silently.

A row has a size: the arguments (as JSON) and the error text together are at most
``LOG_ROW_MAX_BYTES``; past it, the error text keeps up to a quarter and the arguments are
replaced by :data:`TRUNCATED`, their size and the start of their JSON. The other columns
have lengths of their own.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, connections, router, transaction
from django.utils import timezone

from mcp_endpoint import callspool, client_logging, signals

if TYPE_CHECKING:
    from django.db.models import QuerySet
    from django.http import HttpRequest

    from mcp_endpoint.credential import Credential
    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.models import ToolCall, ToolTask
    from mcp_endpoint.protocol.content import ToolResult
    from mcp_endpoint.protocol.server import RequestContext
    from mcp_endpoint.tools import Tool

logger = logging.getLogger("mcp_endpoint.calllog")
# The one line a call leaves in the log whether or not the call log is on.
call_logger = logging.getLogger("mcp_endpoint")

REDACTED = "[redacted]"
# Deeper values are replaced by TOO_DEEP: a log row is for reading, and the cut keeps the
# pass far from Python's recursion limit and PostgreSQL's nesting limit alike.
MAX_DEPTH = 32
TOO_DEEP = "[nested too deep]"
# What a row's arguments become when the database refused the sanitised ones (the spool,
# below this module, writes such rows too).
UNLOGGABLE = callspool.UNLOGGABLE
# Longest string kept in the arguments; longer ones are cut with a note of their length.
MAX_STRING = 10_000
# The key of what a row's arguments become past LOG_ROW_MAX_BYTES.
TRUNCATED = "[truncated]"
# Room for the keys and the size note around a cut of the arguments' JSON.
TRUNCATED_OVERHEAD = 200
# Non-finite floats, which JSON (and so PostgreSQL's jsonb) has no literal for.
NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def clean_text(value: Any, max_length: int | None = None) -> str:
    """``value`` as text PostgreSQL stores: no NUL byte, no lone surrogate, cut to length."""
    text = value if isinstance(value, str) else str(value)
    if "\x00" in text:
        text = text.replace("\x00", "\\u0000")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    if max_length is not None and len(text) > max_length:
        text = text[: max_length - 1] + "…"
    return text


def cut_to_bytes(text: str, limit: int) -> str:
    """``text`` at most ``limit`` bytes of UTF-8, with a note of its size when it was cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    note = f"… [truncated from {len(encoded)} bytes]"
    keep = max(0, limit - len(note.encode("utf-8")))
    return encoded[:keep].decode("utf-8", "ignore") + note


def within_row_budget(arguments: Any, error: str, budget: int) -> tuple[Any, str]:
    """Storable ``arguments`` and ``error`` cut to ``budget`` bytes together, as stored.

    The arguments are measured as the JSON the database is sent (ASCII, escapes included).
    The error text keeps up to a quarter of the budget; arguments over what remains become
    ``{TRUNCATED: "<size> bytes …", "start": "<their JSON, cut>"}``. Within the start every
    character may be escaped once more when stored (a quote, a backslash), so it takes half
    of the room left.
    """
    error = cut_to_bytes(error, budget // 4)
    room = budget - len(error.encode("utf-8"))
    text = json.dumps(arguments)
    if len(text) <= room:
        return arguments, error
    start = text[: max(0, (room - TRUNCATED_OVERHEAD) // 2)]
    return {
        TRUNCATED: f"{len(text)} bytes of arguments, over LOG_ROW_MAX_BYTES",
        "start": start,
    }, error


def redact(arguments: Any, names: Iterable[str], depth: int = 0) -> Any:
    """``arguments`` made storable, with the values of keys containing any of ``names`` hidden.

    Bounded by :data:`MAX_DEPTH`, so arguments of any depth come back without recursing
    further than that.
    """
    lowered = [n.lower() for n in names]
    return _storable(arguments, lowered, depth)


def _storable(value: Any, lowered: list[str], depth: int) -> Any:
    if isinstance(value, str):
        return clean_text(value, MAX_STRING)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return NON_FINITE.get(value, value)
    if depth >= MAX_DEPTH:
        return TOO_DEEP
    if isinstance(value, dict):
        stored: dict[str, Any] = {}
        for key, item in value.items():
            name = clean_text(key, 200)
            if any(n in name.lower() for n in lowered):
                stored[name] = REDACTED
            else:
                stored[name] = _storable(item, lowered, depth + 1)
        return stored
    if isinstance(value, (list, tuple)):
        return [_storable(item, lowered, depth + 1) for item in value]
    return clean_text(repr(value), 200)


def client_address(request: HttpRequest | None) -> str | None:
    """The caller's IP address: by DRF's ``NUM_PROXIES`` when the host declares its
    proxies, else ``REMOTE_ADDR``. An ``X-Forwarded-For`` nobody vouches for is ignored,
    since any client can send one."""
    if request is None:
        return None
    from rest_framework.settings import api_settings

    address = request.META.get("REMOTE_ADDR")
    proxies = api_settings.NUM_PROXIES
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        address = hops[-min(proxies, len(hops))]
    try:
        return str(ipaddress.ip_address(address or ""))
    except ValueError:
        return None


def describe_credential(credential: Credential | None) -> str:
    """The credential in words, never its secret: the key's name and prefix, or the OAuth
    application's name and client id."""
    from mcp_endpoint.models import AbstractAPIKey

    if credential is None:
        return "anonymous"
    auth = credential.auth
    if isinstance(auth, AbstractAPIKey):
        return f"API key “{auth.name}” ({auth.prefix})" if auth.name else f"API key {auth.prefix}"
    application = getattr(auth, "application", None)
    if application is not None:
        name = getattr(application, "name", "") or "unnamed application"
        return f"OAuth “{name}” (client {getattr(application, 'client_id', '?')})"
    if hasattr(auth, "scope"):
        return "OAuth token"
    if credential.authenticator is not None:
        # The host's own kind (a JSON Web Token, a session, its own class): by the class
        # that took it, since the auth object may be the secret itself.
        return type(credential.authenticator).__name__
    return credential.kind


def describe_task_credential(task: ToolTask) -> str:
    """A task's credential in words, as :func:`describe_credential` names it, from the
    reference the task keeps; a key or token deleted since is named by its kind."""
    return describe_task_credentials([task])[task.pk]


def describe_task_credentials(tasks: Iterable[ToolTask]) -> dict[str, str]:
    """Each task's credential in words by task id, as :func:`describe_task_credential`
    names it, in one query per kind of credential however many tasks there are (a page
    of the admin's task list, say)."""
    from mcp_endpoint.credential import Credential

    tasks = list(tasks)
    found = {
        kind: _credentials_by_id(
            kind, {t.credential_id for t in tasks if t.credential_kind == kind}
        )
        for kind in ("api_key", "oauth_token")
    }
    deleted = {"api_key": "API key (deleted)", "oauth_token": "OAuth token (deleted)"}
    names: dict[str, str] = {}
    for task in tasks:
        kind = task.credential_kind
        if kind in found:
            auth = found[kind].get(task.credential_id)
            # The name is read from the key or token alone: no user is needed (or fetched).
            credential = Credential(user=None, auth=auth, scopes=None)
            names[task.pk] = deleted[kind] if auth is None else describe_credential(credential)
        elif kind:
            # The host's own kind: by the class that took it, as the call log names it.
            names[task.pk] = task.authenticator.rpartition(".")[2] or kind
        else:
            names[task.pk] = describe_credential(None)
    return names


def _credentials_by_id(kind: str, ids: set[str]) -> dict[str, Any]:
    """The API keys (``kind`` ``"api_key"``) or OAuth access tokens (``"oauth_token"``,
    with their applications) whose primary keys, as text, are ``ids``; one query, none
    for no ids."""
    if not ids:
        return {}
    queryset: QuerySet[Any]
    if kind == "api_key":
        from mcp_endpoint.models import get_api_key_model

        queryset = get_api_key_model()._default_manager.all()
    else:
        from oauth2_provider.models import get_access_token_model

        queryset = get_access_token_model()._default_manager.select_related("application")
    return {str(found.pk): found for found in queryset.filter(pk__in=ids)}


@dataclass(frozen=True)
class Outcome:
    """How a call went: ``"ok"`` or the tool error's code, and its message."""

    code: str
    message: str = ""

    @classmethod
    def of(cls, structured: dict[str, Any] | None, is_error: bool) -> Outcome:
        if not is_error:
            return cls("ok")
        error = (structured or {}).get("error")
        if not isinstance(error, dict):
            return cls("error")
        return cls(str(error.get("code", "error")), str(error.get("message", "")))


class CallRecord:
    """What one tool call leaves behind: a line in the log, its row in the call log when
    that is on, and :data:`~mcp_endpoint.signals.tool_called`.

    Made as the call starts. A write tool's row is written by :meth:`within`, inside the
    tool's own transaction just before it commits, so that the tool's writes and their row
    are one commit: a crash after it leaves both, before it neither. Any other call's row
    (a read-only tool's, one whose transaction was rolled back, one whose commit failed) is
    written by :meth:`done`, after the call: appended to the worker's spool when
    ``LOG_SPOOL_DIR`` is set (:mod:`mcp_endpoint.callspool`), else as one INSERT.
    :meth:`done` also sends the signal, once the tool's work is committed.
    """

    def __init__(
        self,
        endpoint: EndpointLike,
        tool: Tool,
        arguments: dict[str, Any],
        context: RequestContext,
    ) -> None:
        self.endpoint = endpoint
        self.tool = tool
        self.arguments = arguments
        self.context = context
        self.started = time.monotonic()
        self.row: ToolCall | None = None
        self.written = False
        self.duration_ms: float | None = None

    def within(self, result: ToolResult, using: str) -> None:
        """Write the row of ``result`` in the transaction open on ``using``, the tool's
        database, to be committed with the tool's writes.

        Nothing is written when the call log is off, or when a router sends its rows to
        another database (no one transaction spans two): :meth:`done` writes the row then.
        A row the database refuses is rolled back to a savepoint, and the row with
        :data:`UNLOGGABLE` written instead, without touching the tool's writes; an error
        that broke the transaction itself (a lost connection) is raised, since the tool's
        writes cannot be committed either.
        """
        from mcp_endpoint.models import ToolCall

        if not self.endpoint.settings.LOG_TOOL_CALLS or router.db_for_write(ToolCall) != using:
            return
        self.duration_ms = (time.monotonic() - self.started) * 1000
        self.row = write(self.build(result), self.tool.name, inside=True)
        self.written = True

    def forget(self) -> None:
        """The transaction :meth:`within` wrote in did not commit: its row went with it."""
        self.row, self.written, self.duration_ms = None, False, None

    def done(self, result: ToolResult) -> None:
        """Log the call, write its row if :meth:`within` did not, and send
        :data:`~mcp_endpoint.signals.tool_called`. The call's work may be committed
        already: nothing here raises into the answer."""
        if self.duration_ms is None:
            self.duration_ms = (time.monotonic() - self.started) * 1000
        credential: Credential | None = self.context.credential
        outcome = Outcome.of(result.structured, result.is_error)
        label = credential.label() if credential is not None else "anonymous"
        call_logger.debug(
            "tool %s by %s: %s in %.1f ms", self.tool.name, label, outcome.code, self.duration_ms
        )
        if not self.written and self.endpoint.settings.LOG_TOOL_CALLS:
            self.row = self.spool(result) or write(self.build(result), self.tool.name)
            self.written = True
        called(
            self.endpoint,
            self.tool,
            self.arguments,
            self.context,
            outcome,
            self.duration_ms,
            self.row,
        )

    def spool(self, result: ToolResult) -> ToolCall | None:
        """Append the row to this worker's spool (:mod:`mcp_endpoint.callspool`) when
        ``LOG_SPOOL_DIR`` names one; the row, not yet in the table (no ``pk``), or None
        when it must be written at once (no spool, or the spool's file refused it)."""
        directory = self.endpoint.settings.LOG_SPOOL_DIR
        if not directory:
            return None
        row = self.build(result)
        # The time the row would have had written now, not the time its batch is.
        row.created = timezone.now()
        try:
            callspool.spool_row(directory, row)
        except (OSError, ValueError):
            logger.warning(
                "the call-log spool in %s refused a row; it is written at once",
                directory,
                exc_info=True,
                extra=client_logging.SERVER_ONLY,
            )
            return None
        return row

    def build(self, result: ToolResult) -> ToolCall:
        outcome = Outcome.of(result.structured, result.is_error)
        return build_row(
            self.endpoint, self.tool, self.arguments, self.context, outcome, self.duration_ms or 0
        )


def build_row(
    endpoint: EndpointLike,
    tool: Tool,
    arguments: dict[str, Any],
    context: RequestContext,
    outcome: Outcome,
    duration_ms: float,
) -> ToolCall:
    """The call's row, not yet written: every column storable and within its budget."""
    from mcp_endpoint.models import ToolCall

    credential: Credential | None = context.credential
    user = credential.user if credential is not None else None
    request: HttpRequest | None = context.transport
    info = context.client_info or {}
    row = ToolCall(
        endpoint=clean_text(endpoint.name, 100),
        tool=clean_text(tool.name, 128),
        user=user if getattr(user, "pk", None) else None,
        credential=clean_text(describe_credential(credential), 255),
        client_name=clean_text(info.get("name") or "", 200),
        client_version=clean_text(info.get("version") or "", 100),
        user_agent=clean_text(request.META.get("HTTP_USER_AGENT", "") if request else "", 300),
        ip=client_address(request),
        outcome=clean_text(outcome.code, 40),
        duration_ms=round(duration_ms, 3),
    )
    row.arguments, row.error = within_row_budget(
        redact(arguments, endpoint.settings.REDACTED_ARGUMENTS),
        clean_text(outcome.message, 2000),
        endpoint.settings.LOG_ROW_MAX_BYTES,
    )
    return row


def record(
    endpoint: EndpointLike,
    tool: Tool,
    arguments: dict[str, Any],
    context: RequestContext,
    outcome: Outcome,
    duration_ms: float,
) -> ToolCall | None:
    """Write the call's row (one INSERT); on refusal, the row with :data:`UNLOGGABLE`."""
    return write(build_row(endpoint, tool, arguments, context, outcome, duration_ms), tool.name)


def write(row: ToolCall, name: str, *, inside: bool = False) -> ToolCall | None:
    """Insert ``row``; when the database refuses it, the row with :data:`UNLOGGABLE`
    instead; None when that is refused too.

    ``inside`` a transaction whose work must still commit (the tool's), an error that left
    that transaction unusable is raised rather than logged: it cannot commit anyway.
    """
    try:
        insert(row)
    except DatabaseError:
        if inside and broken(row):
            raise
        logger.warning(
            "the call log refused the arguments of %s; recording the call without them",
            name,
            exc_info=True,
            extra=client_logging.SERVER_ONLY,
        )
        row.pk = None
        row.arguments = UNLOGGABLE
        try:
            insert(row)
        except DatabaseError:
            if inside and broken(row):
                raise
            logger.error(
                "could not record the call of %s in the call log",
                name,
                exc_info=True,
                extra=client_logging.SERVER_ONLY,
            )
            return None
    return row


def broken(row: ToolCall) -> bool:
    """Whether the transaction ``row`` was written in can no longer commit: its savepoint
    could not be rolled back to (the connection was lost, say)."""
    using = router.db_for_write(type(row))
    return transaction.get_connection(using).in_atomic_block and transaction.get_rollback(using)


def insert(row: ToolCall) -> None:
    """One INSERT; inside a transaction (the tool's, or ``ATOMIC_REQUESTS``) a savepoint
    keeps a refused row from breaking the rest of it."""
    using = router.db_for_write(type(row))
    if transaction.get_connection(using).in_atomic_block:
        with transaction.atomic(using=using):
            insert_statement(row, using)
    else:
        insert_statement(row, using)


# Vendors whose INSERT returns the new id with RETURNING, as the one statement below has it.
RETURNING_VENDORS = frozenset({"postgresql", "sqlite"})


# The INSERT of one row and its fields, by model and database vendor.
_statements: dict[tuple[type[ToolCall], str], tuple[str, tuple[Any, ...]]] = {}


def insert_sql(model: type[ToolCall], connection: Any) -> tuple[str, tuple[Any, ...]]:
    """The INSERT of one ``model`` row on ``connection``'s vendor, and the fields in its
    placeholders' order: built once per vendor, since the columns never change."""
    key = (model, connection.vendor)
    found = _statements.get(key)
    if found is None:
        found = _statements[key] = build_insert_sql(model, connection.ops.quote_name)
    return found


def build_insert_sql(model: type[ToolCall], quote: Any) -> tuple[str, tuple[Any, ...]]:
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    columns = ", ".join(quote(f.column) for f in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    sql = (
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({placeholders}) "
        f"RETURNING {quote(model._meta.pk.column)}"
    )
    return sql, fields


def insert_statement(row: ToolCall, using: str) -> None:
    """The row's INSERT, as one statement built once per database vendor: the values as
    the ORM prepares them (each field's ``pre_save`` and ``get_db_prep_save``), the new id
    read back with RETURNING. Without RETURNING, the ORM's ``bulk_create`` does it.

    A model's ``save()`` costs several times the CPU of the statement itself (its signals,
    its checks, the query compiled for each row): see docs/performance.md.
    """
    connection = connections[using]
    model = type(row)
    if connection.vendor not in RETURNING_VENDORS or not (
        connection.features.can_return_columns_from_insert
    ):
        model._default_manager.using(using).bulk_create([row])
        return
    sql, fields = insert_sql(model, connection)
    values = [f.get_db_prep_save(f.pre_save(row, True), connection) for f in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        (row.pk,) = cursor.fetchone()
    row._state.adding = False
    row._state.db = using


def called(
    endpoint: EndpointLike,
    tool: Tool,
    arguments: dict[str, Any],
    context: RequestContext,
    outcome: Outcome,
    duration_ms: float,
    row: ToolCall | None,
) -> None:
    """Send :data:`~mcp_endpoint.signals.tool_called`; a receiver's failure is logged,
    never answered."""
    credential: Credential | None = context.credential
    responses = signals.tool_called.send_robust(
        sender=type(endpoint),
        endpoint=endpoint,
        tool=tool.name,
        user=credential.user if credential is not None else None,
        credential=credential,
        arguments=arguments,
        outcome=outcome.code,
        error=outcome.message,
        duration_ms=duration_ms,
        client_info=context.client_info,
        request=context.transport,
        log_row=row,
    )
    for receiver, response in responses:
        if isinstance(response, Exception):
            logger.error("a tool_called receiver (%r) failed", receiver, exc_info=response)


def prune(days: int | None, using: str | None = None) -> int:
    """Delete rows older than ``days`` days; returns how many went. ``None`` keeps all."""
    from mcp_endpoint.models import ToolCall

    if days is None:
        return 0
    cutoff = timezone.now() - timedelta(days=days)
    manager = ToolCall.objects.db_manager(using) if using else ToolCall.objects
    deleted, _ = manager.filter(created__lt=cutoff).delete()
    return deleted


__all__ = [
    "MAX_DEPTH",
    "TRUNCATED",
    "UNLOGGABLE",
    "CallRecord",
    "Outcome",
    "called",
    "clean_text",
    "client_address",
    "describe_credential",
    "describe_task_credential",
    "describe_task_credentials",
    "prune",
    "record",
    "redact",
    "within_row_budget",
]
