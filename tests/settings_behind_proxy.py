"""The demo host set up behind a TLS-terminating proxy that forwards scheme and host."""

from project.settings import *  # noqa: F403

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
USE_X_FORWARDED_HOST = True
ALLOWED_HOSTS = [*ALLOWED_HOSTS, "mcp.example.com"]  # noqa: F405
