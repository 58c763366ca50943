"""The admin for API keys (created with the secret shown once, then only revoked), the
call log and tool tasks (read-only; running tasks may be cancelled).

Superusers see every key. Other staff (with the model's permissions) see, create and
revoke their own keys only, and see their own calls and tasks.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.contrib.admin.views.main import ChangeList
from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from mcp_endpoint import callspool, overview, reveal
from mcp_endpoint.calllog import describe_task_credential, describe_task_credentials, redact
from mcp_endpoint.clients import client_guides
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.forms import APIKeyForm
from mcp_endpoint.models import AbstractAPIKey, ToolCall, ToolTask, get_api_key_model
from mcp_endpoint.protocol.tasks import TERMINAL

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldOpts
    from django.utils.functional import _StrPromise

APIKeyModel = get_api_key_model()

# The raw key of a key made in this request, between save_model and response_add. It
# lives on the request object only, then in the reveal cookie (see mcp_endpoint.reveal).
RAW_KEY_ATTRIBUTE = "_mcp_endpoint_raw_key"
# What the reveal page offers next, after the save button that was pressed.
NEXT_STEPS = {"_addanother": "add", "_continue": "change"}


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
    ToolTaskAdminBase = admin.ModelAdmin[ToolTask]
else:
    # Django's ModelAdmin is not subscriptable at run time (hosts need no stubs helper).
    APIKeyAdminBase = ToolCallAdminBase = ToolTaskAdminBase = admin.ModelAdmin


@admin.register(APIKeyModel)
class APIKeyAdmin(APIKeyAdminBase):
    """API keys. Adding one redirects to a page that shows its raw key once, and never again;
    revoking is an action; only superusers delete."""

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
    # Without a user admin to search, the user is picked by id (see get_autocomplete_fields).
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
            facts = ("prefix", "created", "last_used", "revoked", "status")
            fieldsets.append((_("Key"), {"fields": facts}))
        return fieldsets

    def get_readonly_fields(
        self, request: HttpRequest, obj: AbstractAPIKey | None = None
    ) -> list[str]:
        if obj is None:
            return []
        # A key's owner and secret are fixed when it is made; revocation is an action. The
        # digest is not shown: it is of no use to a person, only to someone guessing keys.
        return ["user", "prefix", "created", "last_used", "revoked", "status"]

    def get_autocomplete_fields(self, request: HttpRequest) -> list[str]:
        # Autocomplete needs the user model's admin, with search fields; a host may have
        # neither, and then the id field stays.
        # The registry, not get_model_admin(): that method is Django 5.0+.
        user_admin = self.admin_site._registry.get(get_user_model())
        if user_admin is None:
            return []
        return ["user"] if user_admin.get_search_fields(request) else []

    def get_search_fields(self, request: HttpRequest) -> list[str]:
        user_model = get_user_model()
        fields = ["prefix", "name", f"user__{user_model.USERNAME_FIELD}"]
        email = user_model.get_email_field_name()
        if email != user_model.USERNAME_FIELD and any(
            f.name == email for f in user_model._meta.get_fields()
        ):
            fields.append(f"user__{email}")
        return fields

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        initial: dict[str, Any] = dict(super().get_changeform_initial_data(request))
        days = mcp_settings.API_KEY_DEFAULT_EXPIRY_DAYS
        if "expires" not in initial and days:
            initial["expires"] = timezone.now() + timedelta(days=days)
        return initial

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A key is revoked, not deleted: the row keeps who had access and until when.
        return bool(request.user.is_superuser) and super().has_delete_permission(request, obj)

    # -- columns --------------------------------------------------------------------------

    @admin.display(description=_("scopes"), ordering="scope")
    def scope_list(self, obj: AbstractAPIKey) -> str:
        return " ".join(sorted(obj.scopes))

    @admin.display(description=_("status"))
    def status(self, obj: AbstractAPIKey) -> str:
        return obj.get_status_display()

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
        # A redirect, so that reloading the next page posts nothing again.
        opts = obj._meta
        reveal_path = reverse(
            f"admin:{opts.app_label}_{opts.model_name}_created",
            args=[quote(obj.pk)],
            current_app=self.admin_site.name,
        )
        step = next((s for button, s in NEXT_STEPS.items() if button in request.POST), "list")
        response = HttpResponseRedirect(f"{reveal_path}?next={step}")
        reveal.stash(response, request, obj, raw, reveal_path)
        return response

    def get_urls(self) -> list[URLPattern]:
        opts = self.opts
        created = path(
            "<path:object_id>/created/",
            self.admin_site.admin_view(self.key_created_view),
            name=f"{opts.app_label}_{opts.model_name}_created",
        )
        return [created, *super().get_urls()]

    def key_created_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """The one-time page of a new key: the raw key, the MCP URL, client configurations."""
        from mcp_endpoint.resource import resource_url
        from mcp_endpoint.responses import deny_framing
        from mcp_endpoint.sites import site as endpoint

        obj = self.get_object(request, unquote(object_id))
        if obj is None or not self.has_view_or_change_permission(request, obj):
            # As the admin answers for an object it does not show: it does not exist.
            self.message_user(
                request,
                _("No API key has the ID %(key)s.") % {"key": object_id},
                messages.WARNING,
            )
            return HttpResponseRedirect(reverse("admin:index", current_app=self.admin_site.name))
        raw = reveal.take(request, obj)
        opts = obj._meta
        site = self.admin_site.name
        mcp_url = resource_url(endpoint, request)
        guides = client_guides(mcp_url, endpoint.settings.SERVER_NAME, raw)
        url = f"admin:{opts.app_label}_{opts.model_name}_%s"
        context = {
            **self.admin_site.each_context(request),
            "title": _("API key created") if raw else _("API key"),
            "subtitle": str(obj),
            "opts": opts,
            "app_label": opts.app_label,
            "object": obj,
            "raw_key": raw,
            "mcp_url": mcp_url,
            "guides": [g for g in guides if g.uses_key],
            "next": request.GET.get("next", "list"),
            "add_url": reverse(url % "add", current_app=site),
            "change_url": reverse(url % "change", args=[quote(obj.pk)], current_app=site),
            "changelist_url": reverse(url % "changelist", current_app=site),
        }
        request.current_app = site
        response = TemplateResponse(request, self.key_created_template, context)
        deny_framing(response)
        return reveal.forget(response, request.path)

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

    # The IP address is on each row's page: the list keeps what an operator scans for, so
    # that it fits beside the admin's sidebar and filters at 1,400 px.
    list_display = [
        "created",
        "tool_name",
        "user",
        "credential_name",
        "client",
        "outcome_code",
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

    class Media:
        css = {"all": ["mcp_endpoint/call_log.css"]}

    def get_urls(self) -> list[URLPattern]:

        opts = self.opts
        page = path(
            "overview/",
            self.admin_site.admin_view(lambda request: overview.page(self, request)),
            name=f"{opts.app_label}_{opts.model_name}_overview",
        )
        return [page, *super().get_urls()]

    @admin.display(description=_("client"), ordering="client_name")
    def client(self, obj: ToolCall) -> str:
        return whole_in_title(f"{obj.client_name} {obj.client_version}".strip() or obj.user_agent)

    @admin.display(description=_("tool"), ordering="tool")
    def tool_name(self, obj: ToolCall) -> str:
        return whole_in_title(obj.tool)

    @admin.display(description=_("credential"), ordering="credential")
    def credential_name(self, obj: ToolCall) -> str:
        return whole_in_title(obj.credential)

    @admin.display(description=_("outcome"), ordering="outcome")
    def outcome_code(self, obj: ToolCall) -> str:
        return whole_in_title(obj.outcome)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(request.user.is_superuser)

    def get_queryset(self, request: HttpRequest) -> QuerySet[ToolCall]:
        return overview.own_rows(request, super().get_queryset(request).select_related("user"))

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # Rows still in this worker's spool, or in the file of one that died, are listed too.
        callspool.write_spooled(mcp_settings.LOG_SPOOL_DIR)
        extra_context = {
            **(extra_context or {}),
            "call_log_is_on": call_log_is_on(),
            "retention_days": mcp_settings.LOG_RETENTION_DAYS,
        }
        return super().changelist_view(request, extra_context)


def whole_in_title(text: str) -> str:
    """``text`` with itself as its tooltip: the change list may cut it to fit."""
    return format_html('<span title="{}">{}</span>', text, text)


def redacted_json(field: str, description: Any) -> Any:
    """A read-only field showing a task's JSON ``field`` as the call log keeps arguments:
    the values of ``REDACTED_ARGUMENTS`` keys hidden (the endpoint's own list, if any)."""

    @admin.display(description=description)
    def show(model_admin: Any, obj: ToolTask) -> str:
        from mcp_endpoint import interfaces

        value = getattr(obj, field)
        if value is None:
            return "-"
        endpoint = interfaces.find(obj.endpoint)
        names = (endpoint.settings if endpoint else mcp_settings).REDACTED_ARGUMENTS
        text = json.dumps(redact(value, names), indent=2, ensure_ascii=False, sort_keys=True)
        return format_html("<pre>{}</pre>", text)

    return show


# Where a task of the change list's page keeps its credential's name, looked up for the
# whole page at once (see TaskChangeList).
CREDENTIAL_NAME_ATTRIBUTE = "_mcp_endpoint_credential_name"


class TaskChangeList(ChangeList):
    """The task list, with the page's credentials named together: one query per kind of
    credential for the page, instead of one per row."""

    def get_results(self, request: HttpRequest) -> None:
        super().get_results(request)
        # Evaluating result_list here fills its cache, which the template then iterates.
        names = describe_task_credentials(self.result_list)
        for task in self.result_list:
            setattr(task, CREDENTIAL_NAME_ATTRIBUTE, names[task.pk])


@admin.register(ToolTask)
class ToolTaskAdmin(ToolTaskAdminBase):
    """Tasks of long-running tools: read-only, with an action that cancels running ones.

    Arguments, input and results are shown as the call log shows arguments, with the
    values of ``REDACTED_ARGUMENTS`` keys hidden; the credential by name, never its
    secret or digest. Rows go when they expire (``manage.py mcp_prune_tasks``), not here.
    Superusers see every task; other staff with the view permission see their own.
    """

    list_display = [
        "id",
        "tool",
        "endpoint",
        "status",
        "user",
        "credential",
        "created",
        "updated",
        "expires",
    ]
    list_filter = ["status", "tool"]
    list_select_related = ["user"]
    search_fields = ["=id", "tool"]
    date_hierarchy = "created"
    actions = ["cancel_selected"]
    fieldsets = [
        (None, {"fields": ["id", "endpoint", "tool", "status", "status_message"]}),
        (_("Caller"), {"fields": ["user", "credential", "scopes", "authenticator", "origin"]}),
        (
            _("Call"),
            {
                "fields": [
                    "protocol_version",
                    "shown_arguments",
                    "shown_input_requests",
                    "shown_input_responses",
                    "shown_result",
                    "shown_error",
                ]
            },
        ),
        (_("Times"), {"fields": ["created", "updated", "expires"]}),
    ]
    readonly_fields = [
        "id",
        "endpoint",
        "tool",
        "status",
        "status_message",
        "user",
        "credential",
        "scopes",
        "authenticator",
        "origin",
        "protocol_version",
        "shown_arguments",
        "shown_input_requests",
        "shown_input_responses",
        "shown_result",
        "shown_error",
        "created",
        "updated",
        "expires",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_cancel_permission(self, request: HttpRequest) -> bool:
        opts = self.opts
        return bool(request.user.has_perm(f"{opts.app_label}.change_{opts.model_name}"))

    def get_queryset(self, request: HttpRequest) -> QuerySet[ToolTask]:
        return overview.own_rows(request, super().get_queryset(request).select_related("user"))

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return TaskChangeList

    # -- columns and fields -----------------------------------------------------------------

    @admin.display(description=_("credential"))
    def credential(self, obj: ToolTask) -> str:
        # Named with the rest of its page on the change list; alone on the change form.
        name = getattr(obj, CREDENTIAL_NAME_ATTRIBUTE, None)
        return name if name is not None else describe_task_credential(obj)

    shown_arguments = redacted_json("arguments", _("arguments"))
    shown_input_requests = redacted_json("input_requests", _("input requests"))
    shown_input_responses = redacted_json("input_responses", _("input responses"))
    shown_result = redacted_json("result", _("result"))
    shown_error = redacted_json("error", _("error"))

    # -- cancelling -------------------------------------------------------------------------

    @admin.action(description=_("Cancel selected running tasks"), permissions=["cancel"])
    def cancel_selected(self, request: HttpRequest, queryset: QuerySet[ToolTask]) -> None:
        cancelled = 0
        for task in queryset.exclude(status__in=TERMINAL):
            # As tasks/cancel does: one row at a time, as the worker may finish it meanwhile.
            if ToolTask.objects.filter(pk=task.pk).cancel():
                self.log_change(request, task, [{"changed": {"fields": ["status"]}}])
                cancelled += 1
        self.message_user(
            request,
            ngettext("Cancelled %(count)d task.", "Cancelled %(count)d tasks.", cancelled)
            % {"count": cancelled},
            messages.SUCCESS,
        )
