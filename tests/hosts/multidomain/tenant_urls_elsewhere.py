"""A tenant URLconf that routes the API's paths to a view of its own (a tenant's legacy
API): a REST request there never reaches the viewset, so a tool call cannot either."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.urls import URLPattern, URLResolver, include, path, re_path

from tests.hosts.multidomain.urls import endpoint


def legacy_api(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"legacy": True})


urlpatterns: list[URLPattern | URLResolver] = [
    path("", include("mcp_endpoint.oauth.urls")),
    path("mcp", endpoint.urls),
    re_path(r"^snippets/", legacy_api, name="legacy-api"),
]
