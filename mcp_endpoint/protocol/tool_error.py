"""A failure inside a tool: answered as a result with ``isError: true``, not a JSON-RPC error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_endpoint.protocol.content import Text, ToolResult

# The code of a call whose writes may or may not have been committed (the connection was
# lost during the commit): the client checks before it calls again.
OUTCOME_UNKNOWN = "outcome_unknown"


class ToolError(Exception):
    """A failure inside a tool, answered as a result with ``isError: true``.

    ``code`` is one of the codes the error table names (``invalid_arguments``,
    ``not_found``, ``permission_denied``, ``insufficient_scope``, ``conflict``,
    ``throttled``, ``internal_error``, ``outcome_unknown``) or the host's own; ``details`` go into
    ``structuredContent.error`` beside the code and the message.
    """

    def __init__(self, message: str, code: str = "tool_error", **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details

    @classmethod
    def outcome_unknown(cls, tool_name: str) -> ToolError:
        """The error of a call whose writes may or may not have been committed."""
        return cls(
            f"The outcome of this call of {tool_name} is unknown: the database connection was "
            "lost while its changes were being saved, so they may or may not have been. Check "
            "whether they were (read the object back, or list them) before you call it again.",
            code=OUTCOME_UNKNOWN,
        )

    def to_result(self) -> ToolResult:
        error = {"code": self.code, "message": self.message, **self.details}
        return ToolResult(content=[Text(self.render())], structured={"error": error}, is_error=True)

    def render(self) -> str:
        lines = [f"Error ({self.code}): {self.message}"]
        fields = self.details.get("fields")
        if isinstance(fields, Mapping):
            for name, messages in fields.items():
                text = (
                    "; ".join(str(m) for m in messages)
                    if isinstance(messages, list)
                    else str(messages)
                )
                lines.append(f"- {name}: {text}")
        for key in ("required_scopes", "granted_scopes", "retry_after"):
            if key in self.details:
                lines.append(f"{key}: {self.details[key]}")
        return "\n".join(lines)
