"""The document host as the README's lines land when appended after its catch-all: the
page route comes first and answers ``/mcp`` and the OAuth metadata URL
(``mcp_endpoint.E016`` and ``E070`` name it)."""

from __future__ import annotations

from django.urls import include, path, re_path

from tests.hosts.paperwork.urls import endpoint, index, router

urlpatterns = [
    path("api/", include(router.urls)),
    re_path(r".*", index, name="index"),
    path("", include("mcp_endpoint.oauth.urls")),
    path("mcp", endpoint.urls),
]
