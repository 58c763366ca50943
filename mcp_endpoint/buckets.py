"""Buckets the call log is counted in: of time (hours, days) and of duration.

Both are arithmetic the database does itself, so that a grouped count of many rows needs no
function call per row from Python.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.db import NotSupportedError
from django.db.models import Case, F, Func, IntegerField, Value, When
from django.db.models.functions import Cast, Floor, Ln

# Durations are counted in buckets a fixed ratio wide: eight to a doubling, so that a
# bucket's middle (on a log scale) is within 2^(1/16) - 1, about 4.4 %, of any duration in
# it. The first bucket holds what is under SMALLEST_MS; it reads as 0.
PER_DOUBLING = 8
SMALLEST_MS = 0.01
RESOLUTION = 2 ** (1 / (2 * PER_DOUBLING)) - 1


def duration_bucket(column: str = "duration_ms") -> Any:
    """The duration bucket of ``column``: 0 under SMALLEST_MS, then 1, 2, ..."""
    scale = PER_DOUBLING / math.log(2)
    return Case(
        When(**{f"{column}__lt": SMALLEST_MS}, then=Value(0)),
        default=Cast(Floor(Ln(F(column) / Value(SMALLEST_MS)) * Value(scale)), IntegerField())
        + Value(1),
        output_field=IntegerField(),
    )


def bucket_duration(bucket: int) -> float:
    """What a duration bucket reads as: the middle of its bounds on a log scale."""
    if bucket <= 0:
        return 0.0
    return round(SMALLEST_MS * 2 ** ((bucket - 0.5) / PER_DOUBLING), 3)


class BucketIndex(Func):
    """Which bucket of ``step`` seconds from ``start`` a time falls in: 0, 1, 2, ...

    Arithmetic the database does without a function call per row (Django's ``Trunc`` is a
    Python function on SQLite, ten times slower over a large log); buckets are counted in
    seconds from ``start``, a midnight or an hour of the current time zone.
    """

    output_field = IntegerField()

    def __init__(self, expression: str, start: datetime, step: int) -> None:
        super().__init__(F(expression), Value(start), Value(step))

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> Any:  # type: ignore[override]
        raise NotSupportedError(
            f"the call log's overview has no time buckets for {connection.vendor}"
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_template(
            compiler,
            connection,
            "CAST((julianday(%s) - julianday(%s)) * 86400.0 / %s AS INTEGER)",
        )

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_template(
            compiler,
            connection,
            "FLOOR(EXTRACT(EPOCH FROM (%s - %s)) / %s)::integer",
        )

    def as_template(self, compiler: Any, connection: Any, template: str) -> Any:
        parts, params = [], []
        for expression in self.get_source_expressions():
            sql, more = compiler.compile(expression)
            parts.append(sql)
            params.extend(more)
        return template % tuple(parts), params
