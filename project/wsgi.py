"""WSGI entry point of the demo host (``gunicorn project.wsgi``)."""

import os

from django.core.wsgi import get_wsgi_application

from mcp_endpoint.warmup import warm_up

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

application = get_wsgi_application()
# Every tool's schema built now, as the worker starts, not in its first request.
if os.environ.get("DEMO_WARM_UP", "1") != "0":
    warm_up()
