"""The admin for API keys: created with the secret shown once, then only revoked.

Superusers see every key. Other staff (with the model's permissions) see, create and
revoke their own keys only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.forms import APIKeyForm
from mcp_endpoint.models import AbstractAPIKey, ToolCall, get_api_key_model

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldOpts
    from django.utils.functional import _StrPromise

APIKeyModel = get_api_key_model()

# The raw key of a key made in this request, between save_model and response_add. It
# lives on the request object only: a message would put it in a cookie or the session.
RAW_KEY_ATTRIBUTE = "_mcp_endpoint_raw_key"


class StatusFilter(admin.SimpleListFilter):
    title = _("status")
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [("active", _("Active")), ("expired", _("Expired")), ("revoked", _("Revoked"))]

    def queryset(
        self, request: HttpRequest, queryset: QuerySet[AbstractAPIKey]
    ) -> QuerySet[AbstractAPIKey]:
        now = timezone.now()
        if self.value() == "revoked":
            return queryset.filter(revoked__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked__isnull=True, expires__lte=now)
        if self.value() == "active":
            return queryset.filter(Q(expires__isnull=True) | Q(expires__gt=now), revoked=None)
        return queryset


if TYPE_CHECKING:
    APIKeyAdminBase = admin.ModelAdmin[AbstractAPIKey]
    ToolCallAdminBase = admin.ModelAdmin[ToolCall]
else:
    # Django's ModelAdmin is not subscriptable at run time (hosts need no stubs helper).
    APIKeyAdminBase = ToolCallAdminBase = admin.ModelAdmin


@admin.register(APIKeyModel)
class APIKeyAdmin(APIKeyAdminBase):
    """API keys. Adding one shows its raw key on a page of its own, once, and never again."""

    form = APIKeyForm
    list_display = [
        "prefix",
        "name",
        "user",
        "scope_list",
        "created",
        "expires",
        "last_used",
        "status",
    ]
    list_filter = [StatusFilter, ("user", admin.RelatedOnlyFieldListFilter), "created"]
    list_select_related = ["user"]
    search_fields = ["prefix", "name", f"user__{get_user_model().USERNAME_FIELD}"]
    raw_id_fields = ["user"]
    actions = ["revoke_selected"]
    key_created_template = "admin/mcp_endpoint/apikey/key_created.html"

    # -- who sees what ------------------------------------------------------------------

    def get_queryset(self, request: HttpRequest) -> QuerySet[AbstractAPIKey]:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        return queryset.filter(user=request.user.pk)

    def get_fieldsets(
        self, request: HttpRequest, obj: AbstractAPIKey | None = None
    ) -> list[tuple[str | _StrPromise | None, _FieldOpts]]:
        fields: tuple[str, ...] = ("user", "name", "scopes", "expires")
        if obj is None and not request.user.is_superuser:
            # Staff make keys for themselves only; save_model sets the user.
            fields = fields[1:]
        fieldsets: list[tuple[str | _StrPromise | None, _FieldOpts]] = [(None, {"fields": fields})]
        if obj is not None:
            secret = ("prefix", "digest", "created", "last_used", "revoked", "status")
            fieldsets.append((_("Key"), {"fields": secret}))
        return fieldsets

    def get_readonly_fields(
        self, request: HttpRequest, obj: AbstractAPIKey | None = None
    ) -> list[str]:
        if obj is None:
            return []
        # A key's owner and secret are fixed when it is made; revocation is an action.
        return ["user", "prefix", "digest", "created", "last_used", "revoked", "status"]

    # -- columns --------------------------------------------------------------------------

    @admin.display(description=_("scopes"), ordering="scope")
    def scope_list(self, obj: AbstractAPIKey) -> str:
        return " ".join(sorted(obj.scopes))

    @admin.display(description=_("status"))
    def status(self, obj: AbstractAPIKey) -> str:
        return obj.status

    # -- adding a key ---------------------------------------------------------------------

    def save_model(
        self, request: HttpRequest, obj: AbstractAPIKey, form: ModelForm[Any], change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        user = form.cleaned_data["user"] if request.user.is_superuser else request.user
        key, raw = type(obj)._default_manager.create_key(
            user=user,
            scopes=form.cleaned_data["scopes"],
            name=form.cleaned_data["name"],
            expires=form.cleaned_data["expires"],
        )
        # The admin carries on (change message, log entry, response) with the object it
        # built from the form; make that object the stored row.
        for field in key._meta.concrete_fields:
            setattr(obj, field.attname, getattr(key, field.attname))
        obj._state.adding = False
        obj._state.db = key._state.db
        setattr(request, RAW_KEY_ATTRIBUTE, raw)

    def response_add(
        self, request: HttpRequest, obj: AbstractAPIKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        raw = getattr(request, RAW_KEY_ATTRIBUTE, None)
        if raw is None:
            return super().response_add(request, obj, post_url_continue)
        opts = obj._meta
        site = self.admin_site.name
        context = {
            **self.admin_site.each_context(request),
            "title": _("API key created"),
            "subtitle": str(obj),
            "opts": opts,
            "app_label": opts.app_label,
            "object": obj,
            "raw_key": raw,
            "status": obj.status,
            "change_url": reverse(
                f"admin:{opts.app_label}_{opts.model_name}_change",
                args=[quote(obj.pk)],
                current_app=site,
            ),
            "changelist_url": reverse(
                f"admin:{opts.app_label}_{opts.model_name}_changelist", current_app=site
            ),
        }
        request.current_app = site
        return TemplateResponse(request, self.key_created_template, context)

    # -- revoking -------------------------------------------------------------------------

    @admin.action(description=_("Revoke selected keys"), permissions=["change"])
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[AbstractAPIKey]) -> None:
        revoked = 0
        for key in queryset.filter(revoked__isnull=True):
            key.revoke()
            self.log_change(request, key, [{"changed": {"fields": ["revoked"]}}])
            revoked += 1
        self.message_user(
            request,
            ngettext("Revoked %(count)d key.", "Revoked %(count)d keys.", revoked)
            % {"count": revoked},
            messages.SUCCESS,
        )


def call_log_is_on() -> bool:
    """Whether any endpoint writes the call log (an endpoint may override the setting)."""
    from mcp_endpoint.endpoint import endpoints

    return mcp_settings.LOG_TOOL_CALLS or any(e.settings.LOG_TOOL_CALLS for e in endpoints)


@admin.register(ToolCall)
class ToolCallAdmin(ToolCallAdminBase):
    """The log of tool calls: read-only, for seeing who called what and how it went.

    Nobody adds or changes a row; superusers may delete rows (to honour an erasure
    request, say). Other staff with the view permission see their own calls only.
    """

    list_display = [
        "created",
        "tool",
        "user",
        "credential",
        "client",
        "ip",
        "outcome",
        "duration_ms",
    ]
    list_filter = ["outcome", "endpoint", "created", "tool"]
    list_select_related = ["user"]
    # The user model's own identifying field: not every user model has a username.
    search_fields = [
        "tool",
        "credential",
        "client_name",
        "error",
        f"user__{get_user_model().USERNAME_FIELD}",
    ]
    date_hierarchy = "created"
    readonly_fields = [f.name for f in ToolCall._meta.fields]
    change_list_template = "admin/mcp_endpoint/toolcall/change_list.html"

    @admin.display(description=_("client"), ordering="client_name")
    def client(self, obj: ToolCall) -> str:
        return f"{obj.client_name} {obj.client_version}".strip() or obj.user_agent

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ToolCall]:
        queryset = super().get_queryset(request).select_related("user")
        if request.user.is_superuser:
            return queryset
        pk = request.user.pk
        return queryset.filter(user__pk=pk) if pk is not None else queryset.none()

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra_context = {
            **(extra_context or {}),
            "call_log_is_on": call_log_is_on(),
            "retention_days": mcp_settings.LOG_RETENTION_DAYS,
        }
        return super().changelist_view(request, extra_context)
