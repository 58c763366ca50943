"""The account pages: signed-in users only, no staff status needed.

Each page works on the signed-in user's own rows only; a key or application of anyone
else is a 404, as if it did not exist. Every change is a POST answered by a redirect, so a
reload repeats nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.db.models import Max, QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseRedirect,
)
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views import View

from mcp_endpoint import compat, reveal
from mcp_endpoint.account.forms import PersonalKeyForm, grantable_scopes
from mcp_endpoint.clients import ClientGuide, client_guides, guide_for
from mcp_endpoint.endpoint import Endpoint
from mcp_endpoint.models import AbstractAPIKey, get_api_key_model
from mcp_endpoint.resource import resource_url
from mcp_endpoint.responses import deny_framing
from mcp_endpoint.toolsets import QUERY_READ_ONLY, QUERY_TOOLSETS


class AccountView(LoginRequiredMixin, View):
    """The endpoint the pages describe (the default one unless a host passes another) and
    the context every page shares."""

    endpoint: Endpoint | None = None
    template_name = ""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # Pages with Create and Revoke buttons, one of them showing a key: never in a frame.
        return deny_framing(super().dispatch(request, *args, **kwargs))

    def get_endpoint(self) -> Endpoint:
        if self.endpoint is not None:
            return self.endpoint
        from mcp_endpoint.sites import site

        return site

    def mcp_url(self) -> str:
        return resource_url(self.get_endpoint(), self.request)

    def guides(self, key: str | None = None) -> list[ClientGuide]:
        endpoint = self.get_endpoint()
        return client_guides(self.mcp_url(), endpoint.settings.SERVER_NAME, key)

    def render(self, context: dict[str, Any], status: int = 200) -> TemplateResponse:
        endpoint = self.get_endpoint()
        context = {
            "mcp_url": self.mcp_url(),
            "server_title": endpoint.settings.SERVER_TITLE or endpoint.settings.SERVER_NAME,
            "keys_url": reverse("mcp_account:keys"),
            **context,
        }
        return TemplateResponse(self.request, self.template_name, context, status=status)


class ConnectView(AccountView):
    """The MCP URL and, per client, how to connect it."""

    template_name = "mcp_endpoint/account/connect.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        # The person's choice of toolsets and read-only mode, from the form on the page
        # (a GET, so the page's own address keeps it): the address to give a client
        # carries it. Names the endpoint does not have are dropped.
        known = list(self.get_endpoint().toolsets())
        picked = [t for t in known if t in request.GET.getlist("toolset")]
        read_only = request.GET.get("read_only") == "1"
        url = with_choice(self.mcp_url(), picked if len(picked) < len(known) else [], read_only)
        endpoint = self.get_endpoint()
        return self.render(
            {
                "guides": client_guides(url, endpoint.settings.SERVER_NAME, None),
                "mcp_url": url,
                "toolsets": [(name, name in picked) for name in known],
                "read_only": read_only,
                "narrowed": bool(picked) or read_only,
                "active": "connect",
            }
        )


def with_choice(url: str, toolsets: list[str], read_only: bool) -> str:
    """The endpoint's URL with a choice of toolsets and the read-only mode in its query."""
    query: dict[str, str] = {}
    if toolsets:
        query[QUERY_TOOLSETS] = ",".join(toolsets)
    if read_only:
        query[QUERY_READ_ONLY] = "1"
    return f"{url}?{urlencode(query, safe=',')}" if query else url


def own_keys(request: HttpRequest) -> QuerySet[AbstractAPIKey]:
    return get_api_key_model()._default_manager.filter(user=request.user.pk)


def own_key(request: HttpRequest, pk: str) -> AbstractAPIKey:
    try:
        return own_keys(request).get(pk=pk)
    except (get_api_key_model().DoesNotExist, ValueError, ValidationError) as exc:
        raise Http404(_("No such key.")) from exc


class KeyListView(AccountView):
    """The user's keys, and the form that makes one."""

    template_name = "mcp_endpoint/account/keys.html"

    def form(self, data: Any = None) -> PersonalKeyForm:
        initial = {}
        if data is None and self.request.GET.get("client"):
            initial["client"] = self.request.GET["client"]
        return PersonalKeyForm(data, request=self.request, guides=self.guides(), initial=initial)

    def page(self, form: PersonalKeyForm, status: int = 200) -> TemplateResponse:
        keys = own_keys(self.request).order_by("-created")
        return self.render({"form": form, "keys": keys, "active": "keys"}, status=status)

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.page(self.form())

    def post(self, request: HttpRequest) -> HttpResponse:
        form = self.form(request.POST)
        if not form.is_valid():
            return self.page(form, status=400)
        key, raw = get_api_key_model()._default_manager.create_key(
            user=request.user,
            scopes=form.cleaned_data["scopes"],
            name=form.cleaned_data["name"],
            expires=form.expires(),
        )
        path = reverse("mcp_account:key-created", args=[key.pk])
        response = HttpResponseRedirect(f"{path}?client={form.cleaned_data['client']}")
        response.status_code = 303
        reveal.stash(response, request, key, raw, path)
        return response


class KeyCreatedView(AccountView):
    """The new key, once, in the configuration of the client the user chose."""

    template_name = "mcp_endpoint/account/key_created.html"

    def get(self, request: HttpRequest, pk: str) -> HttpResponse:
        key = own_key(request, pk)
        raw = reveal.take(request, key)
        guides = self.guides(raw)
        chosen = guide_for(request.GET.get("client", ""), guides)
        context = {
            "key": key,
            "raw_key": raw,
            "chosen": chosen if chosen is not None and chosen.uses_key else None,
            "others": [g for g in guides if g.uses_key and g is not chosen],
            "active": "keys",
        }
        return reveal.forget(self.render(context), request.path)


class KeyRevokeView(AccountView):
    def post(self, request: HttpRequest, pk: str) -> HttpResponse:
        key = own_key(request, pk)
        if key.is_revoked():
            messages.info(request, _("The key %(name)s was already revoked.") % {"name": key})
        else:
            key.revoke()
            messages.success(request, _("Revoked the key %(name)s.") % {"name": key})
        return redirect("mcp_account:keys")


class ConnectedAppsView(AccountView):
    """The OAuth applications that hold a token for this user, with their scopes."""

    template_name = "mcp_endpoint/account/apps.html"

    def get(self, request: HttpRequest) -> HttpResponse:
        if not compat.oauth_enabled():
            # No OAuth for MCP clients: no application holds one of our tokens.
            return self.render({"apps": [], "active": "apps"})
        from oauth2_provider.models import get_access_token_model, get_application_model

        tokens = get_access_token_model().objects.filter(
            user=request.user.pk, application__isnull=False
        )
        rows = (
            tokens.values("application").annotate(last_used=Max("updated")).order_by("-last_used")
        )
        applications = get_application_model().objects.in_bulk([r["application"] for r in rows])
        scopes: dict[Any, set[str]] = {}
        for application, scope in tokens.values_list("application", "scope"):
            scopes.setdefault(application, set()).update(scope.split())
        described = grantable_scopes(request)
        apps = [
            {
                "application": applications[row["application"]],
                "scopes": [(s, described.get(s, s)) for s in sorted(scopes[row["application"]])],
                "last_used": row["last_used"],
            }
            for row in rows
            if row["application"] in applications
        ]
        return self.render({"apps": apps, "active": "apps"})


class AppRevokeView(AccountView):
    """Revoke every token and pending code an application holds for this user."""

    def post(self, request: HttpRequest, pk: str) -> HttpResponse:
        if not compat.oauth_enabled():
            raise Http404(_("No such application."))
        from oauth2_provider.models import get_access_token_model, get_application_model

        from mcp_endpoint.oauth.revocation import revoke_application_tokens

        try:
            application = get_application_model().objects.get(pk=pk)
        except (get_application_model().DoesNotExist, ValueError, ValidationError) as exc:
            raise Http404(_("No such application.")) from exc
        if (
            not get_access_token_model()
            .objects.filter(user=request.user.pk, application=application)
            .exists()
        ):
            raise Http404(_("No such application."))
        revoke_application_tokens(application, user=request.user.pk)
        name = application.name or application.client_id
        messages.success(request, _("%(name)s can no longer use your account.") % {"name": name})
        return redirect("mcp_account:apps")
