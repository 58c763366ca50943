"""The host's Python log records, sent to the MCP client that made the call.

With ``LOGGING`` on, records of the loggers named in ``CLIENT_LOGGERS`` (``mcp_endpoint``
and its children by default) that are emitted while a streamed call runs, by the code
running it, reach that call's client as ``notifications/message``: at or above the level
the client chose (``logging/setLevel`` in a legacy session, ``_meta`` ``logLevel`` on a
2026-07-28 request). Records of other calls, and of code outside any call, go nowhere new.

A record meant for the server's operator only (why a request state was refused, what a
view answered, what failed inside) carries ``extra=SERVER_ONLY`` and never reaches a
client, whatever its logger and level: a client would learn from it what it got wrong.

A Python logger still filters by its own level first: a record the logger drops (its
effective level is above the record's) never reaches this handler, so a host that wants
``debug`` messages to reach clients sets the logger's level accordingly.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Iterable, Iterator
from typing import Any

# The channel of the call the current thread (or task) runs, if it streams.
current_channel: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "mcp_endpoint_client_channel", default=None
)

# The ``extra`` of a record that stays in the server's log.
SERVER_ONLY_ATTRIBUTE = "mcp_server_only"
SERVER_ONLY: dict[str, Any] = {SERVER_ONLY_ATTRIBUTE: True}

# Python levels as RFC 5424 severities, the vocabulary of notifications/message.
PYTHON_TO_MCP = (
    (logging.CRITICAL, "critical"),
    (logging.ERROR, "error"),
    (logging.WARNING, "warning"),
    (logging.INFO, "info"),
    (logging.NOTSET, "debug"),
)


def mcp_level(levelno: int) -> str:
    for threshold, name in PYTHON_TO_MCP:
        if levelno >= threshold:
            return name
    return "debug"


class ClientLogHandler(logging.Handler):
    """Sends a record to the client of the call that emitted it (see the module docstring)."""

    def emit(self, record: logging.LogRecord) -> None:
        channel = current_channel.get()
        if channel is None or channel.closed.is_set():
            return
        if getattr(record, SERVER_ONLY_ATTRIBUTE, False):
            return
        # The handler is installed once per process; each endpoint names its own loggers.
        if not named(record.name, channel.endpoint.settings.CLIENT_LOGGERS):
            return
        # The record's text only, never its traceback: a client is not an operator.
        channel.log(mcp_level(record.levelno), record.getMessage(), logger=record.name)


def named(logger_name: str, names: Iterable[str]) -> bool:
    return any(logger_name == n or logger_name.startswith(n + ".") for n in names)


_handler = ClientLogHandler()
# The loggers the handler was attached to (what a failing test shows).
_installed: set[str] = set()
_lock = threading.Lock()


def install(logger_names: Iterable[str]) -> None:
    """Attach the handler to these loggers, each once: looked for on the logger itself
    every time, since configuring logging again (``logging.config.dictConfig``, which
    ``django.setup()`` runs) takes the handlers off every logger it names."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if _handler not in logger.handlers:
            with _lock:
                if _handler not in logger.handlers:
                    logger.addHandler(_handler)
        _installed.add(name)


@contextlib.contextmanager
def sending_to(channel: Any) -> Iterator[None]:
    """Records emitted inside this block go to ``channel``'s client."""
    token = current_channel.set(channel)
    try:
        yield
    finally:
        current_channel.reset(token)
