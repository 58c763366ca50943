"""Database connections: kept out of reach for the system checks, handed back after work
done outside a request.

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
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

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


_R = TypeVar("_R")


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


# -- handing back connections opened outside a request ---------------------------------------


@contextlib.contextmanager
def releasing_new_connections() -> Iterator[None]:
    """Hand back, at the end of the block, the connections the block opened, as Django
    hands back a request's at ``request_finished``: closed, unless ``CONN_MAX_AGE`` keeps
    them (then kept, one per thread, for the thread's next use).

    For database work that no request's end follows in the same thread: a
    ``request_finished`` receiver (Django's own, which closes the request's connections,
    runs before any app's, so whatever a later one opens would stay open; under ASGI the
    request's thread is not reused and nothing ever closes it), and a stream's work
    between its events. Connections open before the block are left as they are: the
    request's own, or a test's transaction.
    """
    open_before = {
        c.alias for c in connections.all(initialized_only=True) if c.connection is not None
    }
    try:
        yield
    finally:
        for connection in connections.all(initialized_only=True):
            if connection.connection is not None and connection.alias not in open_before:
                connection.close_if_unusable_or_obsolete()


def release_request_connections() -> None:
    """Hand back the request's connections now, as ``request_finished`` will: for a
    response that streams long after its view has returned, so an open stream does not
    hold a connection while it waits. One inside a transaction (a test's) is left alone."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.in_atomic_block:
            connection.close_if_unusable_or_obsolete()


def released(function: Callable[..., _R]) -> Callable[..., _R]:
    """``function``, run within :func:`releasing_new_connections`: for a stream's work
    between its events."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> _R:
        with releasing_new_connections():
            return function(*args, **kwargs)

    return run
