import gc
from pathlib import Path

from django.apps import AppConfig


class TrackerConfig(AppConfig):
    name = "project.tracker"
    label = "tracker"
    verbose_name = "Task tracker"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        # The collector rests while the process starts (project.settings): what start-up
        # built stays for the process's life, so later collections skip it.
        gc.freeze()
        gc.enable()

        from project.tracker import checks  # noqa: F401 - registers the deploy check

        if getattr(settings, "DEMO_CLOCK_FILE", ""):
            from mcp_endpoint.sessions import SessionStore
            from project.clock import FileMovedClock

            SessionStore.clock = FileMovedClock(Path(settings.DEMO_CLOCK_FILE))
