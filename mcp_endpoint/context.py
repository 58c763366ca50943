"""The context a tool, resource or prompt function receives when it asks for one."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_endpoint.protocol.mrtr import InputRequired, MissingClientCapability, missing_capabilities
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.protocol.tool_error import ToolError

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser
    from django.http import HttpRequest

    from mcp_endpoint.credential import Credential
    from mcp_endpoint.interfaces import EndpointLike


class Context:
    """Who is calling and through what, for one tool call, resource read or prompt.

    A function asks for it with a parameter annotated ``Context``::

        @site.tool()
        def whoami(context: Context) -> str:
            return context.user.get_username()
    """

    def __init__(self, endpoint: EndpointLike, request: RequestContext) -> None:
        self.endpoint = endpoint
        self.request_context = request
        self._progress: Callable[[float, float | None, str | None], None] | None = None
        self._log: Callable[[str, Any], None] | None = None
        # A streamed answer's channel carries progress and log messages (streaming.py).
        channel = request.channel
        if channel is not None:
            self._progress = channel.progress
            self._log = channel.log
        # A call running as a task keeps its progress on the task, for tasks/get.
        if request.task is not None:
            self._progress = request.task.progress

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
        """Send ``notifications/progress`` when the client asked for it; a no-op otherwise.

        A call running as a task keeps it as the task's ``statusMessage`` instead.
        """
        if self._progress is None:
            return
        if self.request_context.progress_token is not None or self.request_context.task:
            self._progress(progress, total, message)

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled the task this call runs as (False outside a task).

        A long-running tool looks now and then and stops early; what it did is not kept.
        """
        task = self.request_context.task
        return bool(task is not None and task.cancelled())

    def log(self, level: str, data: Any) -> None:
        """Send ``notifications/message`` on a streamed answer; a no-op otherwise."""
        if self._log is not None:
            self._log(level, data)

    def close_stream(self) -> bool:
        """Close the call's SSE stream now and keep running: the client polls.

        The client reconnects with ``GET`` and ``Last-Event-ID`` (to any worker) and gets
        what the call sent since, then the rest. Only a streamed answer in a legacy session
        can be resumed; elsewhere this returns False and the stream stays open. A call of
        a function that names this method in its code runs on a stream whenever its client
        reads streams; one that reaches it through a helper is registered ``polls=True``.
        """
        channel = self.request_context.channel
        return bool(channel is not None and channel.close_stream())

    # -- input from the client (multi round-trip requests) ---------------------------------

    @property
    def input_responses(self) -> dict[str, Any]:
        """The answers a 2026-07-28 retry carries, keyed as the input requests were."""
        return self.request_context.input_responses

    @property
    def request_state(self) -> Any:
        """The state this handler kept in its last input-required result (verified)."""
        return self.request_context.request_state

    def ask(self, requests: dict[str, dict[str, Any]], state: Any = None) -> dict[str, Any]:
        """The client's answers to input requests (elicitation, sampling, roots), by key.

        On a 2026-07-28 request this returns the answers the retry carries, or ends the
        call with an input-required result that asks for the missing ones (``state``
        comes back as :attr:`request_state`). In a legacy session whose answer streams,
        the requests go to the client during the call. A client that did not declare the
        capability a request needs is refused (``-32021``) rather than asked.
        """
        return ask(self.request_context, requests, state)

    def require_capabilities(self, *capabilities: str) -> None:
        """Refuse the call (``-32021``) unless the client declared these capabilities."""
        require_capabilities(self.request_context, *capabilities)


# -- asking the client ------------------------------------------------------------------------


def ask(
    context: RequestContext, requests: Mapping[str, dict[str, Any]], state: Any = None
) -> dict[str, dict[str, Any]]:
    """The client's answers to ``requests``, keyed alike; see :meth:`Context.ask`."""
    missing = missing_capabilities(requests, context.client_capabilities)
    if context.modern:
        if missing:
            raise MissingClientCapability(*missing)
        answers = {k: context.input_responses[k] for k in requests if k in context.input_responses}
        if len(answers) == len(requests):
            return answers
        raise InputRequired({k: v for k, v in requests.items() if k not in answers}, state)
    channel = context.channel
    if missing or channel is None or not channel.can_request:
        # Legacy: answered as "this client cannot give that input" by the protocol layer.
        raise InputRequired(requests, state)
    return {key: channel.request(r["method"], r.get("params", {})) for key, r in requests.items()}


def require_capabilities(context: RequestContext, *capabilities: str) -> None:
    """Refuse the request (``-32021``) unless the client declared every capability."""
    declared = context.client_capabilities
    missing = [c for c in capabilities if c not in declared]
    if not missing:
        return
    if context.modern:
        raise MissingClientCapability(*missing)
    raise ToolError(
        f"This tool needs a client that supports {', '.join(missing)}.",
        code="missing_capability",
        required_capabilities=missing,
    )


def can_ask(context: RequestContext, capability: str) -> bool:
    """Whether input of this kind can be asked for during this request."""
    if capability not in context.client_capabilities:
        return False
    if context.modern:
        return True
    return context.channel is not None and bool(context.channel.can_request)
