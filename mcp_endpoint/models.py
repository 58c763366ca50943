"""API keys: hashed at rest, shown once, scoped like OAuth tokens."""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import connections, models, router, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcp_endpoint import signals
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.credential import API_KEY
from mcp_endpoint.protocol.tasks import CANCELLED, TERMINAL

# last_used is written at most this often per key, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)

STATUS_LABELS = {"active": _("active"), "expired": _("expired"), "revoked": _("revoked")}


def digest_of(raw_key: str) -> str:
    """The stored form of a key. Keys carry 256 random bits, so a plain SHA-256 suffices."""
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def split_key(raw_key: str) -> str | None:
    """The visible prefix of a raw key (``mcp_ab12cd34``), or None if it is not key-shaped."""
    head, sep, secret = raw_key.rpartition("_")
    if not sep or not head or len(secret) < 20 or len(head) > 40:
        return None
    return head


# The key's columns a credential and the call log read; the user's row is read whole (views
# use any field).
KEY_COLUMNS = ("id", "user", "prefix", "name", "digest", "scope", "expires", "revoked", "last_used")


class _CompiledLookup:
    """The key-by-digest query, compiled once per thread and database connection.

    Building and compiling a queryset costs more than running the query it makes, on
    every request that carries a key; the SQL, the columns and the converters do not
    change, so they are made once by the ORM itself and reused with each digest.
    """

    _MARK = "mcp-endpoint-digest-placeholder"

    def __init__(self, model: type[AbstractAPIKey], alias: str) -> None:
        self.model = model
        self.alias = alias
        self.connection = connections[alias]
        queryset = (
            model._default_manager.using(alias)
            .filter(digest=self._MARK)
            .select_related("user")
            .only(*KEY_COLUMNS)
            .order_by()
        )
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        if list(params) != [self._MARK]:
            raise RuntimeError("The API key lookup did not compile to one parameter.")
        self.sql = sql
        select = compiler.select
        info = compiler.klass_info
        assert info is not None
        related = info["related_klass_infos"][0]
        self.key_positions: list[int] = list(info["select_fields"])
        self.user_positions: list[int] = list(related["select_fields"])
        self.key_fields = [select[i][0].target.attname for i in self.key_positions]
        self.user_fields = [select[i][0].target.attname for i in self.user_positions]
        self.user_model = related["model"]
        self.converters = compiler.get_converters([column for column, _, _ in select])

    def fetch(self, digest: str) -> AbstractAPIKey | None:
        with self.connection.cursor() as cursor:
            cursor.execute(self.sql, [digest])
            found = cursor.fetchone()
        if found is None:
            return None
        row = list(found)
        for position, (converters, expression) in self.converters.items():
            value = row[position]
            for converter in converters:
                value = converter(value, expression, self.connection)
            row[position] = value
        key = self.model.from_db(self.alias, self.key_fields, [row[i] for i in self.key_positions])
        user = self.user_model.from_db(
            self.alias, self.user_fields, [row[i] for i in self.user_positions]
        )
        key.user = user
        return key


_lookups = threading.local()


def _compiled_lookup(model: type[AbstractAPIKey], alias: str) -> _CompiledLookup:
    # Connections are per thread, and their converters belong to them: one lookup each.
    found: dict[tuple[Any, ...], _CompiledLookup] = _lookups.__dict__.setdefault("by", {})
    index = (model, alias, id(connections[alias]))
    lookup = found.get(index)
    if lookup is None or lookup.connection is not connections[alias]:
        lookup = found[index] = _CompiledLookup(model, alias)
    return lookup


class APIKeyManager(models.Manager["AbstractAPIKey"]):
    def create_key(
        self,
        *,
        user: Any,
        scopes: Iterable[str] | str = ("read",),
        name: str = "",
        expires: datetime | None = None,
    ) -> tuple[AbstractAPIKey, str]:
        """Create a key; returns the stored row and the raw key, which is never stored."""
        prefix = f"{mcp_settings.API_KEY_PREFIX}_{secrets.token_hex(4)}"
        raw = f"{prefix}_{secrets.token_hex(32)}"
        scope = scopes if isinstance(scopes, str) else " ".join(scopes)
        key = self.create(
            user=user,
            name=name,
            prefix=prefix,
            digest=digest_of(raw),
            scope=" ".join(scope.split()),
            expires=expires,
        )
        signals.api_key_created.send(sender=type(key), key=key, user=user)
        return key, raw

    def get_for_raw_key(self, raw_key: str) -> AbstractAPIKey | None:
        """The key row for a raw key, with its user; None when unknown."""
        if split_key(raw_key) is None:
            return None
        return self.get_for_digest(digest_of(raw_key))

    def get_for_digest(self, digest: str) -> AbstractAPIKey | None:
        """The key whose digest is ``digest``, with its user, in one indexed query.

        Only the columns a credential needs are read (not ``name``, ``digest``,
        ``created``). The lookup is by the digest, so what its timing could tell is about a
        SHA-256 output, never about the secret; the digest is still compared in constant
        time before the key is trusted.
        """
        key = _compiled_lookup(self.model, self.db).fetch(digest)
        if key is None or not hmac.compare_digest(key.digest, digest):
            return None
        return key


class AbstractAPIKey(models.Model):
    """An API key. ``scope`` is a space-separated list, as on an OAuth access token, so the
    key satisfies django-oauth-toolkit's ``TokenHasScope`` permissions exactly as a token."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="%(app_label)s_%(class)s_set",
        verbose_name=_("user"),
    )
    name = models.CharField(_("name"), max_length=100, blank=True)
    prefix = models.CharField(_("prefix"), max_length=48, unique=True, editable=False)
    digest = models.CharField(_("digest"), max_length=64, unique=True, editable=False)
    scope = models.TextField(_("scopes"), default="read", help_text=_("Space-separated scopes."))
    created = models.DateTimeField(_("created"), auto_now_add=True)
    expires = models.DateTimeField(_("expires"), null=True, blank=True)
    last_used = models.DateTimeField(_("last used"), null=True, blank=True, editable=False)
    revoked = models.DateTimeField(_("revoked"), null=True, blank=True)

    objects = APIKeyManager()
    # What a credential holding one is (mcp_endpoint.credential.is_api_key).
    mcp_credential_kind = API_KEY

    class Meta:
        abstract = True
        ordering = ["-created"]
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})" if self.name else f"{self.prefix}…"

    @property
    def scopes(self) -> frozenset[str]:
        return frozenset(self.scope.split())

    def is_expired(self) -> bool:
        return self.expires is not None and timezone.now() >= self.expires

    def is_revoked(self) -> bool:
        return self.revoked is not None

    @property
    def status(self) -> str:
        """``"revoked"``, ``"expired"`` or ``"active"``, for listings."""
        if self.is_revoked():
            return "revoked"
        return "expired" if self.is_expired() else "active"

    def get_status_display(self) -> str:
        """The status in the user's language."""
        return str(STATUS_LABELS[self.status])

    def is_usable(self) -> bool:
        return not self.is_revoked() and not self.is_expired()

    def allow_scopes(self, scopes: Iterable[str] | None) -> bool:
        return not scopes or set(scopes) <= self.scopes

    def is_valid(self, scopes: Iterable[str] | None = None) -> bool:
        """As ``AccessToken.is_valid``: usable and holding ``scopes``."""
        return self.is_usable() and self.allow_scopes(scopes)

    def revoke(self) -> None:
        if self.revoked is None:
            self.revoked = timezone.now()
            self.save(update_fields=["revoked"])
            signals.api_key_revoked.send(sender=type(self), key=self, user=self.user)

    def touch(self) -> None:
        """Record use, at most once per minute per key, in one conditional UPDATE."""
        now = timezone.now()
        if self.last_used is not None and now - self.last_used < LAST_USED_RESOLUTION:
            return
        type(self)._default_manager.filter(pk=self.pk).filter(
            models.Q(last_used__isnull=True) | models.Q(last_used__lt=now - LAST_USED_RESOLUTION)
        ).update(last_used=now)
        self.last_used = now


class APIKey(AbstractAPIKey):
    class Meta(AbstractAPIKey.Meta):
        pass


def get_api_key_model() -> type[AbstractAPIKey]:
    model: type[AbstractAPIKey] = apps.get_model(mcp_settings.API_KEY_MODEL, require_ready=False)
    return model


class ToolCallQuerySet(models.QuerySet["ToolCall"]):
    def delete(self) -> tuple[int, dict[str, int]]:
        """Delete the rows, and the overview's counts of the hours they were in (in the
        same transaction), so that those hours are counted again from what is left."""
        with transaction.atomic(using=self.db):
            ToolCallRollup.lock(self.db)
            ToolCallRollup.forget_hours_of(self)
            return super().delete()


class ToolCall(models.Model):
    """One ``tools/call``: who, with which credential and client, the outcome, how long.

    Rows are written by :mod:`mcp_endpoint.calllog` when ``LOG_TOOL_CALLS`` is on, and
    pruned after ``LOG_RETENTION_DAYS`` by ``manage.py mcp_prune_calls``.
    """

    created = models.DateTimeField(_("time"), auto_now_add=True, db_index=True)
    endpoint = models.CharField(_("endpoint"), max_length=100)
    tool = models.CharField(_("tool"), max_length=128, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="mcp_tool_calls",
        verbose_name=_("user"),
    )
    credential = models.CharField(
        _("credential"),
        max_length=255,
        blank=True,
        help_text=_("The API key's name and prefix, or the OAuth application and client id."),
    )
    client_name = models.CharField(_("client"), max_length=200, blank=True)
    client_version = models.CharField(_("client version"), max_length=100, blank=True)
    user_agent = models.CharField(_("user agent"), max_length=300, blank=True)
    ip = models.GenericIPAddressField(_("IP address"), null=True, blank=True)
    outcome = models.CharField(
        _("outcome"), max_length=40, help_text=_('"ok", or the error code of a failed call.')
    )
    error = models.TextField(_("error message"), blank=True)
    duration_ms = models.FloatField(_("duration (ms)"))
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)

    objects = ToolCallQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        # The overview reads a period's rows from this index alone (it covers every column
        # its aggregates group or sort by), not from the table with its arguments and
        # errors: one index, so each call's INSERT pays for one more, not five.
        indexes = [
            models.Index(
                fields=[
                    "created",
                    "tool",
                    "outcome",
                    "user",
                    "client_name",
                    "credential",
                    "duration_ms",
                ],
                name="mcp_toolcall_overview",
            ),
        ]
        verbose_name = _("tool call")
        verbose_name_plural = _("tool calls")

    def __str__(self) -> str:
        return f"{self.tool} ({self.outcome})"

    def delete(self, using: Any = None, keep_parents: bool = False) -> tuple[int, dict[str, int]]:
        using = using or router.db_for_write(type(self), instance=self)
        with transaction.atomic(using=using):
            ToolCallRollup.lock(using)
            ToolCallRollup.forget_hours_of(ToolCall.objects.using(using).filter(pk=self.pk))
            return super().delete(using=using, keep_parents=keep_parents)


class CallSpoolMark(models.Model):
    """How far into one of the call log's spool files (``LOG_SPOOL_DIR``) the rows are
    written: updated in the transaction that writes them, so none is written twice."""

    name = models.CharField(max_length=200, primary_key=True)
    offset = models.BigIntegerField(default=0)
    # Written to its end (its writer gone) and deleted: nothing of it is written again.
    finished = models.BooleanField(default=False)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("call-log spool mark")

    def __str__(self) -> str:
        return f"{self.name} at {self.offset}"


# The key of the PostgreSQL advisory lock that counting the call log and deleting from it
# take (ToolCallRollup.lock): any number, the same in every process of the host.
COUNTING_LOCK = int.from_bytes(hashlib.sha256(b"mcp_endpoint.toolcallrollup").digest()[:4], "big")


class ToolCallRollup(models.Model):
    """The call log counted per closed hour, for the admin's overview.

    Each hour the overview has read is counted once, for everyone's calls (``owner`` empty)
    or for one staff member's own (``owner``): a row with ``dimension`` "hour" marks the
    hour as counted, and one row per tool, outcome, client, credential and user holds its
    calls; a tool's row also holds its calls per duration bucket
    (:mod:`mcp_endpoint.buckets`). Deleting call-log rows deletes the counts of their
    hours, which are counted again from the rows left when next read; counting and deleting
    take one lock (:meth:`lock`), so neither runs in the middle of the other.
    """

    HOUR = "hour"
    # How long after its end an hour is counted: a call's row is written when it returns,
    # and may be committed a little later (inside a request's transaction, or in a batch of
    # the call-log spool; a row later than this makes its hour counted again).
    SETTLE = timedelta(minutes=5)

    start = models.DateTimeField()
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, related_name="+"
    )
    dimension = models.CharField(max_length=16)
    value = models.CharField(max_length=255, blank=True)
    # The user of the "user" rows: a user deleted leaves their calls without one, as the
    # call log's own rows do.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    calls = models.PositiveIntegerField(default=0)
    durations = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["owner", "dimension", "start", "value", "user", "calls"],
                name="mcp_toolcallrollup_read",
            ),
            models.Index(fields=["start"], name="mcp_toolcallrollup_start"),
        ]
        # Two readers counting the same hour at once: the second one's marks fail here,
        # and it reads the first one's counts instead.
        constraints = [
            models.UniqueConstraint(
                fields=["start"],
                condition=models.Q(dimension="hour", owner__isnull=True),
                name="mcp_toolcallrollup_hour",
            ),
            models.UniqueConstraint(
                fields=["start", "owner"],
                condition=models.Q(dimension="hour"),
                name="mcp_toolcallrollup_own_hour",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.start:%Y-%m-%d %H:%M} {self.dimension} {self.value}"

    @classmethod
    def lock(cls, using: str) -> None:
        """Take the call log's counting lock, to the end of the transaction (inside one).

        Counting hours and deleting call-log rows both take it before they read or write
        the log or its counts, so one waits for the other: a delete never runs between a
        count's reading of the rows and its commit, unseen by both. On PostgreSQL it is an
        advisory lock of one key; on SQLite a write that changes nothing, which holds the
        database's write lock (one writer at a time) to the end of the transaction.
        """
        connection = connections[using]
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [COUNTING_LOCK])
            elif connection.vendor == "sqlite":
                table = connection.ops.quote_name(cls._meta.db_table)
                cursor.execute(f"UPDATE {table} SET calls = calls WHERE 1 = 0")

    @classmethod
    def forget_hours_of(cls, rows: QuerySet[ToolCall]) -> int:
        """Delete the counts of every counted hour that holds one of ``rows``."""
        from mcp_endpoint.buckets import BucketIndex

        rollups = cls.objects.using(rows.db)
        span = rows.order_by().aggregate(first=models.Min("created"), last=models.Max("created"))
        if span["first"] is None:
            return 0
        hour = timedelta(hours=1)
        marks = list(
            rollups.filter(
                dimension=cls.HOUR, start__gt=span["first"] - hour, start__lte=span["last"]
            )
            .values_list("start", flat=True)
            .distinct()
        )
        # The hours are counted on the grid of the time zone they were read in: one
        # grouped pass of the rows per grid (one, unless the time zone changed).
        grids = {round(mark.timestamp()) % 3600: mark for mark in marks}
        touched: set[datetime] = set()
        for mark in grids.values():
            # The grid's first hour at or before the first row: every index 0 or more.
            origin = mark - hour * math.ceil((mark - span["first"]) / hour)
            hours = rows.order_by().annotate(h=BucketIndex("created", origin, 3600))
            touched.update(
                origin + hour * index for index in hours.values_list("h", flat=True).distinct()
            )
        starts = [mark for mark in marks if mark in touched]
        deleted = 0
        for index in range(0, len(starts), 500):
            deleted += rollups.filter(start__in=starts[index : index + 500]).delete()[0]
        return deleted


class ToolTaskQuerySet(models.QuerySet["ToolTask"]):
    def cancel(self) -> int:
        """Settle the tasks not finished yet on ``cancelled``; how many were.

        ``tasks/cancel`` and the admin's action both come here: a worker running the tool
        sees it (``context.cancelled``), and records nothing when the tool returns.
        """
        return self.exclude(status__in=TERMINAL).update(
            status=CANCELLED, input_requests=None, updated=timezone.now()
        )

    def prune(self, finished_days: int | None = None) -> int:
        """Delete expired tasks, and with ``finished_days`` the finished ones last updated
        that many days ago or more; how many tasks went.

        A task still working or waiting for input goes only once it has expired: its
        client can no longer see it then, and a worker still running it records nothing,
        as it finds no row to record into.
        """
        now = timezone.now()
        gone = models.Q(expires__lte=now)
        if finished_days is not None:
            finished = now - timedelta(days=finished_days)
            gone |= models.Q(status__in=TERMINAL, updated__lte=finished)
        _, per_model = self.filter(gone).delete()
        return per_model.get(self.model._meta.label, 0)


class ToolTask(models.Model):
    """A call of a long-running tool, run as a task (the tasks extension).

    The row is the task's state, as ``tasks/get`` shows it; the call itself runs on a
    worker of Django's task framework (:mod:`mcp_endpoint.tasks`). The caller's credential
    is kept by reference only (its kind and primary key), never its secret, so that the
    worker can see whether it still holds.
    """

    STATUSES = [
        ("working", _("working")),
        ("input_required", _("input required")),
        ("completed", _("completed")),
        ("failed", _("failed")),
        ("cancelled", _("cancelled")),
    ]

    id = models.CharField(_("task id"), max_length=64, primary_key=True)
    endpoint = models.CharField(_("endpoint"), max_length=100)
    tool = models.CharField(_("tool"), max_length=128)
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)
    owner = models.CharField(
        _("owner"), max_length=64, db_index=True, help_text=_("A digest of the credential.")
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="mcp_tool_tasks",
        verbose_name=_("user"),
    )
    credential_kind = models.CharField(_("credential kind"), max_length=20, blank=True)
    credential_id = models.CharField(_("credential id"), max_length=64, blank=True)
    scopes = models.JSONField(_("scopes"), null=True, blank=True)
    # The DRF authentication class that took the credential, and where the request came
    # from (host, scheme, address): a viewset's tool is called as it was in the request.
    # The origin also keeps the trace context of the message that created the task.
    authenticator = models.CharField(_("authentication class"), max_length=255, blank=True)
    origin = models.JSONField(_("origin"), default=dict, blank=True)
    protocol_version = models.CharField(_("protocol version"), max_length=20)
    client_capabilities = models.JSONField(_("client capabilities"), default=dict, blank=True)
    status = models.CharField(_("status"), max_length=20, choices=STATUSES, default="working")
    status_message = models.TextField(_("status message"), blank=True)
    input_requests = models.JSONField(_("input requests"), null=True, blank=True)
    input_responses = models.JSONField(_("input responses"), default=dict, blank=True)
    result = models.JSONField(_("result"), null=True, blank=True)
    error = models.JSONField(_("error"), null=True, blank=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)
    updated = models.DateTimeField(_("last updated"), auto_now=True)
    expires = models.DateTimeField(_("expires"), db_index=True)
    # The task backend's id of the run that was enqueued last, and when the worker running
    # it last said it was alive: a task whose worker is gone is told apart from a slow one.
    job = models.CharField(_("task backend id"), max_length=64, blank=True)
    heartbeat = models.DateTimeField(_("worker last seen"), null=True, blank=True)

    objects = ToolTaskQuerySet.as_manager()

    class Meta:
        ordering = ["-created"]
        verbose_name = _("tool task")
        verbose_name_plural = _("tool tasks")

    def __str__(self) -> str:
        return f"{self.tool} ({self.get_status_display()})"


class TaskWorker(models.Model):
    """A task worker that said it was alive: one row per worker process.

    Workers of the endpoint's task backends (``manage.py mcp_task_worker``, a Celery worker
    with :mod:`mcp_endpoint.celery`) write the time here every ``TASK_HEARTBEAT_MS``; the
    ``W091`` check, ``mcp_doctor`` and the announcement of the tasks extension read it to
    know that somebody runs the tasks enqueued (see :mod:`mcp_endpoint.task_recovery`).
    """

    name = models.CharField(_("worker"), max_length=200, primary_key=True)
    backend = models.CharField(_("task backend"), max_length=100, db_index=True)
    last_seen = models.DateTimeField(_("last seen"), db_index=True)

    class Meta:
        ordering = ["-last_seen"]
        verbose_name = _("task worker")
        verbose_name_plural = _("task workers")

    def __str__(self) -> str:
        return f"{self.name} ({self.backend})"


# Kept in the OAuth package with the code that uses it; imported here so Django finds it.
from mcp_endpoint.oauth.models import MachineClient, RedeemedAuthorizationCode  # noqa: E402, F401
