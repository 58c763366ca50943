"""The call log counted per hour, so that the overview's cost follows hours, not rows.

An hour is counted once it is closed (ended :data:`SETTLE` ago, so that a call recorded
late is in it), on the first overview read that needs it (or ahead of it, by
``mcp_prune_calls``), for the calls that read may see: everyone's (a superuser) or one
staff member's own. The counts are :class:`~mcp_endpoint.models.ToolCallRollup` rows: per
tool (with its calls per duration bucket), outcome, client, credential and user. The
database counts them itself, one ``INSERT ... SELECT`` per column over the ORM's grouped
query: no call-log row comes to Python. The hours not closed yet are read from the call
log itself. Nothing of this runs when a tool is called.

Hours are counted on the grid of the time zone they are read in; a read in a zone a
fraction of an hour off forgets the view's hours of the other grid, all of them, and counts
its own.

An hour is counted in one transaction that first takes the call log's counting lock
(:meth:`~mcp_endpoint.models.ToolCallRollup.lock`), then marks it (a unique row): a second
reader counting the same hours waits, fails on the mark, and reads the first one's counts.
Deleting call-log rows (the retention, the admin) takes the same lock, then deletes the
counts of their hours, which are counted again from what is left: so a delete either
comes before a count (which then misses its rows) or after it (and forgets its counts),
never in the middle.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any, Protocol

from django.db import IntegrityError, connections, transaction
from django.db.models import Count, F, QuerySet, Sum
from django.db.models.functions import ExtractMinute

from mcp_endpoint.buckets import BucketIndex, duration_bucket
from mcp_endpoint.models import ToolCall, ToolCallRollup

HOUR = timedelta(hours=1)
SETTLE = ToolCallRollup.SETTLE
# Hours counted per transaction: short enough not to hold SQLite's write lock for long.
CHUNK_HOURS = 24 * 7
# The columns counted, beside the tool, and the dimension each is counted under.
# The databases whose arithmetic the counting has (mcp_endpoint.buckets).
VENDORS = ("postgresql", "sqlite")
COLUMNS = {"outcome": "outcome", "client": "client_name", "credential": "credential"}


class Window(Protocol):
    """The period read: from ``start`` (an hour or a midnight) to ``end``, in buckets."""

    @property
    def start(self) -> datetime: ...

    @property
    def end(self) -> datetime: ...

    @property
    def step_seconds(self) -> int: ...


@dataclass
class Cell:
    """The calls of one hour (counted from ``origin``) with one value of a dimension."""

    hour: int
    dimension: str
    value: str = ""
    user: Any = None
    calls: int = 0
    durations: dict[int, int] = field(default_factory=dict)


@dataclass
class Tally:
    """A period's calls: per (bucket of the period, tool), per value of each dimension
    ("outcome", "client", "credential", "user"), and per tool and duration bucket."""

    owner: Any
    window: Window
    counted_until: datetime
    per_bucket: dict[tuple[int, str], int] = field(default_factory=dict)
    by: dict[str, dict[Any, int]] = field(default_factory=dict)
    recent_durations: dict[str, dict[int, int]] = field(default_factory=dict)

    def add(self, dimension: str, key: Any, calls: int) -> None:
        found = self.by.setdefault(dimension, {})
        found[key] = found.get(key, 0) + calls

    def durations(self, tools: list[str]) -> dict[str, dict[int, int]]:
        """The calls per duration bucket of each of ``tools``, counted hours and recent."""
        found: dict[str, dict[int, int]] = {}
        if not tools:
            return found
        counted = counts(self.owner, self.window.start, self.counted_until).filter(
            dimension="tool", value__in=tools
        )
        for tool, bucket, n in summed_durations(counted):
            found.setdefault(tool, {})[int(bucket)] = int(n)
        for tool, histogram in self.recent_durations.items():
            if tool in tools:
                into = found.setdefault(tool, {})
                for bucket, n in histogram.items():
                    into[bucket] = into.get(bucket, 0) + n
        return found


def summed_durations(counted: QuerySet[ToolCallRollup]) -> list[tuple[str, Any, Any]]:
    """(tool, duration bucket, calls) summed by the database over the counted hours: the
    JSON of each hour's durations is read there, not parsed row by row in Python."""
    inner, params = counted.values_list("value", "durations").query.sql_with_params()
    connection = connections[counted.db]
    if connection.vendor == "postgresql":
        entries, number = "jsonb_each_text(r.durations_)", "j.value::integer"
    else:
        entries, number = "json_each(r.durations_)", "j.value"
    sql = (
        f"WITH r (tool_, durations_) AS ({inner}) "
        f"SELECT r.tool_, j.key, SUM({number}) FROM r, {entries} AS j GROUP BY r.tool_, j.key"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def tally(window: Window, owner: Any, now: datetime) -> Tally:
    """The period's calls, everyone's (``owner`` None) or ``owner``'s own."""
    closed = counted_until(window, now)
    count_hours(owner, window.start, closed)
    found = Tally(owner, window, closed)
    counted = counts(owner, window.start, closed)
    step = window.step_seconds
    for bucket, tool, n in (
        counted.filter(dimension="tool")
        # Counted from half an hour before: an hour's start, a whole number of hours
        # after the period's, falls in its bucket whatever the rounding of the arithmetic.
        .annotate(bucket=BucketIndex("start", window.start - HOUR / 2, step))
        .values_list("bucket", "value")
        .annotate(n=Sum("calls"))
        .values_list("bucket", "value", "n")
    ):
        found.per_bucket[(bucket, tool)] = found.per_bucket.get((bucket, tool), 0) + n
    for dimension, value, n in (
        counted.filter(dimension__in=list(COLUMNS))
        .values_list("dimension", "value")
        .annotate(n=Sum("calls"))
        .values_list("dimension", "value", "n")
    ):
        found.add(dimension, value, n)
    for user, n in (
        counted.filter(dimension="user")
        .values_list("user")
        .annotate(n=Sum("calls"))
        .values_list("user", "n")
    ):
        found.add("user", user, n)
    recent = own(ToolCall.objects.filter(created__gte=closed, created__lt=window.end), owner)
    for cell in cells(recent, closed):
        start = closed + HOUR * cell.hour
        if cell.dimension == "tool":
            bucket = math.floor((start - window.start).total_seconds() / step)
            key = (bucket, cell.value)
            found.per_bucket[key] = found.per_bucket.get(key, 0) + cell.calls
            into = found.recent_durations.setdefault(cell.value, {})
            for duration, n in cell.durations.items():
                into[duration] = into.get(duration, 0) + n
        else:
            found.add(
                cell.dimension, cell.user if cell.dimension == "user" else cell.value, cell.calls
            )
    return found


def counted_until(window: Window, now: datetime) -> datetime:
    """The end of the period's last closed hour (the period's start if none is)."""
    hours = math.floor((now - SETTLE - window.start) / HOUR)
    return min(max(window.start + HOUR * hours, window.start), window.end)


def own(rows: QuerySet[ToolCall], owner: Any) -> QuerySet[ToolCall]:
    return rows if owner is None else rows.filter(user__pk=owner)


def view(owner: Any) -> QuerySet[ToolCallRollup]:
    """The counts of everyone's calls (``owner`` None) or of ``owner``'s own."""
    rows = ToolCallRollup.objects.order_by()
    return rows.filter(owner__isnull=True) if owner is None else rows.filter(owner_id=owner)


def counts(owner: Any, start: datetime, end: datetime) -> QuerySet[ToolCallRollup]:
    return view(owner).filter(start__gte=start, start__lt=end)


def count_hours(owner: Any, start: datetime, end: datetime) -> int:
    """Count the hours from ``start`` to ``end`` not counted yet for ``owner``'s view; how
    many were not."""
    found = 0
    for attempt in range(3):
        missing = uncounted(owner, start, end)
        if not missing:
            break
        found = found if attempt else len(missing)
        for first, hours in runs(missing):
            count(owner, first, hours)
    return found


def count_ahead(window: Window, now: datetime) -> int:
    """Count the closed hours of ``window`` for everyone's view (a superuser's), before
    anyone reads it: how many were not counted yet."""
    return count_hours(None, window.start, counted_until(window, now))


def uncounted(owner: Any, start: datetime, end: datetime) -> list[datetime]:
    """The hours from ``start`` not counted yet for ``owner``'s view."""
    forget_other_grids(owner, start)
    marked = set(
        counts(owner, start, end)
        .filter(dimension=ToolCallRollup.HOUR)
        .values_list("start", flat=True)
    )
    hours = round((end - start) / HOUR)
    return [hour for hour in (start + HOUR * i for i in range(hours)) if hour not in marked]


def forget_other_grids(owner: Any, start: datetime) -> None:
    """Forget ``owner``'s view's hours counted on another grid than ``start``'s (read in a
    time zone a fraction of an hour off this one): they would straddle this one's buckets.
    All of them, not only the period's: one left before the period would overlap its first
    hour, and be read beside it by a longer period."""
    minute = start.astimezone(dt_timezone.utc).minute
    rows = view(owner)
    astray = (
        rows.filter(dimension=ToolCallRollup.HOUR)
        .alias(minute=ExtractMinute("start", tzinfo=dt_timezone.utc))
        .exclude(minute=minute)
    )
    if astray.exists():  # a read that finds none writes nothing
        rows.filter(start__in=astray.values("start")).delete()


def runs(hours: list[datetime]) -> Iterator[tuple[datetime, int]]:
    """Consecutive ``hours`` as (first, how many), at most CHUNK_HOURS each."""
    first, length = hours[0], 1
    for hour in hours[1:]:
        if hour == first + HOUR * length and length < CHUNK_HOURS:
            length += 1
        else:
            yield first, length
            first, length = hour, 1
    yield first, length


def count(owner: Any, first: datetime, hours: int) -> None:
    """Count ``hours`` hours from ``first``: marks first, then their calls, each column's
    counts in one ``INSERT ... SELECT`` the database runs (no call-log row is read here)."""
    rows = own(ToolCall.objects.filter(created__gte=first, created__lt=first + HOUR * hours), owner)
    try:
        with transaction.atomic(using=rows.db):
            # Before anything is read: a delete of call-log rows waits for these counts
            # (and forgets them), or these counts wait for the delete (and miss its rows).
            ToolCallRollup.lock(rows.db)
            ToolCallRollup.objects.using(rows.db).bulk_create(
                ToolCallRollup(
                    start=first + HOUR * i, owner_id=owner, dimension=ToolCallRollup.HOUR
                )
                for i in range(hours)
            )
            with connections[rows.db].cursor() as cursor:
                for sql, params in counting(rows, owner, first, hours):
                    cursor.execute(sql, params)
    except IntegrityError:
        pass  # another reader counted some of these hours meanwhile: its counts are read


def counting(
    rows: QuerySet[ToolCall], owner: Any, first: datetime, hours: int
) -> Iterator[tuple[str, list[Any]]]:
    """The ``INSERT ... SELECT`` statements that count ``rows`` into ``hours`` hours from
    ``first``: the grouped queries are the ORM's, the database adds up and inserts."""
    connection = connections[rows.db]
    table = connection.ops.quote_name(ToolCallRollup._meta.db_table)
    columns = ", ".join(
        connection.ops.quote_name(column)
        for column in ("start", "owner_id", "dimension", "value", "user_id", "calls", "durations")
    )
    # The hour's index, kept in the chunk whatever the rounding of the arithmetic.
    if connection.vendor == "postgresql":
        index = f"LEAST(GREATEST(g.hour, 0), {hours - 1})"
        start = f"(%s::timestamptz + {index} * INTERVAL '1 hour')"
        histogram = "jsonb_object_agg(g.bucket::text, g.n)"
    else:
        index = f"MIN(MAX(g.hour, 0), {hours - 1})"
        start = f"datetime(%s, '+' || {index} || ' hours')"
        histogram = "json_group_object(g.bucket, g.n)"
    into = f"INSERT INTO {table} ({columns}) SELECT {start}, %s, %s"
    head = [connection.ops.adapt_datetimefield_value(first), owner]
    hourly = rows.order_by().annotate(hour=BucketIndex("created", first, 3600))
    per_tool = (
        hourly.annotate(v=F("tool"), bucket=duration_bucket())
        .values_list("hour", "v", "bucket")
        .annotate(n=Count("id"))
    )
    inner, params = per_tool.query.sql_with_params()
    yield (
        f"{into}, g.v, NULL, SUM(g.n), {histogram} FROM ({inner}) g GROUP BY g.hour, g.v",
        [*head, "tool", *params],
    )
    for dimension, column in (*COLUMNS.items(), ("user", "user")):
        grouped = hourly.annotate(v=F(column)).values_list("hour", "v").annotate(n=Count("id"))
        inner, params = grouped.query.sql_with_params()
        value, user = ("''", "g.v") if dimension == "user" else ("g.v", "NULL")
        yield (
            f"{into}, {value}, {user}, g.n, '{{}}' FROM ({inner}) g",
            [*head, dimension, *params],
        )


def cells(rows: QuerySet[ToolCall], origin: datetime) -> list[Cell]:
    """The calls of ``rows`` per hour from ``origin`` and value: a grouped scan per column."""
    hourly = rows.order_by().annotate(hour=BucketIndex("created", origin, 3600))
    tools: dict[tuple[int, str], Cell] = {}
    for hour, tool, bucket, n in (
        hourly.annotate(bucket=duration_bucket())
        .values_list("hour", "tool", "bucket")
        .annotate(n=Count("id"))
        .values_list("hour", "tool", "bucket", "n")
    ):
        cell = tools.setdefault((hour, tool), Cell(hour, "tool", tool))
        cell.calls += n
        cell.durations[bucket] = cell.durations.get(bucket, 0) + n
    found = list(tools.values())
    for dimension, column in COLUMNS.items():
        found.extend(
            Cell(hour, dimension, value, calls=n)
            for hour, value, n in hourly.values_list("hour", column)
            .annotate(n=Count("id"))
            .values_list("hour", column, "n")
        )
    found.extend(
        Cell(hour, "user", user=user, calls=n)
        for hour, user, n in hourly.values_list("hour", "user")
        .annotate(n=Count("id"))
        .values_list("hour", "user", "n")
    )
    return found
