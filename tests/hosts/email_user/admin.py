from django.contrib import admin

from tests.hosts.email_user.models import EmailUser


@admin.register(EmailUser)
class EmailUserAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    search_fields = ["email"]
