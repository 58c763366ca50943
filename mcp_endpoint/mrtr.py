"""Multi round-trip requests on the Django side: signed request state, asking, confirming.

- :class:`SignedRequestState` seals the ``requestState`` of an input-required result with
  :mod:`django.core.signing` (HMAC with ``SECRET_KEY``), bound to the endpoint, the method,
  the tool, prompt or URI, a digest of the arguments, the credential and an expiry; each
  state carries a nonce that is recorded in the cache when the state is used, so a state
  works once. Anything else is refused with ``-32602``.
- :func:`confirmation_asked`, :func:`confirmation_request` and :func:`confirm` ask the
  user to confirm a destructive tool before it runs (``CONFIRM_DESTRUCTIVE_TOOLS``), through
  elicitation, and only when the client declared elicitation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.core import signing
from django.core.cache import caches

from mcp_endpoint import client_logging
from mcp_endpoint.context import ask, can_ask
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.content import compact_json
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.mrtr import (
    INVALID_STATE,
    InputRequired,
    elicitation,
)
from mcp_endpoint.tools import ToolError

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.protocol.server import RequestContext
    from mcp_endpoint.tools import Tool

logger = logging.getLogger("mcp_endpoint.mrtr")

SALT = "mcp_endpoint.request_state"
STATE_VERSION = 1
CONFIRM_KEY = "confirm"


def request_target(method: str, params: Mapping[str, Any]) -> tuple[str, str]:
    """What a state is bound to: the tool, prompt or URI, and a digest of the arguments."""
    arguments: Any = {}
    if method == "resources/read":
        target = str(params.get("uri", ""))
    else:
        target, arguments = str(params.get("name", "")), params.get("arguments") or {}
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return target, hashlib.sha256(canonical.encode()).hexdigest()[:32]


def principal(context: RequestContext) -> str:
    """A digest naming the caller: the credential and its user, or nobody."""
    credential = context.credential
    if credential is None:
        identity = "anonymous"
    else:
        auth_pk = getattr(credential.auth, "pk", None)
        user_pk = getattr(credential.user, "pk", None)
        identity = f"{credential.label()}|{auth_pk}|{user_pk}"
        if credential.anonymous:
            # No user tells one product token from another: the token itself does.
            identity = f"{identity}|{credential.ident()}"
    return hashlib.sha256(f"{SALT}|{identity}".encode()).hexdigest()[:32]


class SignedRequestState:
    """The endpoint's :class:`~mcp_endpoint.protocol.mrtr.RequestStateCodec`.

    The state is signed, not encrypted: a client can read what a handler keeps in it, so
    a handler keeps nothing there it would not show the caller.
    """

    def __init__(self, endpoint: EndpointLike) -> None:
        self.endpoint = endpoint

    @property
    def ttl(self) -> int:
        ttl: int = self.endpoint.settings.REQUEST_STATE_TTL
        return ttl

    def seal(self, method: str, params: dict[str, Any], state: Any, context: RequestContext) -> str:
        target, digest = request_target(method, params)
        payload = {
            "v": STATE_VERSION,
            "e": self.endpoint.name,
            "m": method,
            "t": target,
            "a": digest,
            "p": principal(context),
            "n": secrets.token_urlsafe(16),
            "s": state,
        }
        return signing.dumps(payload, salt=SALT, compress=True)

    def open(self, method: str, params: dict[str, Any], token: str, context: RequestContext) -> Any:
        try:
            payload = signing.loads(token, salt=SALT, max_age=self.ttl)
        except signing.SignatureExpired:
            return self.refuse(method, "expired")
        except (signing.BadSignature, ValueError):
            return self.refuse(method, "signature")
        if not isinstance(payload, dict) or payload.get("v") != STATE_VERSION:
            return self.refuse(method, "malformed")
        target, digest = request_target(method, params)
        if (payload.get("e"), payload.get("m")) != (self.endpoint.name, method):
            return self.refuse(method, "minted for another endpoint or method")
        if (payload.get("t"), payload.get("a")) != (target, digest):
            return self.refuse(method, "minted for another call")
        if payload.get("p") != principal(context):
            return self.refuse(method, "minted for another credential")
        nonce = payload.get("n")
        cache = caches[self.endpoint.settings.CACHE]
        if not isinstance(nonce, str) or not cache.add(
            f"mcp_endpoint:state:{self.endpoint.name}:{nonce}", 1, timeout=self.ttl + 60
        ):
            return self.refuse(method, "used before")
        return payload.get("s")

    def refuse(self, method: str, reason: str) -> Any:
        # The reason goes to the log only: a client learns nothing about what it got wrong.
        logger.warning(
            "requestState refused on %s: %s", method, reason, extra=client_logging.SERVER_ONLY
        )
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS, INVALID_STATE, {"reason": "invalid_request_state"}
        )


# -- confirming destructive tools --------------------------------------------------------------


def confirmation_request(
    tool: Tool, arguments: Mapping[str, Any], target: tuple[str, str] | None = None
) -> dict[str, Any]:
    """The question before a destructive call: what it does to which object, named as a
    person would (``Delete task: the task “Write copy”.``), else by its arguments."""
    what = tool.title or tool.name
    if target is not None:
        kind, name = target
        shown = f": the {kind} “{name[:200]}”"
    elif arguments and all(
        isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in arguments.values()
    ):
        shown = " (" + ", ".join(f"{k} {v}" for k, v in arguments.items())[:300] + ")"
    elif arguments:
        shown = " " + compact_json(dict(arguments))
        if len(shown) > 300:
            shown = shown[:300] + "…"
    else:
        shown = ""
    return elicitation(
        f"{what}{shown}. This cannot be undone. Go ahead?",
        {
            "type": "object",
            "properties": {
                "confirm": {
                    "type": "boolean",
                    "title": "Go ahead",
                    "description": f"Run {tool.name} with these arguments",
                }
            },
            "required": ["confirm"],
        },
    )


def confirmation_asked(context: RequestContext) -> bool:
    """Whether the user is asked before a destructive tool runs on this request, the
    setting being on (the executor asks the tool what it acts on only then).

    A client that declared it has no elicitation is never asked (its own UI sees the tool's
    ``destructiveHint``). A legacy request without a session is refused: its client said at
    ``initialize`` whether it can be asked, but nothing kept that answer, and running the
    tool unasked would skip a confirmation the client may have promised its user. So is a
    client that can be asked on a streamed answer only, when this one is not streamed.
    """
    if not context.modern and context.session is None:
        raise ToolError(
            "Not done: this tool needs the user's confirmation, and this server cannot "
            "tell whether this client can ask for it (it keeps no record of this "
            "connection's initialize). Nothing was changed. What works: a client of the "
            "2026-07-28 revision, or the server's legacy sessions (SESSIONS) turned on.",
            code="confirmation_unavailable",
        )
    if "elicitation" not in context.client_capabilities:
        return False
    if not can_ask(context, "elicitation"):
        # Declared, but this answer cannot carry a request to the client (no SSE).
        raise ToolError(
            "Not done: this tool needs the user's confirmation, which can only be asked "
            "on a streamed answer: send the call with Accept: application/json, "
            "text/event-stream. Nothing was changed.",
            code="confirmation_unavailable",
        )
    return True


def confirm(question: dict[str, Any], name: str, context: RequestContext) -> None:
    """Ask ``question`` (:func:`confirmation_request`) before the tool ``name`` runs.

    On a 2026-07-28 request the question goes out as an input-required result whose signed
    state names the tool and binds the arguments; the answer counts only on a retry
    carrying that state. In a legacy session it is asked during the call. Anything but an
    accepted ``confirm: true`` leaves the data alone.
    """
    answer: dict[str, Any] | None
    if not context.modern:
        answer = ask(context, {CONFIRM_KEY: question})[CONFIRM_KEY]
    else:
        state = context.request_state
        answer = context.input_responses.get(CONFIRM_KEY)
        if not (isinstance(state, dict) and state.get(CONFIRM_KEY) == name) or not answer:
            raise InputRequired({CONFIRM_KEY: question}, {CONFIRM_KEY: name})
    action = answer.get("action")
    content = answer.get("content")
    if action == "accept" and isinstance(content, dict) and content.get("confirm") is True:
        return
    raise ToolError(
        f"Not done: the user did not confirm {name} (nothing was changed).",
        code="not_confirmed",
        action=action if isinstance(action, str) else None,
    )
