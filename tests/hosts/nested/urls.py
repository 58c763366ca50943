"""The nested host's URLs: the REST API under ``api/``, the MCP endpoint at ``/mcp``.

Projects and tasks are routed by drf-nested-routers' routers (the tasks flat at
``api/tasks/`` and nested at ``api/projects/<project_pk>/tasks/``); comments by hand, one
level deeper, with ``path()`` and ``re_path()`` patterns, and a user's projects at
``api/users/<user_pk>/projects/``.
"""

from __future__ import annotations

from django.urls import include, path, re_path
from rest_framework_nested.routers import NestedSimpleRouter, SimpleRouter

from tests.hosts import host_endpoint
from tests.hosts.nested.views import CommentViewSet, ProjectViewSet, TaskViewSet

router = SimpleRouter()
router.register("projects", ProjectViewSet, basename="project")
router.register("tasks", TaskViewSet, basename="task")
project_router = NestedSimpleRouter(router, "projects", lookup="project")
project_router.register("tasks", TaskViewSet, basename="project-task")

comment_list = CommentViewSet.as_view({"get": "list", "post": "create"})
comment_detail = CommentViewSet.as_view(
    {"get": "retrieve", "put": "update", "patch": "partial_update", "delete": "destroy"}
)
user_patterns = [
    path(
        "users/<int:user_pk>/projects/",
        ProjectViewSet.as_view({"get": "list", "post": "create"}),
        name="user-project-list",
    ),
]
comment_patterns = [
    path(
        "projects/<int:project_pk>/tasks/<int:task_pk>/comments/",
        comment_list,
        name="task-comment-list",
    ),
    re_path(
        r"^projects/(?P<project_pk>[0-9]+)/tasks/(?P<task_pk>[0-9]+)/comments/(?P<pk>[0-9]+)/$",
        comment_detail,
        name="task-comment-detail",
    ),
]

endpoint = host_endpoint("nested")
# The flat tasks are for reading across projects; tasks are made under their project.
endpoint.register_router(router, per_basename={"task": {"include": ["list", "retrieve"]}})
endpoint.register_router(project_router)
endpoint.register_viewset(CommentViewSet, parents=["project_pk", "task_pk"])
endpoint.register_viewset(ProjectViewSet, parents=["user_pk"], include=["list", "create"])

urlpatterns = [
    path("api/", include(router.urls)),
    path("api/", include(project_router.urls)),
    path("api/", include(comment_patterns)),
    path("api/", include(user_patterns)),
    path("mcp", endpoint.urls),
]
