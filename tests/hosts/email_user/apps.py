from django.apps import AppConfig


class EmailUserConfig(AppConfig):
    name = "tests.hosts.email_user"
    label = "email_user"
    default_auto_field = "django.db.models.BigAutoField"
