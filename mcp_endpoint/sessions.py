"""Legacy sessions (``Mcp-Session-Id``), kept in Django's cache so any worker serves any request.

Off by default (``SESSIONS``). When on, a legacy ``initialize`` answers with a new session
id; every later legacy request must carry it (400 without, 404 for an id that is unknown,
expired, ended or opened by another credential; the client then initialises again).
``DELETE`` with the header ends a session. A session remembers what the legacy revisions
only say once, at ``initialize``: the negotiated revision and the client's capabilities,
and later its ``logging/setLevel`` level. With them a tool call can send requests to the
client during the call (elicitation, sampling, roots) on its streamed answer; the client
posts each answer back with the session id, and it reaches the waiting call through the
cache, from whichever process received it.

Sessions expire after ``SESSION_IDLE_SECONDS`` without a request, and one credential holds at
most ``SESSIONS_PER_CREDENTIAL``: opening one more drops the least recently used. The
per-credential index is kept best-effort (two ``initialize`` calls racing on two machines
may both see room), which bounds the count closely without a lock. The 2026-07-28
revision has no sessions: modern requests never look at the header.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from django.core.cache import BaseCache, caches

from mcp_endpoint.mrtr import principal

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.protocol.server import RequestContext

HEADER = "Mcp-Session-Id"
META_HEADER = "HTTP_MCP_SESSION_ID"


@dataclass
class Session:
    """What the server remembers of one legacy client connection."""

    id: str
    owner: str
    protocol_version: str
    capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    log_level: str | None = None
    # URIs of resources/subscribe, for the session's GET stream.
    subscriptions: list[str] = field(default_factory=list)
    # Toolsets enable_toolset added to the session's tools/list, oldest first.
    toolsets: list[str] = field(default_factory=list)
    created: float = 0.0
    last_used: float = 0.0
    store: SessionStore | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "store"}

    def subscribe(self, uri: str) -> None:
        if uri not in self.subscriptions:
            self.subscriptions.append(uri)
            if self.store is not None:
                self.store.save(self)

    def unsubscribe(self, uri: str) -> None:
        if uri in self.subscriptions:
            self.subscriptions.remove(uri)
            if self.store is not None:
                self.store.save(self)

    def set_toolsets(self, names: list[str]) -> None:
        self.toolsets = list(names)
        if self.store is not None:
            self.store.save(self)

    def set_log_level(self, level: str) -> None:
        self.log_level = level
        if self.store is not None:
            self.store.save(self)


class SessionStore:
    """The sessions of one endpoint, in its ``CACHE``.

    A session expires ``SESSION_IDLE_SECONDS`` after its last use by :attr:`clock` (the
    wall clock, which every process of a deployment shares); the cache's own expiry only
    takes away what is no longer read. Tests set ``clock`` to a clock they move.
    """

    clock: Callable[[], float] = time.time

    def __init__(self, endpoint: EndpointLike) -> None:
        self.endpoint = endpoint
        settings = endpoint.settings
        self.cache: BaseCache = caches[settings.CACHE]
        self.idle: int = settings.SESSION_IDLE_SECONDS
        self.limit: int = settings.SESSIONS_PER_CREDENTIAL
        self.prefix = f"mcp_endpoint:session:{endpoint.name}"

    def key(self, session_id: str) -> str:
        return f"{self.prefix}:{session_id}"

    def index_key(self, owner: str) -> str:
        return f"{self.prefix}:owner:{owner}"

    def reply_key(self, session: Session, request_id: str) -> str:
        return f"{self.prefix}:{session.id}:reply:{request_id}"

    # -- lifecycle -----------------------------------------------------------------------

    def create(
        self, context: RequestContext, params: dict[str, Any], protocol_version: str
    ) -> Session:
        owner = principal(context)
        now = self.clock()
        capabilities = params.get("capabilities")
        client_info = params.get("clientInfo")
        session = Session(
            id=secrets.token_urlsafe(32),
            owner=owner,
            protocol_version=protocol_version,
            capabilities=capabilities if isinstance(capabilities, dict) else {},
            client_info=client_info if isinstance(client_info, dict) else None,
            created=now,
            last_used=now,
            store=self,
        )
        live = self.live_sessions(owner)
        while len(live) >= self.limit:
            oldest = live.pop(0)
            self.cache.delete(self.key(oldest.id))
        self.save(session)
        index = [s.id for s in live] + [session.id]
        self.cache.set(self.index_key(owner), index, timeout=self.idle)
        return session

    def live_sessions(self, owner: str) -> list[Session]:
        """The owner's sessions that have not expired, least recently used first."""
        index = self.cache.get(self.index_key(owner)) or []
        found = self.cache.get_many([self.key(i) for i in index])
        sessions = [self.from_dict(found[self.key(i)]) for i in index if self.key(i) in found]
        now = self.clock()
        live = [s for s in sessions if not self.expired(s, now)]
        return sorted(live, key=lambda s: s.last_used)

    def expired(self, session: Session, now: float) -> bool:
        return now - session.last_used >= self.idle

    def load(self, session_id: str, context: RequestContext) -> Session | None:
        """The session, used now, if it exists and belongs to this request's credential."""
        data = self.cache.get(self.key(session_id))
        if not isinstance(data, dict) or data.get("owner") != principal(context):
            return None
        session = self.from_dict(data)
        now = self.clock()
        if self.expired(session, now):
            return None
        if now - session.last_used >= 1:
            # Writing at most once a second keeps concurrent requests from undoing each
            # other's changes (a log level) while still extending the idle expiry.
            session.last_used = now
            self.save(session)
            self.cache.touch(self.index_key(session.owner), timeout=self.idle)
        return session

    def save(self, session: Session) -> None:
        self.cache.set(self.key(session.id), session.to_dict(), timeout=self.idle)

    def end(self, session_id: str, context: RequestContext) -> bool:
        session = self.load(session_id, context)
        if session is None:
            return False
        self.cache.delete(self.key(session_id))
        index = self.cache.get(self.index_key(session.owner)) or []
        self.cache.set(
            self.index_key(session.owner), [i for i in index if i != session_id], self.idle
        )
        return True

    def from_dict(self, data: dict[str, Any]) -> Session:
        return Session(**data, store=self)

    # -- answers the client posts to requests sent during a call ---------------------------

    def store_reply(self, session: Session, message: dict[str, Any]) -> None:
        timeout: int = self.endpoint.settings.CLIENT_REQUEST_TIMEOUT
        self.cache.set(self.reply_key(session, str(message["id"])), message, timeout=timeout)

    def take_reply(self, session: Session, request_id: str) -> dict[str, Any] | None:
        key = self.reply_key(session, request_id)
        reply = self.cache.get(key)
        if reply is None:
            return None
        self.cache.delete(key)
        return reply if isinstance(reply, dict) else None


# -- what the transport consults -------------------------------------------------------------


class SessionRefused(Exception):
    """A legacy request that names no live session of its credential.

    ``status`` is 400 when the request named none and 404 when the one it named is unknown,
    expired, ended or another credential's; the transport answers with it.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def is_client_response(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and "method" not in message
        and ("result" in message or "error" in message)
        and isinstance(message.get("id"), str | int)
    )


def opened_by(
    endpoint: EndpointLike, message: Any, answer: dict[str, Any] | None, context: RequestContext
) -> Session | None:
    """The session an ``initialize`` request opens once it has succeeded; None otherwise."""
    if not isinstance(message, dict) or message.get("method") != "initialize" or answer is None:
        return None
    result = answer.get("result")
    if not isinstance(result, dict):
        return None
    params = message.get("params")
    return SessionStore(endpoint).create(
        context, params if isinstance(params, dict) else {}, result["protocolVersion"]
    )


def enter(endpoint: EndpointLike, session_id: str | None, context: RequestContext) -> Session:
    """Attach the named session to ``context``, or raise :class:`SessionRefused`."""
    if not session_id:
        raise SessionRefused(
            400,
            f"Bad Request: Missing session ID (send the {HEADER} header initialize returned)",
        )
    session = SessionStore(endpoint).load(session_id, context)
    if session is None:
        raise SessionRefused(404, "Not Found: Invalid or expired session ID (initialize again)")
    context.session = session
    context.client_capabilities = session.capabilities
    context.client_info = session.client_info
    context.protocol_version = session.protocol_version
    context.log_level = session.log_level
    return session


def end(endpoint: EndpointLike, session_id: str | None, context: RequestContext) -> None:
    """``DELETE``: end the named session of this credential, or raise :class:`SessionRefused`."""
    if not session_id:
        raise SessionRefused(400, f"Bad Request: send the {HEADER} header to end")
    if not SessionStore(endpoint).end(session_id, context):
        raise SessionRefused(404, "Not Found: Invalid or expired session ID")
