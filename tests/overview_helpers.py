"""What the overview's figures should be, worked out by hand from the call log's rows."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from mcp_endpoint.buckets import PER_DOUBLING, RESOLUTION, SMALLEST_MS
from mcp_endpoint.models import ToolCall


@pytest.fixture
def viewer(db: Any) -> Any:
    """Erin: staff with the call log's view permission only."""
    user = get_user_model().objects.create_user("erin", "erin@example.com", "pw-erin-123")
    user.is_staff = True
    user.save()
    user.user_permissions.set(Permission.objects.filter(codename="view_toolcall"))
    return user


def near(ms: float) -> Any:
    """A duration as the overview reads it: within the duration buckets' resolution."""
    return pytest.approx(ms, rel=RESOLUTION * 1.0001, abs=SMALLEST_MS)


def bucket_of(ms: float) -> int:
    if ms < SMALLEST_MS:
        return 0
    return math.floor(math.log(ms / SMALLEST_MS) * PER_DOUBLING / math.log(2)) + 1


def nearest_rank(durations: list[float], fraction: float) -> float:
    ordered = sorted(durations)
    return ordered[max(1, math.ceil(fraction * len(ordered) - 1e-9)) - 1]


def by_hand(window: Any, owner: Any = None) -> dict[str, Any]:
    """The period's counts and exact percentiles, from every row, in Python."""
    rows = [
        row
        for row in ToolCall.objects.all()
        if window.start <= row.created < window.end and (owner is None or row.user_id == owner)
    ]
    step = window.step_seconds
    durations: dict[str, list[float]] = {}
    for row in rows:
        durations.setdefault(row.tool, []).append(row.duration_ms)
    return {
        "calls": len(rows),
        "per_bucket": Counter(
            (math.floor((row.created - window.start).total_seconds() / step), row.tool)
            for row in rows
        ),
        "outcome": Counter(row.outcome for row in rows),
        "client": Counter(row.client_name for row in rows),
        "credential": Counter(row.credential for row in rows),
        "user": Counter(row.user_id for row in rows),
        "percentiles": {
            tool: (nearest_rank(found, 0.5), nearest_rank(found, 0.95))
            for tool, found in durations.items()
        },
    }


def as_read(figures: Any, found: Any) -> dict[str, Any]:
    """The same from what the overview read (its tally and its figures)."""
    return {
        "calls": figures.calls,
        "per_bucket": Counter({key: n for key, n in found.per_bucket.items() if n}),
        **{
            dimension: Counter({key: n for key, n in found.by.get(dimension, {}).items() if n})
            for dimension in ("outcome", "client", "credential", "user")
        },
        "percentiles": {bar.label: (bar.value, bar.second) for bar in figures.durations},
    }


def assert_same(figures: Any, found: Any, window: Any, owner: Any = None) -> None:
    expected = by_hand(window, owner)
    read = as_read(figures, found)
    percentiles = read.pop("percentiles")
    exact = expected.pop("percentiles")
    assert read == expected
    assert percentiles  # the busiest tools have theirs
    for tool, (p50, p95) in percentiles.items():
        assert (p50, p95) == (near(exact[tool][0]), near(exact[tool][1])), tool
