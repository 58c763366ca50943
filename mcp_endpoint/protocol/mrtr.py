"""Multi round-trip requests (2026-07-28, SEP-2322): input-required results and their retries.

A tool, a prompt or a resource read that needs something from the client (an answer from
the user, a completion from the client's model, the client's roots) raises
:class:`InputRequired`. The server answers ``resultType: "input_required"`` with the
``inputRequests`` and a ``requestState``; the client asks its user or model and sends the
same request again, with ``inputResponses`` keyed like the requests and the
``requestState`` echoed. The state is sealed by a :class:`RequestStateCodec` (the Django
side signs it and binds it to the credential and to the call) and is opened again before
the retry reaches the handler, which then finds the answers and its own state on the
:class:`~mcp_endpoint.protocol.request_context.RequestContext`.

This module is transport-free: dicts in, dicts out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError

if TYPE_CHECKING:
    from mcp_endpoint.protocol.request_context import RequestContext

# The only requests whose results may be input-required.
INPUT_REQUIRED_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})

# The client capability each kind of input request needs.
CAPABILITY_OF = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}

INVALID_STATE = "Invalid or expired requestState"


class InputRequired(Exception):
    """Raised by a handler that needs input from the client before it can answer.

    ``requests`` maps keys of the handler's choosing to input requests
    (``{"method": "elicitation/create", "params": {...}}``; see :func:`elicitation`,
    :func:`sampling` and :func:`list_roots`). ``state`` is any JSON value the handler
    wants back on the retry; it is sealed before it leaves the server.
    """

    def __init__(self, requests: Mapping[str, dict[str, Any]], state: Any = None) -> None:
        super().__init__("input required: " + ", ".join(requests))
        self.requests = dict(requests)
        self.state = state


class MissingClientCapability(ProtocolError):
    """``-32021``: the request needs a client capability it did not declare."""

    def __init__(self, *capabilities: str, message: str | None = None) -> None:
        names = ", ".join(capabilities)
        super().__init__(
            jsonrpc.MISSING_CAPABILITY,
            message or f"Missing required client capability: {names}",
            {"requiredCapabilities": {name: {} for name in capabilities}},
        )
        self.capabilities = capabilities


class RequestStateCodec(Protocol):
    """Seals the state an input-required result carries, and opens it on the retry.

    ``open`` raises :class:`ProtocolError` (``-32602``) for anything it did not seal for
    this very request (same method, target, arguments and caller), or that has expired
    or was used before.
    """

    def seal(
        self, method: str, params: dict[str, Any], state: Any, context: RequestContext
    ) -> str: ...

    def open(
        self, method: str, params: dict[str, Any], token: str, context: RequestContext
    ) -> Any: ...


# -- input requests ------------------------------------------------------------------------


def elicitation(message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
    """An ``elicitation/create`` input request (a form: flat primitive properties)."""
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": requested_schema},
    }


def sampling(text: str, max_tokens: int = 100, **params: Any) -> dict[str, Any]:
    """A ``sampling/createMessage`` input request with one user message."""
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens,
        **params,
    }
    return {"method": "sampling/createMessage", "params": body}


def list_roots() -> dict[str, Any]:
    """A ``roots/list`` input request."""
    return {"method": "roots/list", "params": {}}


def missing_capabilities(
    requests: Mapping[str, dict[str, Any]], declared: Mapping[str, Any]
) -> list[str]:
    """The capabilities ``requests`` need that the client did not declare, in order."""
    missing: list[str] = []
    for request in requests.values():
        capability = CAPABILITY_OF.get(str(request.get("method")))
        if capability and capability not in declared and capability not in missing:
            missing.append(capability)
    return missing


# -- the round, as the server sees it ------------------------------------------------------


def read_round(
    method: str,
    params: dict[str, Any],
    context: RequestContext,
    codec: RequestStateCodec | None,
) -> None:
    """Check a retry's ``inputResponses`` and ``requestState``; put them on ``context``.

    Malformed input responses (not an object of objects) are a protocol error, ``-32602``.
    A state is opened by ``codec``, which refuses anything tampered with, expired, replayed
    or minted for another caller or call.
    """
    if "inputResponses" in params:
        responses = params["inputResponses"]
        if not isinstance(responses, dict) or not all(
            isinstance(v, dict) for v in responses.values()
        ):
            raise ProtocolError(
                jsonrpc.INVALID_PARAMS,
                'Invalid params: "inputResponses" must map each input key to a result object',
            )
        context.input_responses = dict(responses)
    token = params.get("requestState")
    if token is None:
        return
    if not isinstance(token, str) or codec is None:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, INVALID_STATE)
    context.request_state = codec.open(method, params, token, context)


def input_required_result(
    exc: InputRequired,
    method: str,
    params: dict[str, Any],
    context: RequestContext,
    codec: RequestStateCodec | None,
) -> dict[str, Any]:
    """The ``InputRequiredResult`` for ``exc``, its state sealed."""
    if not exc.requests and exc.state is None:
        raise ValueError("an input-required result needs input requests or a state")
    body: dict[str, Any] = {"resultType": "input_required"}
    if exc.requests:
        body["inputRequests"] = exc.requests
    if exc.state is not None or codec is not None:
        # A sealed state even when the handler keeps none: it binds the retry to this call.
        if codec is None:
            raise ValueError("no request-state codec to seal the state with")
        body["requestState"] = codec.seal(method, params, exc.state, context)
    return body


def no_round_possible(method: str, exc: InputRequired) -> dict[str, Any]:
    """The answer when a handler needs input the request cannot carry.

    Only 2026-07-28 requests can be retried with input responses (a legacy client answers
    such questions as requests from the server, during the call, in a session). A tool
    call answers with a tool error the model can read; other methods with ``-32602``.
    """
    wanted = ", ".join(sorted({str(r.get("method")) for r in exc.requests.values()}))
    text = (
        f"This needs input from the client ({wanted or 'a retry'}), which this request "
        "cannot provide: use the 2026-07-28 revision, or a session with a client that "
        "declares the capability."
    )
    if method == "tools/call":
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"error": {"code": "input_unavailable", "message": text}},
            "isError": True,
        }
    raise ProtocolError(jsonrpc.INVALID_PARAMS, text)
