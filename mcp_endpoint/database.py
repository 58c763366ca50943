"""Running host code with the database out of reach, for the system checks.

Django's rule for system checks: they do not touch the database, except those tagged
``database``, and those only when asked (``check --database``, ``migrate``). Building a
tool's schema runs the host's serializers, filtersets and querysets, and some of those read
the database while their fields are built (the content types a field may name, say). So the
checks build schemas inside :func:`database_blocked`: whatever needs the database is left to
be built on first use (or by the ``database``-tagged check), and nothing reaches a database
that may not exist yet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connections

# The connection methods through which every query, and every connect, passes: the ones
# Django's own SimpleTestCase refuses, and ensure_connection, since opening a connection
# to a database that does not exist yet is touching it too.
GUARDED_METHODS = (
    "connect",
    "ensure_connection",
    "temporary_connection",
    "cursor",
    "chunked_cursor",
)


class DatabaseNeeded(Exception):
    """Host code tried to use the database where it may not."""


class DatabaseBlock:
    """What happened while the database was blocked: the aliases something tried to use."""

    def __init__(self) -> None:
        self.attempts: list[str] = []

    @property
    def touched(self) -> bool:
        return bool(self.attempts)


@contextlib.contextmanager
def database_blocked() -> Iterator[DatabaseBlock]:
    """Within this block, in this thread, any use of any database raises
    :class:`DatabaseNeeded`; the block records each attempt, so an attempt that host code
    caught and hid still counts."""
    block = DatabaseBlock()
    restore: list[Callable[[], None]] = []
    try:
        for connection in connections.all(initialized_only=False):
            for name in GUARDED_METHODS:
                restore.append(_guard(connection, name, block))
        yield block
    finally:
        for undo in reversed(restore):
            undo()


def _guard(connection: Any, name: str, block: DatabaseBlock) -> Callable[[], None]:
    alias = connection.alias
    own = name in vars(connection)
    previous = vars(connection).get(name)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        block.attempts.append(alias)
        raise DatabaseNeeded(f"the database {alias!r} was used while it may not be")

    setattr(connection, name, refuse)

    def undo() -> None:
        if own:
            setattr(connection, name, previous)
        else:
            delattr(connection, name)

    return undo
