"""The pages a user sees and the endpoints a client calls, on django-oauth-toolkit's views.

The toolkit validates the request, renders the form and issues the code. The consent view
adds:

- who the client is and where it came from (it registered itself, a metadata document
  describes it, or an administrator created it), the scopes in plain words, and the
  resource the token will be bound to, for the consent template;
- a ``plain`` PKCE challenge refused before the consent page, not after the user approved;
- a ``resource`` on another server refused with ``invalid_target`` (RFC 8707) before the
  consent page, so no user is asked to grant access "for" a server this site is not;
- ``iss`` (RFC 9207) on error responses too, not only on success.

The token endpoint answers every error as JSON, as clients expect. The sign-in, consent and
connected-applications pages may not be framed by another site (``X-Frame-Options`` and
``Content-Security-Policy: frame-ancestors 'none'``): a page that holds an "Allow" button
must not be overlaid with a decoy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.models import AbstractApplication, get_application_model
from oauth2_provider.scopes import get_scopes_backend
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView as ToolkitAuthorizationView
from oauth2_provider.views import AuthorizedTokenDeleteView as ToolkitAuthorizedTokenDeleteView
from oauth2_provider.views import AuthorizedTokensListView as ToolkitAuthorizedTokensListView
from oauth2_provider.views import DeviceAuthorizationView as ToolkitDeviceAuthorizationView
from oauth2_provider.views import IntrospectTokenView as ToolkitIntrospectTokenView
from oauth2_provider.views import RevokeTokenView as ToolkitRevokeTokenView
from oauth2_provider.views import TokenView as ToolkitTokenView
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error, InvalidRequestError

from mcp_endpoint.oauth.metadata import endpoint_at, is_own_resource, resource_url
from mcp_endpoint.oauth.parameters import refuse_unadvertised_grant, refuse_unstorable
from mcp_endpoint.oauth.registration import is_loopback_host
from mcp_endpoint.responses import deny_framing

PKCE_METHODS = ("S256",)


def frame_ancestors_none(
    view: Callable[..., HttpResponseBase],
) -> Callable[..., HttpResponseBase]:
    """View decorator: the response may not be framed (see :func:`deny_framing`)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        return deny_framing(view(request, *args, **kwargs))

    return wrapped


@dataclass(frozen=True)
class ClientDescription:
    """What the consent page says about a client."""

    name: str
    client_id: str
    source: str
    source_label: str
    origin: str
    metadata_url: str | None = None


@dataclass(frozen=True)
class ResourceDescription:
    """A resource the token will be bound to, and the MCP server it names, if any."""

    url: str
    server_title: str | None = None


def host_label(uri: str) -> str:
    host = urlsplit(uri).hostname or ""
    if is_loopback_host(host):
        return _("an application on this computer")
    if host:
        return host
    return urlsplit(uri).scheme + ":"


def describe_client(application: AbstractApplication) -> ClientDescription:
    """Who a client is, in the words of the consent page."""
    source = application.registration_source
    sources = application.RegistrationSource
    redirects = sorted({host_label(uri) for uri in application.redirect_uris.split()})
    if source == sources.CIMD:
        return ClientDescription(
            name=application.name or application.client_id,
            client_id=application.client_id,
            source=source,
            source_label=_("described by its client metadata document"),
            origin=urlsplit(application.client_id).hostname or application.client_id,
            metadata_url=application.client_id,
        )
    if source == sources.DCR:
        return ClientDescription(
            name=application.name or _("An unnamed application"),
            client_id=application.client_id,
            source=source,
            source_label=_("registered itself with this site"),
            origin=", ".join(redirects),
        )
    return ClientDescription(
        name=application.name or application.client_id,
        client_id=application.client_id,
        source=source,
        source_label=_("created by an administrator of this site"),
        origin=", ".join(redirects),
    )


def describe_resource(url: str, request: HttpRequest) -> ResourceDescription:
    parts = urlsplit(url)
    if parts.netloc == request.get_host():
        endpoint = endpoint_at(parts.path or "/")
        if endpoint is not None and resource_url(endpoint, request, parts.path) == url:
            settings = endpoint.settings
            return ResourceDescription(url, settings.SERVER_TITLE or settings.SERVER_NAME)
    return ResourceDescription(url)


Handler = Callable[..., HttpResponse]


def refusing_unstorable(handler: Handler) -> Handler:
    """``handler`` (a toolkit view's ``get`` or ``post``), refusing first a request with
    text no database stores (``invalid_request``).

    In the methods, not in ``dispatch``: ``as_view()`` takes ``csrf_exempt`` and
    ``login_not_required`` from the toolkit's decorated ``dispatch``, which an override
    would hide.
    """

    @wraps(handler)
    def checked(view: Any, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return refuse_unstorable(request) or handler(view, request, *args, **kwargs)

    return checked


@method_decorator(frame_ancestors_none, name="dispatch")
class AuthorizationView(ToolkitAuthorizationView):
    """The toolkit's authorisation endpoint and consent page, for MCP clients."""

    template_name = "mcp_endpoint/oauth/authorize.html"

    get = refusing_unstorable(ToolkitAuthorizationView.get)
    post = refusing_unstorable(ToolkitAuthorizationView.post)

    def validate_authorization_request(
        self, request: HttpRequest
    ) -> tuple[list[str], dict[str, Any]]:
        scopes, credentials = super().validate_authorization_request(request)
        method = credentials.get("code_challenge_method")
        if credentials.get("code_challenge") and method not in PKCE_METHODS:
            # The toolkit refuses "plain" only when it stores the code, after consent.
            error = InvalidRequestError(
                description=f'Unsupported code_challenge_method "{method}"; use "S256".',
                state=credentials.get("state"),
            )
            raise OAuthToolkitError(error=error, redirect_uri=credentials["redirect_uri"])
        foreign = self.foreign_resource(request.GET.getlist("resource"))
        if foreign is not None:
            raise OAuthToolkitError(
                error=self.invalid_target(foreign, credentials.get("state")),
                redirect_uri=credentials["redirect_uri"],
            )
        return scopes, credentials

    def form_valid(self, form: Any) -> HttpResponse:
        # The resource travels back in a hidden field, which the user's browser may change.
        foreign = self.foreign_resource((form.cleaned_data.get("resource") or "").split())
        if foreign is not None:
            application = get_application_model().objects.get(
                client_id=form.cleaned_data["client_id"]
            )
            error = OAuthToolkitError(
                error=self.invalid_target(foreign, form.cleaned_data.get("state")),
                redirect_uri=form.cleaned_data.get("redirect_uri"),
            )
            response: HttpResponse = self.error_response(error, application)
            return response
        answer: HttpResponse = super().form_valid(form)
        return answer

    def foreign_resource(self, resources: list[str]) -> str | None:
        """The first of ``resources`` that names another server than this one, or None."""
        return next((r for r in resources if not is_own_resource(r, self.request)), None)

    def invalid_target(self, resource: str, state: str | None) -> CustomOAuth2Error:
        # RFC 8707 §2: a resource the server does not serve is refused before consent, so
        # the user is never asked to grant access "for" another server.
        return CustomOAuth2Error(
            error="invalid_target",
            description=f"The resource {resource!r} is not served by this site.",
            state=state,
        )

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        # RFC 9207 asks for iss on error responses as well; the toolkit adds it on success.
        if oauth2_settings.COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS:
            issuer = oauth2_settings.oauth2_authorization_server_issuer(self.request)
            redirect_to = with_issuer(redirect_to, issuer)
        response: HttpResponse = super().redirect(redirect_to, application)
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        application = kwargs.get("application")
        if application is not None:
            context["client"] = describe_client(application)
        redirect_uri = kwargs.get("redirect_uri")
        if redirect_uri:
            context["redirect_host"] = host_label(redirect_uri)
        descriptions = get_scopes_backend().get_all_scopes()
        context["scope_items"] = [
            (scope, descriptions.get(scope, scope)) for scope in kwargs.get("scopes", [])
        ]
        context["resources"] = [
            describe_resource(url, self.request) for url in (kwargs.get("resource") or "").split()
        ]
        return context


class TokenView(ToolkitTokenView):
    """The toolkit's token endpoint, whose every answer is JSON and never cached.

    An error raised while the token is saved (``invalid_target`` for a resource the grant
    does not cover) reaches the client with a JSON body but no JSON media type. A grant the
    server does not advertise is ``unsupported_grant_type`` here: the toolkit would try it.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refusal = refuse_unstorable(request) or refuse_unadvertised_grant(request)
        if refusal is not None:
            return refusal
        response: HttpResponse = super().post(request, *args, **kwargs)
        if response.status_code >= 400 and response["Content-Type"].startswith("text/html"):
            response["Content-Type"] = "application/json"
        if not response.has_header("Cache-Control"):
            response["Cache-Control"] = "no-store"
        return response


class RevokeTokenView(ToolkitRevokeTokenView):
    """The toolkit's revocation endpoint (RFC 7009)."""

    post = refusing_unstorable(ToolkitRevokeTokenView.post)


class DeviceAuthorizationView(ToolkitDeviceAuthorizationView):
    """The toolkit's device authorisation endpoint (RFC 8628), which the toolkit mounts
    whether or not the device grant is advertised."""

    post = refusing_unstorable(ToolkitDeviceAuthorizationView.post)


class IntrospectTokenView(ToolkitIntrospectTokenView):
    """The toolkit's introspection endpoint (RFC 7662)."""

    get = refusing_unstorable(ToolkitIntrospectTokenView.get)
    post = refusing_unstorable(ToolkitIntrospectTokenView.post)


@method_decorator(frame_ancestors_none, name="dispatch")
class LoginView(auth_views.LoginView):
    """Django's sign-in page, which may not be framed; mount it at the host's ``LOGIN_URL``.

    The template is ``registration/login.html``: the package ships one, a host's own wins.
    """


@method_decorator(frame_ancestors_none, name="dispatch")
class AuthorizedTokensListView(ToolkitAuthorizedTokensListView):
    """The clients connected to the user's account, each with a link to revoke it."""

    template_name = "mcp_endpoint/oauth/authorized-tokens.html"


@method_decorator(frame_ancestors_none, name="dispatch")
class AuthorizedTokenDeleteView(ToolkitAuthorizedTokenDeleteView):
    """Revoke one connected client, after the user confirms."""

    template_name = "mcp_endpoint/oauth/authorized-token-delete.html"


def with_issuer(uri: str, issuer: str) -> str:
    """``uri`` with the RFC 9207 ``iss`` parameter set to ``issuer``: in the fragment when
    the response carries its parameters there (implicit, hybrid), else in the query; an
    ``iss`` already in either is dropped, so the client sees one issuer, the server's."""
    parts = urlsplit(uri)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"]
    fragment = [(k, v) for k, v in parse_qsl(parts.fragment, keep_blank_values=True) if k != "iss"]
    (fragment if parts.fragment else query).append(("iss", issuer))
    return urlunsplit(parts._replace(query=urlencode(query), fragment=urlencode(fragment)))
