"""ASGI entry point of the demo host (``uvicorn project.asgi:application``).

``mcp_endpoint.asgi.get_asgi_application()`` is Django's handler with requests to ``/mcp``
(and the other endpoints) served in one thread hand-off each (docs/deployment.md).
"""

import os

from mcp_endpoint.asgi import get_asgi_application
from mcp_endpoint.warmup import warm_up

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
# Django runs each synchronous view of an ASGI request on a thread, and a persistent
# connection belongs to its thread: with CONN_MAX_AGE > 0 connections pile up until the
# database refuses more. Django's advice under ASGI is to close them after each request.
os.environ.setdefault("DEMO_CONN_MAX_AGE", "0")

application = get_asgi_application()
# Every tool's schema built now, as the worker starts, not in its first request.
if os.environ.get("DEMO_WARM_UP", "1") != "0":
    warm_up()
