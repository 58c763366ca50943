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

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from oauth2_provider import admin as toolkit_admin
from oauth2_provider.models import AbstractApplication
from oauth2_provider.settings import oauth2_settings

from mcp_endpoint.oauth import machine
from mcp_endpoint.oauth.metadata import advertised_grant_types
from mcp_endpoint.oauth.models import MachineClient
from mcp_endpoint.oauth.revocation import revoke_application_tokens

# The toolkit's grant type names in its metadata setting, for the values on an application.
SUPPORTED_NAMES = {
    AbstractApplication.GRANT_AUTHORIZATION_CODE: "authorization_code",
    AbstractApplication.GRANT_IMPLICIT: "implicit",
    AbstractApplication.GRANT_PASSWORD: "password",
    AbstractApplication.GRANT_CLIENT_CREDENTIALS: "client_credentials",
    AbstractApplication.GRANT_DEVICE_CODE: AbstractApplication.GRANT_DEVICE_CODE,
}


def allowed_grant_types() -> set[str]:
    """The grant types an application may be given under the toolkit's settings: those the
    server advertises, less the ones RFC 9700 compliance turns off."""
    supported = set(advertised_grant_types())
    allowed = {value for value, name in SUPPORTED_NAMES.items() if name in supported}
    if oauth2_settings.OIDC_ENABLED and "code" in oauth2_settings.OAUTH2_RESPONSE_TYPES_SUPPORTED:
        allowed.add(AbstractApplication.GRANT_OPENID_HYBRID)
    return allowed


def allowed_algorithms() -> set[str]:
    """ID token algorithms: none without OpenID Connect; RS256 only with a private key."""
    allowed = {AbstractApplication.NO_ALGORITHM}
    if oauth2_settings.OIDC_ENABLED:
        allowed.add(AbstractApplication.HS256_ALGORITHM)
        if oauth2_settings.OIDC_RSA_PRIVATE_KEY:
            allowed.add(AbstractApplication.RS256_ALGORITHM)
    return allowed


class ApplicationAdmin(toolkit_admin.ApplicationAdmin):
    """Applications with how each was registered and when; the add and change forms offer
    only the grant types and algorithms the settings allow; revoking an application's tokens
    is an action."""

    list_display = (
        "name",
        "client_id",
        "self_registered",
        "registration_source",
        "client_type",
        "user",
        "acts_as",
        "created",
    )
    list_filter = ("registration_source", "client_type", "authorization_grant_type")
    search_fields = ("name", "client_id")
    date_hierarchy = "created"
    actions = ["revoke_tokens"]

    def formfield_for_choice_field(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        allowed = {
            "authorization_grant_type": allowed_grant_types,
            "algorithm": allowed_algorithms,
        }.get(db_field.name)
        if allowed is not None:
            permitted = allowed()
            kwargs["choices"] = [(v, label) for v, label in db_field.choices if v in permitted]
        return super().formfield_for_choice_field(db_field, request, **kwargs)

    @admin.display(description=_("self-registered"), boolean=True, ordering="registration_source")
    def self_registered(self, obj: Any) -> bool:
        return bool(obj.registration_source != AbstractApplication.RegistrationSource.MANUAL)

    @admin.display(description=_("acts as"))
    def acts_as(self, obj: Any) -> str:
        """The service account of a client-credentials application (its machine client)."""
        machine = MachineClient.objects.filter(client_id=obj.client_id).first()
        if machine is None:
            return "-"
        if machine.revoked is not None:
            return gettext("%(user)s (revoked)") % {"user": machine.user}
        return str(machine.user)

    @admin.action(description=_("Revoke the tokens of the selected applications"))
    def revoke_tokens(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        revoked = sum(revoke_application_tokens(application) for application in queryset)
        self.message_user(
            request,
            ngettext("Revoked %(count)d token.", "Revoked %(count)d tokens.", revoked)
            % {"count": revoked},
            messages.SUCCESS,
        )


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

    @admin.display(description=_("registered by"), ordering="application__registration_source")
    def registration_source(self, obj: Any) -> str:
        application = obj.application
        return application.get_registration_source_display() if application else "-"

    @admin.display(description=_("resource"))
    def bound_to(self, obj: Any) -> str:
        return " ".join(obj.resource or []) or gettext("(any)")


if TYPE_CHECKING:
    MachineClientAdminBase = admin.ModelAdmin[MachineClient]
else:  # ModelAdmin is generic to the type checker only (django-stubs)
    MachineClientAdminBase = admin.ModelAdmin


@admin.register(MachineClient)
class MachineClientAdmin(MachineClientAdminBase):
    """The client-credentials applications and the user each acts as; revoking one refuses
    its tokens and any new one."""

    list_display = ("client_id", "user", "scopes", "created", "revoked")
    list_filter = ("revoked",)
    search_fields = ("client_id", "user__username")
    raw_id_fields = ("user",)
    readonly_fields = ("created", "revoked")
    actions = ["revoke"]

    @admin.action(description=_("Revoke the selected machine clients"))
    def revoke(self, request: HttpRequest, queryset: QuerySet[MachineClient]) -> None:
        revoked = sum(machine.revoke(m) for m in queryset.filter(revoked__isnull=True))
        self.message_user(
            request,
            ngettext("Revoked %(count)d token.", "Revoked %(count)d tokens.", revoked)
            % {"count": revoked},
            messages.SUCCESS,
        )
