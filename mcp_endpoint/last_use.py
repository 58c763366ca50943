"""When each API key and OAuth access token was last used, written after the answer is sent.

Authentication only reads: the classes of :mod:`mcp_endpoint.authentication` name the key
or token they accepted (:func:`note_key_use`, :func:`note_token_use`, which touch nothing
but this thread's memory), and the UPDATEs run when the request finishes (Django's
``request_finished``, sent once the server has the response), so a request never waits
for them and a refused or failing request writes nothing either way. (Under
:mod:`mcp_endpoint.asgi` a complete answer to an endpoint is closed in its one thread
hand-off, just before it is sent: that once-a-minute write is then waited for.) At most one write a
minute per credential: requests whose credential was recorded less than a minute ago (as
its row says, or for a cached key as this process remembers) do not write at all.

The admin shows a key's ``last_used``; the account page of connected applications shows a
token's ``updated`` as the application's last use (the toolkit keeps no last-use time, and
its ``updated`` column otherwise moves only when a token is written, which a use never
does).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import datetime
from typing import Any

from django.core.signals import request_finished
from django.db import DatabaseError
from django.utils import timezone

from mcp_endpoint import client_logging
from mcp_endpoint.database import releasing_new_connections
from mcp_endpoint.models import LAST_USED_RESOLUTION, AbstractAPIKey

logger = logging.getLogger("mcp_endpoint.authentication")

# When this process last recorded each key's use (by digest), for keys read from the cache,
# whose last_used is as old as the entry: without it each request would write.
_last_written: dict[str, datetime] = {}
_pending = threading.local()


def note_key_use(key: AbstractAPIKey, *, cached: bool = False) -> None:
    """Have ``key``'s ``last_used`` written when the request finishes, unless it was
    written less than a minute ago."""
    now = timezone.now()
    seen = key.last_used
    if cached:
        remembered = _last_written.get(key.digest)
        seen = max(seen, remembered) if seen and remembered else (seen or remembered)
    if seen is not None and now - seen < LAST_USED_RESOLUTION:
        return
    _last_written[key.digest] = now
    _pending.__dict__.setdefault("uses", []).append(key)


def note_token_use(token: Any) -> None:
    """Have the access token's ``updated`` moved to now when the request finishes, unless
    it moved less than a minute ago."""
    updated = getattr(token, "updated", None)
    if token is None or updated is None or timezone.now() - updated < LAST_USED_RESOLUTION:
        return
    _pending.__dict__.setdefault("uses", []).append(token)


def write_last_use(**kwargs: Any) -> None:
    """Run the UPDATEs the notes put off; connected to ``request_finished``."""
    if not _pending.__dict__.get("uses") or _in_event_loop():
        # Sent from inside an event loop (an async test client closing a stream), the ORM
        # may not run: the uses wait for the next request that finishes in a thread.
        return
    pending: list[Any] = _pending.__dict__.pop("uses")
    # Django's receiver has closed the request's connections already (it runs first): the
    # connection these UPDATEs open is closed here, or no one would close it under ASGI.
    with releasing_new_connections():
        for used in pending:
            try:
                if isinstance(used, AbstractAPIKey):
                    used.touch()
                else:
                    touch_access_token(used)
            except DatabaseError:
                # The answer is sent already; the time of last use may wait for the next one.
                logger.warning(
                    "could not record the last use of %s",
                    f"API key {used.prefix}"
                    if isinstance(used, AbstractAPIKey)
                    else f"access token {used.pk}",
                    extra=client_logging.SERVER_ONLY,
                )


def touch_access_token(token: Any) -> None:
    """Move the token's ``updated`` to now in one conditional UPDATE, at most once a minute."""
    now = timezone.now()
    type(token)._default_manager.filter(pk=token.pk, updated__lt=now - LAST_USED_RESOLUTION).update(
        updated=now
    )
    token.updated = now


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


request_finished.connect(write_last_use, dispatch_uid="mcp_endpoint.authentication.last_use")
