from django.contrib import admin
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from mcp_endpoint import site as mcp_site
from mcp_endpoint.oauth.views import LoginView
from project.conformance import fixture


def health(request: HttpRequest) -> JsonResponse:
    """A plain Django JSON view: the floor the benchmarks measure the endpoint against."""
    return JsonResponse({"jsonrpc": "2.0", "id": 1, "result": {"status": "ok"}})


urlpatterns = [
    path("admin/", admin.site.urls),
    # The sign-in page users reach from the consent step, which no other site may frame.
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    # The signed-in user's pages: connect a client, personal API keys, connected apps.
    path("account/ai/", include("mcp_endpoint.account.urls")),
    path("api/", include("project.tracker.urls")),
    # OAuth for MCP clients: the well-known documents and slash-optional endpoints first,
    # then django-oauth-toolkit itself (its views, names and the connected-clients pages).
    path("", include("mcp_endpoint.oauth.urls")),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("mcp", mcp_site.urls),
    path("conformance/mcp", fixture.urls),
    path("health", health),
]
