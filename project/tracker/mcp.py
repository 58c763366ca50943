"""What the task tracker offers on its MCP endpoint besides its REST viewsets."""

from __future__ import annotations

import csv
import io
import logging
import time
from collections.abc import Mapping
from typing import Annotated, Any

from django.conf import settings
from django.db.models import Count
from pydantic import Field
from typing_extensions import TypedDict

from mcp_endpoint import site
from mcp_endpoint.context import Context
from mcp_endpoint.prompts import PromptArgument
from mcp_endpoint.protocol.content import EmbeddedResource, ResourceContents
from mcp_endpoint.resources import ResourceNotFound
from mcp_endpoint.tools import ToolError
from project.tracker.models import Project, Task, tasks_visible_to
from project.tracker.urls import router

logger = logging.getLogger(__name__)

# Every action of the REST API's viewsets, as tools with the same permissions and data.
# Marking a task done changes nothing that cannot be changed back: not destructive (a
# custom POST action is, unless the host says otherwise).
site.register_router(
    router, per_basename={"task": {"annotations": {"complete": {"destructiveHint": False}}}}
)

# The task lists as a board a person can read and act on (MCP Apps): hosts that render
# apps show the result in it, and its "Mark done" calls complete_task through the host.
site.app(
    "ui://task-tracker/task-board",
    template_name="tracker/task_board.html",
    name="Task board",
    description="The tasks of a list by status, each open one with a button to mark it done.",
    tools=["list_tasks", "overdue_tasks"],
    prefers_border=True,
    scopes=["read"],
)

# A skill (the skills extension) an agent loads before it works with the tracker's data:
# the objects, their fields and tools, and how they relate, from the viewsets' schemas.
site.product_skill(
    "task-tracker",
    title="Task tracker",
    guidance=(
        "## The tracker's own rules\n\n"
        "- A task is open, in progress or done; `complete_task` marks it done.\n"
        "- Priority 1 is the most urgent. A task past its `due` day and not done is overdue: "
        "`summarize_project` counts them."
    ),
)


class ProjectSummary(TypedDict):
    project_id: int
    name: str
    open: int
    in_progress: int
    done: int
    overdue: int


@site.tool(
    title="Project summary",
    scopes=["read"],
    annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
)
def summarize_project(
    project_id: Annotated[int, Field(description="The project's id")], context: Context
) -> ProjectSummary:
    """Counts of a project's tasks by status, and how many are overdue."""
    from django.utils import timezone

    project = Project.objects.visible_to(context.user).filter(pk=project_id).first()
    if project is None:
        raise ToolError(f"No project {project_id} is visible to you.", code="not_found")
    tasks = tasks_visible_to(context.user).filter(project=project)
    counts = dict(tasks.values_list("status").annotate(n=Count("id")).values_list("status", "n"))
    overdue = tasks.filter(due__lt=timezone.localdate()).exclude(status="done").count()
    if overdue:
        # Reaches a client that asked for warnings (CLIENT_LOGGERS names this logger).
        logger.warning("project %s has %d overdue task(s)", project.pk, overdue)
    logger.info("summarised project %s for %s", project.pk, context.user)
    return ProjectSummary(
        project_id=project.pk,
        name=project.name,
        open=counts.get("open", 0),
        in_progress=counts.get("in_progress", 0),
        done=counts.get("done", 0),
        overdue=overdue,
    )


EXPORT_COLUMNS = ("id", "title", "status", "priority", "due", "assignee")


@site.tool(
    title="Export a project's tasks as CSV",
    scopes=["read"],
    annotations={"readOnlyHint": True, "openWorldHint": False},
    # Long-running: a client that can poll gets a task, run by a task worker.
    task_support="optional",
)
def export_project_tasks(
    project_id: Annotated[int, Field(description="The project's id")], context: Context
) -> EmbeddedResource:
    """Every task of a project you can see, as a CSV file (one row per task).

    Reports its progress as it goes; a client that declares the tasks extension gets a
    task to poll, so the export may take as long as the project is big.
    """
    project = Project.objects.visible_to(context.user).filter(pk=project_id).first()
    if project is None:
        raise ToolError(f"No project {project_id} is visible to you.", code="not_found")
    tasks = list(
        tasks_visible_to(context.user)
        .filter(project=project)
        .select_related("assignee")
        .order_by("pk")
    )
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(EXPORT_COLUMNS)
    pace = settings.DEMO_EXPORT_PACE_SECONDS
    for done, task in enumerate(tasks, start=1):
        if context.cancelled:
            raise ToolError("The export was cancelled.", code="cancelled")
        assignee = task.assignee.get_username() if task.assignee else ""
        writer.writerow([task.pk, task.title, task.status, task.priority, task.due or "", assignee])
        context.report_progress(done, len(tasks), f"{done} of {len(tasks)} tasks")
        if pace:
            time.sleep(pace)
    return EmbeddedResource(
        ResourceContents(
            f"tracker://projects/{project.pk}/tasks.csv", text=out.getvalue(), mime_type="text/csv"
        )
    )


@site.resource(
    "tracker://projects/{project_id}",
    name="project",
    description="A project you belong to, with its members, as JSON.",
    mime_type="application/json",
    scopes=["read"],
)
def project_resource(project_id: int, context: Context) -> dict[str, Any]:
    # An int parameter: the endpoint converts the URI's digits, and answers "not found" for
    # text that is no integer a column holds.
    project = Project.objects.visible_to(context.user).filter(pk=project_id).first()
    if project is None:
        raise ResourceNotFound(project_id)
    return {
        "id": project.pk,
        "name": project.name,
        "owner": project.owner.get_username(),
        "members": sorted(m.get_username() for m in project.members.all()),
    }


@site.resource(
    "tracker://projects/{project_id}/board",
    name="board",
    title="Task board",
    description="A project's task board: its tasks by status, as JSON. Live: subscribe to "
    "hear when a task on it changes.",
    mime_type="application/json",
    scopes=["read"],
    follows={Task: lambda task: {"project_id": task.project_id}},
)
def task_board(project_id: int, context: Context) -> dict[str, Any]:
    # An int parameter: the endpoint converts the URI's digits, and answers "not found" for
    # text that is no integer a column holds.
    project = Project.objects.visible_to(context.user).filter(pk=project_id).first()
    if project is None:
        raise ResourceNotFound(project_id)
    columns: dict[str, list[dict[str, Any]]] = {status: [] for status in Task.Status.values}
    for task in tasks_visible_to(context.user).filter(project=project).order_by("priority", "id"):
        columns[task.status].append(
            {"id": task.pk, "title": task.title, "priority": task.priority, "due": task.due}
        )
    return {"project_id": project.pk, "name": project.name, "columns": columns}


@site.resource(
    "tracker://guide",
    name="guide",
    title="How the task tracker works",
    description="Statuses, priorities and the rules of the task tracker.",
    mime_type="text/markdown",
)
def guide() -> str:
    return (
        "# Task tracker\n\n"
        "- Status: `open` -> `in_progress` -> `done`. `complete_task` marks a task done.\n"
        "- Priority: 1 urgent, 2 high, 3 normal, 4 low.\n"
        "- You see the projects you own or are a member of; only an owner changes a project,\n"
        "  only a comment's author changes the comment.\n"
    )


site.template_prompt(
    "plan_week",
    "tracker/prompts/plan_week.txt",
    title="Plan my week",
    description="Plan the caller's week from their open and overdue tasks.",
    arguments=[PromptArgument("project", "Limit the plan to one project (its name).", False)],
    scopes=["read"],
)


@site.completer("ref/prompt", "plan_week", "project")
def complete_project_name(value: str, context: Context, arguments: Mapping[str, str]) -> list[str]:
    names = Project.objects.visible_to(context.user).filter(name__istartswith=value)
    return list(names.order_by("name").values_list("name", flat=True)[:100])


@site.completer("ref/resource", "tracker://projects/{project_id}", "project_id")
def complete_project_id(value: str, context: Context, arguments: Mapping[str, str]) -> list[str]:
    """The ids of the caller's projects that start with what was typed."""
    ids = Project.objects.visible_to(context.user).order_by("pk").values_list("pk", flat=True)
    return [str(pk) for pk in ids if str(pk).startswith(value)][:100]
