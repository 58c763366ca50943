"""What a method handler knows about one request besides its params."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp_endpoint.protocol.versions import LEGACY, MODERN


@dataclass
class RequestContext:
    """What a method handler knows about the request besides its params.

    ``credential`` and ``transport`` are opaque here: the credential is whatever the
    transport authenticated (it has ``scopes``), the transport object is handed through to
    tools that need it (the DRF adapter builds its inner request from it).
    """

    era: str = LEGACY
    protocol_version: str = ""
    credential: Any = None
    transport: Any = None
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    client_info: dict[str, Any] | None = None
    progress_token: str | int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # A multi round-trip retry (2026-07-28): the client's answers and the opened state.
    input_responses: dict[str, Any] = field(default_factory=dict)
    request_state: Any = None
    # The lowest log level the client wants (modern: _meta logLevel; legacy: its session's).
    log_level: str | None = None
    # Where notifications (and, in a legacy session, requests to the client) go during the
    # request: a streamed answer's channel, what stands in for one when a call that wanted
    # to stream could not (it refuses requests to the client, saying why), or None when the
    # answer is plain JSON.
    channel: Any = None
    # The legacy session the request belongs to, when sessions are on.
    session: Any = None
    # Opaque keys of the rate limits the transport already counted this request against,
    # so that the host code a tool runs does not count it a second time.
    counted_throttle_keys: frozenset[str] = frozenset()
    # The task this call runs as, on a task worker (None in a request): it says whether the
    # client cancelled, and keeps the progress the call reports.
    task: Any = None
    # Which of the endpoint's tools this connection is served (toolsets, read-only mode),
    # as the transport read it from the URL or headers; None for what the endpoint serves.
    selection: Any = None
    # Notifications the answer carries before it, when it is not already a stream (a legacy
    # client that accepts SSE gets them on the answer's stream; others never hear them).
    notifications: list[dict[str, Any]] = field(default_factory=list)

    @property
    def modern(self) -> bool:
        return self.era == MODERN
