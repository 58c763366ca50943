"""ASGI entry point of the demo host (``uvicorn project.asgi:application``)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
# Django runs each synchronous view of an ASGI request on a thread, and a persistent
# connection belongs to its thread: with CONN_MAX_AGE > 0 connections pile up until the
# database refuses more. Django's advice under ASGI is to close them after each request.
os.environ.setdefault("DEMO_CONN_MAX_AGE", "0")

application = get_asgi_application()
