from django.contrib import admin
from django.urls import include, path

from mcp_endpoint import site as mcp_site
from tests.projects.email_user.api import router

urlpatterns = [
    path("", include("mcp_endpoint.oauth.urls")),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("me/ai/", include("mcp_endpoint.account.urls")),
    path("mcp", mcp_site.urls),
    path("api/", include(router.urls)),
]
