"""The product's API middleware, for its API paths only (``/api/v1/<tenant>/projects/
<project>/...``): the tenant and project read from the path and set on the request, row
scoping activated for them, and a refusal by path. The views read what it sets and query
scoped models: without it, every API request fails."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse

from tests.hosts.tenants.models import AlreadyPaid, Tenant
from tests.hosts.tenants.scoping import scope

API_PATH = re.compile(r"^/api/v1/(?P<tenant>[^/]+)/projects/(?P<project>[^/]+)/")
# Projects the product refuses by path, before any view: one archived (403), one that
# moved to a sign-in page of its own (a redirect, as a login-required middleware gives).
ARCHIVED_PROJECT = "archive"
GATED_PROJECT = "gated"


class TenantMiddleware:
    """``request.tenant`` and ``request.project`` from the path, and their row scope; an
    unknown tenant is 404 before any view."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        match = API_PATH.match(request.path_info)
        if match is None:
            return self.get_response(request)
        tenant = Tenant.objects.filter(slug=match["tenant"]).first()
        if tenant is None:
            return JsonResponse({"detail": "No such tenant."}, status=404)
        request.tenant = tenant  # type: ignore[attr-defined]
        request.project = match["project"]  # type: ignore[attr-defined]
        with scope(tenant=tenant, project=match["project"]):
            return self.get_response(request)


class ProjectGateMiddleware:
    """Refuses by path: a gated project redirects to a sign-in page; an archived one is
    403 once its URL is resolved (``process_view`` reads the route's kwargs). The product's
    own exceptions become answers (``process_exception``): an order already paid is 409."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        match = API_PATH.match(request.path_info)
        if match is not None and match["project"] == GATED_PROJECT:
            return HttpResponseRedirect(f"/sign-in/?next={request.path}")
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Any, args: Any, kwargs: dict[str, Any]
    ) -> HttpResponse | None:
        if kwargs.get("project") == ARCHIVED_PROJECT:
            return JsonResponse({"detail": "This project is archived."}, status=403)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, AlreadyPaid):
            return JsonResponse({"detail": str(exception)}, status=409)
        return None
