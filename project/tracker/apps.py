from django.apps import AppConfig


class TrackerConfig(AppConfig):
    name = "project.tracker"
    label = "tracker"
    verbose_name = "Task tracker"
    default_auto_field = "django.db.models.BigAutoField"
