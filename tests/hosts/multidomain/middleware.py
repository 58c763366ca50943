"""The product's routing middleware: a tenant's domain gets the tenant URLconf."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

TENANT_DOMAIN = ".example.com"


class TenantURLConfMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.get_host().split(":")[0].endswith(TENANT_DOMAIN):
            request.urlconf = getattr(  # type: ignore[attr-defined]
                settings, "TENANT_URLCONF", "tests.hosts.multidomain.tenant_urls"
            )
        return self.get_response(request)
