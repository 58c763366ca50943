"""A tenant URLconf whose last pattern serves the single-page app for every other path,
``/mcp`` included (a 200 page, not the endpoint)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, re_path

from tests.hosts.multidomain import tenant_urls


def single_page_app(request: HttpRequest) -> HttpResponse:
    return HttpResponse("<!doctype html><div id=app></div>")


urlpatterns: list[URLPattern | URLResolver] = [
    *tenant_urls.urlpatterns,
    re_path(r"^.*$", single_page_app),
]
