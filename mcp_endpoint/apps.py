from __future__ import annotations

import contextlib
from importlib import import_module

from django.apps import AppConfig
from django.conf import settings
from django.utils.module_loading import autodiscover_modules


class MCPEndpointConfig(AppConfig):
    name = "mcp_endpoint"
    verbose_name = "MCP endpoint"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from mcp_endpoint import checks, key_cache, key_memory
        from mcp_endpoint.oauth import checks as oauth_checks

        del checks, oauth_checks  # imported for their @register decorators: the system checks
        key_cache.connect()
        key_memory.connect()

        # Each installed app's mcp.py registers its tools, as admin.py modules do.
        autodiscover_modules("mcp")

        # A Celery worker of a host whose TASKS name the Celery backend (or a subclass of
        # it) needs its task and signals registered before it is ready: the module of each
        # configured backend is imported now, and a host without it never imports Celery.
        tasks = getattr(settings, "TASKS", None) or {}
        for config in tasks.values():
            module = str(config.get("BACKEND", "")).rpartition(".")[0]
            if module:
                # A backend that cannot be imported is the task framework's to report.
                with contextlib.suppress(ImportError):
                    import_module(module)
