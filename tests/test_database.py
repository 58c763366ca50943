"""``database_blocked``: host code run by the system checks cannot reach a database."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection

from mcp_endpoint.database import DatabaseNeeded, database_blocked


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
