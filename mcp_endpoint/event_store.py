"""Resumable streams: a streamed answer's events, kept in the cache for a short window.

In a legacy session (the revisions that define resumption, 2025-03-26 to 2025-11-25) every
event of a streamed answer carries an id, ``<stream>.<n>``, and is also written to the
endpoint's ``CACHE`` for ``STREAM_RESUME_SECONDS``. A client whose stream broke (or that
the server asked to poll: the tool closed the stream, see ``Context.close_stream``)
sends ``GET`` with ``Last-Event-ID`` and its session id, to any worker; that worker replays
the events after the id from the cache, then follows the stream until its answer. With a
shared cache (Redis) that works across processes and machines.

The only writer of a stream is the call that produces it, so the sequence is kept in
memory and each event is one cache entry; a reader asks for the entries after the one it
has. A stream is bound to the session that opened it: another session cannot read it.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.cache import BaseCache, caches

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike

EVENT_ID = re.compile(r"^(?P<stream>[A-Za-z0-9_-]{8,64})\.(?P<seq>\d{1,9})$")
# How long a client waits before it reconnects after the server closed a stream.
RETRY_MS = 1000


class UnknownStream(Exception):
    """``Last-Event-ID`` names no stream this session may resume (status for the answer)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class StoredEvent:
    event_id: str
    seq: int
    message: dict[str, Any] | None
    final: bool


class EventStore:
    """The resumable streams of one endpoint, in its ``CACHE``."""

    def __init__(self, endpoint: EndpointLike) -> None:
        settings = endpoint.settings
        self.cache: BaseCache = caches[settings.CACHE]
        self.window: int = settings.STREAM_RESUME_SECONDS
        self.prefix = f"mcp_endpoint:stream:{endpoint.name}"

    def key(self, stream_id: str, part: str | int) -> str:
        return f"{self.prefix}:{stream_id}:{part}"

    def open(self, owner: str) -> str:
        """A new stream of ``owner`` (a session id); its id."""
        stream_id = secrets.token_urlsafe(12)
        self.cache.set(self.key(stream_id, "owner"), owner, timeout=self.window)
        return stream_id

    def append(
        self, stream_id: str, seq: int, message: dict[str, Any] | None, *, final: bool
    ) -> str:
        entries: dict[str, Any] = {
            self.key(stream_id, seq): {"message": message, "final": final},
            self.key(stream_id, "last"): seq,
        }
        if final:
            entries[self.key(stream_id, "ended")] = True
        self.cache.set_many(entries, timeout=self.window)
        # A stream that keeps producing keeps its owner for as long as its events.
        self.cache.touch(self.key(stream_id, "owner"), timeout=self.window)
        return event_id(stream_id, seq)

    def locate(self, last_event_id: str, owner: str) -> tuple[str, int]:
        """The stream and position ``Last-Event-ID`` names, if ``owner`` may resume it."""
        found = EVENT_ID.match(last_event_id.strip())
        if found is None:
            raise UnknownStream(400, "Bad Request: Last-Event-ID is not an event id of this server")
        stream_id, seq = found["stream"], int(found["seq"])
        if self.cache.get(self.key(stream_id, "owner")) != owner:
            raise UnknownStream(
                404, "Not Found: no stream of this session to resume (it ended or expired)"
            )
        return stream_id, seq

    def after(self, stream_id: str, seq: int) -> list[StoredEvent]:
        """The events after ``seq`` that are stored, in order (a gap ends the list)."""
        last = self.cache.get(self.key(stream_id, "last"))
        if not isinstance(last, int) or last <= seq:
            return []
        keys = [self.key(stream_id, n) for n in range(seq + 1, last + 1)]
        found = self.cache.get_many(keys)
        events = []
        for n, key in zip(range(seq + 1, last + 1), keys, strict=True):
            entry = found.get(key)
            if not isinstance(entry, dict):
                break
            events.append(
                StoredEvent(event_id(stream_id, n), n, entry.get("message"), bool(entry["final"]))
            )
        return events

    def alive(self, stream_id: str) -> bool:
        """Whether the stream may still produce: not ended, not expired."""
        found = self.cache.get_many([self.key(stream_id, "owner"), self.key(stream_id, "ended")])
        return self.key(stream_id, "owner") in found and self.key(stream_id, "ended") not in found


def event_id(stream_id: str, seq: int) -> str:
    return f"{stream_id}.{seq}"
