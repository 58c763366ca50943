"""Which browser origins may call an endpoint: loopback on any port, the configured origins
and host globs, and those django-cors-headers allows for the REST API."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from django.conf import settings as django_settings

LOOPBACK_HOSTS = {"localhost", "127.0.0.1", "::1", "[::1]"}


def is_loopback(address: str | None) -> bool:
    if not address:
        return False
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def origin_is_allowed(origin: str, allowed: Sequence[str]) -> bool:
    """Loopback on any port, the configured origins, and django-cors-headers' allowed ones."""
    try:
        parts = urlsplit(origin)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return False
    if parts.scheme not in {"http", "https"} or not host:
        return False
    del port
    if host in LOOPBACK_HOSTS or is_loopback(host):
        return True
    normalized = f"{parts.scheme}://{parts.netloc.lower()}"
    for entry in allowed:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and parts.scheme == "https":
                return True
        elif entry.rstrip("/").lower() == normalized:
            return True
    return cors_allows(normalized)


def cors_allows(origin: str) -> bool:
    """Whether django-cors-headers, when installed, allows ``origin`` for the REST API."""
    if "corsheaders" not in django_settings.INSTALLED_APPS:
        return False
    from corsheaders.conf import conf

    if conf.CORS_ALLOW_ALL_ORIGINS:
        return True
    if origin in {o.rstrip("/").lower() for o in conf.CORS_ALLOWED_ORIGINS}:
        return True
    return any(re.match(pattern, origin) for pattern in conf.CORS_ALLOWED_ORIGIN_REGEXES)
