"""Long-running tools on Django's task framework: the endpoint's :class:`TaskEngine`.

A call of a tool marked ``task_support="optional"`` or ``"required"`` from a client that
declared the tasks extension becomes a :class:`~mcp_endpoint.models.ToolTask` row, and
:func:`run_tool_task` is enqueued on the task backend ``TASK_BACKEND`` names
(``django.tasks`` from Django 6.0, the ``django-tasks`` backport before it). A worker of
that backend (``manage.py mcp_task_worker`` for ``django-tasks-db``) runs the call, never a
thread of the web worker.

The worker runs the tool with the credential that created the task, looked up again:
a key revoked or expired since, a token gone, a user made inactive, and the task fails
without running, or, when that happens while it runs, without committing anything (the
tool's writes and its result are one transaction, checked just before it commits). A
tool that needs input from the client raises ``InputRequired`` as in a request: the task
waits in ``input_required`` until ``tasks/update`` has brought every answer, then runs
again from the start with them.
"""

from __future__ import annotations

import io
import logging
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIRequest
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone
from django.utils.module_loading import import_string

from mcp_endpoint import interfaces, outages, task_recovery, tracing
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.context import Context
from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.content import ToolResult
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.mrtr import InputRequired
from mcp_endpoint.protocol.server import RequestContext
from mcp_endpoint.protocol.tasks import (
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    WORKING,
)
from mcp_endpoint.protocol.tool_error import OUTCOME_UNKNOWN
from mcp_endpoint.protocol.versions import MODERN
from mcp_endpoint.tools import CallAbandoned, Tool

try:  # Django 6.0+
    from django.tasks import task as framework_task
except ImportError:  # pragma: no cover - the backport, before Django 6.0
    from django_tasks import task as framework_task  # type: ignore[no-redef]

if TYPE_CHECKING:
    from mcp_endpoint.conf import MCPSettings
    from mcp_endpoint.credential import Credential
    from mcp_endpoint.interfaces import EndpointLike
    from mcp_endpoint.models import ToolTask

logger = logging.getLogger("mcp_endpoint.tasks")

REVOKED = "The credential that started this task is no longer valid"
NARROWED = "The credential that started this task no longer holds the scope(s) its tool needs"


def iso(moment: Any) -> str:
    return str(moment.isoformat().replace("+00:00", "Z"))


# -- the credential, by reference ------------------------------------------------------------


def credential_reference(credential: Credential | None) -> tuple[str, str]:
    """What a task keeps of its credential: its kind and primary key (never a secret)."""
    if credential is None:
        return "", ""
    return credential.kind, str(getattr(credential.auth, "pk", "") or "")


def class_path(instance: Any) -> str:
    if instance is None:
        return ""
    cls = type(instance)
    return f"{cls.__module__}.{cls.__qualname__}"


def restore_credential(task: ToolTask) -> tuple[bool, Credential | None]:
    """``(valid, credential)``: the task's credential as it stands now.

    Not valid when the key was revoked or expired, the token is gone or expired, or the
    user was deleted or made inactive since the task was created. The credential's scopes
    are those its key or token holds now.
    """
    from mcp_endpoint.credential import Credential
    from mcp_endpoint.models import get_api_key_model

    if not task.credential_kind:
        return True, None
    if task.user_id is None:
        return False, None
    user = get_user_model()._default_manager.filter(pk=task.user_id).first()
    if user is None or not user.is_active:
        return False, None
    auth: Any = None
    if task.credential_kind == "api_key":
        auth = get_api_key_model()._default_manager.filter(pk=task.credential_id).first()
        if auth is None or not auth.is_usable() or auth.user_id != user.pk:
            return False, None
    elif task.credential_kind == "oauth_token":
        from oauth2_provider.models import get_access_token_model

        auth = get_access_token_model()._default_manager.filter(pk=task.credential_id).first()
        if auth is None or auth.is_expired() or auth.user_id != user.pk:
            return False, None
    # The scopes the key or token holds now, not those it held when the task was created:
    # a credential narrowed since runs (and keeps) only what it still may. Never wider than
    # at creation either.
    kept = frozenset(task.scopes) if isinstance(task.scopes, list) else None
    scope = getattr(auth, "scope", None)
    scopes = frozenset(scope.split()) if isinstance(scope, str) else kept
    if scopes is not None and kept is not None:
        scopes &= kept
    authenticator = import_string(task.authenticator)() if task.authenticator else None
    return True, Credential(user=user, auth=auth, scopes=scopes, authenticator=authenticator)


# -- where the call came from ----------------------------------------------------------------


def origin_of(request: Any) -> dict[str, Any]:
    """What a task keeps of the HTTP request that created it (no headers, no body), and
    under ``trace`` the trace context of the message that created it (with OpenTelemetry:
    the worker's tool span belongs to the same trace)."""
    origin: dict[str, Any] = {}
    if isinstance(request, HttpRequest):
        origin = {
            "host": request.get_host(),
            "scheme": request.scheme or "http",
            "script_name": str(request.META.get("SCRIPT_NAME", "")),
            "remote_addr": str(request.META.get("REMOTE_ADDR", "")),
        }
    trace_context = tracing.task_context()
    if trace_context:
        origin["trace"] = trace_context
    return origin


def origin_request(origin: dict[str, Any]) -> HttpRequest | None:
    """A bare request from the same host, scheme and address, for tools that call views
    (a viewset's tool builds its inner request from it); None for a task without one."""
    if not isinstance(origin, dict) or "host" not in origin:
        return None
    host, _, port = origin["host"].partition(":")
    scheme = origin["scheme"]
    return WSGIRequest(
        {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/",
            "SCRIPT_NAME": origin["script_name"],
            "SERVER_NAME": host,
            "SERVER_PORT": port or ("443" if scheme == "https" else "80"),
            "HTTP_HOST": origin["host"],
            "REMOTE_ADDR": origin["remote_addr"],
            "wsgi.input": io.BytesIO(b""),
            "wsgi.url_scheme": scheme,
            "wsgi.version": (1, 0),
            "wsgi.errors": io.StringIO(),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
    )


# -- the engine the protocol layer calls -----------------------------------------------------


class DjangoTaskEngine:
    """The :class:`~mcp_endpoint.protocol.tasks.TaskEngine` of one endpoint."""

    def __init__(self, endpoint: EndpointLike) -> None:
        self.endpoint = endpoint

    def describe(self, task: ToolTask, *, outcome: bool = True) -> dict[str, Any]:
        """The task as ``tasks/get`` shows it (with ``outcome``) or as it was created."""
        body: dict[str, Any] = {
            "taskId": task.id,
            "status": task.status,
            "createdAt": iso(task.created),
            "lastUpdatedAt": iso(task.updated),
            "ttlMs": int(self.endpoint.settings.TASK_TTL_MS),
            "pollIntervalMs": int(self.endpoint.settings.TASK_POLL_INTERVAL_MS),
        }
        if task.status_message:
            body["statusMessage"] = task.status_message
        if outcome:
            if task.status == COMPLETED and task.result is not None:
                body["result"] = task.result
            elif task.status == FAILED and task.error is not None:
                body["error"] = task.error
            elif task.status == INPUT_REQUIRED and task.input_requests:
                body["inputRequests"] = task.input_requests
        return body

    def find(self, task_id: str, context: RequestContext) -> ToolTask | None:
        """The caller's own live task of this endpoint; anyone else's does not exist."""
        from mcp_endpoint.models import ToolTask

        return (
            ToolTask.objects.filter(
                pk=task_id,
                endpoint=self.endpoint.name,
                owner=principal(context),
                expires__gt=timezone.now(),
            )
            .only(*TASK_FIELDS)
            .first()
        )

    def create(
        self, tool_name: str, arguments: dict[str, Any], context: RequestContext
    ) -> dict[str, Any]:
        from mcp_endpoint.models import ToolTask

        tool = self.endpoint.tools.get(tool_name)
        assert tool is not None  # the protocol layer asked the endpoint for its task support
        # Input the tool needs before it can go on alone is asked for now, in the request.
        tool.prepare_task(arguments, Context(self.endpoint, context))
        credential = context.credential
        kind, credential_id = credential_reference(credential)
        now = timezone.now()
        ToolTask.objects.prune()
        task = ToolTask.objects.create(
            id=secrets.token_urlsafe(24),
            endpoint=self.endpoint.name,
            tool=tool_name,
            arguments=arguments,
            owner=principal(context),
            # An anonymous credential's user is no row (its task cannot be run again).
            user=credential.user if credential is not None and not credential.anonymous else None,
            credential_kind=kind,
            credential_id=credential_id,
            scopes=sorted(credential.scopes) if credential and credential.scopes else None,
            authenticator=class_path(credential.authenticator) if credential else "",
            origin=origin_of(context.transport),
            protocol_version=context.protocol_version,
            client_capabilities=context.client_capabilities,
            input_responses=dict(context.input_responses),
            expires=now + timedelta(milliseconds=self.endpoint.settings.TASK_TTL_MS),
        )
        # The row is committed before the worker can look for it, and before the answer.
        self.enqueue(task)
        task.refresh_from_db()
        return self.describe(task, outcome=False)

    def enqueue(self, task: ToolTask) -> None:
        from mcp_endpoint.models import ToolTask

        backend = self.endpoint.settings.TASK_BACKEND
        run = run_tool_task.using(backend=backend).enqueue(task.id)
        # Which run is the task's, to ask the backend whether it ended without a word.
        ToolTask.objects.filter(pk=task.pk).update(job=str(run.id)[:64])

    def get(self, task_id: str, context: RequestContext) -> dict[str, Any] | None:
        task = self.find(task_id, context)
        if task is None:
            return None
        self.check_scopes(task, context)
        if task_recovery.abandoned(task, self.endpoint.settings):
            # Its worker is gone: the caller learns so now, not when the task expires.
            task_recovery.settle(task)
            task = self.find(task_id, context)
            if task is None:
                return None
        return self.describe(task)

    def check_scopes(self, task: ToolTask, context: RequestContext) -> None:
        """Refuse a caller whose credential no longer holds the scopes of the task's tool.

        The task's result is what the tool would answer now: a key narrowed from
        ``read write`` to ``write`` after an export started reads nothing of the export,
        as the REST view would refuse it.
        """
        tool = self.endpoint.tools.get(task.tool)
        credential = context.credential
        if tool is None or credential is None or credential.allows(tool.required_scopes):
            return
        needed = sorted(tool.required_scopes)
        raise ProtocolError(
            jsonrpc.REQUEST_REFUSED,
            f"Forbidden: this task's tool needs the scope(s) {' '.join(needed)}",
            {
                "code": "insufficient_scope",
                "required_scopes": needed,
                "granted_scopes": sorted(credential.scopes or ()),
            },
        )

    def update(self, task_id: str, responses: dict[str, Any], context: RequestContext) -> bool:
        from mcp_endpoint.models import ToolTask

        found = self.find(task_id, context)
        if found is None:
            return False
        self.check_scopes(found, context)
        with transaction.atomic():
            task = ToolTask.objects.select_for_update().get(pk=task_id)
            pending = dict(task.input_requests or {})
            # Answers to keys the task is not waiting for are ignored.
            answered = {k: v for k, v in responses.items() if k in pending}
            if task.status != INPUT_REQUIRED or not answered:
                return True
            task.input_responses = {**task.input_responses, **answered}
            for key in answered:
                del pending[key]
            task.input_requests = pending or None
            if not pending:
                # A new run: the last one's heartbeat says nothing of it.
                task.status = WORKING
                task.heartbeat = None
                # The run it starts links to this message's span (with OpenTelemetry).
                update_trace = tracing.task_context()
                if update_trace and isinstance(task.origin, dict):
                    task.origin = {**task.origin, "update_trace": update_trace}
            task.save(
                update_fields=[
                    "input_responses",
                    "input_requests",
                    "status",
                    "heartbeat",
                    "origin",
                    "updated",
                ]
            )
        if not pending:
            # Every answer is in: the call runs again, from the start, with all of them.
            self.enqueue(task)
        return True

    def cancel(self, task_id: str, context: RequestContext) -> bool:
        from mcp_endpoint.models import ToolTask

        task = self.find(task_id, context)
        if task is None:
            return False
        # The admin's cancel action takes the same path; the worker sees the status.
        ToolTask.objects.filter(pk=task.pk).cancel()
        return True


TASK_FIELDS = (
    "id",
    "tool",
    "status",
    "status_message",
    "created",
    "updated",
    "result",
    "error",
    "input_requests",
    "job",
    "heartbeat",
)


# -- on the worker ---------------------------------------------------------------------------


class RunningTask:
    """What a tool running as a task can ask of it (through ``Context``)."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id

    def cancelled(self) -> bool:
        from mcp_endpoint.models import ToolTask

        status = ToolTask.objects.filter(pk=self.task_id).values_list("status", flat=True).first()
        return status != WORKING

    def progress(self, progress: float, total: float | None, message: str | None) -> None:
        from mcp_endpoint.models import ToolTask

        text = message or (f"{progress:g} of {total:g}" if total else f"{progress:g}")
        ToolTask.objects.filter(pk=self.task_id, status=WORKING).update(
            status_message=text, updated=timezone.now()
        )


def error_code(result: ToolResult) -> str | None:
    """The code of a tool error result (``structuredContent.error.code``); None otherwise."""
    error = (result.structured or {}).get("error") if result.is_error else None
    return error.get("code") if isinstance(error, dict) else None


def finish(task_id: str, **fields: Any) -> bool:
    """Record the outcome unless the task was cancelled (or expired) meanwhile."""
    from mcp_endpoint.models import ToolTask

    return bool(
        ToolTask.objects.filter(pk=task_id, status=WORKING).update(updated=timezone.now(), **fields)
    )


def record(task_id: str, settings: MCPSettings, **fields: Any) -> bool:
    """:func:`finish`, tried again while the database is unreachable (outside a transaction),
    for as long as a heartbeat may be late: then the task is settled as lost anyway."""
    patience = task_recovery.stale_after(settings).total_seconds()
    return task_recovery.persist(
        lambda: finish(task_id, **fields), patience=patience, what="record the outcome"
    )


def lost_scope(task_id: str, settings: MCPSettings, tool: Tool) -> None:
    """Fail a task whose credential lost a scope its tool needs while it ran."""
    needed = sorted(tool.required_scopes)
    refusal = {
        "code": jsonrpc.UNAUTHORIZED,
        "message": NARROWED,
        "data": {"required_scopes": needed},
    }
    record(task_id, settings, status=FAILED, error=refusal)


def lost_commit(task_id: str, settings: MCPSettings) -> None:
    """Settle a task whose tool's commit lost its connection.

    The task's outcome was written in that same transaction: the task is completed if the
    commit went through, and still working, so failed here, if it did not.
    """
    message = "The database connection was lost while the tool's work was saved"
    error = {"code": jsonrpc.INTERNAL_ERROR, "message": f"{message}; nothing was kept"}
    record(task_id, settings, status=FAILED, error=error)


def revoked(task_id: str, settings: MCPSettings) -> None:
    """Fail a task that is still working because its credential no longer holds."""
    error = {"code": jsonrpc.UNAUTHORIZED, "message": REVOKED}
    if record(task_id, settings, status=FAILED, error=error):
        logger.info("task %s stopped: its credential is no longer valid", task_id)


@framework_task()
def run_tool_task(task_id: str) -> None:
    """Run one task's tool call on a worker and record its outcome on the task.

    The database may be unreachable for a while at any point: the worker's own reads and
    writes are tried again (:func:`~mcp_endpoint.task_recovery.persist`), and a task whose
    outcome could not be recorded in time is settled as lost, never left ``working``.
    """
    from mcp_endpoint.models import ToolTask

    patience = task_recovery.stale_after(mcp_settings).total_seconds()
    task = task_recovery.persist(
        lambda: ToolTask.objects.filter(pk=task_id).first(), patience=patience, what="read it"
    )
    if task is None or task.status != WORKING or task.expires <= timezone.now():
        return  # cancelled, expired or answered before a worker got to it
    if task.heartbeat is not None:
        # A run of this enqueue started the tool already: this is the broker giving the
        # message again after its worker was lost. The tool never runs twice for one
        # enqueue; the heartbeat rule fails the task as lost once that run is gone.
        logger.warning("task %s: a run of it started already; not run again", task_id)
        return
    endpoint = interfaces.find(task.endpoint)
    settings = endpoint.settings if endpoint is not None else mcp_settings
    valid, credential = restore_credential(task)
    if not valid:
        revoked(task_id, settings)
        return
    tool = endpoint.tools.get(task.tool) if endpoint is not None else None
    if endpoint is None or tool is None:
        error = {"code": jsonrpc.INTERNAL_ERROR, "message": f"Unknown tool: {task.tool}"}
        record(task_id, settings, status=FAILED, error=error)
        return
    task_recovery.persist(lambda: task_recovery.beat(task_id), patience=patience, what="start")
    with task_recovery.Heartbeat(task_id, task_recovery.interval(settings)):
        run_call(task, endpoint, tool, credential)


def run_call(task: ToolTask, endpoint: EndpointLike, tool: Tool, credential: Any) -> None:
    """Run the task's call on this worker, and record what came of it."""
    task_id = task.id
    settings = endpoint.settings
    context = RequestContext(
        era=MODERN,
        protocol_version=task.protocol_version,
        credential=credential,
        client_capabilities=task.client_capabilities,
        input_responses=dict(task.input_responses),
        transport=origin_request(task.origin),
        task=RunningTask(task_id),
    )
    kept: list[bool] = []
    narrowed: list[bool] = []

    def keep(result: ToolResult) -> bool:
        # Looked up again just before the commit: a credential revoked while the tool ran
        # takes the tool's writes and its result with it; so does one that lost a scope
        # the tool needs, and a cancellation. Inside the tool's transaction: not tried
        # again (an outage here is the tool's, and fails the task below).
        kept.append(True)
        still_valid, now = restore_credential(task)
        if not still_valid:
            return False
        if now is not None and not now.allows(tool.required_scopes):
            narrowed.append(True)
            return False
        endpoint.executor.text_budget(result)
        return finish(task_id, status=COMPLETED, result=result.to_dict(), status_message="")

    # The call's row of the call log is written with the tool's writes and the task's
    # result, in their one transaction, when the tool writes.
    log = endpoint.executor.start(tool, dict(task.arguments), context)
    try:
        origin = task.origin if isinstance(task.origin, dict) else {}
        result = tracing.task_tool(
            endpoint.executor.run,
            tool,
            origin.get("trace"),
            dict(task.arguments),
            context,
            keep,
            log,
            updated=origin.get("update_trace"),
        )
        if not kept and not keep(result):
            # A tool error, answered before the transaction, for a credential that no
            # longer holds: recorded as any abandoned call is.
            raise CallAbandoned(tool.name)
        if error_code(result) == OUTCOME_UNKNOWN:
            lost_commit(task_id, settings)
            return
        # The call log and the tool_called signal see a task's call as any other.
        endpoint.executor.record(log, result)
    except CallAbandoned:
        # Rolled back: cancelled meanwhile (it stays so), or its credential went away or
        # lost a scope the tool needs.
        if narrowed:
            lost_scope(task_id, settings, tool)
        else:
            revoked(task_id, settings)
    except InputRequired as exc:
        record(task_id, settings, status=INPUT_REQUIRED, input_requests=exc.requests)
    except ProtocolError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        record(task_id, settings, status=FAILED, error=error)
    except outages.ServiceUnavailable as exc:
        # The tool's transaction did not commit, or its outcome is recorded already (the
        # outcome is written in that same transaction, and this writes only over working).
        logger.warning("task %s: the %s was unavailable while its tool ran", task_id, exc.kind)
        message = f"Service unavailable: the {exc.kind} was unreachable; nothing was kept"
        record(
            task_id,
            settings,
            status=FAILED,
            error={"code": jsonrpc.INTERNAL_ERROR, "message": message},
        )
