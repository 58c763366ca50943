"""The overview's counts per closed hour: the same figures as the call log's rows give."""

from __future__ import annotations

import io
import random
import threading
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from mcp_endpoint import overview, rollup
from mcp_endpoint.models import ToolCall, ToolCallRollup
from tests import overview_helpers
from tests.overview_helpers import assert_same

pytestmark = pytest.mark.django_db
viewer = overview_helpers.viewer  # the fixture

CHANGE_LIST = "/admin/mcp_endpoint/toolcall/"
TOOLS = [f"tool_{n}" for n in range(8)]  # more than the six drawn one by one
OUTCOMES = ["ok"] * 8 + ["not_found", "invalid_arguments"]
CLIENTS = ["Claude Code", "Cursor", ""]
CREDENTIALS = ["API key “laptop” (mcp_1)", "API key “ci” (mcp_2)", "OAuth “App” (client 9)", ""]


def seed(now: datetime, users: list[Any], rows: int = 400, seed: int = 7) -> None:
    """Calls over the last three days, a few of them in the hour not closed yet."""
    pick = random.Random(seed)
    made = ToolCall.objects.bulk_create(
        ToolCall(
            endpoint="mcp",
            tool=pick.choice(TOOLS),
            user=pick.choice(users),
            outcome=pick.choice(OUTCOMES),
            client_name=pick.choice(CLIENTS),
            credential=pick.choice(CREDENTIALS),
            duration_ms=round(pick.lognormvariate(3, 2), 3) if pick.random() > 0.05 else 0.0,
        )
        for _ in range(rows)
    )
    for index, row in enumerate(made):
        ago = timedelta(minutes=pick.randrange(1, 10)) if index % 20 == 0 else None
        ago = ago or timedelta(seconds=pick.randrange(60, 3 * 86400))
        ToolCall.objects.filter(pk=row.pk).update(created=now - ago)


def read(period: str, owner: Any, now: datetime) -> tuple[Any, Any]:
    window = overview.Interval.ending_now(overview.choose_period(period), now)
    return window, (overview.overview(window, owner, now), rollup.tally(window, owner, now))


@pytest.mark.parametrize("period", ["1d", "7d"])
def test_counted_hours_and_recent_rows_give_the_rows_figures(
    period: str, alice: Any, bob: Any, viewer: Any
) -> None:
    now = timezone.now()
    seed(now, [alice, bob, viewer, None])
    for owner in (None, viewer.pk):
        window, (figures, found) = read(period, owner, now)
        assert_same(figures, found, window, owner)
        assert found.counted_until > window.start  # hours were counted
        assert found.counted_until <= now - rollup.SETTLE
    # Read again, from the counts alone this time: the same.
    window, (figures, found) = read(period, None, now)
    assert_same(figures, found, window)


def test_hours_are_counted_once_on_the_first_read(alice: Any, bob: Any) -> None:
    now = timezone.now()
    seed(now, [alice, bob])
    assert not ToolCallRollup.objects.exists()
    read("7d", None, now)
    marks = ToolCallRollup.objects.filter(dimension=ToolCallRollup.HOUR)
    counted = list(marks.order_by("start").values_list("start", flat=True))
    window = overview.Interval.ending_now(overview.choose_period("7d"), now)
    # Every closed hour of the period, none of the others; everyone's view only.
    until = rollup.counted_until(window, now)
    assert counted[0] == window.start and counted[-1] == until - rollup.HOUR
    assert len(counted) == len(set(counted)) == (until - window.start) / rollup.HOUR
    assert not ToolCallRollup.objects.filter(owner__isnull=False).exists()
    before = ToolCallRollup.objects.count()
    read("7d", None, now)
    read("1d", None, now)
    assert ToolCallRollup.objects.count() == before


def test_a_reader_that_finds_hours_counted_meanwhile_reads_those(alice: Any) -> None:
    now = timezone.now()
    seed(now, [alice, None])
    window, _figures = read("1d", None, now)
    before = sorted(ToolCallRollup.objects.values_list("start", "dimension", "value", "calls"))
    # A second reader that had found them missing counts them again: its marks fail, and
    # it leaves the first one's counts as they are.
    rollup.count(None, window.start, 24)
    after = sorted(ToolCallRollup.objects.values_list("start", "dimension", "value", "calls"))
    assert after == before
    assert_same(*read("1d", None, now)[1], window)


@pytest.mark.django_db(transaction=True)
def test_two_first_readers_at_once(alice: Any, bob: Any) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("the tests' SQLite database is in memory, one connection at a time")
    now = timezone.now()
    seed(now, [alice, bob])
    window = overview.Interval.ending_now(overview.choose_period("7d"), now)
    start = threading.Barrier(2)
    results: list[Any] = []

    def first_read() -> None:
        try:
            start.wait()
            results.append(overview.overview(window, None, now).calls)
        finally:
            connection.close()

    readers = [threading.Thread(target=first_read) for _ in range(2)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    assert results == [400, 400]
    marks = ToolCallRollup.objects.filter(dimension=ToolCallRollup.HOUR)
    assert marks.count() == marks.values("start").distinct().count()
    assert_same(*read("7d", None, now)[1], window)


def test_deleting_rows_in_the_admin_recounts_their_hours(
    admin_client: Client, alice: Any, bob: Any, viewer: Any
) -> None:
    now = timezone.now()
    seed(now, [alice, bob, viewer])
    read("7d", None, now)
    read("7d", viewer.pk, now)
    old = ToolCall.objects.filter(created__lt=now - timedelta(hours=3))
    chosen = list(old.order_by("created").values_list("pk", flat=True)[::7])
    response = admin_client.post(
        CHANGE_LIST,
        {"action": "delete_selected", "_selected_action": chosen[1:], "post": "yes"},
    )
    assert response.status_code == 302
    response = admin_client.post(f"{CHANGE_LIST}{chosen[0]}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not ToolCall.objects.filter(pk__in=chosen).exists()
    for owner in (None, viewer.pk):
        window, (figures, found) = read("7d", owner, now)
        assert_same(figures, found, window, owner)


def test_pruning_recounts_the_hour_it_cuts(alice: Any, bob: Any, viewer: Any) -> None:
    now = timezone.now()
    seed(now, [alice, bob, viewer])
    read("7d", None, now)
    read("7d", viewer.pk, now)
    call_command("mcp_prune_calls", days=1, stdout=io.StringIO())
    # The hours pruned hold no calls any more (their marks stay: they are counted, empty).
    pruned = ToolCallRollup.objects.filter(start__lt=now - timedelta(days=1, hours=1))
    assert pruned.exists()
    assert not pruned.filter(calls__gt=0).exists()
    for owner in (None, viewer.pk):
        for period in ("1d", "7d"):
            window, (figures, found) = read(period, owner, now)
            assert_same(figures, found, window, owner)


def test_pruning_counts_the_longest_period_ahead_of_its_first_read(alice: Any) -> None:
    now = timezone.now()
    seed(now, [alice])
    out = io.StringIO()
    call_command("mcp_prune_calls", "--days", "2", "--no-count", stdout=out)
    assert not ToolCallRollup.objects.exists()
    call_command("mcp_prune_calls", "--days", "2", stdout=out)
    window = overview.Interval.ending_now(overview.choose_period("90d"), now)
    hours = round((rollup.counted_until(window, timezone.now()) - window.start) / rollup.HOUR)
    assert out.getvalue().splitlines()[-1] == (
        f"Counted {hours} hour(s) of the call log for the overview."
    )
    marks = ToolCallRollup.objects.filter(dimension=ToolCallRollup.HOUR, owner__isnull=True)
    assert marks.count() == hours
    before = ToolCallRollup.objects.count()
    window, (figures, found) = read("90d", None, now)
    assert ToolCallRollup.objects.count() == before  # the read counted nothing more
    assert_same(figures, found, window)


def test_a_deleted_user_s_calls_count_as_nobody_s(alice: Any, bob: Any) -> None:
    now = timezone.now()
    seed(now, [alice, bob])
    read("7d", None, now)
    bob.delete()
    window, (figures, found) = read("7d", None, now)
    assert_same(figures, found, window)
    assert "(no user)" in [bar.label for bar in figures.users]


def test_hours_counted_in_another_time_zone_are_counted_again(alice: Any) -> None:
    # At 20:10 UTC it is already tomorrow in Kolkata: its 7 days start after UTC's, and
    # the UTC hours before them must be forgotten too (whatever the hour the test runs at).
    now = timezone.now().astimezone(dt_timezone.utc) - timedelta(days=1)
    now = now.replace(hour=20, minute=10)
    seed(now, [alice])
    read("7d", None, now)
    with timezone.override("Asia/Kolkata"):  # half an hour off the other's hours
        window, (figures, found) = read("7d", None, now)
        assert_same(figures, found, window)
        starts = ToolCallRollup.objects.values_list("start", flat=True)
        assert {(start - window.start) % rollup.HOUR for start in starts} == {timedelta(0)}


@pytest.mark.django_db(transaction=True)
def test_a_delete_racing_a_first_read_leaves_no_hour_miscounted(alice: Any, bob: Any) -> None:
    """A reader counts the hours (not committed yet) while a delete of some of their rows
    runs on another connection: the delete waits for the counts and forgets them, or the
    counts would hold rows that are gone (the delete finding no counts to forget)."""
    if connection.vendor == "sqlite":
        pytest.skip("the tests' SQLite database is in memory, one connection at a time")
    now = timezone.now()
    seed(now, [alice, bob])
    window = overview.Interval.ending_now(overview.choose_period("7d"), now)
    counted, go, deleted = threading.Event(), threading.Event(), threading.Event()
    table = ToolCallRollup._meta.db_table

    def pause_after_counting(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        if sql.startswith(f'INSERT INTO "{table}"') and "GROUP BY" in sql and not go.is_set():
            counted.set()  # the rows are read, the counts not committed yet
            go.wait(30)
        return result

    def first_read() -> None:
        try:
            with connection.execute_wrapper(pause_after_counting):
                overview.overview(window, None, now)
        finally:
            counted.set()
            connection.close()

    def delete() -> None:
        try:
            old = ToolCall.objects.filter(created__lt=now - timedelta(hours=3))
            chosen = list(old.order_by("created").values_list("pk", flat=True)[::5])
            ToolCall.objects.filter(pk__in=chosen).delete()
        finally:
            deleted.set()
            connection.close()

    reader = threading.Thread(target=first_read)
    reader.start()
    assert counted.wait(30)
    deleter = threading.Thread(target=delete)
    deleter.start()
    # Until the delete is done, or waits for the reader's lock: then the reader commits.
    with connection.cursor() as cursor:
        for _ in range(600):
            if deleted.wait(0.05):
                break
            cursor.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                "WHERE l.locktype = 'advisory' AND NOT l.granted "
                "AND d.datname = current_database()"
            )
            if cursor.fetchone()[0]:
                break
    go.set()
    reader.join()
    deleter.join()
    assert ToolCall.objects.count() < 400
    assert_same(*read("7d", None, now)[1], window)
