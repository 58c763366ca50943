"""The host's DRF throttles, applied to MCP requests with the same counters as REST.

Each MCP HTTP request counts once against each throttle, as one REST request does. The
cache keys counted are remembered on the request, so that a tool which runs a DRF view
inside the same request does not count them a second time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.http import HttpRequest
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle
from rest_framework.views import APIView

from mcp_endpoint.authentication import Credential

COUNTED_KEYS_ATTRIBUTE = "_mcp_counted_throttle_keys"


def throttle_classes(configured: Sequence[type[BaseThrottle]] | None) -> list[type[BaseThrottle]]:
    if configured is not None:
        return list(configured)
    classes: list[type[BaseThrottle]] = list(api_settings.DEFAULT_THROTTLE_CLASSES)  # type: ignore[arg-type]
    return classes


class ThrottleView(APIView):
    """Stands in for a view when the transport checks throttles: no ``throttle_scope``."""


def check(
    request: HttpRequest,
    credential: Credential | None,
    classes: Sequence[type[BaseThrottle]],
) -> float | None:
    """None when the request may go on; otherwise the seconds to wait (0 if unknown)."""
    if not classes:
        return None
    from rest_framework.request import Request

    drf_request = Request(request)
    if credential is not None:
        drf_request.user = credential.user
        drf_request.auth = credential.auth
    else:
        from django.contrib.auth.models import AnonymousUser

        drf_request.user = AnonymousUser()
        drf_request.auth = None
    view = ThrottleView()
    view.request = drf_request
    view.headers = {}
    counted: set[str] = getattr(request, COUNTED_KEYS_ATTRIBUTE, set())
    waits: list[float] = []
    for cls in classes:
        throttle = cls()
        allowed = throttle.allow_request(drf_request, view)
        key = _cache_key(throttle)
        if allowed and key:
            counted.add(key)
        if not allowed:
            wait = throttle.wait()
            waits.append(wait if wait is not None else 0.0)
    setattr(request, COUNTED_KEYS_ATTRIBUTE, counted)
    if waits:
        return max(waits)
    return None


def _cache_key(throttle: BaseThrottle) -> str | None:
    if isinstance(throttle, SimpleRateThrottle):
        key: Any = getattr(throttle, "key", None)
        return key if isinstance(key, str) else None
    return None


def counted_keys(request: HttpRequest) -> set[str]:
    keys: set[str] = getattr(request, COUNTED_KEYS_ATTRIBUTE, set())
    return keys
