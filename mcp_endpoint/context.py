"""The context a tool, resource or prompt function receives when it asks for one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp_endpoint.protocol.server import RequestContext

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser
    from django.http import HttpRequest

    from mcp_endpoint.authentication import Credential
    from mcp_endpoint.endpoint import Endpoint


class Context:
    """Who is calling and through what, for one tool call, resource read or prompt.

    A function asks for it with a parameter annotated ``Context``::

        @site.tool()
        def whoami(context: Context) -> str:
            return context.user.get_username()
    """

    def __init__(self, endpoint: Endpoint, request: RequestContext) -> None:
        self.endpoint = endpoint
        self.request_context = request
        self._progress: Callable[[float, float | None, str | None], None] | None = None
        self._log: Callable[[str, Any], None] | None = None

    @property
    def credential(self) -> Credential | None:
        credential: Credential | None = self.request_context.credential
        return credential

    @property
    def user(self) -> AbstractBaseUser | AnonymousUser:
        if self.credential is not None:
            return self.credential.user
        from django.contrib.auth.models import AnonymousUser

        return AnonymousUser()

    @property
    def http_request(self) -> HttpRequest | None:
        """The Django request that carried the MCP message (None outside HTTP)."""
        request: HttpRequest | None = self.request_context.transport
        return request

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.request_context.client_capabilities

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` when the client asked for it; a no-op otherwise."""
        if self._progress is not None and self.request_context.progress_token is not None:
            self._progress(progress, total, message)

    def log(self, level: str, data: Any) -> None:
        """Send ``notifications/message`` on a streamed answer; a no-op otherwise."""
        if self._log is not None:
            self._log(level, data)
