from django.apps import AppConfig


class TrackerConfig(AppConfig):
    name = "project.tracker"
    label = "tracker"
    verbose_name = "Task tracker"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from project.tracker import checks  # noqa: F401 - registers the deploy check
