"""``database_blocked``: host code run by the system checks cannot reach a database;
``releasing_new_connections``: work done after a request hands its connections back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core.signals import request_finished
from django.db import connection

from mcp_endpoint.database import DatabaseNeeded, database_blocked, releasing_new_connections
from mcp_endpoint.last_use import note_key_use
from mcp_endpoint.models import APIKey, digest_of
from tests.conftest import make_key


@pytest.mark.django_db
def test_a_query_inside_the_block_is_refused_and_recorded() -> None:
    with database_blocked() as block, pytest.raises(DatabaseNeeded):
        list(ContentType.objects.filter(app_label="inventory"))
    assert block.touched
    assert block.attempts == ["default"]
    # Outside the block the connection is as it was.
    assert ContentType.objects.filter(app_label="inventory").exists()


@pytest.mark.django_db
def test_an_attempt_the_caller_swallowed_still_counts() -> None:
    def careless() -> Any:
        try:
            return ContentType.objects.count()
        except Exception:
            return 0

    with database_blocked() as block:
        assert careless() == 0
    assert block.touched


def test_nothing_touched_nothing_recorded() -> None:
    with database_blocked() as block:
        sum(range(10))
    assert not block.touched


def test_connecting_is_refused_too() -> None:
    # No test database here: even opening a connection must not happen.
    with database_blocked() as block, pytest.raises(DatabaseNeeded):
        connection.ensure_connection()
    assert block.attempts == ["default"]


# -- releasing_new_connections: work done after a request's connections were closed -----------

# SQLite's test database lives in memory, and Django never closes such a connection.
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs a database whose connections close"
)


@on_postgresql
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("max_age", "kept"), [(0, False), (60, True)])
def test_what_the_block_opened_is_handed_back_as_django_would(
    monkeypatch: pytest.MonkeyPatch, max_age: int, kept: bool
) -> None:
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", max_age)
    connection.close()  # as Django's request_finished receiver leaves it
    with releasing_new_connections():
        ContentType.objects.count()
        assert connection.connection is not None
    assert (connection.connection is not None) is kept
    connection.close()


@pytest.mark.django_db
def test_a_connection_open_before_the_block_is_left_as_it_was() -> None:
    # A test's transaction, or the request's own connection: not the block's to close.
    ContentType.objects.count()
    with releasing_new_connections():
        ContentType.objects.count()
    assert connection.connection is not None
    assert connection.in_atomic_block
    assert ContentType.objects.exists()


@on_postgresql
@pytest.mark.django_db(transaction=True)
def test_last_use_written_after_the_request_leaves_no_connection_open(
    monkeypatch: pytest.MonkeyPatch, alice: Any
) -> None:
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    raw = make_key(alice)
    key = APIKey.objects.get_for_digest(digest_of(raw))
    assert key is not None and key.last_used is None
    note_key_use(key)
    connection.close()  # Django's receiver of request_finished runs before this app's
    request_finished.send(sender=None)
    assert connection.connection is None
    assert APIKey.objects.get().last_used is not None


@pytest.mark.django_db(transaction=True)
def test_last_use_waits_when_the_request_finishes_inside_an_event_loop(alice: Any) -> None:
    # An async client that closes a streamed answer sends request_finished from the event
    # loop, where the ORM refuses to run: the write waits for the next request's end.
    raw = make_key(alice)
    key = APIKey.objects.get_for_digest(digest_of(raw))
    assert key is not None
    note_key_use(key)

    async def finish_in_the_loop() -> None:
        request_finished.send(sender=None)

    asyncio.run(finish_in_the_loop())
    assert APIKey.objects.get().last_used is None
    request_finished.send(sender=None)
    assert APIKey.objects.get().last_used is not None
