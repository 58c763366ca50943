from django.contrib import admin
from django.urls import include, path

from mcp_endpoint import site as mcp_site

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("me/ai/", include("mcp_endpoint.account.urls")),
    path("mcp", mcp_site.urls),
]
