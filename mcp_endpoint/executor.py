"""The :class:`ToolExecutor`: how one tool call runs, whoever asked for it.

A direct ``tools/call``, the discovery tool ``call_tool``, a streamed call's worker and a
task's worker all run a tool through the executor of its endpoint: the checks before the
tool (available, its scopes, a task-only tool's credential), the arguments, the tool in one
transaction when it writes, the one broad exception boundary, the text budget and the call
record. It is handed the endpoint it runs for and never imports the endpoint module.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from django.db import DEFAULT_DB_ALIAS, transaction

from mcp_endpoint import calllog, client_logging, outages, tracing
from mcp_endpoint.context import Context
from mcp_endpoint.mrtr import confirm, confirmation_asked, confirmation_request
from mcp_endpoint.protocol.content import Text, ToolResult, as_result
from mcp_endpoint.protocol.jsonrpc import FORBIDDEN_CHARACTERS, ProtocolError
from mcp_endpoint.protocol.mrtr import InputRequired
from mcp_endpoint.protocol.request_context import RequestContext
from mcp_endpoint.protocol.tasks import REQUIRED
from mcp_endpoint.tools import CallAbandoned, Tool, ToolError

if TYPE_CHECKING:
    from mcp_endpoint.credential import Credential
    from mcp_endpoint.interfaces import EndpointLike

logger = logging.getLogger("mcp_endpoint")
# The database a write tool's transaction is on, as a REST request's ATOMIC_REQUESTS is.
TOOL_DATABASE = DEFAULT_DB_ALIAS


class ToolExecutor:
    """Runs an endpoint's tools: :meth:`call` for a call answered now, :meth:`run` and
    :meth:`record` for a task's worker, which commits the result itself."""

    def __init__(self, endpoint: EndpointLike) -> None:
        self.endpoint = endpoint

    @property
    def settings(self) -> Any:
        return self.endpoint.settings

    def call(
        self, tool: Tool, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """Run the tool, cut its text to the budget, record the call; the result as sent."""
        log = self.start(tool, arguments, context)
        result = tracing.tool(self.run, tool, arguments, context, None, log)
        self.text_budget(result)
        log.done(result)
        return result.to_dict()

    def start(
        self, tool: Tool, arguments: dict[str, Any], context: RequestContext
    ) -> calllog.CallRecord:
        """The record of a call starting now (:class:`mcp_endpoint.calllog.CallRecord`),
        for a caller that commits the result itself (a task's worker): hand it to
        :meth:`run`, then to :meth:`record` once the result is committed."""
        return calllog.CallRecord(self.endpoint, tool, arguments, context)

    def record(self, log: calllog.CallRecord, result: ToolResult) -> None:
        """The call's record: its row unless :meth:`run` wrote it with the tool's writes,
        and :data:`~mcp_endpoint.signals.tool_called`."""
        log.done(result)

    def refusal(self, tool: Tool, context: RequestContext) -> ToolResult | None:
        """Why the tool does not run for this caller at all, before its arguments are read."""
        credential: Credential | None = context.credential
        reason = tool.unavailable()
        if reason is not None:
            # Before the scopes and the arguments: both come from the schema it lacks.
            return ToolError(
                f"The tool {tool.name} is not available: {reason}", code="unavailable"
            ).to_result()
        if tool.task_support == REQUIRED and unrestorable(credential):
            return ToolError(
                f"The tool {tool.name} runs only as a task, and a task is run later with its "
                "credential looked up again by its user, which this credential has none of "
                "(its user is anonymous): call it with an API key or an OAuth token",
                code="task_unavailable",
            ).to_result()
        # A tool that cannot take this kind of credential at all says so itself, which
        # says more than a missing scope would.
        if (
            credential is not None
            and tool.accepts(credential)
            and not credential.allows(tool.required_scopes)
        ):
            return ToolError(
                f"This tool needs the scope(s) {' '.join(sorted(tool.required_scopes))}",
                code="insufficient_scope",
                required_scopes=sorted(tool.required_scopes),
                granted_scopes=sorted(credential.scopes or ()),
            ).to_result()
        return None

    def run(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        context: RequestContext,
        keep: Callable[[ToolResult], bool] | None = None,
        log: calllog.CallRecord | None = None,
    ) -> ToolResult:
        """Check scopes and arguments, then run the tool in one transaction (if it writes).

        ``keep`` (a task worker's) is called with the result before that transaction
        commits: when it says False, nothing the tool wrote is kept, and
        :class:`CallAbandoned` is raised. A write that is kept writes its row of the call
        log (``log``) in that same transaction, so that both are one commit.

        This is the one broad exception boundary: a tool that raises anything but
        :class:`ToolError` is logged with its traceback and answered with a generic error.
        """
        refused = self.refusal(tool, context)
        if refused is not None:
            return refused
        call = Context(self.endpoint, context)
        # A tool that says it only reads runs without a transaction, as a REST GET does.
        writes = not tool.read_only
        committing = False
        try:
            check_arguments(arguments, self.settings.MAX_ARGUMENT_DEPTH)
            tool.validate(arguments)
            if (
                self.settings.CONFIRM_DESTRUCTIVE_TOOLS
                and tool.destructive
                and confirmation_asked(call.request_context)
            ):
                # What the call acts on is asked of the tool only when the user is asked:
                # for a viewset's detail action, that is a run of its retrieve.
                target = tool.target(dict(arguments), call)
                question = confirmation_request(tool, arguments, target)
                confirm(question, tool.name, call.request_context)
            with transaction.atomic(using=TOOL_DATABASE) if writes else contextlib.nullcontext():
                try:
                    result = as_result(tool.run(arguments, call))
                except ToolError:
                    if writes:
                        transaction.set_rollback(True)
                    raise
                if result.is_error and writes:
                    transaction.set_rollback(True)
                if keep is not None and not keep(result):
                    if writes:
                        transaction.set_rollback(True)
                    raise CallAbandoned(tool.name)
                if writes and log is not None and not result.is_error:
                    log.within(result, TOOL_DATABASE)
                # What fails from here on fails while the tool's writes commit.
                committing = writes
            return result
        except (InputRequired, ProtocolError, CallAbandoned):
            # Not failures of the tool: a question for the client, or a protocol error.
            raise
        except ToolError as exc:
            return exc.to_result()
        except Exception as exc:
            if log is not None:
                log.forget()  # a row written with the tool's writes was not committed
            if committing and outages.commit_outcome_unknown(exc):
                # Not 503: a retry of a call whose commit may have gone through could do
                # its work twice. The client is told to look first.
                logger.warning("tool %s: its commit may or may not have gone through", tool.name)
                return ToolError.outcome_unknown(tool.name).to_result()
            # Not the tool's fault, and not for the model to read: the transport answers
            # 503 with Retry-After, and the client retries the whole request.
            outages.raise_if_outage(exc)
            logger.exception("tool %s failed", tool.name, extra=client_logging.SERVER_ONLY)
            return ToolError("Internal error running tool", code="internal_error").to_result()

    def text_budget(self, result: ToolResult) -> None:
        budget: int = self.settings.TEXT_BUDGET_BYTES
        for index, block in enumerate(result.content):
            if isinstance(block, Text):
                encoded = block.text.encode("utf-8")
                if len(encoded) > budget:
                    cut = encoded[:budget].decode("utf-8", errors="ignore")
                    note = (
                        f"\n[cut at {budget} of {len(encoded)} bytes: narrow the query with "
                        "filters or search, ask for a smaller page_size, or read the next page]"
                    )
                    result.content[index] = Text(cut + note)


def unrestorable(credential: Credential | None) -> bool:
    """Whether a task could not run with ``credential``: its worker looks a credential up
    again by its user, and an anonymous-user credential (a product's team token) has none."""
    return bool(getattr(credential, "anonymous", False))


def check_arguments(arguments: dict[str, Any], max_depth: int) -> None:
    """Refuse, as ``invalid_arguments``, what no schema should have to think about:
    nesting deeper than ``max_depth``, and NUL or surrogate characters in any string.

    Iterative, so that a hostile value cannot exhaust the stack here or in what runs later
    (validation, the call log, the view).
    """
    fields: dict[str, list[str]] = {}
    stack: list[tuple[Any, tuple[str, ...]]] = [(arguments, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if FORBIDDEN_CHARACTERS.search(value):
                name = ".".join(path) or "non_field_errors"
                fields.setdefault(name, []).append(
                    "Null characters and lone surrogates are not allowed."
                )
            continue
        if isinstance(value, dict):
            items: Iterable[tuple[Any, Any]] = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if len(path) >= max_depth:
            name = ".".join(path[:1]) or "non_field_errors"
            fields.setdefault(name, []).append(f"Nested deeper than {max_depth} levels.")
            continue
        for key, child in items:
            if isinstance(key, str) and FORBIDDEN_CHARACTERS.search(key):
                fields.setdefault(".".join(path) or "non_field_errors", []).append(
                    "Null characters and lone surrogates are not allowed in names."
                )
                continue
            stack.append((child, (*path, str(key))))
    if fields:
        raise ToolError(
            "The arguments do not match the tool's input schema",
            code="invalid_arguments",
            fields=fields,
        )
