"""Fixtures of the conformance suite's tasks scenarios (the tasks extension), on the fixture
endpoint.

``greet`` answers at once; the others are long-running (``task_support``): a client that
declares ``io.modelcontextprotocol/tasks`` gets a task, which a task worker runs. The
names, arguments and answers are the suite's.

Registered on the fixture when ``project.conformance`` is imported.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from pydantic import Field

from mcp_endpoint.context import Context
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.content import Text, ToolResult
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.mrtr import elicitation
from mcp_endpoint.tools import Tool
from project.conformance.fixture_endpoint import fixture
from project.conformance.modern import NAME_SCHEMA, content_of

CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean"}},
    "required": ["confirm"],
}
# The fixtures write nothing: they run without a transaction, as a REST GET does.
READ_ONLY = {"readOnlyHint": True}
# How often a sleeping fixture looks whether its task was cancelled, in seconds.
CANCEL_CHECK = 0.1
# The longest slow_compute sleeps: the suite asks for 60 s at most (and cancels that one); a
# fixture must not hold a task worker, which the product's tasks share, for longer.
MAX_SECONDS = 60


def sleep_unless_cancelled(context: Context, seconds: float) -> bool:
    """Sleep ``seconds``; False as soon as the task is cancelled."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if context.cancelled:
            return False
        time.sleep(min(CANCEL_CHECK, max(0.0, deadline - time.monotonic())))
    return not context.cancelled


@fixture.tool(name="greet", description="Greets someone at once (never a task)")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@fixture.tool(
    name="slow_compute",
    description="Sleeps for the given seconds, then answers; a task when the client can poll",
    task_support="optional",
    annotations=READ_ONLY,
)
def slow_compute(
    context: Context,
    seconds: Annotated[float, Field(ge=0, le=MAX_SECONDS)] = 1,
    label: str = "",
) -> str:
    if not sleep_unless_cancelled(context, seconds):
        return f"Cancelled {label}".strip()
    return f"Computed {label or 'result'} after {seconds:g} s"


@fixture.tool(
    name="failing_job",
    description="Runs only as a task, and ends with a tool error after about a second",
    task_support="required",
    annotations=READ_ONLY,
)
def failing_job(context: Context) -> ToolResult:
    sleep_unless_cancelled(context, 1)
    return ToolResult(content=[Text("The job failed, as it always does")], is_error=True)


@fixture.tool(
    name="protocol_error_job",
    description="A task that ends in a protocol error (the task fails)",
    task_support="optional",
    annotations=READ_ONLY,
)
def protocol_error_job() -> str:
    raise ProtocolError(jsonrpc.INTERNAL_ERROR, "The job broke down")


@fixture.tool(
    name="confirm_delete",
    description="A task that asks the user to confirm, then says what it did",
    task_support="optional",
    annotations=READ_ONLY,
)
def confirm_delete(context: Context, filename: str) -> str:
    answers = context.ask(
        {"confirm": elicitation(f"Delete {filename}?", CONFIRM_SCHEMA)},
    )
    confirmed = content_of(answers["confirm"]).get("confirm") is True
    return f"Deleted {filename}" if confirmed else f"Kept {filename}"


@fixture.tool(
    name="multi_input",
    description="A task that asks two questions at once, then answers with both",
    task_support="optional",
    annotations=READ_ONLY,
)
def multi_input(context: Context) -> str:
    answers = context.ask(
        {
            "first": elicitation("First name?", NAME_SCHEMA),
            "second": elicitation("Second name?", NAME_SCHEMA),
        }
    )
    names = [content_of(answers[key]).get("name", "?") for key in ("first", "second")]
    return "Got " + " and ".join(str(n) for n in names)


USER_NAME = {"user_name": elicitation("What is your name?", NAME_SCHEMA)}


class ToolWithTask(Tool):
    """Asks for the user's name in the request, then greets them from a task."""

    name = "test_tool_with_task"
    description = "Asks for a name (input-required result), then runs as a task that greets"
    task_support = "required"
    annotations = READ_ONLY

    def prepare_task(self, arguments: dict[str, Any], call: Context) -> None:
        call.ask(USER_NAME)

    def run(self, arguments: dict[str, Any], call: Context) -> Any:
        answers = call.ask(USER_NAME)
        return f"Hello, {content_of(answers['user_name']).get('name', 'stranger')}!"


fixture.add_tool(ToolWithTask())
