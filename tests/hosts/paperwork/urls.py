"""The document host's URLs: the REST API under ``api/``, the MCP endpoint at ``/mcp``, and
the single-page app's catch-all last, after the endpoint, as the README says."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter

from tests.hosts import host_endpoint
from tests.hosts.paperwork.views import (
    ApplicationSettingsViewSet,
    CorrespondentViewSet,
    DocumentViewSet,
    TagViewSet,
)

router = DefaultRouter()
router.register("documents", DocumentViewSet, basename="document")
router.register("tags", TagViewSet, basename="tag")
router.register("correspondents", CorrespondentViewSet, basename="correspondent")
router.register("settings", ApplicationSettingsViewSet, basename="settings")

endpoint = host_endpoint("paperwork")
endpoint.register_router(router)


def index(request: HttpRequest) -> HttpResponse:
    """The single-page app's page, for every path nothing else serves."""
    return HttpResponse("<html><body>Paperwork</body></html>")


urlpatterns = [
    path("api/", include(router.urls)),
    path("mcp", endpoint.urls),
    re_path(r".*", index, name="index"),
]
