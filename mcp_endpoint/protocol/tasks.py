"""The tasks extension (``io.modelcontextprotocol/tasks``) on the 2026-07-28 revision.

A tool the host marks long-running answers a client that declared the extension with a
``CreateTaskResult`` (``resultType: "task"``) instead of its result; the client then polls
``tasks/get``, answers input requests with ``tasks/update`` and may ``tasks/cancel``. The
server decides which calls become tasks: a client that did not declare the extension gets
the tool's result synchronously, or ``-32021`` for a tool that can only run as a task.
There is no ``tasks/result`` and no ``tasks/list`` in this revision.

Where a task runs and how its state is kept is the host side's business: a
:class:`TaskEngine`. This module only shapes the messages: dicts in, dicts out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError

if TYPE_CHECKING:
    from mcp_endpoint.protocol.request_context import RequestContext

EXTENSION = "io.modelcontextprotocol/tasks"

# How a tool takes part: never as a task, as a task when the client can poll, only so.
FORBIDDEN = "forbidden"
OPTIONAL = "optional"
REQUIRED = "required"
TASK_SUPPORT = (FORBIDDEN, OPTIONAL, REQUIRED)

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
STATUSES = (WORKING, INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED)

UNKNOWN_TASK = "Unknown task"


class TaskEngine(Protocol):
    """Runs tool calls as tasks and keeps their state; the host side implements it.

    Every method gets the caller's request context: a task is found only for the
    credential that created it (anyone else is told it does not exist).
    """

    def create(
        self, tool: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        """Durably create a task that runs the call, and return its ``Task`` fields."""
        raise NotImplementedError(".create() must be overridden")

    def get(self, task_id: str, context: RequestContext) -> dict[str, Any] | None:
        """The task's fields with its result, error or input requests; None if unknown."""
        raise NotImplementedError(".get() must be overridden")

    def update(self, task_id: str, responses: dict[str, Any], context: RequestContext) -> bool:
        """Take the client's input responses; False if the task is unknown."""
        raise NotImplementedError(".update() must be overridden")

    def cancel(self, task_id: str, context: RequestContext) -> bool:
        """Ask the task to stop (a terminal task stays as it is); False if unknown."""
        raise NotImplementedError(".cancel() must be overridden")


class TaskFeatures(Protocol):
    """What the method handlers need from the host side (a part of the server's features)."""

    def task_support(self, name: str, context: RequestContext) -> str: ...

    def task_engine(self) -> TaskEngine | None: ...


class Server(Protocol):
    """The server the handlers are called by: only its features are used here."""

    @property
    def features(self) -> TaskFeatures: ...


def declared(context: RequestContext) -> bool:
    """Whether this request's client declared the extension (per request, in ``_meta``)."""
    extensions = context.client_capabilities.get("extensions")
    return context.modern and isinstance(extensions, dict) and EXTENSION in extensions


class MissingTasksExtension(ProtocolError):
    """``-32021``: the request needs the tasks extension, which the client did not declare."""

    def __init__(self, message: str) -> None:
        super().__init__(
            jsonrpc.MISSING_CAPABILITY,
            message,
            {"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
        )


def created(task: dict[str, Any]) -> dict[str, Any]:
    """The ``CreateTaskResult``: the task's own fields, flat, and nothing of its outcome."""
    body = {k: v for k, v in task.items() if k not in {"result", "error", "inputRequests"}}
    body["resultType"] = "task"
    return body


def _task_id(params: dict[str, Any]) -> str:
    task_id = params.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "taskId" must be a string')
    return task_id


def _engine(server: Server, method: str, context: RequestContext) -> TaskEngine:
    engine = server.features.task_engine()
    if not context.modern or engine is None:
        raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
    if not declared(context):
        raise MissingTasksExtension(f"{method} needs the {EXTENSION} extension")
    return engine


def _tasks_get(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    engine = _engine(server, "tasks/get", context)
    task = engine.get(_task_id(params), context)
    if task is None:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, UNKNOWN_TASK)
    return task


def _tasks_update(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    engine = _engine(server, "tasks/update", context)
    task_id = _task_id(params)
    responses = params.get("inputResponses")
    if not isinstance(responses, dict) or not all(isinstance(v, dict) for v in responses.values()):
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS,
            'Invalid params: "inputResponses" must map each input key to a result object',
        )
    if not engine.update(task_id, responses, context):
        raise ProtocolError(jsonrpc.INVALID_PARAMS, UNKNOWN_TASK)
    return {}


def _tasks_cancel(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    engine = _engine(server, "tasks/cancel", context)
    if not engine.cancel(_task_id(params), context):
        raise ProtocolError(jsonrpc.INVALID_PARAMS, UNKNOWN_TASK)
    return {}


def call_as_task(
    server: Server, name: str, arguments: dict[str, Any], context: RequestContext
) -> dict[str, Any] | None:
    """The ``CreateTaskResult`` when this call runs as a task; None to run it now.

    Raises ``-32021`` for a tool that only runs as a task, called by a client that did not
    declare the extension.
    """
    support = server.features.task_support(name, context)
    if support == FORBIDDEN:
        return None
    engine = server.features.task_engine()
    if engine is not None and declared(context):
        return created(engine.create(name, arguments, context))
    if support == REQUIRED:
        raise MissingTasksExtension(
            f"The tool {name} runs only as a task: declare the {EXTENSION} extension"
        )
    return None


METHODS = {
    "tasks/get": _tasks_get,
    "tasks/update": _tasks_update,
    "tasks/cancel": _tasks_cancel,
}
