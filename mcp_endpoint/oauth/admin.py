"""django-oauth-toolkit's admin, showing what matters for MCP clients.

The toolkit registers its models in the admin itself and takes the classes from its
settings, so a host names these there rather than registering anything twice::

    OAUTH2_PROVIDER = {
        "APPLICATION_ADMIN_CLASS": "mcp_endpoint.oauth.admin.ApplicationAdmin",
        "ACCESS_TOKEN_ADMIN_CLASS": "mcp_endpoint.oauth.admin.AccessTokenAdmin",
    }

The toolkit's admin module imports this one while it registers its models; by then the
classes extended here are defined.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from oauth2_provider import admin as toolkit_admin


class ApplicationAdmin(toolkit_admin.ApplicationAdmin):
    """Applications with how each was registered and when."""

    list_display = (
        "name",
        "client_id",
        "registration_source",
        "client_type",
        "user",
        "created",
    )
    list_filter = ("registration_source", "client_type", "authorization_grant_type")
    search_fields = ("name", "client_id")
    date_hierarchy = "created"


class AccessTokenAdmin(toolkit_admin.AccessTokenAdmin):
    """Access tokens with their scopes and the resource each is bound to."""

    list_display = (
        "pk",
        "masked_token",
        "user",
        "application",
        "registration_source",
        "scope",
        "bound_to",
        "expires",
    )
    list_filter = ("application__registration_source", "application")

    @admin.display(description="registered by", ordering="application__registration_source")
    def registration_source(self, obj: Any) -> str:
        application = obj.application
        return application.get_registration_source_display() if application else "-"

    @admin.display(description="resource")
    def bound_to(self, obj: Any) -> str:
        return " ".join(obj.resource or []) or "(any)"
