"""The demo's URLs without ``mcp_endpoint.oauth.urls`` and django-oauth-toolkit's."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from mcp_endpoint import site as mcp_site

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("project.tracker.urls")),
    path("mcp", mcp_site.urls),
]
