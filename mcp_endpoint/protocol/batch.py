"""JSON-RPC batches, a feature of the 2025 revisions only: when a batch is refused as a
whole, and the answers in place of the messages it does not run.

The transport runs the messages one by one; these rules say nothing of HTTP.
"""

from __future__ import annotations

from typing import Any

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.versions import MODERN, era_of


def batch_problem(
    batch: list[Any], header_version: str | None, max_size: int
) -> ProtocolError | None:
    """Why ``batch`` is refused as a whole (empty, over ``max_size``, or holding a message
    of the 2026-07-28 revision, which has no batches), or None."""
    if not batch:
        return ProtocolError(jsonrpc.INVALID_REQUEST, "Invalid Request: empty batch")
    if len(batch) > max_size:
        return ProtocolError(
            jsonrpc.INVALID_REQUEST,
            f"Invalid Request: a batch holds at most {max_size} messages, this one "
            f"{len(batch)}; send the messages in smaller batches",
            {"max_batch_size": max_size},
        )
    if any(era_of(m, header_version) == MODERN for m in batch):
        return ProtocolError(
            jsonrpc.INVALID_REQUEST,
            "Invalid Request: batches are not part of the 2026-07-28 revision",
        )
    return None


def is_notification(message: Any) -> bool:
    return isinstance(message, dict) and "id" not in message


def not_run(message: Any, budget: float) -> dict[str, Any]:
    """The answer to a batch message the batch's time budget left no time for."""
    return jsonrpc.error(
        jsonrpc.request_id_of(message),
        jsonrpc.REQUEST_REFUSED,
        f"Not run: the batch spent its time budget of {budget:g} s before this message; "
        "send it again, alone or in a smaller batch",
        {"batch_time_budget": budget},
    )


def rate_limited(message: Any, seconds: int) -> dict[str, Any]:
    """The answer to a batch message over the rate limit, in its place: the others run."""
    return jsonrpc.error(
        jsonrpc.request_id_of(message),
        jsonrpc.REQUEST_REFUSED,
        f"Too Many Requests: rate limit reached, retry in {seconds} s",
        {"retry_after": seconds},
    )
